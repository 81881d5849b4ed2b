// dyncheck/theory/multihead/identities.hpp
//
// The exact identities of specs/multihead.md B.4 [derived], as enumerations over {±1}^{k×d}
// (cube.hpp) and closed forms. Notation: J = 11ᵀ (k × k), P = I − J/k, G(X) = XᵀX, A(X) = XᵀPX.
//   D1  E[Xᵀ(J/k)X] = I, E[G] = k I, E[A] = (k − 1) I.
//   D2  C1 = E[XᵀF(X)], C2 = (1/k) E[XᵀJF(X)]; both equal Σ W_i when every Θ_i = 0; C2 is the
//       population minimiser of ½E‖(J/k)XW − F‖² (Hessian I by D1).
//   D3  ∇_Θ L(0) = (1/k) E[Xᵀ R W_sᵀ Xᵀ P X], R = (J/k) X W_s − F(X), for a single student head
//       softmax(XΘXᵀ)XW_s with loss L = ½E‖·− F‖².
//   D4  with W_s = Σ W_i and Θ_i = ε Θ̃_i:  ∇_Θ L(0) = −(ε/k²) Σ_i E[G Θ̃_i A W_i W_sᵀ A] + O(ε²);
//       large-k heuristic −ε((k−1)²/k) Σ_i Θ̃_i W_i W_sᵀ.
//   D6  for Ĉ_n the mean of n iid g(X_j): E‖Ĉ_n − C‖² = (E‖g‖² − ‖C‖²)/n, and the variance of
//       n‖Ĉ_n − C‖² from the fourth moments (concentration_moments).
//   D7  p_δ(λ) = P[max_b softmax(λ x_aᵀ Θ̃ Xᵀ)_b ≥ 1 − δ].
//   E-B3  the full multi-head student's population loss ½E‖F_student − F_teacher‖² (layer_loss).
// Every function takes the thread count of the enumeration; results do not depend on it.
#pragma once

#include <dyncheck/theory/multihead/cube.hpp>
#include <dyncheck/theory/multihead/layer.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace dyncheck::theory::multihead {

// ---------------------------------------------------------------- D1
template <class S>
struct BooleanMoments {
  Matrix<S> uniform;  ///< E[Xᵀ(J/k)X]
  Matrix<S> gram;     ///< E[G] = E[XᵀX]
  Matrix<S> centred;  ///< E[A] = E[XᵀPX]
  Matrix<S> diag;     ///< E[(diag of x xᵀ per token)], a k × d matrix of E[x_ab²]
};

template <class S>
BooleanMoments<S> boolean_moments(int k, int d, unsigned threads = 1) {
  const Matrix<S> P = centring<S>(k);
  const Matrix<S> all = cube_expectation<S>(
      k, d,
      [&](const Matrix<S>& X) {
        Matrix<S> out(d, 3 * d + k);
        const Vector<S> column_sums = X.colwise().sum().transpose();
        out.leftCols(d) = column_sums * column_sums.transpose() / S(k);
        out.middleCols(d, d) = X.transpose() * X;
        out.middleCols(2 * d, d) = X.transpose() * P * X;
        out.rightCols(k) = X.cwiseProduct(X).transpose();
        return out;
      },
      threads);
  return {all.leftCols(d), all.middleCols(d, d), all.middleCols(2 * d, d), all.rightCols(k).transpose()};
}

// ---------------------------------------------------------------- D2
template <class S>
struct CrudeEstimates {
  Matrix<S> c1;  ///< E[XᵀF(X)]
  Matrix<S> c2;  ///< (1/k) E[XᵀJF(X)]
};

/// The per-input crude estimate of C2: (1/k) XᵀJF(X) = (1/k)(Xᵀ1)(Fᵀ1)ᵀ.
template <class S>
Matrix<S> crude_c2_term(const Heads<S>& heads, const Matrix<S>& X) {
  const Matrix<S> F = layer(heads, X);
  const Vector<S> sx = X.colwise().sum().transpose();
  const Vector<S> sf = F.colwise().sum().transpose();
  return sx * sf.transpose() / S(static_cast<int>(X.rows()));
}

template <class S>
CrudeEstimates<S> crude_estimates(const Heads<S>& heads, int k, unsigned threads = 1) {
  const int d = heads.d();
  const Matrix<S> both = cube_expectation<S>(
      k, d,
      [&](const Matrix<S>& X) {
        const Matrix<S> F = layer(heads, X);
        Matrix<S> out(d, 2 * d);
        out.leftCols(d) = X.transpose() * F;
        const Vector<S> sx = X.colwise().sum().transpose();
        const Vector<S> sf = F.colwise().sum().transpose();
        out.rightCols(d) = sx * sf.transpose() / S(k);
        return out;
      },
      threads);
  return {both.leftCols(d), both.rightCols(d)};
}

