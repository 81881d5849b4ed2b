// Tests for dyncheck/theory/numeric/eigen.hpp: the decompositions that Boost 1.74's own adapter
// breaks (numerics.md §2a) compile and are accurate to a few eps in double, mp50 and mp100.
#include <dyncheck/theory/numeric/eigen.hpp>

#include <gtest/gtest.h>

#include <boost/math/constants/constants.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

namespace dyncheck::theory {
namespace {

template <class S>
class EigenAdapter : public ::testing::Test {
 protected:
  static S eps() { return std::numeric_limits<S>::epsilon(); }

  // The n x n second-difference matrix tridiag(-1, 2, -1): symmetric positive definite with
  // eigenvalues 2 - 2 cos(k pi / (n+1)), k = 1..n.
  static Matrix<S> second_difference(Eigen::Index n) {
    Matrix<S> A = Matrix<S>::Zero(n, n);
    for (Eigen::Index i = 0; i < n; ++i) {
      A(i, i) = S(2);
      if (i + 1 < n) A(i, i + 1) = A(i + 1, i) = S(-1);
    }
    return A;
  }
  static Vector<S> second_difference_eigenvalues(Eigen::Index n) {
    using std::cos;
    Vector<S> lambda(n);
    for (Eigen::Index k = 1; k <= n; ++k) {
      lambda(k - 1) = S(2) - S(2) * cos(S(k) * boost::math::constants::pi<S>() / S(n + 1));
    }
    return lambda;
  }
  // The Householder reflection I - 2 v v^T / (v^T v) with v = (1, 2, ..., n): orthogonal, exact
  // up to one rounding per entry.
  static Matrix<S> reflection(Eigen::Index n, int shift) {
    Vector<S> v(n);
    for (Eigen::Index i = 0; i < n; ++i) v(i) = S((i + shift) % n + 1);
    return Matrix<S>::Identity(n, n) - S(2) * v * v.transpose() / v.squaredNorm();
  }
};

using Scalars = ::testing::Types<double, mp50, mp100>;
/// Short suffixes for the typed tests: the full Boost type names make 300-character test names.
struct ScalarName {
  template <class S>
  static std::string GetName(int /*index*/) {
    if constexpr (std::is_same_v<S, double>) return "double";
    if constexpr (std::is_same_v<S, mp50>) return "mp50";
    return "mp100";
  }
};
TYPED_TEST_SUITE(EigenAdapter, Scalars, ScalarName);

TYPED_TEST(EigenAdapter, NumTraitsLowestIsMinusMaxNotTheSmallestPositiveNumber) {
  using S = TypeParam;
  EXPECT_LT(Eigen::NumTraits<S>::lowest(), S(0));
  EXPECT_EQ(Eigen::NumTraits<S>::lowest(), -(std::numeric_limits<S>::max)());
  EXPECT_EQ(Eigen::NumTraits<S>::highest(), (std::numeric_limits<S>::max)());
  EXPECT_FALSE(is_finite(Eigen::NumTraits<S>::infinity()));
  EXPECT_GT(Eigen::NumTraits<S>::infinity(), S(0));
  EXPECT_EQ(Eigen::NumTraits<S>::epsilon(), std::numeric_limits<S>::epsilon());
  EXPECT_EQ(Eigen::NumTraits<S>::digits(), std::numeric_limits<S>::digits);
}

TYPED_TEST(EigenAdapter, MaxCoeffOfNegativeEntriesIsNegative) {
  // Reductions seeded with NumTraits::lowest() returned a positive number under Boost's adapter.
  using S = TypeParam;
  Vector<S> v(3);
  v << S(-3), S(-1), S(-2);
  EXPECT_EQ(v.maxCoeff(), S(-1));
  EXPECT_EQ(v.minCoeff(), S(-3));
}

TYPED_TEST(EigenAdapter, SelfAdjointEigenSolverFindsKnownEigenvalues) {
  using S = TypeParam;
  const Eigen::Index n = 7;
  const Matrix<S> A = this->second_difference(n);
  const Eigen::SelfAdjointEigenSolver<Matrix<S>> eigen(A);
  ASSERT_EQ(eigen.info(), Eigen::Success);
  const S eigenvalue_error = (eigen.eigenvalues() - this->second_difference_eigenvalues(n)).cwiseAbs().maxCoeff();
  // Backward stable: |delta lambda| <= |delta A| ~ c n eps |A|, with |A|_2 < 4; measured 32 eps in mp50.
  EXPECT_LT(eigenvalue_error, S(4 * n) * S(4) * this->eps()) << to_string(eigenvalue_error, 3);
  const Matrix<S>& V = eigen.eigenvectors();
  const S orthogonality = (V.transpose() * V - Matrix<S>::Identity(n, n)).cwiseAbs().maxCoeff();
  EXPECT_LT(orthogonality, S(20) * this->eps()) << to_string(orthogonality, 3);
  const S residual = (A * V - V * eigen.eigenvalues().asDiagonal()).cwiseAbs().maxCoeff();
  EXPECT_LT(residual, S(20) * this->eps()) << to_string(residual, 3);
}

TYPED_TEST(EigenAdapter, BdcsvdFindsKnownSingularValuesOnItsDivideAndConquerPath) {
  using S = TypeParam;
  const Eigen::Index n = 8;
  Vector<S> sigma(n);
  for (Eigen::Index i = 0; i < n; ++i) sigma(i) = S(n - i) / S(3);  // distinct, decreasing
  const Matrix<S> A = this->reflection(n, 0) * sigma.asDiagonal() * this->reflection(n, 3);
  Eigen::BDCSVD<Matrix<S>> svd;
  // Below 16 columns BDCSVD hands the work to JacobiSVD; force its own bidiagonal D&C code, the
  // path that needs NumTraits::infinity() (through numext::hypot).
  svd.setSwitchSize(4);
  svd.compute(A, Eigen::ComputeThinU | Eigen::ComputeThinV);
  ASSERT_EQ(svd.info(), Eigen::Success);
  const S singular_value_error = (svd.singularValues() - sigma).cwiseAbs().maxCoeff();
  EXPECT_LT(singular_value_error, S(50) * this->eps()) << to_string(singular_value_error, 3);
  const Matrix<S> reconstructed = svd.matrixU() * svd.singularValues().asDiagonal() * svd.matrixV().transpose();
  const S reconstruction_error = (reconstructed - A).cwiseAbs().maxCoeff();
  EXPECT_LT(reconstruction_error, S(50) * this->eps()) << to_string(reconstruction_error, 3);
}

TYPED_TEST(EigenAdapter, LltAndPartialPivLuSolveToAFewEps) {
  using S = TypeParam;
  const Eigen::Index n = 6;
  Vector<S> x(n);
  for (Eigen::Index i = 0; i < n; ++i) x(i) = S(i + 1) / S(7);
  const Matrix<S> spd = this->second_difference(n);
  const Eigen::LLT<Matrix<S>> llt(spd);
  ASSERT_EQ(llt.info(), Eigen::Success);
  // cond(second difference, n = 6) is about 20, so the solution error is about 20 eps.
  EXPECT_LT((llt.solve(spd * x) - x).cwiseAbs().maxCoeff(), S(200) * this->eps());
  const Matrix<S> L = llt.matrixL();
  EXPECT_LT((L * L.transpose() - spd).cwiseAbs().maxCoeff(), S(10) * this->eps());

  Matrix<S> general = this->reflection(n, 1) + S(3) * Matrix<S>::Identity(n, n);
  general(0, n - 1) += S(1) / S(3);  // not symmetric
  const Eigen::PartialPivLU<Matrix<S>> lu(general);
  const Vector<S> b = general * x;
  EXPECT_LT((general * lu.solve(b) - b).cwiseAbs().maxCoeff(), S(20) * this->eps());
  EXPECT_LT((lu.solve(b) - x).cwiseAbs().maxCoeff(), S(200) * this->eps());
}

TYPED_TEST(EigenAdapter, BlueNormIsExactForPythagoreanTriplesAtExtremeScales) {
  using S = TypeParam;
  using std::abs;
  using std::ldexp;
  // 2^(±900) is beyond double's range for its square, so blueNorm's scaling is exercised;
  // for the multiprecision types go further, 2^(±3000), which double cannot even hold.
  const int exponent = std::is_same_v<S, double> ? 900 : 3000;
  for (const int e : {-exponent, 0, exponent}) {
    Vector<S> v(3);
    v << S(3), S(4), S(12);
    v *= ldexp(S(1), e);
    const S expected = S(13) * ldexp(S(1), e);
    EXPECT_LT(abs(v.blueNorm() - expected), S(4) * this->eps() * expected) << "exponent " << e;
    EXPECT_LT(abs(v.stableNorm() - expected), S(4) * this->eps() * expected) << "exponent " << e;
  }
}

TEST(EigenAdapter, ScalarLiteralsPromoteToTheMatrixScalar) {
  Matrix<mp50> A = Matrix<mp50>::Identity(2, 2);
  const Matrix<mp50> B = 2.0 * A / 3;
  EXPECT_EQ(B(0, 0), mp50(2) / mp50(3));
  EXPECT_EQ(B(0, 1), mp50(0));
  // Default precision of isApprox is NumTraits::dummy_precision() == 0 under Fix A: exact.
  EXPECT_EQ(Eigen::NumTraits<mp50>::dummy_precision(), mp50(0));
  EXPECT_TRUE(B.isApprox(B * (mp50(1) + mp50("1e-45")), mp50("1e-40")));
}

}  // namespace
}  // namespace dyncheck::theory
