// dyncheck/theory/scb/population_loss.hpp
//
// The population loss of the linear-attention model on SCB data in closed form (specs/scb.md §2).
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>
#include <dyncheck/theory/scb/constants.hpp>
#include <dyncheck/theory/scb/instance.hpp>

#include <stdexcept>

namespace dyncheck::theory::scb {

/// \f$L(V, A) = \tfrac12\mathbb E\|e_{x_o} - VXa^{(x_{T+1})}\|^2\f$ in closed form (§2, [derived]):
/// \f[ L = \tfrac12 L_{irr} + \tfrac12\sum_k \mu_k\bigl[\|q_k\|^2K_P - 2\langle a_k,q_k\rangle\langle V,P\rangle_\Sigma
///       + \|a_k\|^2\langle V,V\rangle_\Sigma + \|\mu - s_kV\mu\|^2\bigr],\qquad s_k = \mathbf 1^\top a_k, \f]
/// which follows from \f$\mathbb E[Xuw^\top X^\top] = (u\cdot w)\Sigma + (\mathbf 1^\top u)(\mathbf 1^\top w)\mu\mu^\top\f$.
/// Valid for any \f$A\f$ (no constraint on \f$s_k\f$). V is N x N, A is T x N (column k = a^{(k)}).
template <class S>
S population_loss(const Instance<S>& instance, const Matrix<S>& V, const Matrix<S>& A) {
  const auto N = instance.P.rows();
  if (V.rows() != N || V.cols() != N || A.rows() != instance.q.rows() || A.cols() != N) {
    throw std::invalid_argument("population_loss: V must be N x N and A must be T x N");
  }
  const Constants<S> c = constants(instance);
  const S VP = sigma_inner(V, instance.P, instance.mu);
  const S VV = sigma_inner(V, V, instance.mu);
  const Vector<S> Vmu = V * instance.mu;
  S sum = S(0);
  for (Eigen::Index k = 0; k < N; ++k) {
    const S s_k = A.col(k).sum();
    sum += instance.mu[k] * (instance.q.col(k).squaredNorm() * c.K_P - 2 * A.col(k).dot(instance.q.col(k)) * VP +
                             A.col(k).squaredNorm() * VV + (instance.mu - s_k * Vmu).squaredNorm());
  }
  return (c.L_irr + sum) / 2;
}

}  // namespace dyncheck::theory::scb
