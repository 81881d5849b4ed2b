#pragma once
// The remainder of Stirling's formula for ln k!, used by BTRD's final acceptance test.

namespace dyncheck::sim::detail {

/**
 * \f[ f_c(k) = \ln k! - \bigl[(k + \tfrac12)\ln(k+1) - (k+1) + \tfrac12\ln 2\pi\bigr] \f]
 * for integer-valued \f$k \ge 0\f$ (Hörmann 1993, eq. for \f$f_c\f$). For \f$k \le 9\f$ a table
 * (values computed in 50-digit decimal arithmetic, rounded to nearest double); above, the
 * Stirling series in \f$n = k+1\f$,
 * \f$\frac{1}{12n} - \frac{1}{360n^3} + \frac{1}{1260n^5} - \frac{1}{1680n^7} +
 * \frac{1}{1188n^9}\f$, whose truncation error is below the next term
 * \f$691/(360360\,n^{11}) \le 7\cdot10^{-15}\f$. Hörmann keeps three terms (error
 * \f$3\cdot10^{-11}\f$ at k = 10); two more cost nothing and keep the error below double
 * rounding of the acceptance test. No libm functions.
 */
double stirling_correction(double k);

}  // namespace dyncheck::sim::detail
