// Claim joma.linear_invariant_exact_per_step  [derived]  (specs/joma.md §2 "General form", §7 claim 2)
//
// Theorem 1 (linear attention) in discrete time: per sample z ∘ ∂ℓ/∂z = Σ_k v_k ∘ ∂ℓ/∂v_k, so plain
// SGD with ρ = η_z/η_w satisfies, exactly and per step,
//   \f[ z_{t+1}^2 - \rho\sum_k v_{k,t+1}^2 = z_t^2 - \rho\sum_k v_{k,t}^2 + (\Delta z)^2 - \rho\sum_k(\Delta v_k)^2. \f]
// Simulated and toleranced as claim 1 (identity_claim.hpp); z starts near 1, away from 0.
// Mutant dropped_dz_squared: the predicted change without its (Δz)^2 term.

#include "claims.hpp"
#include "identity_claim.hpp"

namespace dyncheck::checks::joma {
namespace {

class LinearInvariantExactPerStep final : public Claim {
 public:
  const ClaimInfo& info() const override { return info_; }

  Verdict run(const RunContext& context) const override {
    return identity_verdict(
        context, sim::joma::AttentionKernel::linear,
        [&](IdentitySetting& s) {
          if (context.mutant_is("dropped_dz_squared")) s.keep_dz_squared = false;
        },
        "linear-invariant");
  }

 private:
  ClaimInfo info_{
      .id = "joma.linear_invariant_exact_per_step",
      .family = "joma",
      .paper = "Tian et al., JoMA (ICLR 2024)",
      .source = "specs/joma.md §2 (Theorem 1, linear; general form), §7 claim 2",
      .tag = Provenance::derived,
      .statement = "Under plain SGD with linear attention, z^2 - rho sum_k v_k^2 (rho = eta_z/eta_w) changes per step "
                   "by exactly (Delta z)^2 - rho sum_k (Delta v_k)^2 ([reconstructed] Theorem 1, exact discrete form "
                   "[derived]).",
      .latex = R"(z_{t+1}^2-\rho\sum_k v_{k,t+1}^2 = z_t^2-\rho\sum_k v_{k,t}^2+(\Delta z)^2-\rho\sum_k(\Delta v_k)^2)",
      .simulation = "As joma.exp_invariant_exact_per_step with linear attention b = z o x, z(0) = 1 + noise.",
      .params = identity_params(),
      .mutants = {{"dropped_dz_squared", "predicted change without the (Delta z)^2 term"}},
  };
};

}  // namespace

std::unique_ptr<Claim> make_linear_invariant_exact_per_step() { return std::make_unique<LinearInvariantExactPerStep>(); }

}  // namespace dyncheck::checks::joma
