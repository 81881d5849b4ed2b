// Tests for dyncheck/theory/numeric/scalar.hpp
#include <dyncheck/theory/numeric/scalar.hpp>

#include <gtest/gtest.h>

#include <boost/math/constants/constants.hpp>

#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace dyncheck::theory {
namespace {

// 60 correct digits of e and pi (OEIS A001113, A000796).
constexpr const char* e_60 = "2.71828182845904523536028747135266249775724709369995957496697";
constexpr const char* pi_60 = "3.14159265358979323846264338327950288419716939937510582097494";
// 110 correct digits.
constexpr const char* e_110 =
    "2.7182818284590452353602874713526624977572470936999595749669676277240766303535475945713821785251664274274663919";
constexpr const char* pi_110 =
    "3.1415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679821480865";

static_assert(!std::is_same_v<mp50, mp100>);
static_assert(real_scalar<double> && real_scalar<mp50> && real_scalar<mp100>);
static_assert(!real_scalar<int> && !real_scalar<unsigned>);
static_assert(std::numeric_limits<mp50>::digits10 == 50 && std::numeric_limits<mp100>::digits10 == 100);

TEST(Scalar, ExpOfOneAndPiHaveFiftyCorrectDigitsInMp50) {
  using std::exp;
  const mp50 e = exp(mp50(1));
  const mp50 pi = boost::math::constants::pi<mp50>();
  // One unit in the 50th digit of a number in [1, 10).
  EXPECT_LT(abs(e - mp50(e_60)), mp50("1e-49"));
  EXPECT_LT(abs(pi - mp50(pi_60)), mp50("1e-49"));
  EXPECT_LT(abs(mp50(4) * atan(mp50(1)) - pi), mp50("1e-49"));
}

TEST(Scalar, ExpOfOneAndPiHaveHundredCorrectDigitsInMp100) {
  const mp100 e = exp(mp100(1));
  const mp100 pi = boost::math::constants::pi<mp100>();
  EXPECT_LT(abs(e - mp100(e_110)), mp100("1e-99"));
  EXPECT_LT(abs(pi - mp100(pi_110)), mp100("1e-99"));
}

TEST(Scalar, ToleranceFloorIsHundredEpsilon) {
  EXPECT_EQ(tolerance_floor<double>(), 100 * DBL_EPSILON);
  EXPECT_EQ(tolerance_floor<mp50>(), mp50(100) * std::numeric_limits<mp50>::epsilon());
  EXPECT_EQ(tolerance_floor<mp100>(), mp100(100) * std::numeric_limits<mp100>::epsilon());
  // 168 and 334 significand bits: eps = 2^-167 and 2^-333.
  EXPECT_EQ(tolerance_floor<mp50>(), mp50(100) * ldexp(mp50(1), -167));
  EXPECT_EQ(tolerance_floor<mp100>(), mp100(100) * ldexp(mp100(1), -333));
}

TEST(Scalar, ToDoubleRoundsToTheNearestDouble) {
  EXPECT_EQ(to_double(0.25), 0.25);
  EXPECT_EQ(to_double(boost::math::constants::pi<mp50>()), M_PI);
  EXPECT_EQ(to_double(boost::math::constants::pi<mp100>()), M_PI);
  EXPECT_EQ(to_double(mp50(1) / 3), 1.0 / 3.0);
  EXPECT_EQ(to_double(-mp100(2) / 3), -2.0 / 3.0);
  EXPECT_TRUE(std::isinf(to_double(mp50("1e400"))));
}

TEST(Scalar, ToStringPrintsTheRequestedSignificantDigitsInScientificNotation) {
  EXPECT_EQ(to_string(mp50(1) / 3, 5), "3.3333e-01");
  EXPECT_EQ(to_string(mp100(-2) / 3, 3), "-6.67e-01");
  EXPECT_EQ(to_string(1.0 / 3.0, 5), "3.3333e-01");
  // One digit: Boost.Multiprecision reads stream precision 0 as "all digits".
  EXPECT_EQ(to_string(mp50(12345), 1), "1e+04");
  EXPECT_EQ(to_string(mp50(96), 1), "1e+02");
  EXPECT_EQ(to_string(mp100(-35) / 1000, 1), "-4e-02");
  EXPECT_EQ(to_string(mp50("2.5e-300"), 1), "3e-300");
  EXPECT_EQ(to_string(mp50(1000), 1), "1e+03");
  EXPECT_EQ(to_string(12345.0, 1), "1e+04");
  EXPECT_EQ(to_string(mp50(e_60), 50), "2.7182818284590452353602874713526624977572470937000e+00");
  EXPECT_EQ(to_string(mp50(0), 3), "0.00e+00");
}

TEST(Scalar, ToStringRefusesFewerThanOneDigit) {
  EXPECT_THROW(to_string(mp50(1), 0), std::invalid_argument);
  EXPECT_THROW(to_string(1.0, -3), std::invalid_argument);
}

TEST(Scalar, IsFiniteSeesInfinityAndNan) {
  EXPECT_TRUE(is_finite(mp50(1)));
  EXPECT_FALSE(is_finite(mp50(1) / mp50(0)));
  EXPECT_FALSE(is_finite(std::numeric_limits<mp100>::quiet_NaN()));
  EXPECT_FALSE(is_finite(std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(is_finite(std::numeric_limits<double>::max()));
}

}  // namespace
}  // namespace dyncheck::theory
