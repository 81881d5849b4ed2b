// dyncheck/theory/topic/stage_two_dirichlet.hpp
//
// Stage 2 under the cross-entropy loss for Dirichlet documents (specs/topic.md §6 "Under CE, c = 1 gives E* = 47.7",
// §9 C9) [derived]: key set (C), N -> infinity, W^V frozen with same-topic minus other-topic value Delta = c_s - c_d,
// theta ~ Dir(alpha 1_T). The E-dependent part of the population loss (the [MASK] query does not depend on E under
// (C)) is, by exchangeability of the topics (query topic b = 1) and the Dirichlet aggregation property
// (x = theta_1 ~ Beta(alpha, n alpha), n = T - 1, independent of phi = theta_{2..T}/(1 - x) ~ Dir(alpha 1_n)),
//   L(E) = T E_x[ (p_c x + p_r/T) (log v + E_phi LSE) - Delta (p_c E x^2/Z + (p_r/T)(E x^2 + (1-x)^2 n mu_2)/Z) ],
//   Z = 1 + (E - 1) x,  LSE = log(e^(Delta E x/Z) + sum_{t=1..n} e^(y phi_t)),  y = Delta (1 - x)/Z,
// with mu_k = E phi_1^k = (alpha)_k/(n alpha)_k (rising factorials). The inner expectation: sum_t e^(y phi_t) =
// n + y + R, R = sum_t f(phi_t), f(p) = e^(y p) - 1 - y p >= 0, and R <= f(1) = e^y - 1 - y (f convex, f(0) = 0,
// sum phi_t = 1). With C0 = e^(Delta E x/Z) + n + y and u = R/C0 in [0, u_max]:
//   E log(C0 + R) = log C0 + E R/C0 - E R^2/(2 C0^2) + E r(u),  r(u) = log(1+u) - u + u^2/2 in [0, u^3/3],
//   E R = n sum_{k>=2} y^k/k! mu_k,  E R^2 = sum_{k,l>=2} y^(k+l)/(k! l!) (n mu_{k+l} + n (n-1) mu_{k,l}),
//   mu_{k,l} = E phi_1^k phi_2^l = (alpha)_k (alpha)_l/(n alpha)_{k+l}   (exact Dirichlet moments).
// The x-expectation is a Gauss-Jacobi rule for the Beta(alpha, n alpha) weight (Golub-Welsch on the Jacobi matrix).
// The dropped r(u) moves the minimiser; its s-derivative (s = log E) is bounded per node:
//   |d/ds E r(u)| <= E[u^2] sup|du/ds|  (r'(u) = u^2/(1+u) <= u^2),
//   |du/ds| <= (e^y - 1)|dy/ds|/C0 + (e^y - 1 - y)|dC0/ds|/C0^2   (|dR/ds| = |dy/ds| sum phi_t (e^(y phi_t) - 1)
//   <= |dy/ds| (e^y - 1), the same convexity), |dy/ds| = E Delta x (1-x)/Z^2, |dC0/ds| <= (e^(Delta E x/Z) + 1) E Delta x (1-x)/Z^2.
// The series in k is cut at k = 2..kmax - 1 (kmax = 40; with y <= Delta <= 2 the tail is below 2^40/40! ~ 1e-36).
// Double precision only; exp and log through dyncheck::portable.
#pragma once

#include <Eigen/Eigenvalues>

#include <dyncheck/portable/math.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace dyncheck::theory::topic {

/// Gauss quadrature for the Beta(a, b) law on [0, 1]: nodes and weights (summing to 1) of the K-point rule, exact for
/// polynomials of degree <= 2K - 1 (Golub-Welsch: the Jacobi polynomials of weight (1-t)^(b-1) (1+t)^(a-1) on [-1, 1]).
struct BetaRule {
  std::vector<double> x, w;
};

