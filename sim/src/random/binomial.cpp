// Binomial sampling: BINV inversion and Hörmann's BTRD (see binomial.hpp).

#include "dyncheck/sim/random/binomial.hpp"

#include <array>
#include <cmath>

#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/detail/throw_invalid_argument.hpp"
#include "dyncheck/sim/random/binomial_log_pmf_ratio.hpp"
#include "dyncheck/sim/random/stirling_correction.hpp"
#include "dyncheck/sim/random/uniform01.hpp"

namespace dyncheck::sim {

namespace detail {

double stirling_correction(double k) {
  // ln k! - (k+1/2) ln(k+1) + (k+1) - ln(2 pi)/2 for k = 0..9, from 50-digit decimal arithmetic.
  static constexpr std::array<double, 10> table = {
      0x1.4c071bcda0a5bp-4, 0x1.52a9b923ea649p-5, 0x1.c579a268d80b3p-6, 0x1.54a2662fd78a9p-6,
      0x1.10b4e513fcbedp-6, 0x1.c6b167bebdf36p-7, 0x1.85d4d612e4a86p-7, 0x1.552805e7b3076p-7,
      0x1.2f4871b12ab64p-7, 0x1.10f9d4c0743a7p-7};
  if (k <= 9.0) return table[static_cast<std::size_t>(k)];
  const double n = k + 1.0;
  const double n2 = 1.0 / (n * n);
  return (1.0 / 12.0 -
          n2 * (1.0 / 360.0 - n2 * (1.0 / 1260.0 - n2 * (1.0 / 1680.0 - n2 * (1.0 / 1188.0))))) /
         n;
}

BinomialLogPmfRatio::BinomialLogPmfRatio(double n, double p, double m)
    : n_(n), r_(p / (1.0 - p)), m_(m) {
  h_ = (m + 0.5) * portable::log((m + 1.0) / (r_ * (n - m + 1.0))) + stirling_correction(m) +
       stirling_correction(n - m);
}

double BinomialLogPmfRatio::operator()(double k) const {
  const double nk = n_ - k + 1.0;
  return h_ + (n_ + 1.0) * portable::log1p((k - m_) / nk) + (k + 0.5) * portable::log(nk * r_ / (k + 1.0)) -
         stirling_correction(k) - stirling_correction(n_ - k);
}

}  // namespace detail

namespace {

// BINV for n * p < 10 and p <= 1/2.
std::uint64_t binomial_inversion(Rng& rng, double n, double p) {
  const double q = 1.0 - p;
  const double s = p / q;
  const double a = (n + 1.0) * s;
  const double p0 = portable::exp(n * portable::log1p(-p));
  for (;;) {
    double u = uniform01(rng);
    double pk = p0;
    double k = 0.0;
    bool restart = false;
    while (u >= pk) {
      u -= pk;
      k += 1.0;
      pk *= a / k - s;
      if (k > n || pk == 0.0) {  // U exceeded the total mass through rounding
        restart = true;
        break;
      }
    }
    if (!restart) return static_cast<std::uint64_t>(k);
  }
}

// BTRD for n * p >= 10 and p <= 1/2; step numbers follow Hörmann (1993), section 3.
std::uint64_t binomial_btrd(Rng& rng, double n, double p) {
  // Setup.
  const double m = std::floor((n + 1.0) * p);
  const double r = p / (1.0 - p);
  const double nr = (n + 1.0) * r;
  const double npq = n * p * (1.0 - p);
  const double sqrt_npq = std::sqrt(npq);
  const double b = 1.15 + 2.53 * sqrt_npq;
  const double a = -0.0873 + 0.0248 * b + 0.01 * p;
  const double c = n * p + 0.5;
  const double alpha = (2.83 + 5.1 / b) * sqrt_npq;
  const double v_r = 0.92 - 4.2 / b;
  const double u_rv_r = 0.86 * v_r;
  const detail::BinomialLogPmfRatio log_pmf_ratio(n, p, m);

  for (;;) {
    // Step 1: immediate acceptance.
    double v = uniform01(rng);
    double u = 0.0;
    if (v <= u_rv_r) {
      u = v / v_r - 0.43;
      const double k = std::floor((2.0 * a / (0.5 - std::abs(u)) + b) * u + c);
      // Inside [0, n] for n p >= 10 (|u| <= 0.43); the check only guards the conversion.
      if (k >= 0.0 && k <= n) return static_cast<std::uint64_t>(k);
      continue;
    }
    // Step 2: generate u.
    if (v >= v_r) {
      u = uniform01(rng) - 0.5;
    } else {
      u = v / v_r - 0.93;
      u = (u < 0.0 ? -0.5 : 0.5) - u;
      v = uniform01(rng) * v_r;
    }
    // Step 3.0: k, kept as a double until it is known to lie in [0, n] (us may be 0).
    const double us = 0.5 - std::abs(u);
    const double k = std::floor((2.0 * a / us + b) * u + c);
    if (!(k >= 0.0 && k <= n)) continue;
    v = v * alpha / (a / (us * us) + b);
    const double km = std::abs(k - m);
    if (km <= 15.0) {
      // Step 3.1: f(k)/f(m) by the recursion f(i)/f(i-1) = (n+1)r/i - r.
      double f = 1.0;
      if (m < k) {
        for (double i = m + 1.0; i <= k; i += 1.0) f *= nr / i - r;
      } else if (m > k) {
        for (double i = k + 1.0; i <= m; i += 1.0) v *= nr / i - r;
      }
      if (v <= f) return static_cast<std::uint64_t>(k);
      continue;
    }
    // Step 3.2: squeeze on ln v.
    v = portable::log(v);
    const double rho = (km / npq) * (((km / 3.0 + 0.625) * km + 1.0 / 6.0) / npq + 0.5);
    const double t = -km * km / (2.0 * npq);
    if (v < t - rho) return static_cast<std::uint64_t>(k);
    if (v > t + rho) continue;
    // Steps 3.3-3.4: final test against ln(f(k)/f(m)) with Stirling corrections.
    if (v <= log_pmf_ratio(k)) return static_cast<std::uint64_t>(k);
  }
}

}  // namespace

std::uint64_t binomial(Rng& rng, std::uint64_t n, double p) {
  if (!(p >= 0.0 && p <= 1.0)) detail::throw_invalid_argument("binomial", "p must be in [0, 1]", p);
  if (n > binomial_max_n) {
    detail::throw_invalid_argument("binomial", "n must be <= 2^53 = 9007199254740992", n);
  }
  if (n == 0 || p == 0.0) return 0;
  if (p == 1.0) return n;
  const bool flip = p > 0.5;
  const double p_small = flip ? 1.0 - p : p;
  const auto n_real = static_cast<double>(n);
  const std::uint64_t x = n_real * p_small < 10.0 ? binomial_inversion(rng, n_real, p_small)
                                                  : binomial_btrd(rng, n_real, p_small);
  return flip ? n - x : x;
}

}  // namespace dyncheck::sim
