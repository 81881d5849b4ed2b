// Tests of checks/scb/finite_sample_support.hpp: the observables α̂ and y are exact at known
// models, and the instance copy for the theory side is the same instance.

#include "scb/finite_sample_support.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <vector>
#include <rapidcheck/gtest.h>

#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/scb/model.hpp"
#include "dyncheck/sim/scb/sampler.hpp"
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

// increment_moments (the exact moments of one sample's alpha-hat increment at init, Z = (P(h - mu))^T
// (e_{x_o} - mu)) against Monte Carlo with the sampler: mean K_P/T, and the variance and third central moment
// within 5 standard errors of their sample estimates (4e5 samples), at small T where the O(1/T^2) part of the
// variance is visible, for a Dirichlet instance and one mixed with the identity.
TEST(FiniteSampleSupport, IncrementMomentsMatchMonteCarlo) {
  for (const double mix : {0.0, 0.5}) {
    sim::Rng draw = sim::derive_stream(11, "finite_sample_support_test/moments", 0);
    const int T = 8;
    const auto instance = sim::scb::random_instance({.N = 3, .T = T, .Q = 2, .identity_mix = mix}, draw);
    const MeasurementConstants mc = measurement_constants(instance);
    const IncrementMoments exact = increment_moments(instance, T);
    const sim::scb::Sampler sampler(instance);
    sim::Rng rng = sim::derive_stream(12, "finite_sample_support_test/moments", 1);
    constexpr int n = 400000;
    std::vector<double> z(n);
    for (int i = 0; i < n; ++i) {
      const sim::scb::Example e = sampler.sample(rng);
      Eigen::VectorXd h = Eigen::VectorXd::Zero(3);
      for (int x : e.tokens) h[x] += 1.0 / T;
      const Eigen::VectorXd w = instance.P * (h - instance.mu);
      z[static_cast<std::size_t>(i)] = w[e.output] - instance.mu.dot(w);
    }
    double mean = 0;
    for (double v : z) mean += v / n;
    double m2 = 0, m3 = 0, m4 = 0, m6 = 0;
    for (double v : z) {
      const double d = v - mean;
      m2 += d * d / n, m3 += d * d * d / n, m4 += d * d * d * d / n, m6 += d * d * d * d * d * d / n;
    }
    EXPECT_NEAR(mean, mc.K_P / T, 5 * std::sqrt(m2 / n)) << "mix " << mix;
    EXPECT_NEAR(m2, exact.variance, 5 * std::sqrt((m4 - m2 * m2) / n)) << "mix " << mix;
    EXPECT_NEAR(m3, exact.third, 5 * std::sqrt((m6 - m3 * m3) / n) + 1e-12) << "mix " << mix;
    // The test can tell the exact variance from the leading K_2/T (else the O(1/T^2) part would go unchecked).
    std::cout << "mix " << mix << ": variance exact " << exact.variance << ", K_2/T " << mc.K_2 / T << ", MC " << m2
              << " +- " << std::sqrt((m4 - m2 * m2) / n) << "; third exact " << exact.third << ", MC " << m3 << "\n";
  }
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
