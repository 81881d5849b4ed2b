// dyncheck/theory/scb/softmax_preconditioner.hpp
//
// The preconditioner by which softmax attention differs from linear attention to first order
// (specs/scb.md §3.1, OpenReview global response [paper]).
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace dyncheck::theory::scb {

/// \f$(\operatorname{diag}(a) - aa^\top)^2\f$: with \f$a = \sigma(w)\f$ the softmax Jacobian is
/// \f$J = \operatorname{diag}(a) - aa^\top\f$ and the attention moves by \f$-\eta J^2(VX)^\top\nabla l\f$ (§3.1).
template <class S>
Matrix<S> softmax_preconditioner(const Vector<S>& a) {
  Matrix<S> J = -a * a.transpose();
  J.diagonal() += a;
  return J * J;
}

/// At uniform attention \f$a = \mathbf 1/T\f$: \f$J = \Pi_T/T\f$ and, \f$\Pi_T\f$ being a projector,
/// \f$J^2 = \Pi_T/T^2\f$ exactly (§3.1): the linear model up to a change of learning rate.
template <class S>
Matrix<S> uniform_attention_preconditioner(long long T) {
  if (T < 1) throw std::invalid_argument("uniform_attention_preconditioner: T must be >= 1");
  const auto n = static_cast<Eigen::Index>(T);
  const S t(static_cast<double>(T));
  Matrix<S> pi = Matrix<S>::Constant(n, n, S(-1) / t);
  pi.diagonal().array() += S(1);
  return pi / (t * t);
}

/// The concentrated limit (§3.1): with \f$a = (a_1, b)\f$, \f$a_1\f$ a constant and \f$b = O(1/T)\f$,
/// \f[ (\operatorname{diag}(a) - aa^\top)^2 = \bigl(a_1(1-a_1)\bigr)^2 e_1e_1^\top + R,\qquad \max_{ij}|R_{ij}| = O(1/T). \f]
/// Note: the response writes the coefficient as \f$a_1(1-a_1)\f$; that is the (1,1) entry of J itself.
/// For \f$J^2\f$ it is squared (\f$(J^2)_{11} = a_1^2(1-a_1)^2 + a_1^2\|b\|^2\f$).
template <class S>
Matrix<S> concentrated_preconditioner(const S& a1, long long T) {
  if (T < 1) throw std::invalid_argument("concentrated_preconditioner: T must be >= 1");
  const auto n = static_cast<Eigen::Index>(T);
  Matrix<S> m = Matrix<S>::Zero(n, n);
  m(0, 0) = a1 * (S(1) - a1) * a1 * (S(1) - a1);
  return m;
}

/// An entrywise bound on R above, from \f$(J^2)_{ij} = \delta_{ij}a_i^2 - a_ia_j(a_i + a_j) + a_ia_j\|a\|^2\f$, with
/// \f$b_{\max} = \max_{j\ge2}a_j\f$ and \f$\|b\|^2 \le (1-a_1)b_{\max}\f$:
/// \f$R_{11} = a_1^2\|b\|^2\f$; \f$|R_{1j}| = a_1b_j|a_1(1-a_1) + b_j - \|b\|^2| \le a_1b_{\max}(a_1(1-a_1) + b_{\max})\f$;
/// \f$|R_{jl}| \le b_{\max}^2(1 + a_1^2 + 2b_{\max} + \|b\|^2)\f$ for \f$j, l \ge 2\f$. Hence
/// \f[ \max_{ij}|R_{ij}| \le \max\Bigl(a_1b_{\max}\bigl(a_1(1-a_1) + b_{\max}\bigr),\ b_{\max}^2\bigl(1 + a_1^2 + (3-a_1)b_{\max}\bigr)\Bigr), \f]
/// \f$= a_1^2(1-a_1)b_{\max} + O(b_{\max}^2)\f$: O(1/T) when \f$b_{\max} = O(1/T)\f$.
/// Requires \f$a_1 \in [0, 1]\f$ and \f$b_{\max} \in [0, 1 - a_1]\f$ (up to 64 ulps).
template <class S>
S concentrated_remainder_bound(const S& a1, const S& b_max) {
  // b_max = 1 - a1 (T = 2) may come out a few ulps above 1 - a1 after normalising the attention.
  const S slack = S(1) + S(64) * std::numeric_limits<S>::epsilon();
  if (!(a1 >= S(0) && a1 <= S(1)) || !(b_max >= S(0) && b_max <= (S(1) - a1) * slack)) {
    throw std::invalid_argument("concentrated_remainder_bound: needs a1 in [0, 1] and b_max in [0, 1 - a1]");
  }
  const S row = a1 * b_max * (a1 * (S(1) - a1) + b_max);
  const S block = b_max * b_max * (S(1) + a1 * a1 + (S(3) - a1) * b_max);
  return row > block ? row : block;
}

}  // namespace dyncheck::theory::scb
