// dyncheck/theory/joma/invariants.hpp
//
// The JoMA invariants of exp and linear attention (specs/joma.md §2, Theorem 1 and its
// "general form" [derived]) and their exact per-step changes under plain SGD.
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>

#include <stdexcept>
#include <string>

namespace dyncheck::theory::joma {

namespace detail {
inline void require_same_shape(Eigen::Index rows_a, Eigen::Index cols_a, Eigen::Index rows_b, Eigen::Index cols_b,
                               const char* where) {
  if (rows_a != rows_b || cols_a != cols_b) {
    throw std::invalid_argument(std::string(where) + ": shapes differ (" + std::to_string(rows_a) + "x" +
                                std::to_string(cols_a) + " vs " + std::to_string(rows_b) + "x" +
                                std::to_string(cols_b) + ")");
  }
}
}  // namespace detail

/// The exp-attention invariant quantity (§2, exp; temperature T, \f$\kappa_z = \eta_z/(\eta_w T)\f$):
/// \f[ I_{\exp}(z, V) = z - \tfrac{\kappa_z}{2}\sum_k v_k^{\circ 2}, \f]
/// with \f$V = [v_1, \dots, v_K] = U_C^T W\f$ (one column per hidden neuron). Under gradient flow
/// \f$\dot I_{\exp} = 0\f$ exactly, for any activation, loss and data.
template <class S>
Vector<S> exp_invariant(const Vector<S>& z, const Matrix<S>& V, const S& kappa_z) {
  if (z.size() != V.rows()) throw std::invalid_argument("exp_invariant: z and V must have M_C rows");
  return z - (kappa_z / S(2)) * V.array().square().matrix().rowwise().sum();
}

/// Exact change of \f$I_{\exp}\f$ in one plain SGD step \f$V \to V'\f$ (§2, [derived]):
/// \f[ I_{\exp}(z', V') - I_{\exp}(z, V) = -\tfrac{\kappa_z}{2}\sum_k (v'_k - v_k)^{\circ 2}. \f]
/// Why exact: per sample \f$\partial\ell/\partial z = T^{-1}\sum_k v_k\circ\partial\ell/\partial v_k\f$,
/// so \f$\Delta z = \tfrac{\kappa_z}{2}\sum_k[(v'_k)^2 - v_k^2 - (\Delta v_k)^2]\f$ for any batch mean.
template <class S>
Vector<S> exp_invariant_step_change(const Matrix<S>& V_before, const Matrix<S>& V_after, const S& kappa_z) {
  detail::require_same_shape(V_before.rows(), V_before.cols(), V_after.rows(), V_after.cols(),
                             "exp_invariant_step_change");
  return -(kappa_z / S(2)) * (V_after - V_before).array().square().matrix().rowwise().sum();
}

/// The linear-attention invariant quantity (§2, linear; \f$\rho = \eta_z/\eta_w\f$):
/// \f[ I_{\mathrm{lin}}(z, V) = z^{\circ 2} - \rho\sum_k v_k^{\circ 2}. \f]
/// Under gradient flow \f$\dot I_{\mathrm{lin}} = 0\f$ since \f$z\circ\partial\ell/\partial z =
/// \sum_k v_k\circ\partial\ell/\partial v_k\f$ per sample.
template <class S>
Vector<S> linear_invariant(const Vector<S>& z, const Matrix<S>& V, const S& rate_ratio) {
  if (z.size() != V.rows()) throw std::invalid_argument("linear_invariant: z and V must have M_C rows");
  return z.array().square().matrix() - rate_ratio * V.array().square().matrix().rowwise().sum();
}

/// Exact change of \f$I_{\mathrm{lin}}\f$ in one plain SGD step (§2, [derived]):
/// \f[ I_{\mathrm{lin}}(z', V') - I_{\mathrm{lin}}(z, V) = (z' - z)^{\circ 2} - \rho\sum_k (v'_k - v_k)^{\circ 2}. \f]
template <class S>
Vector<S> linear_invariant_step_change(const Vector<S>& z_before, const Vector<S>& z_after, const Matrix<S>& V_before,
                                       const Matrix<S>& V_after, const S& rate_ratio) {
  detail::require_same_shape(V_before.rows(), V_before.cols(), V_after.rows(), V_after.cols(),
                             "linear_invariant_step_change");
  if (z_before.size() != z_after.size() || z_before.size() != V_before.rows()) {
    throw std::invalid_argument("linear_invariant_step_change: z and V must have M_C rows");
  }
  return (z_after - z_before).array().square().matrix() -
         rate_ratio * (V_after - V_before).array().square().matrix().rowwise().sum();
}

}  // namespace dyncheck::theory::joma
