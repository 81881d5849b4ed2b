// tests/checks/stats_test.cpp — mirrors checks/src/stats.cpp (dyncheck/checks/stats.hpp).
//
// Three kinds of test:
//  * known values: quantiles, p-values and Clopper–Pearson bounds against 50-digit references
//    computed independently of Boost and SciPy (see the comment above reference_rel_tol), and
//    small exact examples;
//  * argument validation and RapidCheck properties for exact, deterministic relations;
//  * coverage tests: many simulated replicate sets, each giving one interval; the observed
//    coverage is judged with an exact binomial (Clopper–Pearson) bound at a stated
//    false-failure rate, never with a hand-picked tolerance (specs/numerics.md §4).
#include "dyncheck/checks/stats.hpp"
#include "dyncheck/checks/stats/proportions.hpp"

#include <gtest/gtest.h>
#include <boost/math/distributions/binomial.hpp>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace stats = dyncheck::checks::stats;

namespace {

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_value = std::numeric_limits<double>::infinity();
constexpr double eps = std::numeric_limits<double>::epsilon();

// Reference values were computed with /usr/bin/python3 `decimal` at 60-120 digits from closed
// forms, independently of Boost and SciPy: Student-t CDFs for integer degrees of freedom from
// Abramowitz & Stegun 26.7.3-4, normal tails from the erf Taylor series (asymptotic erfc series
// at z = 30), Clopper–Pearson bounds from I_p(x, n-x+1) = P(Bin(n, p) >= x) as exact binomial
// sums, quantiles by 250 bisection steps. Values are quoted rounded to 17 digits.
// Trap: SciPy 1.10's stats.t.ppf is off by ~2.5e-11 relative (t.ppf(0.975, 9) =
// 2.2621571627409915 vs 2.2621571627982055), so it must not be a reference; its t.sf, norm.ppf
// and beta.ppf agree with the closed forms to <= 3e-15.
// Boost.Math double results land within a few hundred eps of these; 1e-12 relative sits above
// that and far below any formula mistake (t with n instead of n-1 degrees of freedom is a 2%
// change; a one-sided quantile is 20%).
constexpr double reference_rel_tol = 1e-12;

void expect_rel_near(double actual, double expected) {
  EXPECT_NEAR(actual, expected, reference_rel_tol * std::abs(expected))
      << "actual " << actual << " expected " << expected;
}

template <class F>
void expect_invalid_argument_mentioning(F&& f, const std::string& fragment) {
  try {
    std::invoke(std::forward<F>(f));
    ADD_FAILURE() << "expected std::invalid_argument mentioning '" << fragment << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message '" << e.what() << "' does not mention '" << fragment << "'";
  }
}

stats::Summary summary_with(std::size_t n, double mean, double variance) {
  stats::Summary s;
  s.n = n;
  s.mean = mean;
  s.variance = variance;
  s.min = mean;
  s.max = mean;
  return s;
}

}  // namespace

// ---- summaries -------------------------------------------------------------------------

TEST(StatsSummary, SmallIntegersGiveExactMoments) {
  const std::vector<double> x{3.0, 1.0, 4.0, 2.0};
  const stats::Summary s = stats::summarize(x);
  EXPECT_EQ(s.n, 4U);
  EXPECT_EQ(s.mean, 2.5);
  EXPECT_EQ(s.variance, 5.0 / 3.0);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 4.0);

  stats::RunningMoments r;
  for (const double v : x) {
    r.add(v);
  }
  const stats::Summary w = r.summary();
  EXPECT_EQ(w.n, 4U);
  EXPECT_EQ(w.mean, 2.5);
  EXPECT_EQ(w.variance, 5.0 / 3.0);
  EXPECT_EQ(w.min, 1.0);
  EXPECT_EQ(w.max, 4.0);
}

// With an offset of 1e12 the naive sum of squares loses every digit (x^2 ~ 1e24 > 2^53 ulp 1e8);
// both algorithms subtract the mean first, and here every intermediate is exactly representable.
TEST(StatsSummary, LargeOffsetDoesNotCancel) {
  const std::vector<double> x{1e12 + 4.0, 1e12 + 7.0, 1e12 + 13.0, 1e12 + 16.0};
  const stats::Summary s = stats::summarize(x);
  EXPECT_EQ(s.mean, 1e12 + 10.0);
  EXPECT_EQ(s.variance, 30.0);
  stats::RunningMoments r;
  for (const double v : x) {
    r.add(v);
  }
  EXPECT_EQ(r.summary().mean, 1e12 + 10.0);
  EXPECT_EQ(r.summary().variance, 30.0);
}

TEST(StatsSummary, EmptyAndSingleValueHaveZeroVariance) {
  const stats::Summary empty = stats::summarize({});
  EXPECT_EQ(empty.n, 0U);
  EXPECT_EQ(empty.variance, 0.0);
  const std::vector<double> one{-2.5};
  const stats::Summary s = stats::summarize(one);
  EXPECT_EQ(s.n, 1U);
  EXPECT_EQ(s.mean, -2.5);
  EXPECT_EQ(s.variance, 0.0);
  EXPECT_EQ(s.min, -2.5);
  EXPECT_EQ(s.max, -2.5);
  EXPECT_EQ(stats::RunningMoments{}.summary().n, 0U);
}

