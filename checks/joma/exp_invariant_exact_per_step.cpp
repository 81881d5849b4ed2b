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
// The residual I_t - I_0 - P_t is predicted from snapshots of the trajectory (every steps/100 steps and
// the last); it is cumulative, so an error at any step persists into the next snapshot.
// Controls (must break it): momentum, weight decay, non-orthogonal embeddings, a second query sharing W.
// Mutants (edits of InvariantTheory::coefficient): coefficient_045 (½ → 0.45) and coefficient_1_percent
// (½ → 0.505). Resolution: the identity is checked to round-off, so a relative coefficient error c is
// detected once c |kappa/2 sum_k (v_k^2(T) - v_k^2(0))| exceeds the spec's 1e-10 max(1, |z|) sqrt(steps),
// i.e. c of order 1e-9 at the defaults.

#include "claims.hpp"
#include "identity_claim.hpp"

namespace dyncheck::checks::joma {
namespace {

class ExpInvariantExactPerStep final : public IdentityClaim<sim::joma::AttentionKernel::exp> {
 public:
  ExpInvariantExactPerStep() : IdentityClaim(claim_info(), mutants(), "exp-invariant") {}

 private:
  static ClaimInfo claim_info() {
    return {
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
                      "settings cycling over 5 activations and 2 losses; controls with momentum, weight decay and "
                      "non-orthogonal U and a second query sharing W.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"coefficient_045", "invariant z - 0.45 kappa_z sum_k v_k^2 (coefficient 1/2 -> 0.45)",
         [](InvariantTheory& s) { s.coefficient = 0.9; }},
        {"coefficient_1_percent", "invariant z - 0.505 kappa_z sum_k v_k^2 (coefficient 1/2 -> 0.505)",
         [](InvariantTheory& s) { s.coefficient = 1.01; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_exp_invariant_exact_per_step() { return std::make_unique<ExpInvariantExactPerStep>(); }

}  // namespace dyncheck::checks::joma
