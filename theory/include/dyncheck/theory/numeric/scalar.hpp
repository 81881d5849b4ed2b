// dyncheck/theory/numeric/scalar.hpp
//
// The scalar types theory code is templated on, and the few conversions every scalar needs
// (DESIGN.md "The central types": double for speed, 50 or 100 digits for reference values).
#pragma once

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/mpfr.hpp>

#include <cmath>
#include <iomanip>
#include <ios>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace dyncheck::theory {

/// 50 decimal digits (168-bit significand, \f$\varepsilon = 2^{-167} \approx 5.3\cdot 10^{-51}\f$),
/// header-only. Expression templates are off because Eigen and ODEint need them off: with them on,
/// `std::max` receives an expression object, `auto x = a*b` dangles, and Eigen's MatrixFunctions
/// do not compile (numerics.md §2a); Eigen fuses expressions itself, so nothing is lost.
using mp50 = boost::multiprecision::number<boost::multiprecision::cpp_bin_float<50>,
                                           boost::multiprecision::et_off>;

/// 100 decimal digits through MPFR (334-bit significand, \f$\varepsilon \approx 5.7\cdot 10^{-101}\f$).
/// MPFR rather than cpp_bin_float because its transcendental functions are 4-10x faster at this
/// precision (numerics.md §5). Expression templates off for the reasons given for mp50.
using mp100 = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<100>,
                                            boost::multiprecision::et_off>;

/// What theory code may be templated on: a signed floating-point type with `std::numeric_limits`,
/// other than `long double`. On x86-64 `long double` is x87 80-bit arithmetic, and glibc's x87
/// `expl`/`logl` do not give the same bits on AMD and Intel CPUs (an ODE error estimate differed in
/// its 4th digit, issue #10; numerics.md §2x): a reference value must not depend on the CPU, so
/// use double, or mp50/mp100 (software arithmetic) where double is not enough. The source scan
/// tests/portability/check_portability.cmake (ctest label `portability`) covers what this cannot.
template <class S>
concept real_scalar = std::numeric_limits<S>::is_specialized && !std::numeric_limits<S>::is_integer &&
                      std::numeric_limits<S>::is_signed &&
                      !std::is_same_v<std::remove_cv_t<S>, long double>;  // portability-guard: refuses it

static_assert(!real_scalar<long double>,  // portability-guard: refuses it
              "x87 80-bit floating point must not be a theory scalar (its bits depend on the CPU)");
static_assert(real_scalar<double> && real_scalar<mp50> && real_scalar<mp100>);

/// The smallest tolerance an iterative computation in \f$S\f$ may be asked for:
/// \f[ \tau_{\min}(S) = 100\,\varepsilon_S . \f]
/// Below a small multiple of \f$\varepsilon_S\f$ round-off dominates the truncation error and an
/// adaptive method never meets its tolerance (a double solve at 1e-40 never converges,
/// numerics.md §2b); the factor 100 leaves room for the round-off of a few hundred operations.
template <real_scalar S>
S tolerance_floor() {
  return S(100) * std::numeric_limits<S>::epsilon();
}

/// \f$x\f$ rounded to the nearest double (for plots, JSON and logs; never for further arithmetic).
template <real_scalar S>
double to_double(const S& x) {
  return static_cast<double>(x);
}

/// Whether \f$x\f$ is neither infinite nor NaN, for double and Boost.Multiprecision alike.
template <real_scalar S>
bool is_finite(const S& x) {
  using std::isfinite;  // Boost.Multiprecision's overload is found by argument-dependent lookup
  return isfinite(x);
}

/// \f$x\f$ in scientific notation with `significant_digits` significant digits, e.g.
/// `to_string(mp50(1) / 3, 5) == "3.3333e-01"`. Digits beyond `std::numeric_limits<S>::max_digits10`
/// are printed but carry no information.
template <real_scalar S>
std::string to_string(const S& x, int significant_digits) {
  if (significant_digits < 1) {
    throw std::invalid_argument("to_string: significant_digits must be >= 1, got " +
                                std::to_string(significant_digits));
  }
  std::ostringstream out;
  if (significant_digits == 1 && !std::is_floating_point_v<S> && is_finite(x) && x != S(0)) {
    // Boost.Multiprecision reads stream precision 0 as "all digits" (number::str(0, ...)), so
    // setprecision(0) would print 50 digits: round to one significant digit here instead.
    using std::abs;
    using std::floor;
    using std::log10;  // portability-guard: multiprecision only (double takes the stream branch)
    using std::pow;    // portability-guard: multiprecision only (double takes the stream branch)
    const S magnitude = abs(x);
    int exponent = static_cast<int>(floor(log10(magnitude)));
    S mantissa = magnitude / pow(S(10), exponent);
    if (mantissa < S(1)) {  // log10 rounded across a power of ten
      mantissa *= 10;
      --exponent;
    } else if (mantissa >= S(10)) {
      mantissa /= 10;
      ++exponent;
    }
    int digit = static_cast<int>(floor(mantissa + S(0.5)));  // half away from zero, as printf
    if (digit == 10) {
      digit = 1;
      ++exponent;
    }
    out << (x < S(0) ? "-" : "") << digit << 'e' << (exponent < 0 ? '-' : '+') << std::setw(2) << std::setfill('0')
        << (exponent < 0 ? -exponent : exponent);
    return out.str();
  }
  out << std::scientific << std::setprecision(significant_digits - 1) << x;
  return out.str();
}

// The stream machinery of Boost.Multiprecision is slow to compile; instantiate it once, in scalar.cpp.
extern template std::string to_string<double>(const double&, int);
extern template std::string to_string<mp50>(const mp50&, int);
extern template std::string to_string<mp100>(const mp100&, int);

}  // namespace dyncheck::theory
