// Portable elementary functions on double (see dyncheck/portable/math.hpp).
//
// Ported from musl libc (src/math/*.c; exp.c, log.c and pow.c from the versions before musl's 2018
// rewrite, commits e16f7b3c^, 236cd056^ and e4dd6530^), which carries the fdlibm code:
//
//   Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//   Developed at SunSoft, a Sun Microsystems, Inc. business.
//   Permission to use, copy, modify, and distribute this software is freely granted,
//   provided that this notice is preserved.
//
//   Copyright (C) 2004 by Sun Microsystems, Inc. All rights reserved. (exp, pow)
//   Permission to use, copy, modify, and distribute this software is freely granted,
//   provided that this notice is preserved.
//
//   musl: Copyright © 2005-2020 Rich Felker, et al. MIT licence.
//
// Changes from the C: C++ bit casts instead of unions; exception-flag side effects (FORCE_EVAL)
// dropped; double_t is double (SSE2, FLT_EVAL_METHOD 0). The arithmetic is otherwise the same
// operation for operation. This file must be compiled with -ffp-contract=off (portable/CMakeLists.txt).
#include "dyncheck/portable/math.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace dyncheck::portable {
namespace {

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }
double from_bits(std::uint64_t i) { return std::bit_cast<double>(i); }
std::uint32_t high_word(double x) { return static_cast<std::uint32_t>(bits(x) >> 32); }
std::uint32_t low_word(double x) { return static_cast<std::uint32_t>(bits(x)); }
double from_words(std::uint32_t hi, std::uint32_t lo) {
  return from_bits(static_cast<std::uint64_t>(hi) << 32 | lo);
}
double with_high_word(double x, std::uint32_t hi) { return from_words(hi, low_word(x)); }
double with_low_word(double x, std::uint32_t lo) { return from_words(high_word(x), lo); }

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// x * 2^n without overflow or double rounding in the intermediate steps (musl scalbn).
double scalbn(double x, int n) {
  double y = x;
  if (n > 1023) {
    y *= 0x1p1023;
    n -= 1023;
    if (n > 1023) {
      y *= 0x1p1023;
      n -= 1023;
      if (n > 1023) n = 1023;
    }
  } else if (n < -1022) {
    // make sure the final n < -53 to avoid double rounding in the subnormal range
    y *= 0x1p-1022 * 0x1p53;
    n += 1022 - 53;
    if (n < -1022) {
      y *= 0x1p-1022 * 0x1p53;
      n += 1022 - 53;
      if (n < -1022) n = -1022;
    }
  }
  return y * from_bits(static_cast<std::uint64_t>(0x3ff + n) << 52);
}

constexpr double ln2_hi = 6.93147180369123816490e-01;  // 0x3fe62e42 fee00000
constexpr double ln2_lo = 1.90821492927058770002e-10;  // 0x3dea39ef 35793c76
constexpr double invln2 = 1.44269504088896338700e+00;  // 0x3ff71547 652b82fe

// log(1+f) - f + f^2/2 polynomial for log, log10, log1p (fdlibm e_log.c)
constexpr double Lg1 = 6.666666666666735130e-01;  // 3FE55555 55555593
constexpr double Lg2 = 3.999999999940941908e-01;  // 3FD99999 9997FA04
constexpr double Lg3 = 2.857142874366239149e-01;  // 3FD24924 94229359
constexpr double Lg4 = 2.222219843214978396e-01;  // 3FCC71C5 1D8E78AF
constexpr double Lg5 = 1.818357216161805012e-01;  // 3FC74664 96CB03DE
constexpr double Lg6 = 1.531383769920937332e-01;  // 3FC39A09 D078C69F
constexpr double Lg7 = 1.479819860511658591e-01;  // 3FC2F112 DF3E5244

// exp polynomial (fdlibm e_exp.c), also used by pow
constexpr double P1 = 1.66666666666666019037e-01;   // 0x3FC55555 5555553E
constexpr double P2 = -2.77777777770155933842e-03;  // 0xBF66C16C 16BEBD93
constexpr double P3 = 6.61375632143793436117e-05;   // 0x3F11566A AF25DE2C
constexpr double P4 = -1.65339022054652515390e-06;  // 0xBEBBBD41 C5D26BF1
constexpr double P5 = 4.13813679705723846039e-08;   // 0x3E663769 72BEA4D0

}  // namespace

