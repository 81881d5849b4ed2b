// Claim joma.exp_invariant_exact_per_step  [derived]  (specs/joma.md §2 "General form", §7 claim 1)
//
// Theorem 1 (exp attention) in discrete time: per sample ∂ℓ/∂z = T^{-1} Σ_k v_k ∘ ∂ℓ/∂v_k, so plain
// SGD with κ_z = η_z/(η_w T) satisfies, exactly and per step,
//   \f[ z_{t+1} - \tfrac{\kappa_z}{2}\sum_k v_{k,t+1}^2 = z_t - \tfrac{\kappa_z}{2}\sum_k v_{k,t}^2
//       - \tfrac{\kappa_z}{2}\sum_k (\Delta v_k)^2 \f]
// for any activation, loss, batch and data, given orthonormal fixed embeddings.
// Simulated: minibatch SGD on the JoMA block (sim/joma) for R random settings; theory/joma gives the
// invariant and its predicted change. Tolerance: numerical only, an a-priori round-off bound
// (identity_experiment.hpp, roundoff_factor); no bias (exact); no statistics (deterministic).
// Controls (must break it): momentum, weight decay, non-orthogonal embeddings, a second query sharing W.
// Mutant coefficient_045: the invariant with ½ → 0.45.

#include "claims.hpp"
#include "identity_claim.hpp"

namespace dyncheck::checks::joma {
namespace {

class ExpInvariantExactPerStep final : public Claim {
 public:
  const ClaimInfo& info() const override { return info_; }

  Verdict run(const RunContext& context) const override {
    return identity_verdict(
        context, sim::joma::AttentionKernel::exp,
        [&](IdentitySetting& s) {
          if (context.mutant_is("coefficient_045")) s.coefficient_factor = 0.9;
        },
        "exp-invariant");
  }

 private:
  ClaimInfo info_{
      .id = "joma.exp_invariant_exact_per_step",
      .family = "joma",
      .paper = "Tian et al., JoMA (ICLR 2024)",
      .source = "specs/joma.md §2 (Theorem 1, exp; general form), §7 claim 1",
      .tag = Provenance::derived,
      .statement = "Under plain SGD with exp attention, z - (kappa_z/2) sum_k v_k^2 changes per step by exactly "
                   "-(kappa_z/2) sum_k (Delta v_k)^2, for any activation, loss, batch and data (Theorem 1 [paper] "
                   "in its exact discrete form [derived]).",
      .latex = R"(z_{t+1}-\tfrac{\kappa_z}{2}\sum_k v_{k,t+1}^2 = z_t-\tfrac{\kappa_z}{2}\sum_k v_{k,t}^2-\tfrac{\kappa_z}{2}\sum_k(\Delta v_k)^2,\ \kappa_z=\tfrac{\eta_z}{\eta_w T})",
      .simulation = "Minibatch SGD on the JoMA block (random orthonormal U, Dirichlet x, fixed random readout) for R "
                    "settings cycling over 5 activations and 3 losses; controls with momentum, weight decay and "
                    "non-orthogonal U and a second query sharing W.",
      .params = identity_params(),
      .mutants = {{"coefficient_045", "invariant z - 0.45 kappa_z sum_k v_k^2 (coefficient 1/2 -> 0.45)"}},
  };
};

}  // namespace

std::unique_ptr<Claim> make_exp_invariant_exact_per_step() { return std::make_unique<ExpInvariantExactPerStep>(); }

}  // namespace dyncheck::checks::joma