/// Frobenius relative error ‖C − Σ W_i‖ / ‖Σ W_i‖.
template <class S>
S relative_error(const Matrix<S>& estimate, const Matrix<S>& target) {
  using std::sqrt;
  return sqrt((estimate - target).squaredNorm() / target.squaredNorm());
}

/// First-order coefficients of C1, C2 in ε at Θ_i = εΘ̃_i (softmax'(0)[dZ] = (1/k) dZ P):
///   dC1 = (1/k) Σ_i E[G Θ̃_i A] W_i,   dC2 = (1/k²) Σ_i E[Xᵀ J X Θ̃_i A] W_i.
/// Polynomial in X, so the enumeration is exact up to summation round-off.
template <class S>
CrudeEstimates<S> crude_first_order(const Heads<S>& directions, int k, unsigned threads = 1) {
  const int d = directions.d(), m = directions.m();
  const Matrix<S> P = centring<S>(k);
  const Matrix<S> all = cube_expectation<S>(
      k, d,
      [&](const Matrix<S>& X) {
        const Matrix<S> G = X.transpose() * X;
        const Matrix<S> A = X.transpose() * P * X;
        const Vector<S> sx = X.colwise().sum().transpose();
        const Matrix<S> JX = sx * sx.transpose();  // XᵀJX
        Matrix<S> out = Matrix<S>::Zero(d, 2 * d);
        for (int i = 0; i < m; ++i) {
          const auto h = static_cast<std::size_t>(i);
          const Matrix<S> TA = directions.theta[h] * A;
          out.leftCols(d) += G * TA * directions.w[h] / S(k);
          out.rightCols(d) += JX * TA * directions.w[h] / S(k * k);
        }
        return out;
      },
      threads);
  return {all.leftCols(d), all.rightCols(d)};
}

// ---------------------------------------------------------------- D3
/// The per-input gradient (1/k) Xᵀ R W_sᵀ Xᵀ P X at Θ = 0, R = (J/k) X W_s − F(X).
/// `uniform_weight` multiplies the (J/k) X W_s term (1 for the theory; a mutant edits it).
template <class S>
Matrix<S> student_gradient_term(const Heads<S>& teacher, const Matrix<S>& w_student, const Matrix<S>& X,
                                const S& uniform_weight = S(1)) {
  const auto k = static_cast<int>(X.rows());
  const Matrix<S> XW = X * w_student;
  const Vector<S> mean_row = XW.colwise().sum().transpose() / S(k);
  Matrix<S> R = -layer(teacher, X);
  for (int a = 0; a < k; ++a) R.row(a) += uniform_weight * mean_row.transpose();
  const Matrix<S> A = X.transpose() * centring<S>(k) * X;
  return X.transpose() * R * w_student.transpose() * A / S(k);
}

/// ∇_Θ L(0) of D3 by enumeration.
template <class S>
Matrix<S> student_gradient_at_zero(const Heads<S>& teacher, const Matrix<S>& w_student, int k, unsigned threads = 1,
                                   const S& uniform_weight = S(1)) {
  return cube_expectation<S>(
      k, teacher.d(), [&](const Matrix<S>& X) { return student_gradient_term(teacher, w_student, X, uniform_weight); },
      threads);
}

/// The single-head student loss L(Θ) = ½E‖softmax(XΘXᵀ)XW_s − F(X)‖² by enumeration (for finite
/// differences of D3).
template <class S>
S student_loss(const Heads<S>& teacher, const Matrix<S>& theta, const Matrix<S>& w_student, int k,
               unsigned threads = 1) {
  const Matrix<S> value = cube_expectation<S>(
      k, teacher.d(),
      [&](const Matrix<S>& X) {
        Matrix<S> out(1, 1);
        out(0, 0) = (attention<S>(X, theta) * X * w_student - layer(teacher, X)).squaredNorm() / S(2);
        return out;
      },
      threads);
  return value(0, 0);
}