// exp: x = k ln2 + r, |r| <= ln2/2, exp(r) by a degree-5 Remez rational form; error < 1 ulp.
double exp(double x) {
  constexpr double half[2] = {0.5, -0.5};
  std::uint32_t hx = high_word(x);
  const int sign = static_cast<int>(hx >> 31);
  hx &= 0x7fffffff;  // high word of |x|

  if (hx >= 0x4086232b) {  // |x| >= 708.39...
    if (std::isnan(x)) return x;
    if (x > 709.782712893383973096) return x * 0x1p1023;  // overflow (inf stays inf)
    if (x < -708.39641853226410622) {
      if (x < -745.13321910194110842) return 0;
    }
  }

  double hi, lo;
  int k;
  if (hx > 0x3fd62e42) {    // |x| > 0.5 ln2
    if (hx >= 0x3ff0a2b2) {  // |x| >= 1.5 ln2
      k = static_cast<int>(invln2 * x + half[sign]);
    } else {
      k = 1 - sign - sign;
    }
    hi = x - k * ln2_hi;  // k*ln2_hi is exact here
    lo = k * ln2_lo;
    x = hi - lo;
  } else if (hx > 0x3e300000) {  // |x| > 2^-28
    k = 0;
    hi = x;
    lo = 0;
  } else {
    return 1 + x;
  }

  const double xx = x * x;
  const double c = x - xx * (P1 + xx * (P2 + xx * (P3 + xx * (P4 + xx * P5))));
  const double y = 1 + (x * c / (2 - c) - lo + hi);
  if (k == 0) return y;
  return scalbn(y, k);
}

// expm1 (fdlibm s_expm1.c): error < 1 ulp.
double expm1(double x) {
  constexpr double o_threshold = 7.09782712893383973096e+02;  // 0x40862E42 FEFA39EF
  constexpr double Q1 = -3.33333333333331316428e-02;          // BFA11111 111110F4
  constexpr double Q2 = 1.58730158725481460165e-03;           // 3F5A01A0 19FE5585
  constexpr double Q3 = -7.93650757867487942473e-05;          // BF14CE19 9EAADBB7
  constexpr double Q4 = 4.00821782732936239552e-06;           // 3ED0CFCA 86E65239
  constexpr double Q5 = -2.01099218183624371326e-07;          // BE8AFDB7 6E09C32D

  const std::uint32_t hx = high_word(x) & 0x7fffffff;
  const bool sign = (bits(x) >> 63) != 0;
  int k;
  double hi, lo, c = 0, t;

  if (hx >= 0x4043687A) {  // |x| >= 56 ln2
    if (std::isnan(x)) return x;
    if (sign) return -1;
    if (x > o_threshold) return x * 0x1p1023;
  }

  if (hx > 0x3fd62e42) {    // |x| > 0.5 ln2
    if (hx < 0x3FF0A2B2) {  // and |x| < 1.5 ln2
      if (!sign) {
        hi = x - ln2_hi;
        lo = ln2_lo;
        k = 1;
      } else {
        hi = x + ln2_hi;
        lo = -ln2_lo;
        k = -1;
      }
    } else {
      k = static_cast<int>(invln2 * x + (sign ? -0.5 : 0.5));
      t = k;
      hi = x - t * ln2_hi;  // t*ln2_hi is exact here
      lo = t * ln2_lo;
    }
    x = hi - lo;
    c = (hi - x) - lo;
  } else if (hx < 0x3c900000) {  // |x| < 2^-54
    return x;
  } else {
    k = 0;
  }

  const double hfx = 0.5 * x;
  const double hxs = x * hfx;
  const double r1 = 1.0 + hxs * (Q1 + hxs * (Q2 + hxs * (Q3 + hxs * (Q4 + hxs * Q5))));
  t = 3.0 - r1 * hfx;
  double e = hxs * ((r1 - t) / (6.0 - x * t));
  if (k == 0) return x - (x * e - hxs);  // c is 0
  e = x * (e - c) - c;
  e -= hxs;
  // exp(x) ~ 2^k (x_reduced - e + 1)
  if (k == -1) return 0.5 * (x - e) - 0.5;
  if (k == 1) {
    if (x < -0.25) return -2.0 * (e - (x + 0.5));
    return 1.0 + 2.0 * (x - e);
  }
  const double twopk = from_bits(static_cast<std::uint64_t>(0x3ff + k) << 52);  // 2^k
  double y;
  if (k < 0 || k > 56) {  // suffices to return exp(x) - 1
    y = x - e + 1.0;
    if (k == 1024) {
      y = y * 2.0 * 0x1p1023;
    } else {
      y = y * twopk;
    }
    return y - 1.0;
  }
  const double twomk = from_bits(static_cast<std::uint64_t>(0x3ff - k) << 52);  // 2^-k
  if (k < 20) {
    y = (x - e + (1 - twomk)) * twopk;
  } else {
    y = (x - (e + twomk) + 1) * twopk;
  }
  return y;
}

