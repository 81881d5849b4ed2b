// dyncheck::portable elementary functions against MPFR (256-bit reference, then the error in units
// in the last place of the double result's binade). Prints the largest error found per function and
// range and bounds it by the documented accuracy (dyncheck/portable/math.hpp).
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "dyncheck/portable/math.hpp"

namespace {

namespace pm = dyncheck::portable;

// splitmix64: a fixed argument sequence, independent of any library's distributions.
struct Stream {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
};

using MpfrFn = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);

// |computed - exact| in ulps of the double nearest to exact (subnormal ulp 2^-1074 below 2^-1022).
double ulp_error(double computed, mpfr_srcptr exact) {
  if (mpfr_nan_p(exact)) return std::isnan(computed) ? 0 : std::numeric_limits<double>::infinity();
  if (mpfr_inf_p(exact)) {
    return std::isinf(computed) && (computed > 0) == (mpfr_sgn(exact) > 0) ? 0
                                                                          : std::numeric_limits<double>::infinity();
  }
  if (mpfr_zero_p(exact)) return computed == 0 ? 0 : std::numeric_limits<double>::infinity();
  if (!std::isfinite(computed)) {
    // overflow at the edge: exact beyond DBL_MAX rounds to inf
    mpfr_t max;
    mpfr_init2(max, 256);
    mpfr_set_d(max, std::numeric_limits<double>::max(), MPFR_RNDN);
    const bool beyond = mpfr_cmpabs(exact, max) > 0;
    mpfr_clear(max);
    return beyond ? 0 : std::numeric_limits<double>::infinity();
  }
  mpfr_t diff;
  mpfr_init2(diff, 256);
  mpfr_sub_d(diff, exact, computed, MPFR_RNDN);
  mpfr_abs(diff, diff, MPFR_RNDN);
  long exponent = mpfr_get_exp(exact) - 53;  // exact in [2^(e-1), 2^e): ulp 2^(e-53)
  if (exponent < -1074) exponent = -1074;
  mpfr_mul_2si(diff, diff, -exponent, MPFR_RNDN);
  const double err = mpfr_get_d(diff, MPFR_RNDN);
  mpfr_clear(diff);
  return err;
}

struct Range {
  double lo, hi;
  bool log_uniform;  // sample |x| log-uniformly in [lo, hi] (lo > 0), with a random sign if signed
  bool signed_values;
};

double draw(Stream& s, const Range& r) {
  if (!r.log_uniform) return r.lo + (r.hi - r.lo) * s.unit();
  const double x = std::exp2(std::log2(r.lo) + (std::log2(r.hi) - std::log2(r.lo)) * s.unit());
  return r.signed_values && (s.next() & 1) ? -x : x;
}

constexpr int kSamples = 50000;  // per range; MPFR's erf/erfc at 256 bits set the run time

// Largest ulp error of f against g over kSamples arguments from each range; printed.
double max_error_unary(const std::string& name, double (*f)(double), MpfrFn g, const std::vector<Range>& ranges,
                       int samples = kSamples) {
  mpfr_t x, y;
  mpfr_init2(x, 53);
  mpfr_init2(y, 256);
  double worst = 0;
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    Stream s{0x5eed0000 + r};
    double range_worst = 0, at = 0;
    for (int i = 0; i < samples; ++i) {
      const double a = draw(s, ranges[r]);
      mpfr_set_d(x, a, MPFR_RNDN);
      g(y, x, MPFR_RNDN);
      const double e = ulp_error(f(a), y);
      if (!(e <= range_worst)) {
        range_worst = e;
        at = a;
      }
    }
    std::printf("%-6s [%-10.4g, %-10.4g]: max error %.3f ulp at x = %.17g\n", name.c_str(), ranges[r].lo,
                ranges[r].hi, range_worst, at);
    if (!(range_worst <= worst)) worst = range_worst;
  }
  mpfr_clear(x);
  mpfr_clear(y);
  return worst;
}

TEST(PortableMath, ExpWithinOneUlp) {
  const double e = max_error_unary("exp", pm::exp, mpfr_exp,
                                   {{-745, 709.78, false, false}, {-2, 2, false, false}, {1e-300, 1, true, true}});
  EXPECT_LT(e, 1.0);
}

TEST(PortableMath, Expm1WithinOneUlp) {
  const double e = max_error_unary("expm1", pm::expm1, mpfr_expm1,
                                   {{-50, 709.78, false, false}, {-2, 2, false, false}, {1e-300, 1, true, true}});
  EXPECT_LT(e, 1.0);
}

TEST(PortableMath, LogWithinOneUlp) {
  const double e = max_error_unary("log", pm::log, mpfr_log,
                                   {{4.9e-324, 1.7e308, true, false}, {0.5, 2, false, false}, {0.999, 1.001, false, false}});
  EXPECT_LT(e, 1.0);
}

TEST(PortableMath, Log10WithinOneUlp) {
  const double e = max_error_unary("log10", pm::log10, mpfr_log10,
                                   {{4.9e-324, 1.7e308, true, false}, {0.5, 2, false, false}});
  EXPECT_LT(e, 1.0);
}

TEST(PortableMath, Log1pWithinOneUlp) {
  const double e = max_error_unary("log1p", pm::log1p, mpfr_log1p,
                                   {{-1, 1, false, false}, {1e-300, 1, true, true}, {1, 1e300, true, false}});
  EXPECT_LT(e, 1.0);
}