inline BetaRule beta_gauss_rule(double a, double b, int K) {
  if (!(a > 0) || !(b > 0) || K < 1) throw std::invalid_argument("beta_gauss_rule: a, b > 0 and K >= 1");
  // Jacobi weight (1-t)^A (1+t)^B with A = b - 1, B = a - 1 (x = (1 + t)/2 carries x^(a-1) (1-x)^(b-1)).
  const double A = b - 1, B = a - 1;
  Eigen::VectorXd diag(K), off(K > 1 ? K - 1 : 1);
  for (int k = 0; k < K; ++k) {
    const double s = 2.0 * k + A + B;
    diag(k) = k == 0 ? (B - A) / (A + B + 2) : (B * B - A * A) / (s * (s + 2));
  }
  for (int k = 1; k < K; ++k) {
    const double s = 2.0 * k + A + B;
    // beta_k = 4 k (k+A)(k+B)(k+A+B) / (s^2 (s+1)(s-1)); at k = 1 the factor (k + A + B) = s - 1 cancels analytically
    // (A + B + 1 = a + b - 1 may be 0, e.g. T alpha = 1).
    const double beta = k == 1 ? 4.0 * (1 + A) * (1 + B) / (s * s * (s + 1))
                               : 4.0 * k * (k + A) * (k + B) * (k + A + B) / (s * s * (s + 1) * (s - 1));
    off(k - 1) = std::sqrt(beta);
  }
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(K, K);
  for (int k = 0; k < K; ++k) J(k, k) = diag(k);
  for (int k = 0; k + 1 < K; ++k) J(k, k + 1) = J(k + 1, k) = off(k);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(J);
  if (solver.info() != Eigen::Success) throw std::runtime_error("beta_gauss_rule: eigen-decomposition failed");
  BetaRule rule;
  double total = 0;
  for (int k = 0; k < K; ++k) {
    rule.x.push_back((1 + solver.eigenvalues()(k)) / 2);
    const double first = solver.eigenvectors()(0, k);
    rule.w.push_back(first * first);
    total += first * first;
  }
  for (double& w : rule.w) w /= total;
  return rule;
}

/// The setting: T topics (>= 2), v words per topic, Dir(alpha) documents, masking p_c, p_r, value contrast Delta.
struct DirichletCeSetting {
  int T = 10, v = 10;
  double alpha = 0.1, p_c = 0.1, p_r = 0.1, Delta = 1;
  /// Mutant hook: the remaining-mass moment E sum_{t >= 2} phi_t^2 is n mu_2; with this false it is taken as mu_2.
  bool moment_over_all_other_topics = true;
  /// Mutant hook: x = theta_1 ~ Beta(alpha, (T - 1) alpha); with this true Beta(alpha, T alpha) (the complement's
  /// concentration counted over all T topics).
  bool marginal_over_all_topics = false;
};

/// The E-dependent part of the population loss at s = log E (series to second order), and the bound on the
/// s-derivative of what the series drops (header).
struct DirichletCeValue {
  double loss = 0;
  double dropped_slope_bound = 0;
};

class DirichletCrossEntropy {
 public:
  DirichletCrossEntropy(const DirichletCeSetting& setting, int nodes) : s_(setting) {
    if (s_.T < 2) throw std::invalid_argument("DirichletCrossEntropy: T >= 2");
    n_ = s_.T - 1;
    const double nd = n_, a = s_.alpha;
    rule_ = beta_gauss_rule(a, (s_.marginal_over_all_topics ? nd + 1 : nd) * a, nodes);
    // mu_k = (a)_k / (n a)_k, k = 0..2 kmax.
    mu_.assign(2 * kmax + 2, 1.0);
    for (int k = 1; k < 2 * kmax + 2; ++k) mu_[static_cast<std::size_t>(k)] = mu_[static_cast<std::size_t>(k - 1)] * (a + k - 1) / (nd * a + k - 1);
    // M2(k, l) = (n mu_{k+l} + n (n-1) mu_{k,l}) / (k! l!), mu_{k,l} = (a)_k (a)_l / (n a)_{k+l} = mu_k (a)_l / prod_{i=k}^{k+l-1} (n a + i).
    inv_fact_.assign(kmax, 1.0);
    for (int k = 1; k < kmax; ++k) inv_fact_[static_cast<std::size_t>(k)] = inv_fact_[static_cast<std::size_t>(k - 1)] / k;
    M2_.assign(static_cast<std::size_t>(kmax * kmax), 0.0);
    for (int k = 2; k < kmax; ++k) {
      for (int l = 2; l < kmax; ++l) {
        double mixed = mu_[static_cast<std::size_t>(k)];
        for (int i = 0; i < l; ++i) mixed *= (a + i) / (nd * a + k + i);
        const double m = nd * mu_[static_cast<std::size_t>(k + l)] + (n_ > 1 ? nd * (nd - 1) * mixed : 0.0);
        M2_[static_cast<std::size_t>(k * kmax + l)] = m * inv_fact_[static_cast<std::size_t>(k)] * inv_fact_[static_cast<std::size_t>(l)];
      }
    }
  }