// log (fdlibm e_log.c): x = 2^k (1+f), sqrt(2)/2 < 1+f < sqrt(2), log(1+f) = 2s + s R(s^2) with
// s = f/(2+f); error < 1 ulp.
double log(double x) {
  std::uint64_t u = bits(x);
  std::uint32_t hx = static_cast<std::uint32_t>(u >> 32);
  int k = 0;
  if (hx < 0x00100000 || (hx >> 31) != 0) {
    if ((u << 1) == 0) return -inf;  // log(+-0) = -inf
    if ((hx >> 31) != 0) return nan;  // log(-#) = NaN
    // subnormal: scale x up
    k -= 54;
    x *= 0x1p54;
    u = bits(x);
    hx = static_cast<std::uint32_t>(u >> 32);
  } else if (hx >= 0x7ff00000) {
    return x;
  } else if (hx == 0x3ff00000 && (u << 32) == 0) {
    return 0;
  }

  // reduce x into [sqrt(2)/2, sqrt(2)]
  hx += 0x3ff00000 - 0x3fe6a09e;
  k += static_cast<int>(hx >> 20) - 0x3ff;
  hx = (hx & 0x000fffff) + 0x3fe6a09e;
  x = from_bits(static_cast<std::uint64_t>(hx) << 32 | (u & 0xffffffff));

  const double f = x - 1.0;
  const double hfsq = 0.5 * f * f;
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double w = z * z;
  const double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
  const double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
  const double R = t2 + t1;
  const double dk = k;
  return s * (hfsq + R) + dk * ln2_lo - hfsq + f + dk * ln2_hi;
}

// log10 (musl log10.c, fdlibm e_log10.c rewritten with the log kernel): error < 1 ulp.
double log10(double x) {
  constexpr double ivln10hi = 4.34294481878168880939e-01;   // 0x3fdbcb7b 15200000
  constexpr double ivln10lo = 2.50829467116452752298e-11;   // 0x3dbb9438 ca9aadd5
  constexpr double log10_2hi = 3.01029995663611771306e-01;  // 0x3FD34413 509F6000
  constexpr double log10_2lo = 3.69423907715893078616e-13;  // 0x3D59FEF3 11F12B36

  std::uint64_t u = bits(x);
  std::uint32_t hx = static_cast<std::uint32_t>(u >> 32);
  int k = 0;
  if (hx < 0x00100000 || (hx >> 31) != 0) {
    if ((u << 1) == 0) return -inf;
    if ((hx >> 31) != 0) return nan;
    k -= 54;
    x *= 0x1p54;
    u = bits(x);
    hx = static_cast<std::uint32_t>(u >> 32);
  } else if (hx >= 0x7ff00000) {
    return x;
  } else if (hx == 0x3ff00000 && (u << 32) == 0) {
    return 0;
  }

  hx += 0x3ff00000 - 0x3fe6a09e;
  k += static_cast<int>(hx >> 20) - 0x3ff;
  hx = (hx & 0x000fffff) + 0x3fe6a09e;
  u = static_cast<std::uint64_t>(hx) << 32 | (u & 0xffffffff);
  x = from_bits(u);

  const double f = x - 1.0;
  const double hfsq = 0.5 * f * f;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double w = z * z;
  const double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
  const double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
  const double R = t2 + t1;

  // hi + lo = f - hfsq + s*(hfsq+R) ~ log(1+f)
  double hi = f - hfsq;
  hi = from_bits(bits(hi) & (static_cast<std::uint64_t>(-1) << 32));
  const double lo = f - hi - hfsq + s * (hfsq + R);

  // val_hi + val_lo ~ log10(1+f) + k log10(2)
  double val_hi = hi * ivln10hi;
  const double dk = k;
  const double y = dk * log10_2hi;
  double val_lo = dk * log10_2lo + (lo + hi) * ivln10lo + lo * ivln10hi;

  w = y + val_hi;
  val_lo += (y - w) + val_hi;
  val_hi = w;
  return val_lo + val_hi;
}

// log1p (fdlibm s_log1p.c): error < 1 ulp.
double log1p(double x) {
  const std::uint32_t hx = high_word(x);
  int k = 1;
  double c = 0, f = 0;
  if (hx < 0x3fda827a || (hx >> 31) != 0) {  // 1+x < sqrt(2)+
    if (hx >= 0xbff00000) {                  // x <= -1.0
      if (x == -1) return -inf;
      return nan;
    }
    if ((hx << 1) < (0x3ca00000u << 1)) return x;  // |x| < 2^-53
    if (hx <= 0xbfd2bec4) {                         // sqrt(2)/2- <= 1+x < sqrt(2)+
      k = 0;
      c = 0;
      f = x;
    }
  } else if (hx >= 0x7ff00000) {
    return x;
  }
  if (k != 0) {
    std::uint64_t u = bits(1 + x);
    std::uint32_t hu = static_cast<std::uint32_t>(u >> 32);
    hu += 0x3ff00000 - 0x3fe6a09e;
    k = static_cast<int>(hu >> 20) - 0x3ff;
    // correction term ~ log(1+x) - log(u), avoid underflow in c/u
    const double uf = from_bits(u);
    if (k < 54) {
      c = k >= 2 ? 1 - (uf - x) : x - (uf - 1);
      c /= uf;
    } else {
      c = 0;
    }
    // reduce u into [sqrt(2)/2, sqrt(2)]
    hu = (hu & 0x000fffff) + 0x3fe6a09e;
    u = static_cast<std::uint64_t>(hu) << 32 | (u & 0xffffffff);
    f = from_bits(u) - 1;
  }
  const double hfsq = 0.5 * f * f;
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double w = z * z;
  const double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
  const double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
  const double R = t2 + t1;
  const double dk = k;
  return s * (hfsq + R) + (dk * ln2_lo + c) - hfsq + f + dk * ln2_hi;
}

