// Tests of dyncheck/sim/random/bernoulli.hpp.

#include "dyncheck/sim/random/bernoulli.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "statistical_bounds.hpp"

namespace dyncheck::sim {
namespace {

TEST(SimBernoulli, EndpointsAreDeterministicAndStillUseTheEngine) {
  Rng rng(1);
  Rng reference(1);
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(bernoulli(rng, 0.0));
    EXPECT_TRUE(bernoulli(rng, 1.0));
    reference();
    reference();
  }
  EXPECT_EQ(rng, reference);
}

TEST(SimBernoulli, InvalidProbabilitiesThrow) {
  Rng rng(1);
  for (const double bad : {-0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_THROW(bernoulli(rng, bad), std::invalid_argument);
  }
}

// Frequency of true: variance p(1-p), range 1, Bernstein at the per-case rate.
RC_GTEST_PROP(SimBernoulli, FrequencyIsWithinBernsteinBound, (std::uint64_t seed)) {
  const double p = *rc::gen::inRange(0, 1001) / 1000.0;
  constexpr int draws = 20000;
  Rng rng(seed);
  int hits = 0;
  for (int i = 0; i < draws; ++i) hits += bernoulli(rng, p) ? 1 : 0;
  RC_ASSERT(std::abs(hits / double{draws} - p) <=
            test::bernstein_half_width(p * (1 - p), 1.0, draws, test::kFalseFailurePerCase));
}

}  // namespace
}  // namespace dyncheck::sim
