// dyncheck/portable/math.hpp
//
// Elementary functions on double whose results depend only on IEEE-754 basic operations
// (+ - * / and sqrt, each correctly rounded) and on integer bit manipulation, so that they give
// the same bits on every x86-64 CPU (issue #10 §1).
//
// Why not std::exp and friends: glibc 2.36 picks its double exp, log, pow, sin, tanh, ... when the
// program loads, by CPU features (an FMA+AVX2 variant, an FMA4 variant, an SSE2 variant), and the
// variants differ in the last bit (GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA changed exp in 726 of
// 10^6 arguments and the smoke golden report in three claims).
//
// The algorithms are ports of the table-free fdlibm code (Sun Microsystems, 1993) as carried by
// musl libc before its 2018 rewrite (exp, log, pow) and as still carried by musl (log1p, expm1,
// log10, tanh, sinh, cosh, erf, erfc); the copyright notices are in src/math.cpp. The library is
// compiled with -ffp-contract=off, so no a*b + c is fused into an FMA whatever the consumer's
// flags; the functions are out of line for that reason.
//
// Accuracy (tests/portable/math_test.cpp measures it against MPFR over 10^5 arguments per function
// and bounds it; largest errors measured in brackets): exp, log, log10, log1p, expm1 < 1 ulp
// (0.86, 0.80, 0.67, 0.77, 0.76); pow < 1 ulp (0.83; exact for exact integer results);
// sinh, cosh, tanh < 2.5 ulp (1.52, 1.27, 1.81);
// erf < 1 ulp; erfc < 4 ulp above its underflow region (fdlibm documents no erfc bound; the
// largest error measured was 2.93 ulp near x = 1.34). Results are not correctly rounded, and may
// differ from glibc's in the last bit: determinism, not correct rounding, is the point.
// Special values (NaN, +-inf, +-0, overflow, underflow) follow C99 Annex F; floating-point
// exception flags are not guaranteed.
#pragma once

namespace dyncheck::portable {

double exp(double x);
double expm1(double x);
double log(double x);
double log10(double x);
double log1p(double x);
double pow(double x, double y);
double sinh(double x);
double cosh(double x);
double tanh(double x);
double erf(double x);
double erfc(double x);

/// exp as a function object, for Eigen: `array.unaryExpr(portable::exp_op{})` instead of
/// `array.exp()`. Eigen's own vectorised exp is SSE2 arithmetic, but it evaluates the elements
/// outside whole packets (an odd-sized array's last element) with std::exp, i.e. glibc's.
struct exp_op {
  double operator()(double x) const { return exp(x); }
};

}  // namespace dyncheck::portable