// pow (fdlibm e_pow.c): log2(x) in extra precision (t1 + t2), times y split in two, then 2^z;
// error < 1 ulp ("nearly rounded"); exact for exact integer results.
double pow(double x, double y) {
  constexpr double bp[] = {1.0, 1.5};
  constexpr double dp_h[] = {0.0, 5.84962487220764160156e-01};  // 0x3FE2B803 40000000
  constexpr double dp_l[] = {0.0, 1.35003920212974897128e-08};  // 0x3E4CFDEB 43CFD006
  constexpr double two53 = 9007199254740992.0;                  // 0x43400000 00000000
  constexpr double huge = 1.0e300;
  constexpr double tiny = 1.0e-300;
  // poly coefs for (3/2)*(log(x)-2s-2/3*s**3
  constexpr double L1 = 5.99999999999994648725e-01;  // 0x3FE33333 33333303
  constexpr double L2 = 4.28571428578550184252e-01;  // 0x3FDB6DB6 DB6FABFF
  constexpr double L3 = 3.33333329818377432918e-01;  // 0x3FD55555 518F264D
  constexpr double L4 = 2.72728123808534006489e-01;  // 0x3FD17460 A91D4101
  constexpr double L5 = 2.30660745775561754067e-01;  // 0x3FCD864A 93C9DB65
  constexpr double L6 = 2.06975017800338417784e-01;  // 0x3FCA7E28 4A454EEF
  constexpr double lg2 = 6.93147180559945286227e-01;     // 0x3FE62E42 FEFA39EF
  constexpr double lg2_h = 6.93147182464599609375e-01;   // 0x3FE62E43 00000000
  constexpr double lg2_l = -1.90465429995776804525e-09;  // 0xBE205C61 0CA86C39
  constexpr double ovt = 8.0085662595372944372e-017;     // -(1024-log2(ovfl+.5ulp))
  constexpr double cp = 9.61796693925975554329e-01;      // 0x3FEEC709 DC3A03FD = 2/(3ln2)
  constexpr double cp_h = 9.61796700954437255859e-01;    // 0x3FEEC709 E0000000 = (float)cp
  constexpr double cp_l = -7.02846165095275826516e-09;   // 0xBE3E2FE0 145B01F5 = tail of cp_h
  constexpr double ivln2 = 1.44269504088896338700e+00;   // 0x3FF71547 652B82FE = 1/ln2
  constexpr double ivln2_h = 1.44269502162933349609e+00;  // 0x3FF71547 60000000 = 24b 1/ln2
  constexpr double ivln2_l = 1.92596299112661746887e-08;  // 0x3E54AE0B F85DDF44 = 1/ln2 tail

  double z, ax, z_h, z_l, p_h, p_l;
  double y1, t1, t2, r, s, t, u, v, w;
  std::int32_t i, j, k, yisint, n;

  const auto hx = static_cast<std::int32_t>(high_word(x));
  const std::uint32_t lx = low_word(x);
  const auto hy = static_cast<std::int32_t>(high_word(y));
  const std::uint32_t ly = low_word(y);
  std::int32_t ix = hx & 0x7fffffff;
  const std::int32_t iy = hy & 0x7fffffff;

  if ((static_cast<std::uint32_t>(iy) | ly) == 0) return 1.0;  // x**0 = 1, even if x is NaN
  if (hx == 0x3ff00000 && lx == 0) return 1.0;                  // 1**y = 1, even if y is NaN
  if (ix > 0x7ff00000 || (ix == 0x7ff00000 && lx != 0) || iy > 0x7ff00000 || (iy == 0x7ff00000 && ly != 0)) {
    return x + y;  // NaN if either argument is NaN
  }

  // yisint = 0: y is not an integer; 1: an odd integer; 2: an even integer (only when x < 0)
  yisint = 0;
  if (hx < 0) {
    if (iy >= 0x43400000) {
      yisint = 2;  // even integer y
    } else if (iy >= 0x3ff00000) {
      k = (iy >> 20) - 0x3ff;  // exponent
      if (k > 20) {
        const std::uint32_t jj = ly >> (52 - k);
        if ((jj << (52 - k)) == ly) yisint = 2 - static_cast<std::int32_t>(jj & 1);
      } else if (ly == 0) {
        const std::uint32_t jj = static_cast<std::uint32_t>(iy) >> (20 - k);
        if ((jj << (20 - k)) == static_cast<std::uint32_t>(iy)) yisint = 2 - static_cast<std::int32_t>(jj & 1);
      }
    }
  }

  // special values of y
  if (ly == 0) {
    if (iy == 0x7ff00000) {  // y is +-inf
      if (((ix - 0x3ff00000) | static_cast<std::int32_t>(lx)) == 0) return 1.0;  // (-1)**+-inf is 1
      if (ix >= 0x3ff00000) return hy >= 0 ? y : 0.0;  // (|x|>1)**+-inf = inf, 0
      return hy >= 0 ? 0.0 : -y;                        // (|x|<1)**+-inf = 0, inf
    }
    if (iy == 0x3ff00000) {  // y is +-1
      if (hy >= 0) return x;
      return 1 / x;
    }
    if (hy == 0x40000000) return x * x;  // y is 2
    if (hy == 0x3fe00000) {              // y is 0.5
      if (hx >= 0) return std::sqrt(x);  // x >= +0; sqrt is correctly rounded everywhere
    }
  }

  ax = std::fabs(x);
  // special values of x
  if (lx == 0) {
    if (ix == 0x7ff00000 || ix == 0 || ix == 0x3ff00000) {  // x is +-0, +-inf, +-1
      z = ax;
      if (hy < 0) z = 1.0 / z;  // z = (1/|x|)
      if (hx < 0) {
        if (((ix - 0x3ff00000) | yisint) == 0) {
          z = nan;  // (-1)**non-int is NaN
        } else if (yisint == 1) {
          z = -z;  // (x<0)**odd = -(|x|**odd)
        }
      }
      return z;
    }
  }

  s = 1.0;  // sign of the result
  if (hx < 0) {
    if (yisint == 0) return nan;  // (x<0)**(non-int) is NaN
    if (yisint == 1) s = -1.0;    // (x<0)**(odd int)
  }

  if (iy > 0x41e00000) {    // |y| > 2^31
    if (iy > 0x43f00000) {  // |y| > 2^64: must over- or underflow
      if (ix <= 0x3fefffff) return hy < 0 ? huge * huge : tiny * tiny;
      if (ix >= 0x3ff00000) return hy > 0 ? huge * huge : tiny * tiny;
    }
    // over/underflow if x is not close to one
    if (ix < 0x3fefffff) return hy < 0 ? s * huge * huge : s * tiny * tiny;
    if (ix > 0x3ff00000) return hy > 0 ? s * huge * huge : s * tiny * tiny;
    // now |1-x| is tiny <= 2^-20: log(x) by x - x^2/2 + x^3/3 - x^4/4
    t = ax - 1.0;  // t has 20 trailing zeros
    w = (t * t) * (0.5 - t * (0.3333333333333333333333 - t * 0.25));
    u = ivln2_h * t;  // ivln2_h has 21 significant bits
    v = t * ivln2_l - w * ivln2;
    t1 = u + v;
    t1 = with_low_word(t1, 0);
    t2 = v - (t1 - u);
  } else {
    double ss, s2, s_h, s_l, t_h, t_l;
    n = 0;
    if (ix < 0x00100000) {  // subnormal x
      ax *= two53;
      n -= 53;
      ix = static_cast<std::int32_t>(high_word(ax));
    }
    n += ((ix) >> 20) - 0x3ff;
    j = ix & 0x000fffff;
    // determine the interval
    ix = j | 0x3ff00000;  // normalise ix
    if (j <= 0x3988E) {   // |x| < sqrt(3/2)
      k = 0;
    } else if (j < 0xBB67A) {  // |x| < sqrt(3)
      k = 1;
    } else {
      k = 0;
      n += 1;
      ix -= 0x00100000;
    }
    ax = with_high_word(ax, static_cast<std::uint32_t>(ix));

    // ss = s_h + s_l = (x-1)/(x+1) or (x-1.5)/(x+1.5)
    u = ax - bp[k];
    v = 1.0 / (ax + bp[k]);
    ss = u * v;
    s_h = with_low_word(ss, 0);
    // t_h = ax + bp[k] high part
    t_h = from_words(static_cast<std::uint32_t>(((ix >> 1) | 0x20000000) + 0x00080000 + (k << 18)), 0);
    t_l = ax - (t_h - bp[k]);
    s_l = v * ((u - s_h * t_h) - s_h * t_l);
    // log(ax)
    s2 = ss * ss;
    r = s2 * s2 * (L1 + s2 * (L2 + s2 * (L3 + s2 * (L4 + s2 * (L5 + s2 * L6)))));
    r += s_l * (s_h + ss);
    s2 = s_h * s_h;
    t_h = 3.0 + s2 + r;
    t_h = with_low_word(t_h, 0);
    t_l = r - ((t_h - 3.0) - s2);
    // u + v = ss*(1+...)
    u = s_h * t_h;
    v = s_l * t_h + t_l * ss;
    // 2/(3log2)*(ss+...)
    p_h = u + v;
    p_h = with_low_word(p_h, 0);
    p_l = v - (p_h - u);
    z_h = cp_h * p_h;  // cp_h + cp_l = 2/(3 log2)
    z_l = cp_l * p_h + p_l * cp + dp_l[k];
    // log2(ax) = (ss+..)*2/(3*log2) = n + dp_h + z_h + z_l
    t = static_cast<double>(n);
    t1 = ((z_h + z_l) + dp_h[k]) + t;
    t1 = with_low_word(t1, 0);
    t2 = z_l - (((t1 - t) - dp_h[k]) - z_h);
  }

  // split y into y1 + y2 and compute (y1+y2)*(t1+t2)
  y1 = with_low_word(y, 0);
  p_l = (y - y1) * t1 + y * t2;
  p_h = y1 * t1;
  z = p_l + p_h;
  j = static_cast<std::int32_t>(high_word(z));
  i = static_cast<std::int32_t>(low_word(z));
  if (j >= 0x40900000) {                                  // z >= 1024
    if (((j - 0x40900000) | i) != 0) return s * huge * huge;  // overflow
    if (p_l + ovt > z - p_h) return s * huge * huge;          // overflow
  } else if ((j & 0x7fffffff) >= 0x4090cc00) {  // z <= -1075
    if (((static_cast<std::uint32_t>(j) - 0xc090cc00u) | static_cast<std::uint32_t>(i)) != 0) {
      return s * tiny * tiny;  // underflow
    }
    if (p_l <= z - p_h) return s * tiny * tiny;  // underflow
  }

  // 2^(p_h + p_l)
  i = j & 0x7fffffff;
  k = (i >> 20) - 0x3ff;
  n = 0;
  if (i > 0x3fe00000) {  // |z| > 0.5: n = [z + 0.5]
    n = j + (0x00100000 >> (k + 1));
    k = ((n & 0x7fffffff) >> 20) - 0x3ff;  // new k for n
    t = from_words(static_cast<std::uint32_t>(n & ~(0x000fffff >> k)), 0);
    n = ((n & 0x000fffff) | 0x00100000) >> (20 - k);
    if (j < 0) n = -n;
    p_h -= t;
  }
  t = p_l + p_h;
  t = with_low_word(t, 0);
  u = t * lg2_h;
  v = (p_l - (t - p_h)) * lg2 + t * lg2_l;
  z = u + v;
  w = v - (z - u);
  t = z * z;
  t1 = z - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
  r = (z * t1) / (t1 - 2.0) - (w + z * w);
  z = 1.0 - (r - z);
  j = static_cast<std::int32_t>(high_word(z));
  j += static_cast<std::int32_t>(static_cast<std::uint32_t>(n) << 20);
  if ((j >> 20) <= 0) {
    z = scalbn(z, n);  // subnormal output
  } else {
    z = with_high_word(z, static_cast<std::uint32_t>(j));
  }
  return s * z;
}

