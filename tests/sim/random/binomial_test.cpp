// Tests of dyncheck/sim/random/binomial.hpp. The golden draws are a snapshot of this
// implementation (as NumPy's stream hashes are): they detect any change of algorithm, while
// correctness rests on the exact pmf and moment checks below.

#include "dyncheck/sim/random/binomial.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "dyncheck/sim/random/binomial_log_pmf_ratio.hpp"
#include "dyncheck/sim/random/derive_stream.hpp"
#include "dyncheck/sim/random/stirling_correction.hpp"
#include "statistical_bounds.hpp"

namespace dyncheck::sim {
namespace {

TEST(SimBinomial, FirstDrawsAreGolden) {
  struct Case {
    std::uint64_t n;
    double p;
    std::uint64_t draws[6];
  };
  const Case cases[] = {
      {5, 0.3, {1, 1, 1, 1, 2, 2}},                 // inversion
      {1000, 0.002, {2, 1, 1, 2, 3, 3}},            // inversion, n p = 2
      {100, 0.25, {25, 29, 29, 21, 28, 30}},        // BTRD
      {1000, 0.7, {690, 703, 705, 696, 715, 698}},  // BTRD on 1 - p
      {1000000000, 0.3, {300005845, 299995479, 299993044, 300001150, 300020031, 300013184}},
      {1000000, 0.999995, {999995, 999996, 999997, 999996, 999994, 999993}},  // inversion, 1-p
      {binomial_max_n,
       0.5,
       {4503599646499058, 4503599612561452, 4503599604588586, 4503599631128297, 4503599692929762,
        4503599670524695}},
  };
  for (const Case& c : cases) {
    Rng rng(2024);
    for (const std::uint64_t expected : c.draws) {
      EXPECT_EQ(binomial(rng, c.n, c.p), expected) << "n " << c.n << " p " << c.p;
    }
  }
}

TEST(SimBinomial, DegenerateCasesUseNoRandomness) {
  Rng rng(1);
  EXPECT_EQ(binomial(rng, 0, 0.5), 0U);
  EXPECT_EQ(binomial(rng, 17, 0.0), 0U);
  EXPECT_EQ(binomial(rng, 17, 1.0), 17U);
  EXPECT_EQ(rng, Rng(1));
}

TEST(SimBinomial, InvalidArgumentsThrow) {
  Rng rng(1);
  for (const double bad : {-0.1, 1.1, std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_THROW(binomial(rng, 10, bad), std::invalid_argument);
  }
  EXPECT_THROW(binomial(rng, binomial_max_n + 1, 0.5), std::invalid_argument);
}

// f_c(k) against 50-digit lgamma. Allowed error: the series truncation bound
// 691/(360360 (k+1)^11) (zero for the table) plus 4 ulp of f_c for the double evaluation.
TEST(SimBinomial, StirlingCorrectionMatchesFiftyDigitLogGamma) {
  using Big = boost::multiprecision::cpp_bin_float_50;
  const Big half_log_two_pi = log(2 * boost::math::constants::pi<Big>()) / 2;
  std::vector<double> ks;
  for (int k = 0; k <= 200; ++k) ks.push_back(k);
  for (const double k : {1e3, 1e4, 1e6, 1e9, 1e12, 1e15}) ks.push_back(k);
  for (const double k : ks) {
    const Big kb = k;
    const Big exact =
        boost::math::lgamma(kb + 1) - (kb + Big(0.5)) * log(kb + 1) + (kb + 1) - half_log_two_pi;
    const double truncation = k <= 9 ? 0.0 : 691.0 / (360360.0 * std::pow(k + 1, 11));
    const double value = detail::stirling_correction(k);
    EXPECT_LE(std::abs(value - exact.convert_to<double>()),
              truncation + 4 * std::numeric_limits<double>::epsilon() * value)
        << "k = " << k;
  }
}

// Folds 20000 draws per configuration into one FNV-1a-style digest (NumPy's stream-hash idea):
// the few golden draws above rarely reach BTRD's squeeze and final test, 20000 draws do, so a
// change anywhere in the algorithm changes the digest.
TEST(SimBinomial, StreamDigestsAreGolden) {
  struct Case {
    std::uint64_t n;
    double p;
    std::uint64_t digest;
  };
  const Case cases[] = {
      {30, 0.3, 0x3fc98c5a26382e19ULL},       {1000, 0.3, 0x83d3961eed9d8c03ULL},
      {400, 0.75, 0x9f861bb0182cc4ccULL},     {100000, 0.01, 0xecb2baf72e23fc52ULL},
      {1000000, 5e-6, 0xcddefa0571bedc8eULL}, {1000000000000ULL, 0.123, 0x8fdcc0242d8bf69eULL},
  };
  for (const Case& c : cases) {
    Rng rng(2024);
    std::uint64_t digest = 0xcbf29ce484222325ULL;
    for (int i = 0; i < 20000; ++i) digest = (digest ^ binomial(rng, c.n, c.p)) * 0x100000001b3ULL;
    EXPECT_EQ(digest, c.digest) << "n " << c.n << " p " << c.p << " digest 0x" << std::hex
                                << digest;
  }
}

// BTRD's final acceptance bound is ln(f(k)/f(m)); compare with 50-digit log-gamma
// differences. Rounding analysis: each logarithm's argument carries <= 4 eps relative error,
// which the multipliers (m + 1/2), (n + 1) |x| and (k + 1/2) turn into absolute errors; the
// Stirling corrections add <= 4 * 7e-15 truncation. We allow 8 eps (m + k + 2 + (n + 1)|x|)
// + 3e-14, x = (k - m)/(n - k + 1).
RC_GTEST_PROP(SimBinomial, LogPmfRatioMatchesFiftyDigitLogGamma, ()) {
  using Big = boost::multiprecision::cpp_bin_float_50;
  const double n = std::round(test::log_scale(*rc::gen::inRange(0, 1001), 1000, 20.0, 1e12));
  const double p = test::log_scale(*rc::gen::inRange(0, 1001), 1000, 10.0 / n, 0.5);
  const double m = std::floor((n + 1) * p);
  const double sd = std::sqrt(n * p * (1 - p));
  const double k = std::clamp(std::round(m + sd * *rc::gen::inRange(-80, 81) / 10.0), 0.0, n);
  const detail::BinomialLogPmfRatio ratio(n, p, m);
  const Big nb = n;
  const Big pb = p;
  const Big kb = k;
  const Big mb = m;
  using boost::math::lgamma;
  const Big exact = lgamma(mb + 1) + lgamma(nb - mb + 1) - lgamma(kb + 1) - lgamma(nb - kb + 1) +
                    (kb - mb) * log(pb / (1 - pb));
  const double x = (k - m) / (n - k + 1);
  const double tolerance =
      8 * std::numeric_limits<double>::epsilon() * (m + k + 2 + (n + 1) * std::abs(x)) + 3e-14;
  RC_ASSERT(std::abs(ratio(k) - exact.convert_to<double>()) <= tolerance);
}

// Exact pmf check on fixed configurations covering inversion, BTRD's immediate acceptance,
// its recursive branch (|k - m| <= 15) and its squeeze/final test (|k - m| > 15, which needs
// sd >~ 8), and p > 1/2. For each k in the checked window the indicator 1[X = k] has variance
// pmf(k)(1 - pmf(k)) and range 1; one more indicator lumps everything outside the window.
// Bernstein with delta split over all indicators of all configurations.
TEST(SimBinomial, FrequenciesMatchTheExactPmf) {
  struct Config {
    std::uint64_t n;
    double p;
  };
  const Config configs[] = {{20, 0.3},   {10, 0.9},      {60, 0.2},      {1000, 0.3},
                            {400, 0.75}, {100000, 0.01}, {1000000, 5e-6}};
  constexpr int draws = 50000;
  constexpr int window_half_width_in_sd = 8;
  // Count the indicators first so the Bonferroni split is fixed before looking at data.
  std::size_t indicators = 0;
  struct Window {
    std::uint64_t low;
    std::uint64_t high;
  };
  std::vector<Window> windows;
  for (const Config& c : configs) {
    const double mean = static_cast<double>(c.n) * c.p;
    const double sd = std::sqrt(mean * (1 - c.p));
    const double low = std::max(0.0, std::floor(mean - window_half_width_in_sd * sd - 2));
    const double high =
        std::min(static_cast<double>(c.n), std::ceil(mean + window_half_width_in_sd * sd + 2));
    windows.push_back({static_cast<std::uint64_t>(low), static_cast<std::uint64_t>(high)});
    indicators += windows.back().high - windows.back().low + 2;
  }
  const double delta = test::kFalseFailurePerCase / static_cast<double>(indicators);

  for (std::size_t ci = 0; ci < std::size(configs); ++ci) {
    const Config& c = configs[ci];
    const Window w = windows[ci];
    const boost::math::binomial_distribution<double> law(static_cast<double>(c.n), c.p);
    std::vector<int> counts(w.high - w.low + 1, 0);
    int outside = 0;
    Rng rng(derive_seed(20261122, "SimBinomial.FrequenciesMatchTheExactPmf", ci));
    for (int i = 0; i < draws; ++i) {
      const std::uint64_t x = binomial(rng, c.n, c.p);
      ASSERT_LE(x, c.n);
      if (x < w.low || x > w.high) {
        ++outside;
      } else {
        ++counts[x - w.low];
      }
    }
    double inside_mass = 0.0;
    for (std::uint64_t k = w.low; k <= w.high; ++k) {
      const double pk = pdf(law, static_cast<double>(k));
      inside_mass += pk;
      EXPECT_LE(std::abs(counts[k - w.low] / double{draws} - pk),
                test::bernstein_half_width(pk * (1 - pk), 1.0, draws, delta))
          << "n " << c.n << " p " << c.p << " k " << k;
    }
    const double po = std::max(0.0, 1.0 - inside_mass);
    EXPECT_LE(std::abs(outside / double{draws} - po),
              test::bernstein_half_width(po * (1 - po), 1.0, draws, delta))
        << "n " << c.n << " p " << c.p << " outside window";
  }
}

// Parameters: n log-uniform on [1, 10^7], p either k/1000 (both sides of 1/2, including 0 and 1)
// or log-uniform on [1e-7, 0.5] (small n p: the inversion branch).
// Mean: the total of N draws is Binomial(N n, p), i.e. N n Bernoulli(p) trials: Bernstein on
// their mean with variance p(1-p) and range 1, delta/2. Variance: Y = (X - n p)^2 has mean
// n p q and Var Y = mu_4 - (n p q)^2 = n p q (1 - 6 p q) + 2 (n p q)^2; median of means, delta/2.
RC_GTEST_PROP(SimBinomial, MeanAndVarianceAreWithinDerivedBounds, (std::uint64_t seed)) {
  const auto n = static_cast<std::uint64_t>(
      std::llround(test::log_scale(*rc::gen::inRange(0, 1001), 1000, 1.0, 1e7)));
  const double p = *rc::gen::arbitrary<bool>()
                       ? *rc::gen::inRange(0, 1001) / 1000.0
                       : test::log_scale(*rc::gen::inRange(0, 1001), 1000, 1e-7, 0.5);
  constexpr int draws = 20000;
  constexpr double delta = test::kFalseFailurePerCase / 2;
  const double nd = static_cast<double>(n);
  const double npq = nd * p * (1 - p);
  Rng rng(seed);
  double total = 0.0;
  std::vector<double> squares(draws);
  for (double& y : squares) {
    const std::uint64_t x = binomial(rng, n, p);
    RC_ASSERT(x <= n);
    total += static_cast<double>(x);
    const double d = static_cast<double>(x) - nd * p;
    y = d * d;
  }
  const double trials = nd * draws;
  RC_ASSERT(std::abs(total / trials - p) <=
            test::bernstein_half_width(p * (1 - p), 1.0, trials, delta));
  const double var_y = npq * (1 - 6 * p * (1 - p)) + 2 * npq * npq;
  const auto plan = test::median_of_means_plan(var_y, squares.size(), delta);
  RC_ASSERT(std::abs(test::median_of_means(squares, plan.blocks) - npq) <= plan.half_width);
}

}  // namespace
}  // namespace dyncheck::sim