// ---------------------------------------------------------------- E-B3
/// The full multi-head student's population loss L = ½E‖F_student(X) − F_teacher(X)‖² by enumeration, with
/// E‖F_student − F_teacher‖_1 (entrywise 1-norm, for the rounding bound of L): {L, E|R|_1}.
template <class S>
struct LayerLoss {
  S loss;
  S residual_l1;
};
template <class S>
LayerLoss<S> layer_loss(const Heads<S>& teacher, const Heads<S>& student, int k, unsigned threads = 1) {
  const Matrix<S> value = cube_expectation<S>(
      k, teacher.d(),
      [&](const Matrix<S>& X) {
        const Matrix<S> R = layer(student, X) - layer(teacher, X);
        Matrix<S> out(1, 2);
        out(0, 0) = R.squaredNorm() / S(2);
        out(0, 1) = R.cwiseAbs().sum();
        return out;
      },
      threads);
  return {value(0, 0), value(0, 1)};
}

// ---------------------------------------------------------------- D4
/// The exact linear-response coefficient Λ with ∇_Θ L(0) = −ε Λ + O(ε²):
///   Λ = (1/k²) Σ_i E[G Θ̃_i A W_i W_sᵀ A]. `use_gram_for_centred` replaces A by G (a mutant).
template <class S>
Matrix<S> linear_response(const Heads<S>& directions, const Matrix<S>& w_student, int k, unsigned threads = 1,
                          bool use_gram_for_centred = false) {
  const int d = directions.d(), m = directions.m();
  const Matrix<S> P = centring<S>(k);
  return cube_expectation<S>(
      k, d,
      [&](const Matrix<S>& X) {
        const Matrix<S> G = X.transpose() * X;
        const Matrix<S> A = use_gram_for_centred ? G : Matrix<S>(X.transpose() * P * X);
        Matrix<S> out = Matrix<S>::Zero(d, d);
        for (int i = 0; i < m; ++i) {
          const auto h = static_cast<std::size_t>(i);
          out += G * directions.theta[h] * A * directions.w[h] * w_student.transpose() * A;
        }
        return Matrix<S>(out / S(k * k));
      },
      threads);
}

/// The large-k heuristic of D4 (G → kI, A → (k−1)I): ((k−1)²/k) Σ_i Θ̃_i W_i W_sᵀ.
template <class S>
Matrix<S> linear_response_heuristic(const Heads<S>& directions, const Matrix<S>& w_student, int k) {
  Matrix<S> out = Matrix<S>::Zero(directions.d(), directions.d());
  for (int i = 0; i < directions.m(); ++i) {
    const auto h = static_cast<std::size_t>(i);
    out += directions.theta[h] * directions.w[h] * w_student.transpose();
  }
  return out * S((k - 1) * (k - 1)) / S(k);
}

// ---------------------------------------------------------------- D6
/// Moments of an enumerated g (d × d) for the concentration identity:
///   mean = C, second = E‖g‖², trace_sigma = E‖g‖² − ‖C‖², trace_sigma_sq = tr Σ² (Σ = Cov vec g),
///   fourth = E‖g − C‖⁴.
/// Var(n‖Ĉ_n − C‖²) = (fourth − trace_sigma² − 2 tr Σ²)/n + 2 tr Σ²  (exact for iid samples).
template <class S>
struct ConcentrationMoments {
  Matrix<S> mean;
  S second{0}, trace_sigma{0}, trace_sigma_sq{0}, fourth{0};

  /// E[n‖Ĉ_n − C‖²] (= trace_sigma for every n).
  S expected_scaled_error() const { return trace_sigma; }
  /// Var(n‖Ĉ_n − C‖²).
  S variance_scaled_error(const S& n) const {
    return (fourth - trace_sigma * trace_sigma - S(2) * trace_sigma_sq) / n + S(2) * trace_sigma_sq;
  }
};

template <class S, class G>
ConcentrationMoments<S> concentration_moments(int k, int d, G&& g, unsigned threads = 1) {
  ConcentrationMoments<S> out;
  out.mean = cube_expectation<S>(k, d, g, threads);
  const Eigen::Index q = out.mean.size();
  const Vector<S> c = Eigen::Map<const Vector<S>>(out.mean.data(), q);
  // Second pass: centred moments (h = vec g − c): E[h hᵀ] and E‖h‖⁴ and E‖g‖².
  const Matrix<S> moments = cube_expectation<S>(
      k, d,
      [&](const Matrix<S>& X) {
        const Matrix<S> gx = g(X);
        const Vector<S> h = Eigen::Map<const Vector<S>>(gx.data(), q) - c;
        Matrix<S> out_x(q, q + 2);
        out_x.leftCols(q) = h * h.transpose();
        const S h2 = h.squaredNorm();
        out_x.col(q).setConstant(S(0));
        out_x(0, q) = h2 * h2;
        out_x.col(q + 1).setConstant(S(0));
        out_x(0, q + 1) = gx.squaredNorm();
        return out_x;
      },
      threads);
  const Matrix<S> sigma = moments.leftCols(q);
  out.trace_sigma = sigma.trace();
  out.trace_sigma_sq = (sigma * sigma).trace();
  out.fourth = moments(0, q);
  out.second = moments(0, q + 1);
  return out;
}