TEST(StatsSummary, NonFiniteValueIsRejectedNamingItsIndex) {
  const std::vector<double> x{1.0, 2.0, nan_value, 4.0};
  try {
    (void)stats::summarize(x);
    ADD_FAILURE() << "expected std::domain_error";
  } catch (const std::domain_error& e) {
    EXPECT_NE(std::string(e.what()).find("index 2"), std::string::npos) << e.what();
  }
  stats::RunningMoments r;
  r.add(1.0);
  try {
    r.add(-inf_value);
    ADD_FAILURE() << "expected std::domain_error";
  } catch (const std::domain_error& e) {
    EXPECT_NE(std::string(e.what()).find("index 1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(r.count(), 1U);  // the rejected value left no trace
}

// 1..3 and 4..8: means 2 and 6, M2 = 2 and 10, delta = 4, so M2 = 2 + 10 + 16 * 3*5/8 = 42 and
// s^2 = 42/7 = 6, the variance of 1..8; every step is exact in binary floating point.
TEST(StatsSummary, MergeOfTwoHalvesEqualsOnePass) {
  stats::RunningMoments a;
  stats::RunningMoments b;
  for (int i = 1; i <= 3; ++i) {
    a.add(i);
  }
  for (int i = 4; i <= 8; ++i) {
    b.add(i);
  }
  stats::RunningMoments empty;
  a.merge(empty);
  a.merge(b);
  const stats::Summary s = a.summary();
  EXPECT_EQ(s.n, 8U);
  EXPECT_EQ(s.mean, 4.5);
  EXPECT_EQ(s.variance, 6.0);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 8.0);
  empty.merge(a);
  EXPECT_EQ(empty.summary().variance, 6.0);
}

// Welford (with a Chan merge at a random split) against the corrected two-pass summary.
// Chan, Golub & LeVeque (1983) bound the updating algorithm's error in M2 by O(n u kappa M2) with
// kappa = sqrt(1 + n mean^2 / M2); since M2 <= n (max-min)^2 that is O(n^2 u (max-min)(max-min +
// |mean|)), i.e. O(n u (max-min)(max-min + max|x|)) in s^2 = M2/(n-1). The corrected two-pass error
// is smaller still. The constant 8 covers the few roundings per update; the mean differs by at
// most the two summation errors, each <= n u max|x|.
RC_GTEST_PROP(StatsSummary, WelfordAndMergeAgreeWithTwoPass, ()) {
  const auto raw = *rc::gen::nonEmpty(rc::gen::container<std::vector<std::int64_t>>(
      rc::gen::inRange<std::int64_t>(-1'000'000, 1'000'001)));
  const double offset = *rc::gen::element(0.0, 1e3, -1e6, 1e9);
  std::vector<double> x;
  double max_abs = 0.0;
  for (const std::int64_t v : raw) {
    x.push_back(offset + static_cast<double>(v) * 1e-3);
    max_abs = std::max(max_abs, std::abs(x.back()));
  }
  const std::size_t split = *rc::gen::inRange<std::size_t>(0, x.size() + 1);
  stats::RunningMoments left;
  stats::RunningMoments right;
  for (std::size_t i = 0; i < x.size(); ++i) {
    (i < split ? left : right).add(x[i]);
  }
  left.merge(right);
  const stats::Summary w = left.summary();
  const stats::Summary s = stats::summarize(x);
  const double n = static_cast<double>(x.size());
  const double spread = s.max - s.min;
  RC_ASSERT(w.n == s.n);
  RC_ASSERT(w.min == s.min);
  RC_ASSERT(w.max == s.max);
  RC_ASSERT(std::abs(w.mean - s.mean) <= 2.0 * (n + 1.0) * eps * max_abs);
  RC_ASSERT(std::abs(w.variance - s.variance) <= 8.0 * (n + 1.0) * eps * spread * (spread + max_abs));
}

// ---- half-widths: known values ------------------------------------------------------------

// t_{0.975, 9} = 2.2621571627982055 (A&S 26.7.3 closed form)
TEST(StatsHalfWidth, StudentTUsesTabulatedQuantileWithNMinusOneDegrees) {
  const stats::HalfWidth h = stats::student_t_half_width(summary_with(10, 0.0, 4.0), 0.05);
  expect_rel_near(h.value, 2.2621571627982055 * 2.0 / std::sqrt(10.0));
  EXPECT_EQ(h.method, stats::HalfWidthMethod::student_t);
  EXPECT_EQ(h.delta, 0.05);
  EXPECT_NE(h.reason.find("n = 10"), std::string::npos) << h.reason;
  EXPECT_NE(h.reason.find("delta = 0.05"), std::string::npos) << h.reason;
  EXPECT_NE(h.reason.find("approximately normal"), std::string::npos) << h.reason;
  // t_{0.995, 4} = 4.6040948713499932 (A&S 26.7.4 closed form)
  expect_rel_near(stats::student_t_half_width(summary_with(5, 1.0, 1.0), 0.01).value,
                  4.6040948713499932 / std::sqrt(5.0));
}

// z_{0.975} = 1.9599639845400542; z_{1 - 0.5e-9} = 6.1094102048693971 (tests the upper-tail route).
TEST(StatsHalfWidth, NormalUsesTabulatedQuantile) {
  const stats::HalfWidth h = stats::normal_half_width(summary_with(25, 0.0, 9.0), 0.05);
  expect_rel_near(h.value, 1.9599639845400542 * 3.0 / 5.0);
  EXPECT_EQ(h.method, stats::HalfWidthMethod::normal);
  EXPECT_NE(h.reason.find("n = 25"), std::string::npos) << h.reason;
  expect_rel_near(stats::normal_half_width(summary_with(4, 0.0, 1.0), 1e-9).value,
                  6.1094102048693971 / 2.0);
}

// 2 * sqrt(ln(40) / 200) = 0.2716203031481239 (python3 math)
TEST(StatsHalfWidth, HoeffdingMatchesClosedForm) {
  const stats::HalfWidth h = stats::hoeffding_half_width(100, 2.0, 0.05);
  expect_rel_near(h.value, 0.2716203031481239);
  EXPECT_EQ(h.method, stats::HalfWidthMethod::hoeffding);
  EXPECT_EQ(h.delta, 0.05);
  EXPECT_NE(h.reason.find("n = 100"), std::string::npos) << h.reason;
  EXPECT_NE(h.reason.find("range = 2"), std::string::npos) << h.reason;
  stats::Summary s = summary_with(100, 0.5, 0.1);
  s.min = -0.5;
  s.max = 1.5;
  EXPECT_EQ(stats::hoeffding_half_width(s, 2.0, 0.05).value, h.value);
}

// sqrt(2 * 0.04 * ln(40) / 50) + 7 ln(40) / (3 * 49) = 0.25248674969197155 (python3 math)
TEST(StatsHalfWidth, EmpiricalBernsteinMatchesClosedForm) {
  stats::Summary s = summary_with(50, 0.3, 0.04);
  s.min = 0.0;
  s.max = 1.0;
  const stats::HalfWidth h = stats::empirical_bernstein_half_width(s, 1.0, 0.1);
  expect_rel_near(h.value, 0.25248674969197155);
  EXPECT_EQ(h.method, stats::HalfWidthMethod::empirical_bernstein);
  EXPECT_NE(h.reason.find("n = 50"), std::string::npos) << h.reason;
  EXPECT_NE(h.reason.find("delta = 0.1"), std::string::npos) << h.reason;
  EXPECT_NE(h.reason.find("range = 1"), std::string::npos) << h.reason;
}

TEST(StatsHalfWidth, MethodNamesAndDispatch) {
  EXPECT_EQ(stats::to_string(stats::HalfWidthMethod::student_t), "student_t");
  EXPECT_EQ(stats::to_string(stats::HalfWidthMethod::normal), "normal");
  EXPECT_EQ(stats::to_string(stats::HalfWidthMethod::hoeffding), "hoeffding");
  EXPECT_EQ(stats::to_string(stats::HalfWidthMethod::empirical_bernstein), "empirical_bernstein");

  stats::Summary s = summary_with(30, 0.5, 0.05);
  s.min = 0.1;
  s.max = 0.9;
  EXPECT_EQ(stats::half_width(stats::HalfWidthMethod::student_t, s, 0.01).value,
            stats::student_t_half_width(s, 0.01).value);
  EXPECT_EQ(stats::half_width(stats::HalfWidthMethod::normal, s, 0.01).value,
            stats::normal_half_width(s, 0.01).value);
  EXPECT_EQ(stats::half_width(stats::HalfWidthMethod::hoeffding, s, 0.01, 1.0).value,
            stats::hoeffding_half_width(30, 1.0, 0.01).value);
  EXPECT_EQ(stats::half_width(stats::HalfWidthMethod::empirical_bernstein, s, 0.01, 1.0).value,
            stats::empirical_bernstein_half_width(s, 1.0, 0.01).value);
  expect_invalid_argument_mentioning(
      [&] { (void)stats::half_width(stats::HalfWidthMethod::hoeffding, s, 0.01); }, "range");
}

TEST(StatsHalfWidth, InvalidArgumentsAreRejectedByName) {
  const stats::Summary ok = summary_with(10, 0.0, 1.0);
  for (const double bad_delta : {0.0, 1.0, -0.1, 1.5, nan_value}) {
    expect_invalid_argument_mentioning([&] { (void)stats::student_t_half_width(ok, bad_delta); },
                                       "delta");
    expect_invalid_argument_mentioning([&] { (void)stats::normal_half_width(ok, bad_delta); },
                                       "delta");
    expect_invalid_argument_mentioning(
        [&] { (void)stats::hoeffding_half_width(10, 1.0, bad_delta); }, "delta");
    expect_invalid_argument_mentioning(
        [&] { (void)stats::empirical_bernstein_half_width(ok, 1.0, bad_delta); }, "delta");
  }
  for (const double bad_range : {0.0, -1.0, inf_value, nan_value}) {
    expect_invalid_argument_mentioning(
        [&] { (void)stats::hoeffding_half_width(10, bad_range, 0.05); }, "range");
    expect_invalid_argument_mentioning(
        [&] { (void)stats::empirical_bernstein_half_width(ok, bad_range, 0.05); }, "range");
  }
  const stats::Summary one = summary_with(1, 0.0, 0.0);
  expect_invalid_argument_mentioning([&] { (void)stats::student_t_half_width(one, 0.05); },
                                     "summary.n");
  expect_invalid_argument_mentioning([&] { (void)stats::normal_half_width(one, 0.05); },
                                     "summary.n");
  expect_invalid_argument_mentioning(
      [&] { (void)stats::empirical_bernstein_half_width(one, 1.0, 0.05); }, "summary.n");
  expect_invalid_argument_mentioning([&] { (void)stats::hoeffding_half_width(0, 1.0, 0.05); },
                                     "n = 0");
  expect_invalid_argument_mentioning(
      [&] { (void)stats::student_t_half_width(summary_with(10, 0.0, -1.0), 0.05); }, "variance");
  expect_invalid_argument_mentioning(
      [&] { (void)stats::student_t_half_width(summary_with(10, nan_value, 1.0), 0.05); }, "mean");
  // Data spread wider than the promised range voids the finite-sample bounds.
  stats::Summary wide = summary_with(10, 0.5, 0.1);
  wide.min = -0.25;
  wide.max = 1.0;
  expect_invalid_argument_mentioning(
      [&] { (void)stats::empirical_bernstein_half_width(wide, 1.0, 0.05); }, "max - min");
  expect_invalid_argument_mentioning([&] { (void)stats::hoeffding_half_width(wide, 1.0, 0.05); },
                                     "max - min");
}

RC_GTEST_PROP(StatsHalfWidth, WidthsShrinkWithDeltaAndN, ()) {
  const std::size_t n = *rc::gen::inRange<std::size_t>(2, 10'000);
  const double delta = static_cast<double>(*rc::gen::inRange(1, 999)) / 1000.0;
  const double larger_delta = delta + (1.0 - delta) / 2.0;
  const double variance = static_cast<double>(*rc::gen::inRange(0, 1000)) / 4000.0;
  stats::Summary s = summary_with(n, 0.5, variance);
  s.min = 0.0;
  s.max = 1.0;
  stats::Summary bigger = s;
  bigger.n = n + 1;
  using HW = stats::HalfWidth (*)(const stats::Summary&, double);
  for (const HW f : {HW{&stats::student_t_half_width}, HW{&stats::normal_half_width}}) {
    RC_ASSERT(f(s, larger_delta).value <= f(s, delta).value);
    RC_ASSERT(f(bigger, delta).value <= f(s, delta).value);
  }
  RC_ASSERT(stats::hoeffding_half_width(n, 1.0, larger_delta).value <
            stats::hoeffding_half_width(n, 1.0, delta).value);
  RC_ASSERT(stats::hoeffding_half_width(n + 1, 1.0, delta).value <
            stats::hoeffding_half_width(n, 1.0, delta).value);
  RC_ASSERT(stats::empirical_bernstein_half_width(s, 1.0, larger_delta).value <
            stats::empirical_bernstein_half_width(s, 1.0, delta).value);
  RC_ASSERT(stats::empirical_bernstein_half_width(bigger, 1.0, delta).value <
            stats::empirical_bernstein_half_width(s, 1.0, delta).value);
  // Student-t is always wider than normal (heavier tails), for every finite n.
  RC_ASSERT(stats::student_t_half_width(s, delta).value >= stats::normal_half_width(s, delta).value);
}

// ---- multiplicity and p-values ----------------------------------------------------------

TEST(StatsMultiplicity, BonferroniShareDividesEvenly) {
  EXPECT_DOUBLE_EQ(stats::bonferroni_share(1e-3, 20), 5e-5);
  EXPECT_EQ(stats::bonferroni_share(0.5, 1), 0.5);
  expect_invalid_argument_mentioning([] { (void)stats::bonferroni_share(1e-3, 0); },
                                     "number_of_checks");
  for (const double bad : {0.0, 1.0, -1e-3, nan_value}) {
    expect_invalid_argument_mentioning([&] { (void)stats::bonferroni_share(bad, 3); },
                                       "delta_total");
  }
}

TEST(StatsMultiplicity, HolmStepsDownInSortedOrderAndAnswersInInputOrder) {
  // sorted 0.005 <= 0.05/4, 0.01 <= 0.05/3, 0.03 > 0.05/2 -> stop.
  const std::vector<double> p{0.01, 0.04, 0.03, 0.005};
  EXPECT_EQ(stats::holm_reject(p, 0.05), (std::vector<bool>{true, false, false, true}));
  // 0.5 is accepted, but 0.002 (<= 0.05/2) comes before it in sorted order.
  const std::vector<double> q{0.001, 0.5, 0.002};
  EXPECT_EQ(stats::holm_reject(q, 0.05), (std::vector<bool>{true, false, true}));
  // Every p <= 0.05, yet the smallest fails 0.05/3, so nothing is rejected.
  const std::vector<double> r{0.02, 0.02, 0.02};
  EXPECT_EQ(stats::holm_reject(r, 0.05), (std::vector<bool>{false, false, false}));
  EXPECT_TRUE(stats::holm_reject({}, 0.05).empty());
}

TEST(StatsMultiplicity, HolmRejectsWhereBonferroniDoesNot) {
  // Bonferroni at 0.06/3 = 0.02 rejects only 0.01; Holm: 0.01 <= 0.02, 0.025 <= 0.03, 0.04 <= 0.06.
  const std::vector<double> p{0.04, 0.01, 0.025};
  EXPECT_EQ(stats::holm_reject(p, 0.06), (std::vector<bool>{true, true, true}));
  const double share = stats::bonferroni_share(0.06, p.size());
  EXPECT_FALSE(p[0] <= share);
  EXPECT_TRUE(p[1] <= share);
  EXPECT_FALSE(p[2] <= share);
}

TEST(StatsMultiplicity, HolmAdjustedPValuesAreMonotoneInSortedOrder) {
  // sorted: 4*0.005 = 0.02, 3*0.01 = 0.03, 2*0.03 = 0.06, 1*0.04 -> max(0.06, 0.04) = 0.06.
  const std::vector<double> p{0.01, 0.04, 0.03, 0.005};
  const std::vector<double> adjusted = stats::holm_adjusted_p_values(p);
  ASSERT_EQ(adjusted.size(), 4U);
  EXPECT_DOUBLE_EQ(adjusted[0], 0.03);
  EXPECT_DOUBLE_EQ(adjusted[1], 0.06);
  EXPECT_DOUBLE_EQ(adjusted[2], 0.06);
  EXPECT_DOUBLE_EQ(adjusted[3], 0.02);
  const std::vector<double> capped{0.6, 0.9};
  EXPECT_EQ(stats::holm_adjusted_p_values(capped), (std::vector<double>{1.0, 1.0}));
}

TEST(StatsMultiplicity, InvalidPValuesAndDeltaAreRejectedByName) {
  const std::vector<double> p{0.1, 1.5};
  expect_invalid_argument_mentioning([&] { (void)stats::holm_reject(p, 0.05); }, "p_values[1]");
  expect_invalid_argument_mentioning([&] { (void)stats::holm_adjusted_p_values(p); },
                                     "p_values[1]");
  const std::vector<double> with_nan{nan_value};
  expect_invalid_argument_mentioning([&] { (void)stats::holm_reject(with_nan, 0.05); },
                                     "p_values[0]");
  const std::vector<double> fine{0.1};
  expect_invalid_argument_mentioning([&] { (void)stats::holm_reject(fine, 0.0); }, "delta");
}

// Holm at level delta rejects exactly the hypotheses whose adjusted p-value is <= delta, and at
// least what Bonferroni rejects. The two implementations compare p <= delta/k and k*p <= delta,
// which could disagree by rounding only if k*p were within a few ulps of delta. With
// p = (2i+1)/2051 and delta = a/64 (a < 64), k*p = delta would need 64 k (2i+1) = 2051 a, impossible
// as 2051 is odd and a < 64; so |k p - delta| >= 1/(2051*64) ~ 7.6e-6, far above rounding.
RC_GTEST_PROP(StatsMultiplicity, HolmAgreesWithAdjustedPValuesAndDominatesBonferroni, ()) {
  const auto numerators = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 1025));
  const double delta = static_cast<double>(*rc::gen::inRange(1, 64)) / 64.0;
  std::vector<double> p;
  for (const int i : numerators) {
    p.push_back(static_cast<double>(2 * i + 1) / 2051.0);
  }
  const std::vector<bool> holm = stats::holm_reject(p, delta);
  const std::vector<double> adjusted = stats::holm_adjusted_p_values(p);
  RC_ASSERT(holm.size() == p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    RC_ASSERT(holm[i] == (adjusted[i] <= delta));
    if (p[i] <= stats::bonferroni_share(delta, p.size())) {
      RC_ASSERT(holm[i]);
    }
  }
}

// 2 Q(1.96) = 0.049995790296440868; 2 P(T_7 > 2.5) = 0.040992218585752897 (closed forms);
// non-integer degrees of freedom have no closed form: 2*scipy.stats.t.sf(10, 3.5) =
// 0.0010714758956126636 (SciPy's t.sf matches the closed forms to 5e-16 at integer df).
TEST(StatsPValue, TwoSidedPValuesMatchScipy) {
  expect_rel_near(stats::two_sided_p_value_normal(1.96), 0.049995790296440868);
  expect_rel_near(stats::two_sided_p_value_normal(-1.96), 0.049995790296440868);
  expect_rel_near(stats::two_sided_p_value_student_t(2.5, 7.0), 0.040992218585752897);
  expect_rel_near(stats::two_sided_p_value_student_t(-2.5, 7.0), 0.040992218585752897);
  expect_rel_near(stats::two_sided_p_value_student_t(10.0, 3.5), 0.0010714758956126636);
  EXPECT_EQ(stats::two_sided_p_value_normal(0.0), 1.0);
  EXPECT_EQ(stats::two_sided_p_value_normal(inf_value), 0.0);
  EXPECT_EQ(stats::two_sided_p_value_student_t(-inf_value, 3.0), 0.0);
  EXPECT_EQ(stats::two_sided_p_value_student_t(1.96, inf_value),
            stats::two_sided_p_value_normal(1.96));
  // The upper-tail route keeps digits where 1 - cdf would round to 0:
  // 2 Q(30) = 9.8134278542963741e-198, 2 P(T_5 > 30) = 7.7186486204960520e-07.
  expect_rel_near(stats::two_sided_p_value_normal(30.0), 9.8134278542963741e-198);
  expect_rel_near(stats::two_sided_p_value_student_t(30.0, 5.0), 7.7186486204960520e-07);
  expect_invalid_argument_mentioning([] { (void)stats::two_sided_p_value_normal(nan_value); }, "z");
  expect_invalid_argument_mentioning([] { (void)stats::two_sided_p_value_student_t(1.0, 0.0); },
                                     "degrees_of_freedom");
  expect_invalid_argument_mentioning(
      [] { (void)stats::two_sided_p_value_student_t(1.0, nan_value); }, "degrees_of_freedom");
  expect_invalid_argument_mentioning([] { (void)stats::two_sided_p_value_student_t(nan_value, 3.0); },
                                     "t = nan");
}

// ---- Clopper–Pearson ----------------------------------------------------------------------

// Exact binomial-sum references: 0/10 upper = 1 - 0.025^(1/10) = 0.30849710781876082;
// 5/10 = [0.18708602844739853, 0.81291397155260147]; 10/10 lower = 0.025^(1/10) = 0.69150289218123918;
// 3/1000 at 0.99 = [3.3814452906649326e-4, 0.010933777420405242].
TEST(StatsClopperPearson, MatchesExactBinomialReferences) {
  const stats::Interval none = stats::clopper_pearson(0, 10, 0.95);
  EXPECT_EQ(none.lower, 0.0);
  expect_rel_near(none.upper, 0.30849710781876082);
  const stats::Interval half = stats::clopper_pearson(5, 10, 0.95);
  expect_rel_near(half.lower, 0.18708602844739853);
  expect_rel_near(half.upper, 0.81291397155260147);
  const stats::Interval all = stats::clopper_pearson(10, 10, 0.95);
  expect_rel_near(all.lower, 0.69150289218123918);
  EXPECT_EQ(all.upper, 1.0);
  const stats::Interval rare = stats::clopper_pearson(3, 1000, 0.99);
  expect_rel_near(rare.lower, 3.3814452906649326e-4);
  expect_rel_near(rare.upper, 0.010933777420405242);
}

TEST(StatsClopperPearson, InvalidArgumentsAreRejectedByName) {
  expect_invalid_argument_mentioning([] { (void)stats::clopper_pearson(0, 0, 0.95); }, "trials");
  expect_invalid_argument_mentioning([] { (void)stats::clopper_pearson(11, 10, 0.95); },
                                     "successes");
  for (const double bad : {0.0, 1.0, 1.2, nan_value}) {
    expect_invalid_argument_mentioning([&] { (void)stats::clopper_pearson(3, 10, bad); },
                                       "confidence");
  }
}

RC_GTEST_PROP(StatsClopperPearson, ContainsTheEstimateAndWidensWithConfidence, ()) {
  const std::size_t trials = *rc::gen::inRange<std::size_t>(1, 5000);
  const std::size_t successes = *rc::gen::inRange<std::size_t>(0, trials + 1);
  const double confidence = static_cast<double>(*rc::gen::inRange(1, 999)) / 1000.0;
  const double higher = confidence + (1.0 - confidence) / 2.0;
  const double estimate = static_cast<double>(successes) / static_cast<double>(trials);
  const stats::Interval i = stats::clopper_pearson(successes, trials, confidence);
  const stats::Interval wide = stats::clopper_pearson(successes, trials, higher);
  RC_ASSERT(0.0 <= i.lower);
  RC_ASSERT(i.lower <= estimate);
  RC_ASSERT(estimate <= i.upper);
  RC_ASSERT(i.upper <= 1.0);
  RC_ASSERT(wide.lower <= i.lower);
  RC_ASSERT(i.upper <= wide.upper);
}

// ---- Wilson and Newcombe --------------------------------------------------------------------
// References: scipy (norm.isf(0.025) for z), the closed forms of binomial.hpp evaluated in double by
// /usr/bin/python3 (numpy), 2026-11-24.

TEST(StatsWilson, MatchesReferences) {
  const stats::Interval none = stats::wilson(0, 10, 0.95);
  EXPECT_EQ(none.lower, 0.0);
  EXPECT_NEAR(none.upper, 0.2775327998628893, 1e-13);
  const stats::Interval half = stats::wilson(5, 10, 0.95);
  EXPECT_NEAR(half.lower, 0.236593090512564, 1e-13);
  EXPECT_NEAR(half.upper, 0.7634069094874361, 1e-13);
  const stats::Interval all = stats::wilson(10, 10, 0.95);
  EXPECT_NEAR(all.lower, 0.7224672001371107, 1e-13);
  EXPECT_EQ(all.upper, 1.0);
  const stats::Interval rare = stats::wilson(3, 1000, 0.95);
  EXPECT_NEAR(rare.lower, 0.0010207838811386186, 1e-15);
  EXPECT_NEAR(rare.upper, 0.008783014053503176, 1e-15);
}

TEST(StatsNewcombe, MatchesReferences) {
  const auto expect = [](std::size_t x1, std::size_t n1, std::size_t x2, std::size_t n2, double lower, double upper) {
    const stats::Interval i = stats::newcombe_difference(x1, n1, x2, n2, 0.95);
    EXPECT_NEAR(i.lower, lower, 1e-13) << x1 << "/" << n1 << " - " << x2 << "/" << n2;
    EXPECT_NEAR(i.upper, upper, 1e-13) << x1 << "/" << n1 << " - " << x2 << "/" << n2;
  };
  expect(39, 40, 6, 40, 0.6501277224282009, 0.9070105438829762);
  expect(0, 10, 0, 10, -0.2775327998628893, 0.2775327998628893);
  expect(5, 10, 5, 10, -0.3725136238199143, 0.3725136238199143);
  expect(40, 40, 0, 40, 0.8760843432299504, 1.0);
  expect(1, 3, 2, 7, -0.3997870992877851, 0.549712513769747);
}

TEST(StatsWilsonNewcombe, InvalidArgumentsAreRejectedByName) {
  expect_invalid_argument_mentioning([] { (void)stats::wilson(0, 0, 0.95); }, "trials");
  expect_invalid_argument_mentioning([] { (void)stats::wilson(11, 10, 0.95); }, "successes");
  expect_invalid_argument_mentioning([] { (void)stats::wilson(1, 10, 1.0); }, "confidence");
  expect_invalid_argument_mentioning([] { (void)stats::newcombe_difference(1, 0, 1, 3, 0.95); }, "trials1");
  expect_invalid_argument_mentioning([] { (void)stats::newcombe_difference(1, 3, 4, 3, 0.95); }, "successes2");
  expect_invalid_argument_mentioning([] { (void)stats::newcombe_difference(1, 3, 1, 3, 0.0); }, "confidence");
}

RC_GTEST_PROP(StatsWilsonNewcombe, ContainTheEstimateAndWidenWithConfidence, ()) {
  const std::size_t n1 = *rc::gen::inRange<std::size_t>(1, 2000);
  const std::size_t x1 = *rc::gen::inRange<std::size_t>(0, n1 + 1);
  const std::size_t n2 = *rc::gen::inRange<std::size_t>(1, 2000);
  const std::size_t x2 = *rc::gen::inRange<std::size_t>(0, n2 + 1);
  const double confidence = static_cast<double>(*rc::gen::inRange(1, 999)) / 1000.0;
  const double higher = confidence + (1.0 - confidence) / 2.0;
  const double p1 = static_cast<double>(x1) / static_cast<double>(n1);
  const double p2 = static_cast<double>(x2) / static_cast<double>(n2);
  const stats::Interval w = stats::wilson(x1, n1, confidence), wide = stats::wilson(x1, n1, higher);
  RC_ASSERT(0.0 <= w.lower);
  RC_ASSERT(w.lower <= p1 + 1e-15);
  RC_ASSERT(p1 <= w.upper + 1e-15);
  RC_ASSERT(w.upper <= 1.0);
  RC_ASSERT(wide.lower <= w.lower + 1e-15);
  RC_ASSERT(w.upper <= wide.upper + 1e-15);
  const stats::Interval d = stats::newcombe_difference(x1, n1, x2, n2, confidence);
  const stats::Interval dw = stats::newcombe_difference(x1, n1, x2, n2, higher);
  RC_ASSERT(-1.0 <= d.lower);
  RC_ASSERT(d.lower <= p1 - p2 + 1e-15);
  RC_ASSERT(p1 - p2 <= d.upper + 1e-15);
  RC_ASSERT(d.upper <= 1.0);
  RC_ASSERT(dw.lower <= d.lower + 1e-15);
  RC_ASSERT(d.upper <= dw.upper + 1e-15);
  // swapping the samples mirrors the interval
  const stats::Interval swapped = stats::newcombe_difference(x2, n2, x1, n1, confidence);
  RC_ASSERT(std::abs(swapped.lower + d.upper) <= 1e-14);
  RC_ASSERT(std::abs(swapped.upper + d.lower) <= 1e-14);
}

// ---- exact coverage of the proportion intervals ---------------------------------------------
//
// For a binomial the coverage at p is a finite sum, sum_x P(X = x) 1[p in I(x)], so it is computed
// exactly (no simulation, no judgement error): on a grid of p (and of (p1, p2) for the difference).
//  * Clopper-Pearson promises coverage >= confidence at every p: asserted at every grid point.
//  * Wilson and Newcombe promise nothing pointwise (their coverage oscillates, far below the
//    confidence near p = 0 or 1); what they are used for, reporting, rests on their mean coverage
//    over p being near the confidence (Brown, Cai, DasGupta 2001, Fig. 5 and Sec. 4.1.1; Newcombe 1998,
//    Table II: mean 0.956 at 0.95). Asserted: |mean - confidence| <= 0.02 (measured: at most 0.0153, Wilson
//    n = 10 at 0.8); the minimum is printed. A miscalibrated quantile (z of 0.90 used for 0.95) moves the
//    mean by ~0.05 and fails.
//  * Newcombe at an extreme confidence (one-sided 2.5e-6, a claim's share) is anti-conservative at
//    p1 = p2 = 1/2, n1 = n2 = 40: asserted, so that nobody decides a claim with it (the kernels separation
//    claim decides with Clopper-Pearson bounds and reports Newcombe).

namespace {

double binomial_pmf(std::size_t k, std::size_t n, double p) {
  return boost::math::pdf(boost::math::binomial_distribution<double>(static_cast<double>(n), p), static_cast<double>(k));
}

std::vector<double> binomial_pmfs(std::size_t n, double p) {
  std::vector<double> pmf(n + 1);
  for (std::size_t k = 0; k <= n; ++k) pmf[k] = binomial_pmf(k, n, p);
  return pmf;
}

/// The intervals for x = 0..n, computed once (they do not depend on p).
template <class IntervalOf>
std::vector<stats::Interval> intervals_for(std::size_t n, IntervalOf interval_of) {
  std::vector<stats::Interval> out;
  for (std::size_t x = 0; x <= n; ++x) out.push_back(interval_of(x));
  return out;
}

double exact_coverage(std::size_t n, double p, const std::vector<stats::Interval>& intervals) {
  const std::vector<double> pmf = binomial_pmfs(n, p);
  double covered = 0;
  for (std::size_t x = 0; x <= n; ++x) {
    if (intervals[x].lower <= p && p <= intervals[x].upper) covered += pmf[x];
  }
  return covered;
}

}  // namespace

TEST(StatsProportionCoverage, ClopperPearsonCoversAtEveryP) {
  for (const double confidence : {0.8, 0.95}) {
    for (const std::size_t n : {1U, 2U, 5U, 10U, 40U, 100U}) {
      double worst = 1;
      const auto intervals = intervals_for(n, [&](std::size_t x) { return stats::clopper_pearson(x, n, confidence); });
      for (int k = 1; k < 1000; ++k) worst = std::min(worst, exact_coverage(n, k / 1000.0, intervals));
      std::cout << "[coverage] clopper_pearson n = " << n << ", confidence " << confidence << ": min " << worst << "\n";
      EXPECT_GE(worst, confidence - 1e-12) << "n = " << n;
    }
  }
}

TEST(StatsProportionCoverage, WilsonMeanCoverageIsNearTheConfidence) {
  for (const double confidence : {0.8, 0.95}) {
    for (const std::size_t n : {10U, 40U, 100U}) {
      double sum = 0, worst = 1, mis_sum = 0;
      const auto intervals = intervals_for(n, [&](std::size_t x) { return stats::wilson(x, n, confidence); });
      // the same interval with the quantile of a lower confidence (1 - 2(1 - confidence)): must be caught
      const auto miscalibrated = intervals_for(n, [&](std::size_t x) { return stats::wilson(x, n, 1 - 2 * (1 - confidence)); });
      for (int k = 1; k < 1000; ++k) {
        const double c = exact_coverage(n, k / 1000.0, intervals);
        sum += c;
        worst = std::min(worst, c);
        mis_sum += exact_coverage(n, k / 1000.0, miscalibrated);
      }
      const double mean = sum / 999, mis_mean = mis_sum / 999;
      std::cout << "[coverage] wilson n = " << n << ", confidence " << confidence << ": mean " << mean << ", min " << worst
                << "; miscalibrated mean " << mis_mean << "\n";
      EXPECT_LE(std::abs(mean - confidence), 0.02) << "n = " << n;
      EXPECT_GT(std::abs(mis_mean - confidence), 0.02) << "n = " << n;
    }
  }
}

TEST(StatsProportionCoverage, NewcombeMeanCoverageIsNearTheConfidence) {
  for (const double confidence : {0.8, 0.95}) {
    for (const auto& [n1, n2] : {std::pair<std::size_t, std::size_t>{10, 10}, {40, 40}, {10, 40}}) {
      double sum = 0, worst = 1;
      int count = 0;
      std::vector<stats::Interval> table;  // (x1, x2) row-major
      for (std::size_t x1 = 0; x1 <= n1; ++x1) {
        for (std::size_t x2 = 0; x2 <= n2; ++x2) table.push_back(stats::newcombe_difference(x1, n1, x2, n2, confidence));
      }
      for (int k1 = 1; k1 < 100; k1 += 2) {
        const std::vector<double> pmf1 = binomial_pmfs(n1, k1 / 100.0);
        for (int k2 = 1; k2 < 100; k2 += 2) {
          const std::vector<double> pmf2 = binomial_pmfs(n2, k2 / 100.0);
          const double diff = (k1 - k2) / 100.0;
          double c = 0;
          for (std::size_t x1 = 0; x1 <= n1; ++x1) {
            for (std::size_t x2 = 0; x2 <= n2; ++x2) {
              const stats::Interval& i = table[x1 * (n2 + 1) + x2];
              if (i.lower <= diff && diff <= i.upper) c += pmf1[x1] * pmf2[x2];
            }
          }
          sum += c;
          worst = std::min(worst, c);
          ++count;
        }
      }
      const double mean = sum / count;
      std::cout << "[coverage] newcombe n = (" << n1 << ", " << n2 << "), confidence " << confidence << ": mean " << mean
                << ", min " << worst << "\n";
      EXPECT_LE(std::abs(mean - confidence), 0.02) << "n = " << n1 << ", " << n2;
    }
  }
}

TEST(StatsProportionCoverage, NewcombeIsAntiConservativeAtAClaimsShare) {
  // P(upper bound < 0) at p1 = p2 = 1/2, n1 = n2 = 40, nominal one-sided 2.5e-6 (two-sided 1 - 5e-6)
  const std::size_t n = 40;
  const std::vector<double> pmf = binomial_pmfs(n, 0.5);
  double error = 0;
  for (std::size_t x1 = 0; x1 <= n; ++x1) {
    for (std::size_t x2 = 0; x2 <= n; ++x2) {
      if (stats::newcombe_difference(x1, n, x2, n, 1 - 5e-6).upper < 0) error += pmf[x1] * pmf[x2];
    }
  }
  std::cout << "[coverage] newcombe one-sided error at nominal 2.5e-6, n = 40, p = 1/2: " << error << "\n";
  EXPECT_GT(error, 2.5e-6);
}

// ---- coverage --------------------------------------------------------------------------------
//
// Each coverage test draws R independent replicate sets of n values with a known mean mu, forms
// one interval [mean - h, mean + h] per set, and counts the C sets whose interval contains mu.
// C ~ Binomial(R, c) where c is the method's true coverage. The judgement uses the exact
// Clopper–Pearson interval [L, U] for c at confidence 1 - gamma, gamma = 1e-6 (itself checked
// against exact binomial sums above):
//   * conservative methods (Hoeffding, empirical Bernstein) promise c >= 1 - delta; the test
//     fails iff U < 1 - delta. If the promise holds, U < 1 - delta <= c needs the upper tail of
//     the CP interval to miss, which has probability <= gamma/2 = 5e-7;
//   * exact methods (Student t on normal data) promise c = 1 - delta; the test fails iff
//     1 - delta is outside [L, U], probability <= gamma = 1e-6.
// Ten coverage judgements below (two two-sided, eight one-sided), so the group falsely fails with
// probability <= 2 * 1e-6 + 8 * 5e-7 = 6e-6 over the choice of seeds (union bound); with the fixed
// seeds here the outcome is deterministic.
// The "undercoverage is detected" tests show the same judgement has power at these R and n.
//
// Random numbers: std::mt19937_64 (fully specified by the standard) with hand-written uniform and
// Box–Muller transforms, so the streams are the same on every platform (numerics.md §4).

namespace {

constexpr double coverage_gamma = 1e-6;

class ReplicateRng {
 public:
  explicit ReplicateRng(std::uint64_t seed) : engine_(seed) {}
  // 53 random bits -> [0, 1).
  double uniform() { return static_cast<double>(engine_() >> 11U) * 0x1.0p-53; }
  // Box–Muller; 1 - u in (0, 1] keeps the log finite. The second variate is discarded: simpler,
  // and the tests are not throughput-bound.
  double standard_normal() {
    const double u1 = 1.0 - uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  std::mt19937_64 engine_;
};

struct CoverageResult {
  std::size_t covered = 0;
  std::size_t replicates = 0;
  [[nodiscard]] double fraction() const {
    return static_cast<double>(covered) / static_cast<double>(replicates);
  }
  [[nodiscard]] stats::Interval interval() const {
    return stats::clopper_pearson(covered, replicates, 1.0 - coverage_gamma);
  }
};

// draw(rng) -> one replicate value; half_width_of(summary) -> h.
template <class Draw, class HalfWidthOf>
CoverageResult measure_coverage(std::uint64_t seed, std::size_t replicates, std::size_t n,
                                double true_mean, Draw draw, HalfWidthOf half_width_of) {
  ReplicateRng rng(seed);
  std::vector<double> values(n);
  CoverageResult result;
  result.replicates = replicates;
  for (std::size_t r = 0; r < replicates; ++r) {
    for (double& v : values) {
      v = draw(rng);
    }
    const stats::Summary s = stats::summarize(values);
    if (std::abs(s.mean - true_mean) <= half_width_of(s)) {
      ++result.covered;
    }
  }
  return result;
}

void report(const std::string& what, const CoverageResult& c, double promised) {
  const stats::Interval ci = c.interval();
  std::cout << "[coverage] " << what << ": " << c.covered << "/" << c.replicates << " = "
            << c.fraction() << ", CP(1-1e-6) [" << ci.lower << ", " << ci.upper
            << "], promised " << promised << "\n";
}

void expect_coverage_at_least(const std::string& what, const CoverageResult& c, double promised) {
  report(what, c, promised);
  EXPECT_GE(c.interval().upper, promised) << what << ": coverage " << c.fraction();
}

void expect_coverage_equal(const std::string& what, const CoverageResult& c, double promised) {
  report(what, c, promised);
  const stats::Interval ci = c.interval();
  EXPECT_LE(ci.lower, promised) << what << ": coverage " << c.fraction();
  EXPECT_GE(ci.upper, promised) << what << ": coverage " << c.fraction();
}

// Bounded test laws with exactly known means.
double bernoulli(ReplicateRng& rng, double p) { return rng.uniform() < p ? 1.0 : 0.0; }
// U^3 for U ~ Uniform(0,1) is Beta(1/3, 1): P(U^3 <= x) = x^(1/3); mean 1/4, skewed towards 0.
double beta_third_one(ReplicateRng& rng) {
  const double u = rng.uniform();
  return u * u * u;
}

constexpr std::size_t coverage_replicates = 20'000;

}  // namespace

TEST(StatsCoverage, StudentTIsExactOnNormalData) {
  for (const double delta : {0.05, 0.2}) {
    const auto c = measure_coverage(
        20261122U + static_cast<std::uint64_t>(delta * 100), coverage_replicates, 10, 3.0,
        [](ReplicateRng& rng) { return 3.0 + 2.0 * rng.standard_normal(); },
        [delta](const stats::Summary& s) { return stats::student_t_half_width(s, delta).value; });
    expect_coverage_equal("student_t, normal(3, 2^2), n = 10, delta = " + std::to_string(delta), c,
                          1.0 - delta);
  }
}

TEST(StatsCoverage, HoeffdingCoversBoundedData) {
  for (const double delta : {0.05, 0.2}) {
    const auto half = [delta](const stats::Summary& s) {
      return stats::hoeffding_half_width(s, 1.0, delta).value;
    };
    const auto coin = measure_coverage(
        11U, coverage_replicates, 100, 0.5, [](ReplicateRng& rng) { return bernoulli(rng, 0.5); },
        half);
    expect_coverage_at_least("hoeffding, Bernoulli(1/2), n = 100, delta = " + std::to_string(delta),
                             coin, 1.0 - delta);
    const auto skewed = measure_coverage(12U, coverage_replicates, 30, 0.25, beta_third_one, half);
    expect_coverage_at_least("hoeffding, Beta(1/3,1), n = 30, delta = " + std::to_string(delta),
                             skewed, 1.0 - delta);
  }
}

TEST(StatsCoverage, EmpiricalBernsteinCoversBoundedData) {
  for (const double delta : {0.05, 0.2}) {
    const auto half = [delta](const stats::Summary& s) {
      return stats::empirical_bernstein_half_width(s, 1.0, delta).value;
    };
    // Rare events: many replicate sets have zero variance, where only the range term remains.
    const auto rare = measure_coverage(
        21U, coverage_replicates, 200, 0.02,
        [](ReplicateRng& rng) { return bernoulli(rng, 0.02); }, half);
    expect_coverage_at_least(
        "empirical_bernstein, Bernoulli(0.02), n = 200, delta = " + std::to_string(delta), rare,
        1.0 - delta);
    const auto skewed = measure_coverage(22U, coverage_replicates, 50, 0.25, beta_third_one, half);
    expect_coverage_at_least(
        "empirical_bernstein, Beta(1/3,1), n = 50, delta = " + std::to_string(delta), skewed,
        1.0 - delta);
  }
}

// Power of the judgement: a known miscalibration is caught at the same R.
// The normal quantile at n = 4 gives coverage P(|T_3| <= 1.96) = 0.8551 (scipy), and Hoeffding
// halved on Bernoulli(1/2), n = 100, covers P(|K - 50| <= 6) = 0.8067 for K ~ Bin(100, 1/2).
// Against the promised 0.95, the CP upper bound would have to exceed 0.95, i.e. the observed
// fraction be ~0.945 — about 37 binomial standard deviations (sd ~ 0.0025 at R = 20000) above the
// truth, so these assertions fail falsely with negligible probability (< 1e-100 by Hoeffding).
TEST(StatsCoverage, UndercoverageIsDetected) {
  const auto normal_small_n = measure_coverage(
      31U, coverage_replicates, 4, 0.0, [](ReplicateRng& rng) { return rng.standard_normal(); },
      [](const stats::Summary& s) { return stats::normal_half_width(s, 0.05).value; });
  report("normal quantile at n = 4 (undercovers)", normal_small_n, 0.95);
  EXPECT_LT(normal_small_n.interval().upper, 0.95);

  const auto halved_hoeffding = measure_coverage(
      32U, coverage_replicates, 100, 0.5, [](ReplicateRng& rng) { return bernoulli(rng, 0.5); },
      [](const stats::Summary& s) { return 0.5 * stats::hoeffding_half_width(s, 1.0, 0.05).value; });
  report("Hoeffding halved, Bernoulli(1/2), n = 100 (undercovers)", halved_hoeffding, 0.95);
  EXPECT_LT(halved_hoeffding.interval().upper, 0.95);
}

// ---- how the references were computed ------------------------------------------------------
// /usr/bin/python3, standard library only (decimal, math.comb); abridged:
//
//   getcontext().prec = 60                      # 120 for the normal tails
//   def t_upper(t, nu):                         # A&S 26.7.3 (odd nu) / 26.7.4 (even nu)
//       r = nu + t*t; c2 = nu / r
//       odd:  F = 1/2 + (atan(t/sqrt(nu)) + (t/sqrt(r)) * sum_{j<(nu-1)/2} a_j c^(2j+1)) / pi,
//             a_0 = 1, a_{j+1} = a_j (2j+2)/(2j+3), c = sqrt(c2)
//       even: F = 1/2 + (t/sqrt(r)) / 2 * sum_{j<nu/2} b_j c2^j,  b_0 = 1, b_{j+1} = b_j (2j+1)/(2j+2)
//       return 1 - F
//   norm_upper(z) = (1 - erf(z/sqrt 2)) / 2     # erf by its Taylor series; asymptotic erfc at z = 30
//   binom_sf(k, n, p) = sum_{j>=k} comb(n, j) p^j (1-p)^(n-j)      # = I_p(k, n-k+1)
//   Clopper–Pearson: lower solves binom_sf(x, n, p) = alpha/2, upper solves
//   1 - binom_sf(x+1, n, p) = alpha/2; quantiles by 250 bisection steps.
