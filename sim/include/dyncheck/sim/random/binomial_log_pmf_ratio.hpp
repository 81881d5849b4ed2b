#pragma once
// ln(f(k)/f(m)) for the binomial pmf f: the right side of BTRD's final acceptance test.

namespace dyncheck::sim::detail {

/**
 * \f[ \ln\frac{f(k)}{f(m)} = \ln\frac{m!\,(n-m)!}{k!\,(n-k)!} + (k - m)\ln\frac{p}{1-p} \f]
 * for the Binomial(n, p) pmf f, evaluated as in Hörmann (1993), steps 3.3–3.4, with
 * \f$r = p/(1-p)\f$, \f$n_m = n - m + 1\f$, \f$n_k = n - k + 1\f$:
 * \f[ h = (m + \tfrac12)\ln\frac{m+1}{r\,n_m} + f_c(m) + f_c(n-m), \f]
 * \f[ \ln\frac{f(k)}{f(m)} = h + (n+1)\,\mathrm{log1p}\Bigl(\frac{k-m}{n_k}\Bigr)
 *     + (k + \tfrac12)\ln\frac{n_k\,r}{k+1} - f_c(k) - f_c(n-k), \f]
 * where \f$f_c\f$ is stirling_correction and log1p replaces Hörmann's
 * \f$\ln(n_m/n_k)\f$ (equal, without the cancellation for large n). The setup part h is computed
 * once per (n, p). Arguments are integer-valued doubles with \f$0 \le k, m \le n\f$, \f$0 < p <
 * 1\f$. libm: portable::log, portable::log1p.
 */
class BinomialLogPmfRatio {
 public:
  BinomialLogPmfRatio(double n, double p, double m);
  double operator()(double k) const;

 private:
  double n_;
  double r_;
  double m_;
  double h_;
};

}  // namespace dyncheck::sim::detail
