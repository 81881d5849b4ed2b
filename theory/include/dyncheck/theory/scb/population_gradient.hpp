// dyncheck/theory/scb/population_gradient.hpp
//
// Gradients of the closed-form population loss (specs/scb.md §2).
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>
#include <dyncheck/theory/scb/constants.hpp>
#include <dyncheck/theory/scb/instance.hpp>

#include <stdexcept>

namespace dyncheck::theory::scb {

template <class S>
struct Gradient {
  Matrix<S> V;  ///< N x N
  Matrix<S> A;  ///< T x N, column k = \f$\nabla_{a_k}L\f$
};

/// (§2, [derived]) with \f$s_k = \mathbf 1^\top a_k\f$:
/// \f[ \nabla_V L = \sum_k\mu_k\bigl[-\langle a_k,q_k\rangle P\Sigma + \|a_k\|^2V\Sigma - s_k(\mu - s_kV\mu)\mu^\top\bigr], \f]
/// \f[ \nabla_{a_k}L = \mu_k\bigl[-\langle V,P\rangle_\Sigma q_k + \langle V,V\rangle_\Sigma a_k - (V\mu)^\top(\mu - s_kV\mu)\,\mathbf 1_T\bigr]. \f]
template <class S>
Gradient<S> population_gradient(const Instance<S>& instance, const Matrix<S>& V, const Matrix<S>& A) {
  const auto N = instance.P.rows();
  const auto T = instance.q.rows();
  if (V.rows() != N || V.cols() != N || A.rows() != T || A.cols() != N) {
    throw std::invalid_argument("population_gradient: V must be N x N and A must be T x N");
  }
  const Vector<S>& mu = instance.mu;
  const Matrix<S> sigma = token_covariance(mu);
  const S VP = sigma_inner(V, instance.P, mu);
  const S VV = sigma_inner(V, V, mu);
  const Vector<S> Vmu = V * mu;
  S q_weight = S(0), a_weight = S(0);
  Vector<S> residual_weight = Vector<S>::Zero(N);  // sum_k mu_k s_k (mu - s_k V mu)
  Gradient<S> g{Matrix<S>(N, N), Matrix<S>(T, N)};
  for (Eigen::Index k = 0; k < N; ++k) {
    const S s_k = A.col(k).sum();
    const Vector<S> residual = mu - s_k * Vmu;
    q_weight += mu[k] * A.col(k).dot(instance.q.col(k));
    a_weight += mu[k] * A.col(k).squaredNorm();
    residual_weight += mu[k] * s_k * residual;
    g.A.col(k) = mu[k] * (-VP * instance.q.col(k) + VV * A.col(k) -
                          Vmu.dot(residual) * Vector<S>::Ones(T));
  }
  g.V = -q_weight * instance.P * sigma + a_weight * V * sigma - residual_weight * mu.transpose();
  return g;
}

}  // namespace dyncheck::theory::scb
