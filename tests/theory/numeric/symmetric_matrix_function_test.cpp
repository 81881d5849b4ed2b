// Tests for dyncheck/theory/numeric/symmetric_matrix_function.hpp
#include <dyncheck/theory/numeric/symmetric_matrix_function.hpp>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>

namespace dyncheck::theory {
namespace {

template <class S>
S max_abs_difference(const Matrix<S>& a, const Matrix<S>& b) {
  return (a - b).cwiseAbs().maxCoeff();
}

// [[a, b], [b, a]] has eigenvectors (1, ±1)/sqrt 2, so
// exp([[a, b], [b, a]]) = e^a [[cosh b, sinh b], [sinh b, cosh b]].
template <class S>
void expect_two_by_two_closed_form(const S& a, const S& b, const S& bound) {
  Matrix<S> A(2, 2);
  A << a, b, b, a;
  Matrix<S> expected(2, 2);
  expected << exp(a) * cosh(b), exp(a) * sinh(b), exp(a) * sinh(b), exp(a) * cosh(b);
  const S error = max_abs_difference(symmetric_matrix_exp(A), expected);
  EXPECT_LT(error, bound) << to_string(error, 3);
}

TEST(SymmetricMatrixExp, TwoByTwoMatchesClosedFormTo48DigitsInMp50) {
  expect_two_by_two_closed_form(mp50(1) / 3, mp50(2) / 7, mp50("1e-48"));
  expect_two_by_two_closed_form(mp50(-3) / 2, mp50(5) / 3, mp50("1e-48"));
}

TEST(SymmetricMatrixExp, TwoByTwoMatchesClosedFormTo98DigitsInMp100) {
  expect_two_by_two_closed_form(mp100(1) / 3, mp100(2) / 7, mp100("1e-98"));
}

TEST(SymmetricMatrixExp, TwoByTwoMatchesClosedFormInDouble) {
  expect_two_by_two_closed_form(1.0 / 3, 2.0 / 7, 1e-14);
}

// A = Q diag(d) Q with the reflection Q = I - (2/9) v v^T, v = (1, 2, 2), whose entries are exact
// ninths: exp(A) = Q diag(e^d) Q.
template <class S>
void expect_reflected_diagonal_closed_form(const S& bound) {
  Vector<S> v(3);
  v << S(1), S(2), S(2);
  const Matrix<S> Q = Matrix<S>::Identity(3, 3) - S(2) / S(9) * v * v.transpose();
  Vector<S> d(3);
  d << S(-1), S(1) / S(2), S(2);
  const Matrix<S> A = Q * d.asDiagonal() * Q;
  const Vector<S> exp_d = d.unaryExpr([](const S& x) { return S(exp(x)); });
  const Matrix<S> expected = Q * exp_d.asDiagonal() * Q;
  const S error = max_abs_difference(symmetric_matrix_exp(A), expected);
  EXPECT_LT(error, bound) << to_string(error, 3);
}

TEST(SymmetricMatrixExp, ReflectedDiagonalMatchesClosedForm) {
  expect_reflected_diagonal_closed_form(mp50("1e-48"));
  expect_reflected_diagonal_closed_form(mp100("1e-98"));
}

TEST(SymmetricMatrixExp, RefusesTheSkewRotationGenerator) {
  // exp([[0, -t], [t, 0]]) is a rotation, but the generator is skew: no real eigendecomposition.
  Matrix<mp50> generator(2, 2);
  generator << mp50(0), mp50(-1), mp50(1), mp50(0);
  EXPECT_THROW(symmetric_matrix_exp(generator), std::invalid_argument);
}

TEST(SymmetricMatrixFunction, RefusesNonSquareAndNonFiniteMatrices) {
  EXPECT_THROW(symmetric_matrix_exp(Matrix<mp50>(Matrix<mp50>::Zero(2, 3))), std::invalid_argument);
  Matrix<double> with_nan = Matrix<double>::Identity(2, 2);
  with_nan(1, 1) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(symmetric_matrix_exp(with_nan), std::invalid_argument);
}

TEST(SymmetricMatrixFunction, AcceptsAsymmetryBelowSqrtEpsilonAndUsesTheSymmetricPart) {
  Matrix<mp50> A(2, 2);
  A << mp50(1), mp50(2) + mp50("1e-30"), mp50(2), mp50(1);
  Matrix<mp50> symmetric(2, 2);
  symmetric << mp50(1), mp50(2) + mp50("0.5e-30"), mp50(2) + mp50("0.5e-30"), mp50(1);
  EXPECT_LT(max_abs_difference(symmetric_matrix_exp(A), symmetric_matrix_exp(symmetric)), mp50("1e-47"));
  A(0, 1) = mp50(2) + mp50("1e-20");  // above sqrt(eps) ~ 7e-26 relative
  EXPECT_THROW(symmetric_matrix_exp(A), std::invalid_argument);
}

TEST(SymmetricMatrixFunction, EmptyMatrixGivesEmptyMatrix) {
  EXPECT_EQ(symmetric_matrix_exp(Matrix<mp50>(0, 0)).size(), 0);
}

TEST(SymmetricMatrixFunction, SquareRootOfSpdMatrixSquaresBack) {
  Matrix<mp50> A(3, 3);
  A << mp50(4), mp50(1), mp50(0), mp50(1), mp50(3), mp50(1), mp50(0), mp50(1), mp50(2);
  const Matrix<mp50> root = symmetric_matrix_function(A, [](const mp50& x) { return sqrt(x); });
  EXPECT_LT(max_abs_difference(Matrix<mp50>(root * root), A), mp50("1e-48"));
  EXPECT_LT(max_abs_difference(Matrix<mp50>(root.transpose()), root), mp50("1e-49"));
}

// Bounded reals from integers (numerics.md §2c: gen::arbitrary<double> is unbounded).
rc::Gen<mp50> entry_in_minus_two_to_two() {
  return rc::gen::map(rc::gen::inRange<std::int64_t>(-2000, 2001), [](std::int64_t k) { return mp50(k) / 1000; });
}

RC_GTEST_PROP(SymmetricMatrixExp, ExpOfAAndOfMinusAAreInverse, ()) {
  const int n = *rc::gen::inRange(1, 5);
  Matrix<mp50> A(n, n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j <= i; ++j) A(i, j) = A(j, i) = *entry_in_minus_two_to_two();
  }
  const Matrix<mp50> product = symmetric_matrix_exp(A) * symmetric_matrix_exp(Matrix<mp50>(-A));
  // Each factor is off by about n eps e^{|lambda|}; the product by about eps e^{lambda_max - lambda_min},
  // and the spread of the eigenvalues is at most 2 * 2n = 16: eps e^16 ~ 5e-44.
  RC_ASSERT(max_abs_difference(product, Matrix<mp50>(Matrix<mp50>::Identity(n, n))) < mp50("1e-40"));
}

}  // namespace
}  // namespace dyncheck::theory