namespace {
// exp(x)/2 for x >= log(DBL_MAX) (musl __expo2.c)
double expo2(double x, double sign) {
  constexpr int k = 2043;
  constexpr double kln2 = 0x1.62066151add8bp+10;
  const double scale = from_words(static_cast<std::uint32_t>(0x3ff + k / 2) << 20, 0);
  return exp(x - kln2) * (sign * scale) * scale;
}
}  // namespace

// sinh (musl sinh.c, from expm1): error < 2.5 ulp.
double sinh(double x) {
  double h = (bits(x) >> 63) != 0 ? -0.5 : 0.5;
  const double absx = std::fabs(x);
  const std::uint32_t w = high_word(absx);
  if (w < 0x40862e42) {  // |x| < log(DBL_MAX)
    const double t = expm1(absx);
    if (w < 0x3ff00000) {
      if (w < 0x3ff00000 - (26 << 20)) return x;
      return h * (2 * t - t * t / (t + 1));
    }
    return h * (t + t / (t + 1));
  }
  return expo2(absx, 2 * h);  // |x| > log(DBL_MAX) or NaN
}

// cosh (musl cosh.c): error < 2.5 ulp.
double cosh(double x) {
  x = std::fabs(x);
  const std::uint32_t w = high_word(x);
  if (w < 0x3fe62e42) {  // |x| < log(2)
    if (w < 0x3ff00000 - (26 << 20)) return 1;
    const double t = expm1(x);
    return 1 + t * t / (2 * (1 + t));
  }
  if (w < 0x40862e42) {  // |x| < log(DBL_MAX)
    const double t = exp(x);
    return 0.5 * (t + 1 / t);
  }
  return expo2(x, 1.0);  // |x| > log(DBL_MAX) or NaN
}

