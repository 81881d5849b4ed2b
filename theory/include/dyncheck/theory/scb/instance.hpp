// dyncheck/theory/scb/instance.hpp
//
// A Sparse Contextual Bigram instance (specs/scb.md §1): transition matrix, its stationary
// distribution and the position laws q^{(k)}, as dense matrices in the scalar S.
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>

#include <stdexcept>
#include <string>

namespace dyncheck::theory::scb {

/// \f$P \in S^{N\times N}\f$ column-stochastic (\f$P_{ij} = \Pr(x_o = i \mid x_s = j)\f$),
/// \f$\mu > 0\f$ with \f$P\mu = \mu\f$, \f$\mathbf 1^\top\mu = 1\f$, and \f$q \in S^{T\times N}\f$ whose
/// column \f$k\f$ is the position law \f$q^{(k)} \in \Delta^{T-1}\f$ of query token \f$k\f$ (§1).
template <class S>
struct Instance {
  Matrix<S> P;
  Vector<S> mu;
  Matrix<S> q;

  long long N() const { return static_cast<long long>(P.rows()); }
  long long T() const { return static_cast<long long>(q.rows()); }
};

/// Throws std::invalid_argument naming the violated condition: shapes (N >= 2, T >= 2), P and q
/// entrywise >= 0 with unit column sums, mu > 0 with unit sum, and \f$\|P\mu - \mu\|_\infty\f$; all
/// equalities within `tolerance` (absolute). The reduction of §4 uses \f$P\mu = \mu\f$ exactly: an
/// instance stationary only to \f$\delta\f$ makes the reduced and full dynamics differ at order \f$\delta\f$.
template <class S>
void validate(const Instance<S>& instance, const S& tolerance = S(1e-10)) {
  using std::abs;
  const auto N = instance.P.rows();
  const auto T = instance.q.rows();
  auto fail = [](const std::string& what) { throw std::invalid_argument("scb::Instance: " + what); };
  if (N < 2 || instance.P.cols() != N) fail("P must be N x N with N >= 2");
  if (instance.mu.size() != N) fail("mu must have N entries");
  if (T < 2 || instance.q.cols() != N) fail("q must be T x N with T >= 2");
  if (!(instance.P.minCoeff() >= S(0))) fail("P has a negative (or NaN) entry");
  if (!(instance.q.minCoeff() >= S(0))) fail("q has a negative (or NaN) entry");
  if (!(instance.mu.minCoeff() > S(0))) fail("mu must be > 0 (the preconditioner divides by mu_k)");
  for (Eigen::Index j = 0; j < N; ++j) {
    if (!(abs(instance.P.col(j).sum() - S(1)) <= tolerance)) fail("column " + std::to_string(j) + " of P does not sum to 1");
    if (!(abs(instance.q.col(j).sum() - S(1)) <= tolerance)) fail("column " + std::to_string(j) + " of q does not sum to 1");
  }
  if (!(abs(instance.mu.sum() - S(1)) <= tolerance)) fail("mu does not sum to 1");
  const Vector<S> residual = instance.P * instance.mu - instance.mu;
  if (!(residual.cwiseAbs().maxCoeff() <= tolerance)) fail("mu is not stationary: |P mu - mu| > tolerance");
}

}  // namespace dyncheck::theory::scb
