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