// tanh (musl tanh.c, from expm1): error < 2.5 ulp.
double tanh(double x) {
  const bool sign = (bits(x) >> 63) != 0;
  x = std::fabs(x);
  const std::uint32_t w = high_word(x);
  double t;
  if (w > 0x3fe193ea) {    // |x| > log(3)/2 ~= 0.5493 or NaN
    if (w > 0x40340000) {  // |x| > 20 or NaN
      t = std::isnan(x) ? x : 1.0;
    } else {
      t = expm1(2 * x);
      t = 1 - 2 / (t + 2);
    }
  } else if (w > 0x3fd058ae) {  // |x| > log(5/3)/2 ~= 0.2554
    t = expm1(2 * x);
    t = t / (t + 2);
  } else if (w >= 0x00100000) {  // |x| >= 0x1p-1022
    t = expm1(-2 * x);
    t = -t / (t + 2);
  } else {  // |x| is subnormal
    t = x;
  }
  return sign ? -t : t;
}

namespace {
constexpr double erx = 8.45062911510467529297e-01;  // 0x3FEB0AC1 60000000
// erf on [0, 0.84375]
constexpr double efx8 = 1.02703333676410069053e+00;  // 0x3FF06EBA 8214DB69
constexpr double pp0 = 1.28379167095512558561e-01;   // 0x3FC06EBA 8214DB68
constexpr double pp1 = -3.25042107247001499370e-01;  // 0xBFD4CD7D 691CB913
constexpr double pp2 = -2.84817495755985104766e-02;  // 0xBF9D2A51 DBD7194F
constexpr double pp3 = -5.77027029648944159157e-03;  // 0xBF77A291 236668E4
constexpr double pp4 = -2.37630166566501626084e-05;  // 0xBEF8EAD6 120016AC
constexpr double qq1 = 3.97917223959155352819e-01;   // 0x3FD97779 CDDADC09
constexpr double qq2 = 6.50222499887672944485e-02;   // 0x3FB0A54C 5536CEBA
constexpr double qq3 = 5.08130628187576562776e-03;   // 0x3F74D022 C4D36B0F
constexpr double qq4 = 1.32494738004321644526e-04;   // 0x3F215DC9 221C1A10
constexpr double qq5 = -3.96022827877536812320e-06;  // 0xBED09C43 42A26120
// erf in [0.84375, 1.25]
constexpr double pa0 = -2.36211856075265944077e-03;  // 0xBF6359B8 BEF77538
constexpr double pa1 = 4.14856118683748331666e-01;   // 0x3FDA8D00 AD92B34D
constexpr double pa2 = -3.72207876035701323847e-01;  // 0xBFD7D240 FBB8C3F1
constexpr double pa3 = 3.18346619901161753674e-01;   // 0x3FD45FCA 805120E4
constexpr double pa4 = -1.10894694282396677476e-01;  // 0xBFBC6398 3D3E28EC
constexpr double pa5 = 3.54783043256182359371e-02;   // 0x3FA22A36 599795EB
constexpr double pa6 = -2.16637559486879084300e-03;  // 0xBF61BF38 0A96073F
constexpr double qa1 = 1.06420880400844228286e-01;   // 0x3FBB3E66 18EEE323
constexpr double qa2 = 5.40397917702171048937e-01;   // 0x3FE14AF0 92EB6F33
constexpr double qa3 = 7.18286544141962662868e-02;   // 0x3FB2635C D99FE9A7
constexpr double qa4 = 1.26171219808761642112e-01;   // 0x3FC02660 E763351F
constexpr double qa5 = 1.36370839120290507362e-02;   // 0x3F8BEDC2 6B51DD1C
constexpr double qa6 = 1.19844998467991074170e-02;   // 0x3F888B54 5735151D
// erfc in [1.25, 1/0.35]
constexpr double ra0 = -9.86494403484714822705e-03;  // 0xBF843412 600D6435
constexpr double ra1 = -6.93858572707181764372e-01;  // 0xBFE63416 E4BA7360
constexpr double ra2 = -1.05586262253232909814e+01;  // 0xC0251E04 41B0E726
constexpr double ra3 = -6.23753324503260060396e+01;  // 0xC04F300A E4CBA38D
constexpr double ra4 = -1.62396669462573470355e+02;  // 0xC0644CB1 84282266
constexpr double ra5 = -1.84605092906711035994e+02;  // 0xC067135C EBCCABB2
constexpr double ra6 = -8.12874355063065934246e+01;  // 0xC0545265 57E4D2F2
constexpr double ra7 = -9.81432934416914548592e+00;  // 0xC023A0EF C69AC25C
constexpr double sa1 = 1.96512716674392571292e+01;   // 0x4033A6B9 BD707687
constexpr double sa2 = 1.37657754143519042600e+02;   // 0x4061350C 526AE721
constexpr double sa3 = 4.34565877475229228821e+02;   // 0x407B290D D58A1A71
constexpr double sa4 = 6.45387271733267880336e+02;   // 0x40842B19 21EC2868
constexpr double sa5 = 4.29008140027567833386e+02;   // 0x407AD021 57700314
constexpr double sa6 = 1.08635005541779435134e+02;   // 0x405B28A3 EE48AE2C
constexpr double sa7 = 6.57024977031928170135e+00;   // 0x401A47EF 8E484A93
constexpr double sa8 = -6.04244152148580987438e-02;  // 0xBFAEEFF2 EE749A62
// erfc in [1/0.35, 28]
constexpr double rb0 = -9.86494292470009928597e-03;  // 0xBF843412 39E86F4A
constexpr double rb1 = -7.99283237680523006574e-01;  // 0xBFE993BA 70C285DE
constexpr double rb2 = -1.77579549177547519889e+01;  // 0xC031C209 555F995A
constexpr double rb3 = -1.60636384855821916062e+02;  // 0xC064145D 43C5ED98
constexpr double rb4 = -6.37566443368389627722e+02;  // 0xC083EC88 1375F228
constexpr double rb5 = -1.02509513161107724954e+03;  // 0xC0900461 6A2E5992
constexpr double rb6 = -4.83519191608651397019e+02;  // 0xC07E384E 9BDC383F
constexpr double sb1 = 3.03380607434824582924e+01;   // 0x403E568B 261D5190
constexpr double sb2 = 3.25792512996573918826e+02;   // 0x40745CAE 221B9F0A
constexpr double sb3 = 1.53672958608443695994e+03;   // 0x409802EB 189D5118
constexpr double sb4 = 3.19985821950859553908e+03;   // 0x40A8FFB7 688C246A
constexpr double sb5 = 2.55305040643316442583e+03;   // 0x40A3F219 CEDF3BE6
constexpr double sb6 = 4.74528541206955367215e+02;   // 0x407DA874 E79FE763
constexpr double sb7 = -2.24409524465858183362e+01;  // 0xC03670E2 42712D62

double erfc1(double x) {
  const double s = std::fabs(x) - 1;
  const double P = pa0 + s * (pa1 + s * (pa2 + s * (pa3 + s * (pa4 + s * (pa5 + s * pa6)))));
  const double Q = 1 + s * (qa1 + s * (qa2 + s * (qa3 + s * (qa4 + s * (qa5 + s * qa6)))));
  return 1 - erx - P / Q;
}

double erfc2(std::uint32_t ix, double x) {
  if (ix < 0x3ff40000) return erfc1(x);  // |x| < 1.25
  x = std::fabs(x);
  const double s = 1 / (x * x);
  double R, S;
  if (ix < 0x4006db6d) {  // |x| < 1/.35 ~ 2.85714
    R = ra0 + s * (ra1 + s * (ra2 + s * (ra3 + s * (ra4 + s * (ra5 + s * (ra6 + s * ra7))))));
    S = 1.0 + s * (sa1 + s * (sa2 + s * (sa3 + s * (sa4 + s * (sa5 + s * (sa6 + s * (sa7 + s * sa8)))))));
  } else {  // |x| > 1/.35
    R = rb0 + s * (rb1 + s * (rb2 + s * (rb3 + s * (rb4 + s * (rb5 + s * rb6)))));
    S = 1.0 + s * (sb1 + s * (sb2 + s * (sb3 + s * (sb4 + s * (sb5 + s * (sb6 + s * sb7))))));
  }
  const double z = with_low_word(x, 0);
  return exp(-z * z - 0.5625) * exp((z - x) * (z + x) + R / S) / x;
}
}  // namespace

