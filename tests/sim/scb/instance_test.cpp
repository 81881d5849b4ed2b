// Tests of sim/scb/instance.hpp: random instances are valid, reproducible and reject bad options.

#include "dyncheck/sim/scb/instance.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace dyncheck::sim::scb {
namespace {

RC_GTEST_PROP(SimScbInstance, RandomInstancesAreValid, ()) {
  const int N = *rc::gen::inRange(1, 21);
  const int T = *rc::gen::inRange(1, 400);
  const int Q = *rc::gen::inRange(1, T + 1);
  const bool sparse_p = *rc::gen::arbitrary<bool>();
  const bool q_uniform = *rc::gen::arbitrary<bool>();
  const double mix = *rc::gen::element(0.0, 0.3, 0.9);
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const Instance instance = random_instance({.N = N, .T = T, .Q = Q, .dirichlet_concentration = sparse_p ? 0.3 : 1.0,
                                             .identity_mix = mix, .q_uniform = q_uniform},
                                            rng);
  validate(instance);  // throws on any violation
  RC_ASSERT(instance.N() == N);
  for (const auto& support : instance.support) RC_ASSERT(static_cast<int>(support.size()) == Q);
  const Eigen::MatrixXd q = dense_q(instance);
  RC_ASSERT(q.rows() == T);
  RC_ASSERT(std::abs(q.sum() - N) < 1e-12 * N);
}

TEST(SimScbInstance, SameSeedSameInstance) {
  Rng a(5), b(5);
  const InstanceOptions options{.N = 6, .T = 100, .Q = 4, .q_uniform = false};
  const Instance x = random_instance(options, a), y = random_instance(options, b);
  EXPECT_EQ(x.P, y.P);
  EXPECT_EQ(x.mu, y.mu);
  EXPECT_EQ(x.support, y.support);
  EXPECT_EQ(x.weight, y.weight);
}

TEST(SimScbInstance, SupportPositionsAreUniform) {
  // Floyd's algorithm: each position is in the support with probability Q/T. With T = 10,
  // Q = 3 and n = 20000 draws, each count is Binomial(n, 0.3): sd 64.8; |z| < 5 for all 10
  // positions fails with probability < 10 · 5.7e-7.
  Rng rng(99);
  const int T = 10, Q = 3, n = 20000;
  std::vector<int> count(T, 0);
  for (int i = 0; i < n; ++i) {
    const Instance instance = random_instance({.N = 1, .T = T, .Q = Q}, rng);
    for (const int t : instance.support[0]) ++count[static_cast<std::size_t>(t)];
  }
  const double mean = n * 0.3, sd = std::sqrt(n * 0.3 * 0.7);
  for (const int c : count) EXPECT_LT(std::abs(c - mean), 5 * sd);
}

// Conditioning (issue #10): every accepted instance satisfies both conditions; a first draw that
// satisfies them is the unconditioned instance (same P, μ and supports); an impossible condition
// throws std::runtime_error after max_draws.
RC_GTEST_PROP(SimScbInstance, ConditionedInstancesSatisfyTheirBounds, ()) {
  const int N = *rc::gen::inRange(2, 8);
  const double ratio_max = *rc::gen::element(2.0, 5.0, 15.0);
  const double N_mu_min = *rc::gen::element(0.0, 0.3, 0.6);
  const std::uint64_t seed = *rc::gen::arbitrary<std::uint64_t>();
  Rng rng(seed), plain_rng(seed);
  const InstanceOptions plain{.N = N, .T = 40, .Q = 3};
  InstanceOptions options = plain;
  options.noise_ratio_max = ratio_max;
  options.mu_min = N_mu_min / N;
  const Instance instance = random_instance(options, rng);
  validate(instance);
  const InstanceConstants c = instance_constants(instance.P, instance.mu);
  RC_ASSERT(c.K_2 <= ratio_max * c.K_P * c.K_P);
  RC_ASSERT(instance.mu.minCoeff() >= N_mu_min / N);
  RC_ASSERT(instance.draws >= 1);
  if (instance.draws == 1) {
    const Instance unconditioned = random_instance(plain, plain_rng);
    RC_ASSERT(unconditioned.P == instance.P);
    RC_ASSERT(unconditioned.support == instance.support);
  }
}

TEST(SimScbInstance, ConstantsMatchTheirDefinitions) {
  // K_P = Σ_j μ_j ‖P_j − μ‖² and K_2 = tr(PΣPᵀΣ), written out entry by entry.
  Rng rng(3);
  const Instance instance = random_instance({.N = 4, .T = 20, .Q = 2}, rng);
  const Eigen::VectorXd& mu = instance.mu;
  double K_P = 0;
  for (int j = 0; j < 4; ++j) K_P += mu[j] * (instance.P.col(j) - mu).squaredNorm();
  Eigen::MatrixXd sigma(4, 4);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) sigma(i, j) = (i == j ? mu[i] : 0.0) - mu[i] * mu[j];
  }
  const double K_2 = (instance.P * sigma * instance.P.transpose() * sigma).trace();
  const InstanceConstants c = instance_constants(instance.P, mu);
  EXPECT_NEAR(c.K_P, K_P, 1e-14);
  EXPECT_NEAR(c.K_2, K_2, 1e-14);
}

TEST(SimScbInstance, ImpossibleConditionThrowsAfterMaxDraws) {
  Rng rng(7);
  // min μ ≤ 1/N always, so μ_min ≥ 0.6 at N = 3 has probability 0.
  EXPECT_THROW(random_instance({.N = 3, .T = 20, .Q = 2, .mu_min = 0.6, .max_draws = 50}, rng), std::runtime_error);
  EXPECT_THROW(random_instance({.N = 3, .noise_ratio_max = -1}, rng), std::invalid_argument);
  EXPECT_THROW(random_instance({.N = 3, .max_draws = 0}, rng), std::invalid_argument);
}

TEST(SimScbInstance, RejectsBadOptions) {
  Rng rng(1);
  EXPECT_THROW(random_instance({.N = 0}, rng), std::invalid_argument);
  EXPECT_THROW(random_instance({.N = 3, .T = 5, .Q = 6}, rng), std::invalid_argument);
  EXPECT_THROW(random_instance({.N = 3, .T = 5, .Q = 0}, rng), std::invalid_argument);
  EXPECT_THROW(random_instance({.N = 3, .dirichlet_concentration = 0}, rng), std::invalid_argument);
  EXPECT_THROW(random_instance({.N = 3, .identity_mix = 1.0}, rng), std::invalid_argument);
  Instance bad = random_instance({.N = 3, .T = 5, .Q = 2}, rng);
  bad.P(0, 0) += 0.1;
  EXPECT_THROW(validate(bad), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::sim::scb
