// dyncheck/theory/scb/population_step.hpp
//
// Full-matrix population steps of the preconditioned projected (proximal) descent of
// specs/scb.md §3 [reconstructed], and the final normalisation.
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>
#include <dyncheck/theory/scb/instance.hpp>
#include <dyncheck/theory/scb/population_gradient.hpp>

#include <stdexcept>

namespace dyncheck::theory::scb {

/// Stage 1 (§3), both blocks from the gradient at the current (V, A):
/// \f[ V \leftarrow V - \eta\,\nabla_V L\,D^{-1},\qquad a_k \leftarrow a_k - \frac{\eta_A}{\mu_k}\Pi_T\nabla_{a_k}L,
///     \qquad D = \operatorname{diag}(\mu),\ \Pi_T = I_T - \mathbf 1\mathbf 1^\top/T. \f]
/// \f$P\Sigma D^{-1} = P - \mu\mathbf 1^\top\f$, so V moves along \f$P - \mu\mathbf 1^\top\f$; \f$\Pi_T\f$ keeps
/// \f$\mathbf 1^\top a_k\f$ fixed.
template <class S>
void stage1_population_step(const Instance<S>& instance, Matrix<S>& V, Matrix<S>& A, const S& eta, const S& eta_A) {
  const Gradient<S> g = population_gradient(instance, V, A);
  for (Eigen::Index j = 0; j < V.cols(); ++j) V.col(j) -= (eta / instance.mu[j]) * g.V.col(j);
  for (Eigen::Index k = 0; k < A.cols(); ++k) {
    const S mean = g.A.col(k).mean();
    A.col(k) -= (eta_A / instance.mu[k]) * (g.A.col(k).array() - mean).matrix();
  }
}

/// Stage 2 (§3, [reconstructed]): the stage-1 step, then soft thresholding
/// \f$a_{k,t} \leftarrow \operatorname{sign}(a_{k,t})\max(|a_{k,t}| - \eta_A\lambda/\mu_k, 0)\f$, without re-projection.
template <class S>
void stage2_population_step(const Instance<S>& instance, Matrix<S>& V, Matrix<S>& A, const S& eta, const S& eta_A,
                            const S& lambda) {
  using std::abs;
  if (!(lambda >= S(0))) throw std::invalid_argument("stage2_population_step: lambda must be >= 0");
  stage1_population_step(instance, V, A, eta, eta_A);
  for (Eigen::Index k = 0; k < A.cols(); ++k) {
    const S threshold = eta_A * lambda / instance.mu[k];
    for (Eigen::Index t = 0; t < A.rows(); ++t) {
      const S shrunk = abs(A(t, k)) - threshold;
      A(t, k) = shrunk > S(0) ? (A(t, k) > S(0) ? shrunk : S(-shrunk)) : S(0);
    }
  }
}

/// Final normalisation (§3, [reconstructed]): \f$V \leftarrow V\operatorname{diag}(\mathbf 1^\top V)^{-1}\f$,
/// \f$a_k \leftarrow a_k/\mathbf 1^\top a_k\f$. Throws if a column sum is 0.
template <class S>
void normalise(Matrix<S>& V, Matrix<S>& A) {
  for (Eigen::Index j = 0; j < V.cols(); ++j) {
    const S sum = V.col(j).sum();
    if (sum == S(0)) throw std::invalid_argument("normalise: a column of V sums to 0");
    V.col(j) /= sum;
  }
  for (Eigen::Index k = 0; k < A.cols(); ++k) {
    const S sum = A.col(k).sum();
    if (sum == S(0)) throw std::invalid_argument("normalise: a column of A sums to 0");
    A.col(k) /= sum;
  }
}

}  // namespace dyncheck::theory::scb
