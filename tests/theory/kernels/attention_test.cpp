// Tests of theory/kernels: the forward-mode Jacobian against central differences of the theory's
// own output map (double and 50 digits), J'r against an independent gradient, the W^V-only closed
// form against iterating the recurrence in 50 digits, and the hull floor.

#include "dyncheck/theory/kernels/attention.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dyncheck/theory/kernels/hull.hpp"
#include "dyncheck/theory/kernels/value_only.hpp"

namespace dyncheck::theory::kernels {
namespace {

template <class S>
Matrix<S> wave(int rows, int cols, double a, double b, double scale) {
  Matrix<S> M(rows, cols);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      // a deterministic but unstructured value in [-1, 1) (smooth waves make B nearly rank-deficient)
      const double x = std::sin(a * i + b * j + 0.3) * 43758.5453;
      M(i, j) = S(scale * 2 * (x - std::floor(x) - 0.5));
    }
  }
  return M;
}

template <class S>
struct Fixture {
  std::vector<Matrix<S>> X, Y;
  std::vector<Head<S>> heads;
};

template <class S>
Fixture<S> setup(int N, int n, int d, int d_out, int H) {
  Fixture<S> s;
  for (int i = 0; i < N; ++i) {
    s.X.push_back(wave<S>(n, d, 1.1 + i, 0.7, 1.0));
    s.Y.push_back(wave<S>(n, d_out, 0.4, 1.3 + i, 0.8));
  }
  for (int h = 0; h < H; ++h) {
    s.heads.push_back({wave<S>(d, d, 0.9, 1.7 + h, 0.4), wave<S>(d, d, 1.9 + h, 0.2, 0.4),
                       wave<S>(d, d, 0.5, 0.6 + h, 0.5), wave<S>(d, d_out, 0.3 + h, 0.8, 0.6)});
  }
  return s;
}

template <class S>
S loss(const KernelSpec& spec, const Fixture<S>& s, const std::vector<Head<S>>& heads) {
  const Vector<S> r = residual(spec, s.X, s.Y, heads);
  return r.squaredNorm() / S(2);
}

// J'r is the gradient: compare with central differences of the loss, in 50 digits (step 1e-15: the
// difference quotient's error is ~ f''' h^2 ~ 1e-30 and the rounding ~ 1e-50 / 1e-15 = 1e-35).
TEST(TheoryKernels, JacobianTransposeResidualIsTheGradientIn50Digits) {
  for (const KernelSpec spec : {KernelSpec{Kernel::softmax, false}, KernelSpec{Kernel::gaussian, false},
                                KernelSpec{Kernel::gaussian, true}}) {
    const Fixture<mp50> s = setup<mp50>(2, 3, 3, 2, 2);
    const TrainedBlocks trained{true, true, true};
    const Matrix<mp50> J = jacobian(spec, s.X, s.heads, trained);
    const Vector<mp50> g = J.transpose() * residual(spec, s.X, s.Y, s.heads);
    Eigen::Index column = 0;
    const mp50 h("1e-15");
    for (std::size_t head = 0; head < s.heads.size(); ++head) {
      for (int block = 0; block < 3; ++block) {
        for (Eigen::Index e = 0; e < 9; ++e, ++column) {
          auto at = [&](const mp50& delta) {
            std::vector<Head<mp50>> w = s.heads;
            Matrix<mp50>& m = block == 0 ? w[head].Q : block == 1 ? w[head].K : w[head].V;
            m.data()[e] += delta;
            return loss(spec, s, w);
          };
          const mp50 fd = (at(h) - at(-h)) / (2 * h);
          EXPECT_LT(abs(fd - g(column)), mp50("1e-25")) << "column " << column;
        }
      }
    }
  }
}

TEST(TheoryKernels, DoubleJacobianAgreesWith50Digits) {
  const KernelSpec spec{Kernel::gaussian, false};
  const Fixture<double> sd = setup<double>(2, 3, 4, 1, 1);
  const Fixture<mp50> sm = setup<mp50>(2, 3, 4, 1, 1);
  const Matrix<double> Jd = jacobian(spec, sd.X, sd.heads, {true, false, true});
  const Matrix<mp50> Jm = jacobian(spec, sm.X, sm.heads, {true, false, true});
  ASSERT_EQ(Jd.rows(), 6);
  ASSERT_EQ(Jd.cols(), 32);
  for (Eigen::Index i = 0; i < Jd.size(); ++i) EXPECT_NEAR(Jd.data()[i], to_double(Jm.data()[i]), 1e-13);
}

