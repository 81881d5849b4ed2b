// Tests of checks/scb/finite_sample_support.hpp: the observables α̂ and y are exact at known
// models, and the instance copy for the theory side is the same instance.

#include "scb/finite_sample_support.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/scb/model.hpp"
#include "dyncheck/theory/scb/constants.hpp"

namespace dyncheck::checks::scb {
namespace {

sim::scb::Instance instance_for(int N, int T, int Q, std::uint64_t seed) {
  sim::Rng rng = sim::derive_stream(seed, "finite_sample_support_test", 0);
  return sim::scb::random_instance({.N = N, .T = T, .Q = Q}, rng);
}

// At the paper's init V = μ1ᵀ, a = 1/T: no correlation at all.
RC_GTEST_PROP(FiniteSampleSupport, ObservablesVanishAtInitialisation, ()) {
  const int N = *rc::gen::inRange(2, 8), T = *rc::gen::inRange(8, 60);
  const int Q = *rc::gen::inRange(1, T / 4 + 1);
  const auto instance = instance_for(N, T, Q, *rc::gen::arbitrary<std::uint32_t>());
  const MeasurementConstants mc = measurement_constants(instance);
  const Observables o = observe(instance, mc, sim::scb::initial_model(instance));
  // ⟨μ1ᵀ, P⟩_Σ = μᵀPμ − ‖μ‖² cancels exactly; its rounding (≤ 1e-15) is divided by K_P.
  RC_ASSERT(std::abs(o.alpha) < 1e-15 / mc.K_P + 1e-12);
  RC_ASSERT(std::abs(o.y) < 1e-12);
}

// At the ground truth V = P, a_k = q_k: α̂ = 1 and y = Σ_k μ_k ρ_k = ρ̄.
RC_GTEST_PROP(FiniteSampleSupport, ObservablesAtGroundTruth, ()) {
  const int N = *rc::gen::inRange(2, 8), T = *rc::gen::inRange(8, 60);
  const int Q = *rc::gen::inRange(1, T / 4 + 1);
  const auto instance = instance_for(N, T, Q, *rc::gen::arbitrary<std::uint32_t>());
  const MeasurementConstants mc = measurement_constants(instance);
  const sim::scb::LinearModel truth{instance.P, sim::scb::dense_q(instance)};
  const Observables o = observe(instance, mc, truth);
  RC_ASSERT(std::abs(o.alpha - 1) < 1e-15 / mc.K_P + 1e-10);
  RC_ASSERT(std::abs(o.y - mc.rho_bar) < 1e-12);
}

// The double-precision constants agree with theory::scb::constants on the theory copy.
TEST(FiniteSampleSupport, ConstantsMatchTheory) {
  const auto instance = instance_for(5, 40, 3, 7);
  const MeasurementConstants mc = measurement_constants(instance);
  const auto c = theory::scb::constants(to_theory<double>(instance));
  EXPECT_NEAR(mc.K_P, c.K_P, 1e-14);
  EXPECT_NEAR(mc.K_2, c.K_2, 1e-14);
  EXPECT_NEAR(mc.rho_bar, c.rho_bar, 1e-14);
}

TEST(FiniteSampleSupport, DenseSupportIsRejectedNamingQ) {
  try {
    require_sparsity(20, 50);
    FAIL() << "expected ParamError";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.parameter(), "Q");
  }
  EXPECT_NO_THROW(require_sparsity(12, 50));
}

}  // namespace
}  // namespace dyncheck::checks::scb
