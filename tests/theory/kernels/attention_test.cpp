// Tests of theory/kernels: the forward-mode Jacobian against central differences of the theory's
// own output map (double and 50 digits), J'r against an independent gradient, the W^V-only closed
// form against iterating the recurrence in 50 digits, and the hull floor.

#include "dyncheck/theory/kernels/attention.hpp"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "dyncheck/theory/kernels/conditions.hpp"
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

// The W^V-only floor in double: a rank-deficient P = B B' has zero eigenvalues that come out of the double
// eigen-solver as rounding (~1e-16 lambda_max, of either sign), not 0. The zero-mode threshold follows the scalar's
// epsilon (ValueOnlyDynamics::zero_mode_threshold), so the double floor, slowest mode and transient match the
// 50-digit ones on the same (double) inputs; with a fixed 1e-40 lambda_max they missed the zero modes.
TEST(TheoryKernels, ValueOnlyFloorInDoubleMatchesFiftyDigitsForRankDeficientP) {
  const int Nn = 6, d = 4, d_out = 2;  // rank B <= d < Nn: two zero modes of P
  for (double shift : {0.0, 0.37, 1.91}) {
    const Matrix<double> B = wave<double>(Nn, d, 1.3 + shift, 0.7, 1.0), W0 = wave<double>(d, d, 0.4, 2.1 + shift, 0.3),
                         O = wave<double>(d, d_out, 1.9, 0.2 + shift, 1.0), Y = wave<double>(Nn, d_out, 0.8 + shift, 1.7, 1.0);
    const double eta = 0.05;
    const ValueOnlyDynamics<double> in_double(B, W0, O, Y, eta);
    const ValueOnlyDynamics<mp50> in_50(B.cast<mp50>(), W0.cast<mp50>(), O.cast<mp50>(), Y.cast<mp50>(), mp50(eta));
    const double floor_50 = to_double(in_50.floor());
    ASSERT_GT(floor_50, 1e-3) << "shift " << shift << ": the fixture must have a floor";
    // The double route's error: eigenvectors of the zero-eigenspace to ~k eps / gap, so the floor to ~1e-13 relative.
    EXPECT_NEAR(in_double.floor(), floor_50, 1e-11 * floor_50) << "shift " << shift;
    EXPECT_NEAR(in_double.slowest_rho(), to_double(in_50.slowest_rho()), 1e-12) << "shift " << shift;
    for (long long t : {0LL, 10LL, 1000LL}) {
      EXPECT_NEAR(in_double.transient(t), to_double(in_50.transient(t)), 1e-11 * (1 + floor_50)) << "t " << t;
    }
    // The zero modes in double are rounding: far below the threshold, far below the smallest nonzero mode.
    EXPECT_LT(std::abs(in_double.lambda()(1)), 1e-14 * in_double.lambda_max()) << "shift " << shift;
    EXPECT_GT(in_double.lambda()(2), 1e-6 * in_double.lambda_max()) << "shift " << shift;
  }
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


// A.3's conditions: for H = 1, J_V J_V' = (W^O' W^O) (x) (BB'), so lambda_V = mu_min lambda_min(BB') and its largest
// eigenvalue mu_max lambda_max(BB') (eigenvalues of a Kronecker product are the products), with B = [S_i X_i] from
// the theory's attention; below d = Nn, rank B <= d < Nn and lambda_V is 0 up to the eigensolver's rounding.
TEST(TheoryKernels, ConditionsLambdaVIsTheKroneckerProductOfTheSpectra) {
  for (const auto& [N, n, d, d_out] : std::vector<std::array<int, 4>>{{2, 3, 8, 8}, {2, 3, 8, 3}, {3, 3, 6, 6}}) {
    for (const Kernel kernel : {Kernel::softmax, Kernel::gaussian}) {
      const KernelSpec spec{kernel, false};
      Fixture<double> s = setup<double>(N, n, d, d_out, 1);
      // the fixture's inputs share their first row (wave's row 0 does not depend on a): distinct ones here
      for (int i = 0; i < N; ++i) s.X[static_cast<std::size_t>(i)] = wave<double>(n, d, 1.1 + i, 0.7 + 0.31 * i, 1.0);
      Matrix<double> B(N * n, d);
      for (int i = 0; i < N; ++i) {
        B.middleRows(i * n, n) = attention<double>(spec, s.X[static_cast<std::size_t>(i)], s.heads[0].Q, s.heads[0].K) *
                                 s.X[static_cast<std::size_t>(i)];
      }
      const Eigen::SelfAdjointEigenSolver<Matrix<double>> P(B * B.transpose(), Eigen::EigenvaluesOnly);
      const Eigen::SelfAdjointEigenSolver<Matrix<double>> QO(s.heads[0].O.transpose() * s.heads[0].O, Eigen::EigenvaluesOnly);
      const Conditions c = evaluate_conditions(spec, s.X, s.heads);
      EXPECT_EQ(c.d_at_least_Nn, d >= N * n);
      const double top = QO.eigenvalues().maxCoeff() * P.eigenvalues().maxCoeff();
      EXPECT_NEAR(c.lambda_V_max, top, 1e-12 * top);
      EXPECT_DOUBLE_EQ(c.eta_max_value_only, 1 / c.lambda_V_max);
      if (d >= N * n) {
        const double bottom = QO.eigenvalues()(0) * P.eigenvalues()(0);
        EXPECT_GT(bottom, 1e3 * c.rounding_V);
        EXPECT_NEAR(c.lambda_V, bottom, c.rounding_V + 1e-10 * bottom);
      } else {
        EXPECT_LE(std::abs(c.lambda_V), c.rounding_V);
      }
      // lambda_Q: W^Q has d^2 >= Nn d_out parameters here only when d >= N n d_out / d; at least its sign is sure
      EXPECT_GE(c.lambda_Q, -c.rounding_Q);
      const Conditions q_only = evaluate_conditions(spec, s.X, s.heads, false);  // without J_V: the same lambda_Q
      EXPECT_EQ(q_only.lambda_Q, c.lambda_Q);
      EXPECT_EQ(q_only.lambda_V_max, 0.0);
    }
  }
}

// J has more rows than columns (N n d_out > H d^2): lambda_min(J J') = 0 exactly, reported as 0 with the flag; the
// largest eigenvalue comes from J'J and equals the one of J J'. Bad shapes and non-finite entries are refused.
TEST(TheoryKernels, ConditionsZeroByShapeAndInputChecks) {
  const KernelSpec spec{Kernel::gaussian, false};
  Fixture<double> s = setup<double>(3, 3, 4, 4, 1);  // J_V: 36 rows, 16 columns
  for (int i = 0; i < 3; ++i) s.X[static_cast<std::size_t>(i)] = wave<double>(3, 4, 1.1 + i, 0.7 + 0.31 * i, 1.0);
  const Conditions c = evaluate_conditions(spec, s.X, s.heads);
  EXPECT_TRUE(c.zero_V_by_shape);
  EXPECT_TRUE(c.zero_Q_by_shape);
  EXPECT_EQ(c.lambda_V, 0.0);
  EXPECT_EQ(c.lambda_Q, 0.0);
  const Matrix<double> J = jacobian<double>(spec, s.X, s.heads, TrainedBlocks{false, false, true});
  const Eigen::SelfAdjointEigenSolver<Matrix<double>> big(J * J.transpose(), Eigen::EigenvaluesOnly);
  EXPECT_NEAR(c.lambda_V_max, big.eigenvalues().maxCoeff(), c.rounding_V);
  EXPECT_LE(std::abs(big.eigenvalues()(0)), c.rounding_V);  // the bound covers the zero eigenvalues computed the long way
  std::vector<Head<double>> bad = s.heads;
  bad[0].K = Matrix<double>::Zero(3, 4);
  EXPECT_THROW(evaluate_conditions(spec, s.X, bad), std::invalid_argument);
  bad = s.heads;
  bad[0].V(1, 2) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(evaluate_conditions(spec, s.X, bad), std::invalid_argument);
  std::vector<Matrix<double>> X = s.X;
  X[2] = Matrix<double>::Zero(3, 5);
  EXPECT_THROW(evaluate_conditions(spec, X, s.heads), std::invalid_argument);
  EXPECT_THROW(evaluate_conditions(spec, {}, s.heads), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::theory::kernels
