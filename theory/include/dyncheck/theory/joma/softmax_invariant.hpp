// dyncheck/theory/joma/softmax_invariant.hpp
//
// The approximate softmax invariant of JoMA (specs/joma.md §2, "Softmax, exact decomposition"
// [derived]) and the normalised correlation the paper's Fig. 2 plots.
#pragma once

#include <dyncheck/theory/joma/invariants.hpp>
#include <dyncheck/theory/numeric/eigen.hpp>

#include <cmath>
#include <stdexcept>

namespace dyncheck::theory::joma {

/// The softmax estimate of the logits (§2, Theorem 1 softmax, up to the constant c):
/// \f[ \hat z(V) = \tfrac{\kappa_z}{2}\sum_k\bigl(v_k^{\circ 2} - \|v_k\|_2^2\,\bar b\bigr), \f]
/// with \f$\bar b\f$ a fixed vector (the paper's \f$\bar b_m = \mathbb E_{q=m}[b]\f$; the official
/// script uses \f$\bar x\f$).
template <class S>
Vector<S> softmax_invariant_estimate(const Matrix<S>& V, const Vector<S>& b_bar, const S& kappa_z) {
  if (b_bar.size() != V.rows()) throw std::invalid_argument("softmax_invariant_estimate: b_bar must have M_C entries");
  const S total_square_norm = V.squaredNorm();
  return (kappa_z / S(2)) * (V.array().square().matrix().rowwise().sum() - total_square_norm * b_bar);
}

/// Exact one-step change of the softmax defect \f$z - \hat z\f$ under plain SGD on a batch of
/// \f$N\f$ samples with mean loss (§2 [derived]):
/// \f[ (z-\hat z)_{t+1} - (z-\hat z)_t = \frac{\eta_z}{TN}\sum_s (b_s - \bar b)\,r_s
///     - \tfrac{\kappa_z}{2}\sum_k(\Delta v_k)^{\circ 2} + \tfrac{\kappa_z}{2}\,\bar b\sum_k\|\Delta v_k\|^2, \f]
/// \f$r_s = \sum_k G_{s,k}^T v_k\f$ with \f$G_{s,k} = \partial\ell_s/\partial v_k\f$ at the step's start.
/// The first term is what JoMA's \f$\bar b\f$ approximation drops; the other two are \f$O(\eta^2)\f$.
/// \param b attention of each sample, \f$M_C\times N\f$; \param r the \f$r_s\f$, length N;
/// \param eta_z_over_T \f$\eta_z/T\f$.
template <class S>
Vector<S> softmax_defect_step_change(const Matrix<S>& b, const Vector<S>& r, const Vector<S>& b_bar,
                                     const Matrix<S>& V_before, const Matrix<S>& V_after, const S& eta_z_over_T,
                                     const S& kappa_z) {
  detail::require_same_shape(V_before.rows(), V_before.cols(), V_after.rows(), V_after.cols(),
                             "softmax_defect_step_change");
  if (b.rows() != V_before.rows() || b.cols() != r.size() || b_bar.size() != b.rows() || b.cols() == 0) {
    throw std::invalid_argument("softmax_defect_step_change: b must be M_C x N with N >= 1, r of length N, b_bar of length M_C");
  }
  const Matrix<S> step = V_after - V_before;
  const Vector<S> centred_sum = (b.colwise() - b_bar) * r;
  return (eta_z_over_T / S(b.cols())) * centred_sum -
         (kappa_z / S(2)) * step.array().square().matrix().rowwise().sum() +
         (kappa_z / S(2)) * step.squaredNorm() * b_bar;
}

/// Normalised correlation of Fig. 2 (`norm_corr` of draw_figure_2_3.py, without its 1e-8):
/// \f[ \mathrm{NC}(a, b) = \frac{(a - \bar a\mathbf 1)^T(b - \bar b\mathbf 1)}{\|a - \bar a\mathbf 1\|\,\|b - \bar b\mathbf 1\|}. \f]
/// Throws std::invalid_argument when a centred vector is zero (NC undefined).
template <class S>
S normalised_correlation(const Vector<S>& a, const Vector<S>& b) {
  if (a.size() != b.size() || a.size() < 2) throw std::invalid_argument("normalised_correlation: equal sizes >= 2 needed");
  const Vector<S> ac = a.array() - a.mean();
  const Vector<S> bc = b.array() - b.mean();
  const S na = ac.norm(), nb = bc.norm();
  if (!(na > S(0)) || !(nb > S(0))) throw std::invalid_argument("normalised_correlation: a centred vector is zero");
  return ac.dot(bc) / (na * nb);
}

}  // namespace dyncheck::theory::joma
