#pragma once
// Parameter sets shared by the scb claims (declared once; a claim's Params holds them as members
// constructed with its `this`, e.g. `Vocabulary vocabulary{this};` read as `p.vocabulary.N`).

#include "dyncheck/checks/param_set.hpp"

namespace dyncheck::checks::scb {

/// N, the vocabulary size of the SCB instance; a claim whose derivation holds for fewer words
/// passes its largest N and the reason.
struct Vocabulary {
  explicit Vocabulary(ParamSet* owner, long long N_max = 20, const char* description = "vocabulary size")
      : N{owner, "N", 3, closed(2, static_cast<double>(N_max)), description} {}
  Int N;
};

/// Q, the support size of each q^(k); the claim's check() enforces Q <= T/4 for its T.
struct Support {
  explicit Support(ParamSet* owner, const char* description = "support size of q^(k), <= T/4", long long Q_default = 2)
      : Q{owner, "Q", Q_default, closed(1, 20), description} {}
  Int Q;
};

/// The two step sizes of the reduced dynamics: eta (V) and eta_A K_P (attention); a claim whose
/// derivation needs a smaller range of eta_A K_P passes its range and the reason.
struct StepSizes {
  StepSizes(ParamSet* owner, double eta_default, double eta_max, double eta_A_K_P_default,
            Range eta_A_K_P_range = open_closed(0, 1), const char* eta_A_K_P_description = "attention step size times K_P")
      : eta{owner, "eta", eta_default, open_closed(0, eta_max), "V step size"},
        eta_A_K_P{owner, "eta_A_K_P", eta_A_K_P_default, eta_A_K_P_range, eta_A_K_P_description} {}
  Real eta;
  Real eta_A_K_P;
};

}  // namespace dyncheck::checks::scb

