// dyncheck/theory/scb/constants.hpp
//
// The Σ-inner product and the constants of an SCB instance (specs/scb.md §1, §2).
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>
#include <dyncheck/theory/scb/instance.hpp>

namespace dyncheck::theory::scb {

/// \f[ \langle A, B\rangle_\Sigma = \operatorname{tr}(A\Sigma B^\top),\qquad \Sigma = \operatorname{diag}(\mu) - \mu\mu^\top, \f]
/// evaluated as \f$\sum_j \mu_j A_{:,j}\cdot B_{:,j} - (A\mu)\cdot(B\mu)\f$ (§1, notation).
template <class S>
S sigma_inner(const Matrix<S>& A, const Matrix<S>& B, const Vector<S>& mu) {
  S weighted = S(0);
  for (Eigen::Index j = 0; j < mu.size(); ++j) weighted += mu[j] * A.col(j).dot(B.col(j));
  return weighted - (A * mu).dot(B * mu);
}

/// The covariance \f$\Sigma = \operatorname{diag}(\mu) - \mu\mu^\top\f$ of a one-hot token drawn from \f$\mu\f$.
template <class S>
Matrix<S> token_covariance(const Vector<S>& mu) {
  Matrix<S> sigma = -mu * mu.transpose();
  sigma.diagonal() += mu;
  return sigma;
}

/// Constants of §1–§2:
///  - \f$K_P = \langle P, P\rangle_\Sigma = \sum_j \mu_j \|P_{:,j} - \mu\|^2\f$ (how informative the previous token is);
///  - \f$K_2 = \operatorname{tr}(P\Sigma P^\top\Sigma)\f$;
///  - \f$\rho_k = \|q^{(k)}\|^2 - 1/T\f$, \f$\bar\rho = \sum_k \mu_k\rho_k\f$;
///  - \f$L_{irr} = 1 - \|\mu\|^2 - K_P\sum_k\mu_k\|q^{(k)}\|^2\f$ (twice the loss at the ground truth).
template <class S>
struct Constants {
  S K_P, K_2, rho_bar;
  Vector<S> rho;
  S L_irr;
  long long T = 0, N = 0;
};

template <class S>
Constants<S> constants(const Instance<S>& instance) {
  Constants<S> c;
  c.N = instance.N();
  c.T = instance.T();
  const Matrix<S> sigma = token_covariance(instance.mu);
  c.K_P = sigma_inner(instance.P, instance.P, instance.mu);
  c.K_2 = (instance.P * sigma * instance.P.transpose() * sigma).trace();
  c.rho = Vector<S>(c.N);
  S q_energy = S(0);
  for (Eigen::Index k = 0; k < c.N; ++k) {
    const S norm2 = instance.q.col(k).squaredNorm();
    c.rho[k] = norm2 - S(1) / S(c.T);
    q_energy += instance.mu[k] * norm2;
  }
  c.rho_bar = instance.mu.dot(c.rho);
  c.L_irr = S(1) - instance.mu.squaredNorm() - c.K_P * q_energy;
  return c;
}

}  // namespace dyncheck::theory::scb
