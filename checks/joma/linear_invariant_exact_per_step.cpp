// Claim joma.linear_invariant_exact_per_step  [derived]  (specs/joma.md §2 "General form", §7 claim 2)
//
// Theorem 1 (linear attention) in discrete time: per sample z ∘ ∂ℓ/∂z = Σ_k v_k ∘ ∂ℓ/∂v_k, so plain
// SGD with ρ = η_z/η_w satisfies, exactly and per step,
//   \f[ z_{t+1}^2 - \rho\sum_k v_{k,t+1}^2 = z_t^2 - \rho\sum_k v_{k,t}^2 + (\Delta z)^2 - \rho\sum_k(\Delta v_k)^2. \f]
// Simulated and toleranced as claim 1 (identity_claim.hpp); z starts near 1, away from 0.
// Mutants (edits of InvariantTheory): dropped_dz_squared (the predicted change without its (Δz)^2 term)
// and rho_1_percent (ρ → 1.01 ρ in the invariant and its change). Resolution: checked to round-off, so
// a relative error c in ρ is detected once c |ρ Σ_k (v_k^2(T) - v_k^2(0))| exceeds 1e-10 max(1,|z|) √steps.

#include "claims.hpp"
#include "identity_claim.hpp"

namespace dyncheck::checks::joma {
namespace {

class LinearInvariantExactPerStep final : public IdentityClaim<sim::joma::AttentionKernel::linear> {
 public:
  LinearInvariantExactPerStep() : IdentityClaim(claim_info(), mutants(), "linear-invariant") {}

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "joma.linear_invariant_exact_per_step",
        .family = "joma",
        .paper = "Tian et al., JoMA (ICLR 2024)",
        .source = "specs/joma.md §2 (Theorem 1, linear; general form), §7 claim 2",
        .tag = Provenance::derived,
        .statement = "Under plain SGD with linear attention, z^2 - rho sum_k v_k^2 (rho = eta_z/eta_w) changes per "
                     "step by exactly (Delta z)^2 - rho sum_k (Delta v_k)^2 ([reconstructed] Theorem 1, exact discrete "
                     "form [derived]).",
        .latex = R"(z_{t+1}^2-\rho\sum_k v_{k,t+1}^2 = z_t^2-\rho\sum_k v_{k,t}^2+(\Delta z)^2-\rho\sum_k(\Delta v_k)^2)",
        .simulation = "As joma.exp_invariant_exact_per_step with linear attention b = z o x, z(0) = 1 + noise.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"dropped_dz_squared", "predicted change without the (Delta z)^2 term",
         [](InvariantTheory& s) { s.keep_dz_squared = false; }},
        {"rho_1_percent", "invariant z^2 - 1.01 rho sum_k v_k^2 and its change with 1.01 rho",
         [](InvariantTheory& s) { s.coefficient = 1.01; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_linear_invariant_exact_per_step() { return std::make_unique<LinearInvariantExactPerStep>(); }

}  // namespace dyncheck::checks::joma