// D1: per token a, dy_a/dq_a = (1/sqrt d) V'(diag(s_a) - s_a s_a')K has rank <= n - 1 (the bracket
// annihilates 1), the Gaussian -(1/sqrt d) V' diag(S_a)(1 q_a' - K) rank n. Since W^Q -> q_a = W^Q' x_a is
// onto, the d_out rows of J_Q belonging to token a have the same rank.
int numerical_rank(const Matrix<double>& M) {
  const Eigen::JacobiSVD<Matrix<double>> svd(M);
  const Vector<double>& sv = svd.singularValues();
  int rank = 0;
  for (Eigen::Index i = 0; i < sv.size(); ++i) rank += sv(i) > 1e-10 * sv(0) ? 1 : 0;
  return rank;
}

TEST(TheoryKernels, SoftmaxQueryJacobianLosesOneRankPerToken) {
  const int n = 3, d = 6;
  const Fixture<double> s = setup<double>(1, n, d, d, 1);
  const Matrix<double> Js = jacobian(KernelSpec{Kernel::softmax, false}, s.X, s.heads, {true, false, false});
  const Matrix<double> Jg = jacobian(KernelSpec{Kernel::gaussian, false}, s.X, s.heads, {true, false, false});
  ASSERT_EQ(Js.rows(), n * d);
  for (int a = 0; a < n; ++a) {
    EXPECT_EQ(numerical_rank(Js.middleRows(a * d, d)), n - 1) << "token " << a;
    EXPECT_EQ(numerical_rank(Jg.middleRows(a * d, d)), n) << "token " << a;
  }
}

TEST(TheoryKernels, ValueOnlyClosedFormMatchesIterationIn50Digits) {
  const int N = 2, n = 3, d = 4, d_out = 2;
  const Fixture<mp50> s = setup<mp50>(N, n, d, d_out, 1);
  const KernelSpec spec{Kernel::softmax, false};
  Matrix<mp50> B(N * n, d), Y(N * n, d_out);
  for (int i = 0; i < N; ++i) {
    B.middleRows(i * n, n) = attention(spec, s.X[static_cast<std::size_t>(i)], s.heads[0].Q, s.heads[0].K) *
                             s.X[static_cast<std::size_t>(i)];
    Y.middleRows(i * n, n) = s.Y[static_cast<std::size_t>(i)];
  }
  const Matrix<mp50>& O = s.heads[0].O;
  const ValueOnlyDynamics<mp50> probe(B, s.heads[0].V, O, Y, mp50(0));
  const mp50 eta = mp50(0.9) / (probe.lambda_max() * (O.transpose() * O).trace());
  const ValueOnlyDynamics<mp50> dyn(B, s.heads[0].V, O, Y, eta);
  Matrix<mp50> W = s.heads[0].V;
  for (long long t = 0; t <= 60; ++t) {
    const Matrix<mp50> R = B * W * O - Y;
    const mp50 f = R.squaredNorm() / 2;
    EXPECT_LT(abs(f - dyn.loss(t)), mp50("1e-40") * (1 + f)) << "t = " << t;
    W -= eta * B.transpose() * R * O.transpose();
  }
  // Nn = 6 > d = 4: rank B <= 4, so two eigenvalues vanish and f_t tends to the floor
  EXPECT_LT(abs(dyn.lambda()(0)), mp50("1e-40"));
  EXPECT_GT(dyn.floor(), mp50(0));
  // the floor is the least-squares minimum 1/2 |(I - Pi_B) Y|^2 (O has full column rank, so W O reaches
  // every d x d_out matrix), computed here by a QR projection
  Eigen::ColPivHouseholderQR<Matrix<mp50>> qr(B.rows(), B.cols());
  qr.setThreshold(mp50("1e-30"));  // mp50's dummy_precision is 0 (numeric/eigen.hpp): give the rank cut explicitly
  qr.compute(B);
  ASSERT_EQ(qr.rank(), d);

  const Matrix<mp50> projected = B * qr.solve(Y);

  EXPECT_LT(abs(dyn.floor() - (Y - projected).squaredNorm() / 2), mp50("1e-40"));

  // The accessors and the transient against second computations: lambda_min is the smallest
  // eigenvalue (0 here); mu, the spectrum of O'O, has the trace and determinant of O'O (2 x 2);
  // transient(t) is the iterated loss minus the floor; slowest_rho is the largest |1 - eta lambda mu|
  // over the nonzero modes, with lambda taken from B'B (d x d, full rank: the nonzero spectrum of BB').
  EXPECT_EQ(dyn.lambda_min(), dyn.lambda()(0));
  const Matrix<mp50> QO = O.transpose() * O;
  ASSERT_EQ(dyn.mu().size(), 2);
  EXPECT_LT(abs(dyn.mu().sum() - QO.trace()), mp50("1e-45"));
  EXPECT_LT(abs(dyn.mu()(0) * dyn.mu()(1) - (QO(0, 0) * QO(1, 1) - QO(0, 1) * QO(1, 0))), mp50("1e-45"));
  W = s.heads[0].V;
  for (long long t = 0; t <= 20; ++t) {
    const Matrix<mp50> R = B * W * O - Y;
    EXPECT_LT(abs(R.squaredNorm() / 2 - dyn.floor() - dyn.transient(t)), mp50("1e-40")) << "t = " << t;
    W -= eta * B.transpose() * R * O.transpose();
  }
  const Eigen::SelfAdjointEigenSolver<Matrix<mp50>> gram(B.transpose() * B);
  mp50 slowest = 0;
  for (Eigen::Index i = 0; i < gram.eigenvalues().size(); ++i) {
    for (Eigen::Index j = 0; j < dyn.mu().size(); ++j) slowest = std::max(slowest, mp50(abs(mp50(1 - eta * gram.eigenvalues()(i) * dyn.mu()(j)))));
  }
  EXPECT_LT(abs(dyn.slowest_rho() - slowest), mp50("1e-40"));
}