// ---------------------------------------------------------------- D7
/// The logits of row a: z_b = x_aᵀ Θ̃ x_b.
template <class S>
Vector<S> row_logits(const Matrix<S>& X, const Matrix<S>& theta, int a) {
  return X * (theta.transpose() * X.row(a).transpose());
}

/// max_b softmax(λ z)_b = 1 / Σ_b e^{λ(z_b − z_max)}.
template <class S>
S max_softmax(const Vector<S>& z, const S& lambda) {
  const S top = z.maxCoeff();
  S total(0);
  for (Eigen::Index b = 0; b < z.size(); ++b) total += exp_of(S(lambda * (z[b] - top)));
  return S(1) / total;
}

/// For the enumeration of D7: per λ in `lambdas`, P[max softmax ≥ 1 − δ] and the mass of inputs
/// whose max softmax lies within `borderline` of 1 − δ (where the double comparison may round
/// either way); also P[unique argmax] and the smallest gap z_max − z_second over inputs with a
/// unique argmax (ties: |z_b − z_max| <= tie_tolerance).
struct LargeMargin {
  std::vector<double> probability;
  std::vector<double> borderline_mass;
  double unique_argmax = 0;
  double min_gap = 0;
};

inline LargeMargin large_margin_frequency(const Matrix<double>& theta, int k, int a, const std::vector<double>& lambdas,
                                          double delta, unsigned threads = 1, double borderline = 1e-12,
                                          double tie_tolerance = 1e-9) {
  const int d = static_cast<int>(theta.rows());
  const auto L = static_cast<Eigen::Index>(lambdas.size());
  // Columns: [0, L) indicator of ≥ 1 − δ; [L, 2L) borderline indicator; 2L unique; 2L + 1 gap (as a min, separately).
  const Matrix<double> sums = cube_expectation<double>(
      k, d,
      [&](const Matrix<double>& X) {
        Matrix<double> out = Matrix<double>::Zero(1, 2 * L + 1);
        const Vector<double> z = row_logits<double>(X, theta, a);
        for (Eigen::Index j = 0; j < L; ++j) {
          const double top = max_softmax<double>(z, lambdas[static_cast<std::size_t>(j)]);
          out(0, j) = top >= 1 - delta ? 1.0 : 0.0;
          out(0, L + j) = std::abs(top - (1 - delta)) <= borderline ? 1.0 : 0.0;
        }
        const double zmax = z.maxCoeff();
        int at_max = 0;
        for (Eigen::Index b = 0; b < z.size(); ++b) at_max += std::abs(z[b] - zmax) <= tie_tolerance * (1 + std::abs(zmax)) ? 1 : 0;
        out(0, 2 * L) = at_max == 1 ? 1.0 : 0.0;
        return out;
      },
      threads);
  LargeMargin result;
  for (Eigen::Index j = 0; j < L; ++j) {
    result.probability.push_back(sums(0, j));
    result.borderline_mass.push_back(sums(0, L + j));
  }
  result.unique_argmax = sums(0, 2 * L);
  // The smallest gap: a min, not a sum; a sequential pass in index order.
  double gap = std::numeric_limits<double>::infinity();
  Matrix<double> X;
  const std::uint64_t inputs = std::uint64_t{1} << static_cast<unsigned>(k * d);
  for (std::uint64_t i = 0; i < inputs; ++i) {
    cube_input<double>(i, k, d, X);
    const Vector<double> z = row_logits<double>(X, theta, a);
    const double zmax = z.maxCoeff();
    double second = -std::numeric_limits<double>::infinity();
    int at_max = 0;
    for (Eigen::Index b = 0; b < z.size(); ++b) {
      if (std::abs(z[b] - zmax) <= tie_tolerance * (1 + std::abs(zmax))) {
        ++at_max;
      } else {
        second = std::max(second, z[b]);
      }
    }
    if (at_max == 1 && z.size() > 1) gap = std::min(gap, zmax - second);
  }
  result.min_gap = gap;
  return result;
}

}  // namespace dyncheck::theory::multihead