// erf (fdlibm s_erf.c): error < 1 ulp.
double erf(double x) {
  std::uint32_t ix = high_word(x);
  const bool sign = (ix >> 31) != 0;
  ix &= 0x7fffffff;
  if (ix >= 0x7ff00000) return std::isnan(x) ? x : (sign ? -1.0 : 1.0);  // erf(nan)=nan, erf(+-inf)=+-1
  if (ix < 0x3feb0000) {                                                // |x| < 0.84375
    if (ix < 0x3e300000) return 0.125 * (8 * x + efx8 * x);             // |x| < 2^-28
    const double z = x * x;
    const double r = pp0 + z * (pp1 + z * (pp2 + z * (pp3 + z * pp4)));
    const double s = 1.0 + z * (qq1 + z * (qq2 + z * (qq3 + z * (qq4 + z * qq5))));
    const double y = r / s;
    return x + x * y;
  }
  double y;
  if (ix < 0x40180000) {  // 0.84375 <= |x| < 6
    y = 1 - erfc2(ix, x);
  } else {
    y = 1 - 0x1p-1022;
  }
  return sign ? -y : y;
}

// erfc (fdlibm s_erf.c): error < 1 ulp for results above the underflow threshold.
double erfc(double x) {
  std::uint32_t ix = high_word(x);
  const bool sign = (ix >> 31) != 0;
  ix &= 0x7fffffff;
  if (ix >= 0x7ff00000) return std::isnan(x) ? x : (sign ? 2.0 : 0.0);  // erfc(nan)=nan, erfc(+-inf)=0,2
  if (ix < 0x3feb0000) {                                               // |x| < 0.84375
    if (ix < 0x3c700000) return 1.0 - x;                               // |x| < 2^-56
    const double z = x * x;
    const double r = pp0 + z * (pp1 + z * (pp2 + z * (pp3 + z * pp4)));
    const double s = 1.0 + z * (qq1 + z * (qq2 + z * (qq3 + z * (qq4 + z * qq5))));
    const double y = r / s;
    if (sign || ix < 0x3fd00000) return 1.0 - (x + x * y);  // x < 1/4
    return 0.5 - (x - 0.5 + x * y);
  }
  if (ix < 0x403c0000) return sign ? 2 - erfc2(ix, x) : erfc2(ix, x);  // 0.84375 <= |x| < 28
  return sign ? 2 - 0x1p-1022 : 0x1p-1022 * 0x1p-1022;
}

}  // namespace dyncheck::portable
