// Tests of dyncheck/sim/random/gamma.hpp; golden values from reference_values.py.

#include "dyncheck/sim/random/gamma.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "statistical_bounds.hpp"

namespace dyncheck::sim {
namespace {

TEST(SimGamma, FirstDrawsAreGolden) {
  struct Case {
    double shape;
    double draws[3];
  };
  const Case cases[] = {
      {0.25, {0x1.28e81f222f921p-5, 0x1.421c2097be43ep-2, 0x1.3d1b9e7565183p-3}},
      {1.0, {0x1.bb064518c9109p-1, 0x1.5f5d289575b5dp-2, 0x1.a6a6c37c7b61bp-3}},
      {2.5, {0x1.4163ef7979dd4p+1, 0x1.86cebe2d2f4c6p+0, 0x1.326d4ef9ace35p+0}},
      {100.0, {0x1.979d99cd05427p+6, 0x1.7b8de20f9367ep+6, 0x1.6fd9a00c7e7f2p+6}},
  };
  for (const Case& c : cases) {
    Rng rng(2024);
    for (const double expected : c.draws) EXPECT_EQ(gamma(rng, c.shape), expected) << c.shape;
  }
}

TEST(SimGamma, InvalidShapesThrow) {
  Rng rng(1);
  for (const double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()}) {
    EXPECT_THROW(gamma(rng, bad), std::invalid_argument);
  }
}

TEST(SimGamma, TinyShapeUnderflowsToZeroNotNaN) {
  Rng rng(3);
  for (int i = 0; i < 100; ++i) {
    const double x = gamma(rng, 1e-300);
    EXPECT_GE(x, 0.0);
  }
}

// Mean: the sum of n iid Gamma(a) is Gamma(n a), whose two-sided sub-gamma interval
// (test::gamma_sum_interval) holds with probability >= 1 - delta/2. Second moment: E X^2 =
// a(a+1), Var X^2 = E X^4 - (E X^2)^2 = a(a+1)(4a+6); median of means at delta/2. Shapes
// log-uniform on [0.01, 1000], covering the shape < 1 boost.
RC_GTEST_PROP(SimGamma, MomentsAreWithinDerivedBounds, (std::uint64_t seed)) {
  const double a = test::log_scale(*rc::gen::inRange(0, 1001), 1000, 0.01, 1000.0);
  constexpr int n = 20000;
  constexpr double delta = test::kFalseFailurePerCase / 2;
  Rng rng(seed);
  double sum = 0.0;
  std::vector<double> squares(n);
  for (double& y : squares) {
    const double x = gamma(rng, a);
    RC_ASSERT(x >= 0.0);
    sum += x;
    y = x * x;
  }
  RC_ASSERT(test::gamma_sum_interval(n * a, delta).contains(sum));
  const auto plan = test::median_of_means_plan(a * (a + 1) * (4 * a + 6), squares.size(), delta);
  RC_ASSERT(std::abs(test::median_of_means(squares, plan.blocks) - a * (a + 1)) <= plan.half_width);
}

// Whole-distribution check against the regularized incomplete gamma function P(a, x).
TEST(SimGamma, EmpiricalCdfIsWithinTheDkwBand) {
  constexpr int n = 20000;
  for (const double a : {0.05, 0.5, 1.0, 3.7, 50.0}) {
    Rng rng(7);
    std::vector<double> sample(n);
    for (double& x : sample) x = gamma(rng, a);
    const double distance =
        test::kolmogorov_distance(sample, [a](double x) { return boost::math::gamma_p(a, x); });
    EXPECT_LE(distance, test::dkw_half_width(n, test::kFalseFailurePerCase)) << "shape " << a;
  }
}

}  // namespace
}  // namespace dyncheck::sim