TEST(PortableMath, HyperbolicWithinTwoAndAHalfUlp) {
  const std::vector<Range> ranges{{-30, 30, false, false}, {1e-300, 710, true, true}};
  EXPECT_LT(max_error_unary("tanh", pm::tanh, mpfr_tanh, ranges), 2.5);
  EXPECT_LT(max_error_unary("sinh", pm::sinh, mpfr_sinh, ranges), 2.5);
  EXPECT_LT(max_error_unary("cosh", pm::cosh, mpfr_cosh, ranges), 2.5);
}

TEST(PortableMath, ErfWithinOneUlpErfcWithinFour) {
  EXPECT_LT(max_error_unary("erf", pm::erf, mpfr_erf, {{-7, 7, false, false}, {1e-300, 1, true, true}}, 10000), 1.0);
  // erfc(x) for x up to 26.5 (erfc(26.5) ~ 1e-307, above the subnormal range where an absolute
  // error of a few 2^-1074 is a large relative one). fdlibm documents no erfc bound; 2.93 ulp was
  // measured near x = 1.34 (1 - erx - P/Q cancels), so the bound is 4 ulp, as in math.hpp.
  EXPECT_LT(max_error_unary("erfc", pm::erfc, mpfr_erfc, {{-7, 26.5, false, false}, {1e-300, 1, true, true}}, 10000),
            4.0);
}

TEST(PortableMath, PowWithinOneUlp) {
  mpfr_t x, y, z;
  mpfr_inits2(256, z, static_cast<mpfr_ptr>(nullptr));
  mpfr_inits2(53, x, y, static_cast<mpfr_ptr>(nullptr));
  struct Case {
    Range base, exponent;
  };
  const std::vector<Case> cases{{{1e-3, 1e3, true, false}, {-50, 50, false, false}},
                                {{0.5, 2, false, false}, {-1000, 1000, false, false}},
                                {{1e-300, 1e300, true, false}, {-1, 1, false, false}},
                                {{0.9999, 1.0001, false, false}, {-1e6, 1e6, false, false}}};
  double worst = 0;
  for (std::size_t c = 0; c < cases.size(); ++c) {
    Stream s{0x90900000 + c};
    double case_worst = 0, at_x = 0, at_y = 0;
    for (int i = 0; i < kSamples; ++i) {
      const double a = draw(s, cases[c].base), b = draw(s, cases[c].exponent);
      mpfr_set_d(x, a, MPFR_RNDN);
      mpfr_set_d(y, b, MPFR_RNDN);
      mpfr_pow(z, x, y, MPFR_RNDN);
      const double e = ulp_error(pm::pow(a, b), z);
      if (!(e <= case_worst)) {
        case_worst = e;
        at_x = a;
        at_y = b;
      }
    }
    std::printf("pow case %zu: max error %.3f ulp at (%.17g, %.17g)\n", c, case_worst, at_x, at_y);
    if (!(case_worst <= worst)) worst = case_worst;
  }
  mpfr_clears(x, y, z, static_cast<mpfr_ptr>(nullptr));
  EXPECT_LT(worst, 1.0);
}

// Exact and special values (C99 Annex F), which the samplers and claims rely on.
TEST(PortableMath, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(pm::exp(0.0), 1.0);
  EXPECT_EQ(pm::exp(-inf), 0.0);
  EXPECT_EQ(pm::exp(inf), inf);
  EXPECT_EQ(pm::exp(710.0), inf);
  EXPECT_EQ(pm::exp(-746.0), 0.0);
  EXPECT_TRUE(std::isnan(pm::exp(std::nan(""))));
  EXPECT_EQ(pm::log(1.0), 0.0);
  EXPECT_EQ(pm::log(0.0), -inf);
  EXPECT_TRUE(std::isnan(pm::log(-1.0)));
  EXPECT_EQ(pm::log(inf), inf);
  EXPECT_EQ(pm::log10(1000.0), 3.0);
  EXPECT_EQ(pm::log1p(-1.0), -inf);
  EXPECT_EQ(pm::log1p(0.0), 0.0);
  EXPECT_EQ(pm::expm1(-inf), -1.0);
  EXPECT_EQ(pm::pow(2.0, 10.0), 1024.0);
  EXPECT_EQ(pm::pow(3.0, 5.0), 243.0);
  EXPECT_EQ(pm::pow(-2.0, 3.0), -8.0);
  EXPECT_EQ(pm::pow(0.0, -1.0), inf);
  EXPECT_EQ(pm::pow(std::nan(""), 0.0), 1.0);
  EXPECT_TRUE(std::isnan(pm::pow(-2.0, 0.5)));
  EXPECT_EQ(pm::pow(4.0, 0.5), 2.0);
  EXPECT_EQ(pm::tanh(inf), 1.0);
  EXPECT_EQ(pm::tanh(-inf), -1.0);
  EXPECT_EQ(pm::erf(inf), 1.0);
  EXPECT_EQ(pm::erfc(-inf), 2.0);
  EXPECT_EQ(pm::erfc(inf), 0.0);
  EXPECT_EQ(pm::cosh(0.0), 1.0);
}

}  // namespace
