#include "dyncheck/checks/verdict.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace dyncheck::checks {
namespace {

Comparison comparison(double theory, double measured, double half_width, double bias, double resolution,
                      Relation relation = Relation::equal) {
  return compare("q", {theory, 1e-3, "num"}, {measured, half_width, "stat"}, {bias, "bias"}, {resolution, "res"},
                 relation);
}

TEST(Comparison, ToleranceIsTheSumOfItsThreeTerms) {
  const Comparison c = comparison(1.0, 1.2, 0.1, 0.2, 1.0);
  EXPECT_DOUBLE_EQ(c.tolerance.total(), 1e-3 + 0.2 + 0.1);
  EXPECT_DOUBLE_EQ(c.tolerance.numerical.value, c.theory_error);
  EXPECT_DOUBLE_EQ(c.tolerance.statistical.value, c.half_width);
}

TEST(Comparison, PassesWithinToleranceAndFailsBeyondIt) {
  EXPECT_EQ(comparison(1.0, 1.25, 0.05, 0.2, 1.0).outcome(), Outcome::pass);
  EXPECT_EQ(comparison(1.0, 1.26, 0.05, 0.2, 1.0).outcome(), Outcome::fail);
  EXPECT_EQ(comparison(1.0, 0.74, 0.05, 0.2, 1.0).outcome(), Outcome::fail);
}

TEST(Comparison, IsInconclusiveWhenTheToleranceExceedsTheResolution) {
  EXPECT_EQ(comparison(1.0, 1.0, 0.5, 0.0, 0.1).outcome(), Outcome::inconclusive);
  // A discrepancy beyond even a wide tolerance is still a FAIL.
  EXPECT_EQ(comparison(1.0, 3.0, 0.5, 0.0, 0.1).outcome(), Outcome::fail);
}

TEST(Comparison, OneSidedRelationsOnlyPenaliseTheirSide) {
  EXPECT_EQ(comparison(1.0, 0.0, 0.01, 0.0, 1.0, Relation::at_most).outcome(), Outcome::pass);
  EXPECT_EQ(comparison(1.0, 2.0, 0.01, 0.0, 1.0, Relation::at_most).outcome(), Outcome::fail);
  EXPECT_EQ(comparison(1.0, 2.0, 0.01, 0.0, 1.0, Relation::at_least).outcome(), Outcome::pass);
  EXPECT_EQ(comparison(1.0, 0.0, 0.01, 0.0, 1.0, Relation::at_least).outcome(), Outcome::fail);
}

TEST(Comparison, AnyNonFiniteNumberIsAnError) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(comparison(nan, 1.0, 0.1, 0.1, 1.0).outcome(), Outcome::error);
  EXPECT_EQ(comparison(1.0, inf, 0.1, 0.1, 1.0).outcome(), Outcome::error);
  EXPECT_EQ(comparison(1.0, 1.0, nan, 0.1, 1.0).outcome(), Outcome::error);
  EXPECT_EQ(comparison(1.0, 1.0, 0.1, inf, 1.0).outcome(), Outcome::error);
}

TEST(Combine, ErrorBeatsFailBeatsInconclusiveBeatsPass) {
  const Comparison pass = comparison(1, 1, 0.1, 0, 1);
  const Comparison fail = comparison(1, 5, 0.1, 0, 1);
  const Comparison inconclusive = comparison(1, 1, 2, 0, 1);
  const Comparison error = comparison(std::numeric_limits<double>::quiet_NaN(), 1, 0.1, 0, 1);
  EXPECT_EQ(combine({pass, pass}), Outcome::pass);
  EXPECT_EQ(combine({pass, inconclusive}), Outcome::inconclusive);
  EXPECT_EQ(combine({inconclusive, fail}), Outcome::fail);
  EXPECT_EQ(combine({fail, error}), Outcome::error);
}

TEST(Combine, NothingComparedIsAnErrorNotAPass) { EXPECT_EQ(combine({}), Outcome::error); }

TEST(RequireFinite, NamesWhereTheValueCameFrom) {
  EXPECT_NO_THROW(require_finite(1.0, "x"));
  try {
    require_finite(std::numeric_limits<double>::infinity(), "replicate 3, step 17");
    FAIL();
  } catch (const NonFiniteError& error) {
    EXPECT_NE(std::string(error.what()).find("replicate 3, step 17"), std::string::npos);
  }
}

}  // namespace
}  // namespace dyncheck::checks
