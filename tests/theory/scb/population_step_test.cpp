#include "dyncheck/theory/scb/population_step.hpp"

#include <gtest/gtest.h>

#include "dyncheck/theory/numeric/scalar.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/population_loss.hpp"
#include "test_instance.hpp"

namespace dyncheck::theory::scb {
namespace {

using S = mp50;

TEST(Stage1PopulationStep, KeepsAttentionSumsAndColumnSumsOfV) {
  const Instance<S> inst = test::random_instance<S>(4, 15, 3, 3);
  auto [V, A] = test::random_start(inst, 4, S(0), S(2));  // V = mu 1^T: column sums 1
  for (int t = 0; t < 20; ++t) stage1_population_step(inst, V, A, S("0.4"), S("0.7"));
  EXPECT_LT(to_double((A.colwise().sum().array() - 1).abs().maxCoeff()), 1e-45);
  EXPECT_LT(to_double((V.colwise().sum().array() - 1).abs().maxCoeff()), 1e-45);  // §3: 1^T V stays 1^T
}

TEST(Stage1PopulationStep, DecreasesTheLossForSmallSteps) {
  const Instance<S> inst = test::random_instance<S>(3, 10, 2, 8);
  auto [V, A] = test::random_start(inst, 9, S("0.3"), S(2));
  S previous = population_loss(inst, V, A);
  for (int t = 0; t < 50; ++t) {
    stage1_population_step(inst, V, A, S("0.1"), S("0.1"));
    const S now = population_loss(inst, V, A);
    EXPECT_LE(to_double(now - previous), 1e-45);
    previous = now;
  }
}

TEST(Stage2PopulationStep, ZeroesEntriesBelowTheThreshold) {
  const Instance<S> inst = test::random_instance<S>(3, 10, 2, 8, true);
  auto [V, A] = test::random_start(inst, 9, S(0), S(0));
  Matrix<S> V1 = V, A1 = A;
  stage1_population_step(inst, V1, A1, S("0.1"), S("0.1"));
  const S lambda("0.05");
  stage2_population_step(inst, V, A, S("0.1"), S("0.1"), lambda);
  EXPECT_EQ(to_double((V - V1).cwiseAbs().maxCoeff()), 0.0);
  for (Eigen::Index k = 0; k < 3; ++k) {
    const S threshold = S("0.1") * lambda / inst.mu[k];
    for (Eigen::Index t = 0; t < 10; ++t) {
      const S expected = abs(A1(t, k)) <= threshold ? S(0) : A1(t, k) - (A1(t, k) > 0 ? threshold : -threshold);
      EXPECT_EQ(to_double(A(t, k) - expected), 0.0);
    }
  }
}

TEST(Normalise, GivesUnitColumnSums) {
  Matrix<S> V(2, 2), A(3, 2);
  V << 1, 2, 3, 4;
  A << 1, 0, 2, 1, 1, 1;
  normalise(V, A);
  EXPECT_LT(to_double((V.colwise().sum().array() - 1).abs().maxCoeff()), 1e-48);
  EXPECT_LT(to_double((A.colwise().sum().array() - 1).abs().maxCoeff()), 1e-48);
  Matrix<S> zero = Matrix<S>::Zero(2, 2);
  EXPECT_THROW(normalise(zero, A), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::theory::scb
