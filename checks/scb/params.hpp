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

namespace dyncheck::checks::scb {

/// The spec §8 instance parameters of the sim-vs-theory claims (population_loss_and_gradient,
/// sgd_step_unbiased): N, T (the claim's default and upper end), Q, and the shape of P and q. The
/// names are those sim_theory_instance.hpp's make_instance(context) reads. The claim's check()
/// enforces Q <= T/4 (require_sparsity).
struct SpecInstance {
  SpecInstance(ParamSet* owner, long long T_default, long long T_max)
      : vocabulary{owner},
        T{owner, "T", T_default, closed(5, static_cast<double>(T_max)), "context length", Scale::log},
        support{owner, "support size of every q^(k); also Q <= T/4"},
        p_concentration{owner, "p_concentration", 1, open_closed(0, 10),
                        "columns of P ~ Dirichlet(c 1) (spec: 1 or 0.3)", Scale::log},
        identity_mix{owner, "identity_mix", 0, closed(0, 0.9), "P <- (1 - m) P + m I"},
        q_concentration{owner, "q_concentration", 0, closed(0, 10),
                        "0: q uniform on its support; c > 0: q ~ Dirichlet(c 1) on it"} {}

  Vocabulary vocabulary;
  Int T;
  Support support;
  Real p_concentration, identity_mix, q_concentration;
};

}  // namespace dyncheck::checks::scb