  DirichletCeValue at(double s) const {
    const double E = portable::exp(s), D = s_.Delta, T = s_.T, nd = n_;
    const double EQ = s_.moment_over_all_other_topics ? nd * mu_[2] : mu_[2];
    DirichletCeValue out;
    std::vector<double> yk(kmax);
    for (std::size_t i = 0; i < rule_.x.size(); ++i) {
      const double x = rule_.x[i], w = rule_.w[i];
      const double Z = 1 + (E - 1) * x, y = D * (1 - x) / Z, a = portable::exp(D * E * x / Z);
      const double C0 = a + nd + y;
      yk[0] = 1;
      for (int k = 1; k < kmax; ++k) yk[static_cast<std::size_t>(k)] = yk[static_cast<std::size_t>(k - 1)] * y;
      double ER = 0, ER2 = 0;
      for (int k = 2; k < kmax; ++k) {
        ER += yk[static_cast<std::size_t>(k)] * inv_fact_[static_cast<std::size_t>(k)] * nd * mu_[static_cast<std::size_t>(k)];
        double row = 0;
        for (int l = 2; l < kmax; ++l) row += M2_[static_cast<std::size_t>(k * kmax + l)] * yk[static_cast<std::size_t>(l)];
        ER2 += yk[static_cast<std::size_t>(k)] * row;
      }
      const double lse = portable::log(static_cast<double>(s_.v)) + portable::log(C0) + ER / C0 - ER2 / (2 * C0 * C0);
      const double weight = s_.p_c * x + s_.p_r / T;
      const double poly = -D * (s_.p_c * E * x * x / Z + (s_.p_r / T) * (E * x * x + (1 - x) * (1 - x) * EQ) / Z);
      out.loss += w * (weight * lse + poly);
      const double dy = E * D * x * (1 - x) / (Z * Z);
      const double dC0 = (a + 1) * dy;
      const double ey = portable::exp(y);
      const double du = (ey - 1) * dy / C0 + (ey - 1 - y) * dC0 / (C0 * C0);
      out.dropped_slope_bound += w * weight * ER2 / (C0 * C0) * du;
    }
    out.loss *= T;
    out.dropped_slope_bound *= T;
    return out;
  }

  /// d/ds of the series loss by a central difference with step h.
  double slope(double s, double h) const { return (at(s + h).loss - at(s - h).loss) / (2 * h); }

  /// The root of slope(., h) in [lo, hi] by bisection (iterations halvings); hi + 1 if the slope is still negative
  /// at hi (no minimiser on the bracket), lo - 1 if it is positive at lo.
  double minimiser(double lo, double hi, double h, int iterations = 60) const {
    if (slope(hi, h) < 0) return hi + 1;
    if (slope(lo, h) > 0) return lo - 1;
    for (int i = 0; i < iterations; ++i) {
      const double mid = (lo + hi) / 2;
      (slope(mid, h) < 0 ? lo : hi) = mid;
    }
    return (lo + hi) / 2;
  }

  static constexpr int kmax = 40;

 private:
  DirichletCeSetting s_;
  int n_ = 1;
  BetaRule rule_;
  std::vector<double> mu_, inv_fact_, M2_;
};

}  // namespace dyncheck::theory::topic
