// Tests of dyncheck/sim/random/gamma_log.hpp.

#include "dyncheck/sim/random/gamma_log.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "dyncheck/sim/random/gamma.hpp"
#include "statistical_bounds.hpp"

namespace dyncheck::sim {
namespace {

TEST(SimGammaLog, InvalidShapesThrow) {
  Rng rng(1);
  for (const double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()}) {
    EXPECT_THROW(gamma_log(rng, bad), std::invalid_argument);
  }
}

TEST(SimGammaLog, StaysFiniteWhereGammaUnderflows) {
  Rng rng(3);
  for (int i = 0; i < 100; ++i) {
    const double l = gamma_log(rng, 1e-300);
    EXPECT_TRUE(std::isfinite(l));
    EXPECT_LT(l, std::log(std::numeric_limits<double>::denorm_min()));
  }
}

// Same engine outputs as gamma: exp(gamma_log) equals gamma up to rounding. With L = ln X
// computed to a few ulps, exp(L) has relative error <= |L| eps + O(eps); we allow
// (|L| + 4) * 4 eps. Checked only where X is a normal double (below, gamma flushes to 0 or
// loses bits as a subnormal).
RC_GTEST_PROP(SimGammaLog, ExponentialMatchesGammaOnTheSameStream, (std::uint64_t seed)) {
  const double a = test::log_scale(*rc::gen::inRange(0, 1001), 1000, 0.01, 1000.0);
  Rng for_log(seed);
  Rng for_gamma(seed);
  constexpr double eps = std::numeric_limits<double>::epsilon();
  for (int i = 0; i < 32; ++i) {
    const double l = gamma_log(for_log, a);
    const double x = gamma(for_gamma, a);
    if (x >= std::numeric_limits<double>::min()) {
      RC_ASSERT(std::abs(std::exp(l) - x) <= x * (std::abs(l) + 4) * 4 * eps);
    }
  }
  RC_ASSERT(for_log == for_gamma);
}

}  // namespace
}  // namespace dyncheck::sim
