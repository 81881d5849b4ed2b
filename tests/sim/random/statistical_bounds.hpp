#pragma once
// Derived half-widths for the statistical tests of tests/sim/random.
//
// Every stochastic assertion in these tests is "estimate within a bound that fails with
// probability <= delta when the sampler is right" (TFP's false_fail_rate; numerics.md §4).
// The bounds below are finite-sample inequalities, not asymptotic ones, so delta is a real
// guarantee. Each RapidCheck case spends kFalseFailurePerCase, split (Bonferroni) over the
// assertions of the case; with RapidCheck's 100 cases per property and about 30 properties the
// suite fails falsely with probability <= 3e-6 even under a varied RC seed (CI pins the seed).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace dyncheck::sim::test {

inline constexpr double kFalseFailurePerCase = 1e-9;

/**
 * Bernstein's inequality for the mean of n iid X with variance <= `variance` and |X - mu| <= M:
 *   P(|mean - mu| >= t) <= 2 exp(-n t^2 / (2 (variance + M t / 3))).
 * Setting the right side to delta and solving the quadratic in t gives
 *   t = M L/(3n) + sqrt((M L/(3n))^2 + 2 variance L / n) <= sqrt(2 variance L/n) + 2 M L/(3n),
 * L = ln(2/delta); we return the exact root.
 */
inline double bernstein_half_width(double variance, double range_bound, double n, double delta) {
  const double l = std::log(2.0 / delta);
  const double a = range_bound * l / (3.0 * n);
  return a + std::sqrt(a * a + 2.0 * variance * l / n);
}

/// Two-sided tail bound of a sum S ~ Gamma(k, 1) (sub-gamma on the right with variance
/// factor k and scale 1, sub-Gaussian on the left; Boucheron, Lugosi, Massart 2013, §2.4):
///   P(S - k >= sqrt(2 k x) + x) <= e^{-x},  P(k - S >= sqrt(2 k x)) <= e^{-x},
/// with x = ln(2/delta) so that the two sides together fail with probability <= delta.
/// Also covers chi-square: chi2_n = 2 Gamma(n/2) (Laurent & Massart 2000, Lemma 1).
struct Interval {
  double low;
  double high;
  bool contains(double value) const { return low <= value && value <= high; }
};
inline Interval gamma_sum_interval(double k, double delta) {
  const double x = std::log(2.0 / delta);
  return {k - std::sqrt(2.0 * k * x), k + std::sqrt(2.0 * k * x) + x};
}

/// Gaussian tail: for Z ~ N(0,1), P(|Z| >= z) <= 2 phi(z)/z <= exp(-z^2/2) for z >= 1
/// (Mills' ratio, 2 phi(z)/z = sqrt(2/pi) e^{-z^2/2}/z <= e^{-z^2/2} when z >= sqrt(2/pi)).
/// So z = sqrt(2 ln(1/delta)) suffices; for delta = 1e-9 that is 6.44 (exact quantile 6.11).
inline double gaussian_two_sided_quantile_bound(double delta) {
  return std::max(1.0, std::sqrt(2.0 * std::log(1.0 / delta)));
}

/**
 * Median of means for the mean of n iid values with known variance (Nemirovski & Yudin 1983;
 * Lugosi & Mendelson 2019): split into B blocks of m = floor(n/B) values (B odd), take the
 * median of the block means. By Chebyshev a block mean misses mu by >= t with probability
 * rho = variance / (m t^2); the median misses only if >= (B+1)/2 blocks do, which by the
 * Chernoff bound for Binomial(B, rho) has probability <= exp(-B KL(1/2 || rho)),
 * KL(1/2 || rho) = -ln(4 rho (1 - rho))/2. Given delta we take the rho on a grid that minimizes
 * t = sqrt(variance B / (n rho)) with B = ceil(ln(1/delta)/KL) made odd. Unlike Bernstein this
 * needs only a finite variance, so it serves second moments of unbounded variates.
 */
struct MedianOfMeansPlan {
  std::size_t blocks;
  double half_width;
};
inline MedianOfMeansPlan median_of_means_plan(double variance, std::size_t n, double delta) {
  MedianOfMeansPlan best{0, std::numeric_limits<double>::infinity()};
  for (double rho = 0.01; rho < 0.5; rho += 0.01) {
    const double kl = -0.5 * std::log(4.0 * rho * (1.0 - rho));
    auto blocks = static_cast<std::size_t>(std::ceil(std::log(1.0 / delta) / kl));
    if (blocks % 2 == 0) ++blocks;
    if (blocks > n) continue;
    const std::size_t m = n / blocks;
    const double t = std::sqrt(variance / (static_cast<double>(m) * rho));
    if (t < best.half_width) best = {blocks, t};
  }
  return best;
}
inline double median_of_means(std::span<const double> values, std::size_t blocks) {
  const std::size_t m = values.size() / blocks;
  std::vector<double> means(blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    double sum = 0.0;
    for (std::size_t i = 0; i < m; ++i) sum += values[b * m + i];
    means[b] = sum / static_cast<double>(m);
  }
  std::nth_element(means.begin(), means.begin() + static_cast<std::ptrdiff_t>(blocks / 2),
                   means.end());
  return means[blocks / 2];
}

/// Dvoretzky–Kiefer–Wolfowitz with Massart's constant (Ann. Probab. 18, 1990): for the empirical
/// CDF of n iid values from any F, P(sup_x |F_n(x) - F(x)| > eps) <= 2 exp(-2 n eps^2), so
/// eps = sqrt(ln(2/delta) / (2n)).
inline double dkw_half_width(double n, double delta) {
  return std::sqrt(std::log(2.0 / delta) / (2.0 * n));
}

/// sup_x |F_n(x) - F(x)| for a continuous F, from the sorted sample (the Kolmogorov–Smirnov
/// statistic: the supremum is attained at a sample point, from the left or the right).
template <class Cdf>
double kolmogorov_distance(std::vector<double> sample, Cdf cdf) {
  std::sort(sample.begin(), sample.end());
  const auto n = static_cast<double>(sample.size());
  double d = 0.0;
  for (std::size_t i = 0; i < sample.size(); ++i) {
    const double f = cdf(sample[i]);
    d = std::max({d, static_cast<double>(i + 1) / n - f, f - static_cast<double>(i) / n});
  }
  return d;
}

/// Maps an integer drawn by rc::gen::inRange to a real in [low, high] on a log scale, so that
/// RapidCheck explores several orders of magnitude (it has no bounded double generator,
/// numerics.md §2c).
inline double log_scale(long step, long steps, double low, double high) {
  const double t = static_cast<double>(step) / static_cast<double>(steps);
  return std::exp(std::log(low) + t * (std::log(high) - std::log(low)));
}

}  // namespace dyncheck::sim::test
