#pragma once
// Parameter sets shared by the scb claims (declared once; a claim's Params holds them as members
// constructed with its `this`, e.g. `Vocabulary vocabulary{this};` read as `p.vocabulary.N`).

#include "dyncheck/checks/param_set.hpp"

namespace dyncheck::checks::scb {

/// N, the vocabulary size of the SCB instance.
struct Vocabulary {
  explicit Vocabulary(ParamSet* owner) : N{owner, "N", 3, closed(2, 20), "vocabulary size"} {}
  Int N;
};

/// Q, the support size of each q^(k); the claim's check() enforces Q <= T/4 for its T.
struct Support {
  explicit Support(ParamSet* owner, const char* description = "support size of q^(k), <= T/4")
      : Q{owner, "Q", 2, closed(1, 20), description} {}
  Int Q;
};

/// The two step sizes of the reduced dynamics: eta (V) and eta_A K_P (attention).
struct StepSizes {
  StepSizes(ParamSet* owner, double eta_default, double eta_max, double eta_A_K_P_default)
      : eta{owner, "eta", eta_default, open_closed(0, eta_max), "V step size"},
        eta_A_K_P{owner, "eta_A_K_P", eta_A_K_P_default, open_closed(0, 1), "attention step size times K_P"} {}
  Real eta;
  Real eta_A_K_P;
};

}  // namespace dyncheck::checks::scb