TEST(TheoryKernels, HullFloorAndGaussianReach) {
  const Eigen::Vector3d u(-1.0, 0.5, 2.0);
  const Interval hull = softmax_hull(u);
  EXPECT_EQ(hull.lower, -1.0);
  EXPECT_EQ(hull.upper, 2.0);
  EXPECT_EQ(softmax_hull(u, true).upper, 0.5);
  const Interval reach = gaussian_reach(u);
  EXPECT_EQ(reach.lower, -1.0);
  EXPECT_EQ(reach.upper, 2.5);
  EXPECT_EQ(softmax_loss_floor({u}, {Eigen::Vector3d(3.0, 0.0, -2.0)}), 0.5 * (1.0 + 1.0));
}

// D4, vector output: the certified lower bound never exceeds the distance found, the gap closes at the
// projection, and in one dimension the distance is the interval distance.
TEST(TheoryKernels, VectorHullDistanceIsCertified) {
  Eigen::MatrixXd V(3, 2);
  V << 0, 0, 1, 0, 0, 1;  // the triangle (0,0), (1,0), (0,1)
  const HullDistance outside = hull_distance(V, Eigen::Vector2d(1, 1));
  EXPECT_NEAR(outside.upper, std::sqrt(0.5), 1e-12);
  EXPECT_NEAR(outside.lower, std::sqrt(0.5), 1e-12);
  EXPECT_LE(outside.lower, outside.upper);
  const HullDistance inside = hull_distance(V, Eigen::Vector2d(0.2, 0.2));
  EXPECT_LT(inside.upper, 1e-12);
  EXPECT_EQ(inside.lower, 0.0);
  Eigen::MatrixXd U(4, 1);
  U << -1, 0.5, 2, 0.1;
  EXPECT_NEAR(hull_distance(U, Eigen::VectorXd::Constant(1, 3.0)).lower, 1.0, 1e-12);
  EXPECT_NEAR(project_to_simplex(Eigen::Vector3d(0.5, 0.5, 0.5)).sum(), 1.0, 1e-15);
}

// output_jvp without precomputed caches (the jacobian uses the cached overload) against central
// differences of output() along a direction that moves Q, K and V of both heads, in 50 digits
// (step 1e-15: truncation ~ h^2 ~ 1e-30, rounding ~ 1e-50 / 1e-15).
TEST(TheoryKernels, OutputJvpMatchesCentralDifferencesOfTheOutputIn50Digits) {
  const Fixture<mp50> s = setup<mp50>(1, 3, 4, 2, 2);
  std::vector<Head<mp50>> direction;  // any matrices of the heads' shapes; O is not a trained block
  for (const Head<mp50>& h : s.heads) direction.push_back({h.K, h.Q, h.O * h.O.transpose(), Matrix<mp50>::Zero(4, 2)});
  const mp50 step("1e-15");
  for (const KernelSpec& spec : {KernelSpec{Kernel::softmax, false}, KernelSpec{Kernel::gaussian, true}}) {
    std::vector<Head<mp50>> plus = s.heads, minus = s.heads;
    for (std::size_t h = 0; h < plus.size(); ++h) {
      plus[h].Q += step * direction[h].Q;
      plus[h].K += step * direction[h].K;
      plus[h].V += step * direction[h].V;
      minus[h].Q -= step * direction[h].Q;
      minus[h].K -= step * direction[h].K;
      minus[h].V -= step * direction[h].V;
    }
    const Matrix<mp50> difference = (output(spec, s.X[0], plus) - output(spec, s.X[0], minus)) / (2 * step);
    const Matrix<mp50> jvp = output_jvp(spec, s.X[0], s.heads, direction);
    ASSERT_EQ(jvp.rows(), 3);
    ASSERT_EQ(jvp.cols(), 2);
    EXPECT_LT((jvp - difference).cwiseAbs().maxCoeff(), mp50("1e-27")) << static_cast<int>(spec.kernel);
  }
}

}  // namespace
}  // namespace dyncheck::theory::kernels
