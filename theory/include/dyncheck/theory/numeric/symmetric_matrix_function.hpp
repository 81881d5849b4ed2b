// dyncheck/theory/numeric/symmetric_matrix_function.hpp
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>
#include <dyncheck/theory/numeric/scalar.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

#include "dyncheck/portable/math.hpp"

namespace dyncheck::theory {

/// A scalar function applied to a real symmetric matrix through its eigendecomposition:
/// \f[ A = V \Lambda V^\top \;\Rightarrow\; f(A) = V\,\mathrm{diag}\bigl(f(\lambda_1),\dots,f(\lambda_n)\bigr)\,V^\top . \f]
/// For the derivative, \f$\mathrm{D}f(A)[E] = V\bigl(F \circ (V^\top E V)\bigr)V^\top\f$ with the
/// divided differences \f$F_{ij} = (f(\lambda_i)-f(\lambda_j))/(\lambda_i-\lambda_j)\f$,
/// \f$F_{ii} = f'(\lambda_i)\f$ (Daleckii–Krein); not computed here.
///
/// The eigendecomposition is Eigen's SelfAdjointEigenSolver in \f$S\f$, which is backward stable:
/// \f$f(A)\f$ is exact for some \f$A + \delta A\f$ with \f$\|\delta A\| = O(n\,\varepsilon_S\|A\|)\f$,
/// so the forward error is about \f$n\,\varepsilon_S\|A\|\max_\lambda|f'(\lambda)|\f$.
/// Unlike Eigen's MatrixFunctions module, which takes its generic Schur–Parlett path for
/// multiprecision scalars and loses about 9 of 50 digits of \f$e^A\f$ (numerics.md §2a),
/// this keeps all but one or two digits for well-scaled symmetric \f$A\f$.
///
/// \param A square and symmetric to within \f$\sqrt{\varepsilon_S}\max_{ij}|A_{ij}|\f$; the
///   decomposition uses the symmetric part \f$(A + A^\top)/2\f$, so that both triangles count.
/// \param f callable as `f(const S&)`, returning something convertible to \f$S\f$.
/// \throws std::invalid_argument if \f$A\f$ is not square, not symmetric, or not finite.
/// \throws std::runtime_error if the eigensolver does not converge.
template <class S, class F>
Matrix<S> symmetric_matrix_function(const Matrix<S>& A, F f) {
  if (A.rows() != A.cols()) {
    throw std::invalid_argument("symmetric_matrix_function: matrix is " + std::to_string(A.rows()) +
                                "x" + std::to_string(A.cols()) + ", not square");
  }
  if (A.size() == 0) {
    return A;
  }
  if (!A.allFinite()) {
    throw std::invalid_argument("symmetric_matrix_function: matrix has a non-finite entry");
  }
  using std::sqrt;
  const S scale = A.cwiseAbs().maxCoeff();
  const S asymmetry = (A - A.transpose()).cwiseAbs().maxCoeff();
  // sqrt(eps) rather than a few eps: inputs assembled from products (X^T X, sums of outer
  // products) are symmetric only up to their round-off, which can reach many eps.
  if (asymmetry > sqrt(std::numeric_limits<S>::epsilon()) * scale) {
    throw std::invalid_argument("symmetric_matrix_function: matrix is not symmetric: max |A - A^T| = " +
                                to_string(to_double(asymmetry), 3) + " against max |A| = " +
                                to_string(to_double(scale), 3));
  }
  const Matrix<S> symmetric_part = (A + A.transpose()) / S(2);
  const Eigen::SelfAdjointEigenSolver<Matrix<S>> eigen(symmetric_part);
  if (eigen.info() != Eigen::Success) {
    throw std::runtime_error("symmetric_matrix_function: SelfAdjointEigenSolver did not converge");
  }
  const Vector<S> f_of_lambda = eigen.eigenvalues().unaryExpr([&f](const S& lambda) { return S(f(lambda)); });
  const Matrix<S>& V = eigen.eigenvectors();
  return V * f_of_lambda.asDiagonal() * V.transpose();
}

/// The exponential of a real symmetric matrix:
/// \f[ e^{A} = \sum_{k \ge 0} \frac{A^k}{k!} = V\,\mathrm{diag}\bigl(e^{\lambda_1},\dots,e^{\lambda_n}\bigr)\,V^\top,
///     \qquad \mathrm{D}e^{A}[E] = \int_0^1 e^{sA} E\, e^{(1-s)A}\,ds . \f]
/// Accuracy and exceptions as for symmetric_matrix_function().
template <class S>
Matrix<S> symmetric_matrix_exp(const Matrix<S>& A) {
  return symmetric_matrix_function(A, [](const S& lambda) {
    using portable::exp;  // double: the same bits on every CPU; Boost.Multiprecision's exp by ADL
    return exp(lambda);
  });
}

// An eigensolver in multiprecision is slow to compile; instantiate it once, in
// symmetric_matrix_function.cpp.
extern template Matrix<double> symmetric_matrix_exp<double>(const Matrix<double>&);
extern template Matrix<mp50> symmetric_matrix_exp<mp50>(const Matrix<mp50>&);
extern template Matrix<mp100> symmetric_matrix_exp<mp100>(const Matrix<mp100>&);

}  // namespace dyncheck::theory
