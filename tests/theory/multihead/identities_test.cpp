// Unit tests of theory/multihead (cube.hpp, layer.hpp, identities.hpp).
// Reference values: tests/theory/multihead/reference_values.py (numpy in double, mpmath at 40
// digits), run with /usr/bin/python3 on the instance written there and in `instance()` below.

#include "dyncheck/theory/multihead/identities.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "dyncheck/theory/numeric/scalar.hpp"

namespace dyncheck::theory::multihead {
namespace {

template <class S>
Matrix<S> mat(double a, double b, double c, double d) {
  Matrix<S> out(2, 2);
  out << S(a), S(b), S(c), S(d);
  return out;
}

template <class S>
Heads<S> instance() {
  Heads<S> heads;
  heads.theta = {mat<S>(0.3, -0.7, 0.5, 0.2), mat<S>(-0.4, 0.1, 0.6, -0.8)};
  heads.w = {mat<S>(1.0, 0.5, -0.3, 0.8), mat<S>(0.2, -1.1, 0.7, 0.4)};
  return heads;
}

template <class S>
Matrix<S> student_w() {
  return mat<S>(0.9, 0.1, -0.2, 1.3);
}

// numpy (reference_values.py).
const Matrix<double> numpy_c1 = mat<double>(2.016743386447317, 0.11727566083536854, -0.1571600755647944, 0.23392731170889858);
const Matrix<double> numpy_c2 = mat<double>(1.3471798533584274, -0.7668424384198542, 0.5993150530868284, 0.8925737547959022);
const Matrix<double> numpy_grad =
    mat<double>(-0.46974700590358426, 0.7242781028846951, -0.9869703572928916, 0.38246059271463967);
const Matrix<double> numpy_linear =
    mat<double>(0.35644444444444434, 0.18481481481481554, 0.9285925925925932, -0.6288148148148152);

TEST(MultiheadCube, InputIndexBitsMapToSigns) {
  Matrix<double> X;
  cube_input<double>(0b000101, 3, 2, X);
  EXPECT_EQ(X(0, 0), -1);
  EXPECT_EQ(X(0, 1), 1);
  EXPECT_EQ(X(1, 0), -1);
  EXPECT_EQ(X(2, 1), 1);
}

TEST(MultiheadCube, BooleanMomentsExactInDoubleAndFiftyDigits) {  // D1
  for (int k = 1; k <= 5; ++k) {
    for (int d = 1; d <= 3; ++d) {
      const BooleanMoments<double> m = boolean_moments<double>(k, d);
      // (Xᵀ1)(1ᵀX)/k rounds when k is not a power of 2: summation bound (L + kd) eps max|term|, max|term| = k.
      EXPECT_LE((m.uniform - Matrix<double>::Identity(d, d)).cwiseAbs().maxCoeff(), cube_summation_error<double>(k, d) * k)
          << k << " " << d;
      EXPECT_EQ((m.gram - k * Matrix<double>::Identity(d, d)).cwiseAbs().maxCoeff(), 0.0);
      EXPECT_LE((m.centred - (k - 1) * Matrix<double>::Identity(d, d)).cwiseAbs().maxCoeff(),
                2 * cube_summation_error<double>(k, d) * k);
      EXPECT_EQ(m.diag.minCoeff(), 1.0);
      const BooleanMoments<mp50> h = boolean_moments<mp50>(k, d);
      EXPECT_LT(to_double((h.centred - mp50(k - 1) * Matrix<mp50>::Identity(d, d)).cwiseAbs().maxCoeff()), 1e-48);
    }
  }
}

TEST(MultiheadCube, ResultIsBitIdenticalForEveryThreadCount) {
  Heads<double> heads = instance<double>();
  // k = 5, d = 2: 1024 inputs, 4 blocks.
  const CrudeEstimates<double> one = crude_estimates(heads, 5, 1);
  for (unsigned threads : {2U, 3U, 4U, 7U}) {
    const CrudeEstimates<double> many = crude_estimates(heads, 5, threads);
    for (Eigen::Index i = 0; i < one.c1.size(); ++i) {
      EXPECT_EQ(one.c1.data()[i], many.c1.data()[i]) << threads;
      EXPECT_EQ(one.c2.data()[i], many.c2.data()[i]) << threads;
    }
  }
}

TEST(MultiheadCube, BiasedCubeAtOneHalfEqualsTheUniformCube) {
  const Heads<double> heads = instance<double>();
  auto g = [&](const Matrix<double>& X) { return Matrix<double>(X.transpose() * layer(heads, X)); };
  const Matrix<double> uniform = cube_expectation<double>(3, 2, g);
  const Matrix<double> biased = cube_expectation_biased<double>(3, 2, 0.5, g);
  EXPECT_LT((uniform - biased).cwiseAbs().maxCoeff(), 1e-15);
}

TEST(MultiheadIdentities, CrudeEstimatesMatchNumpyAndMpmath) {  // D2
  const CrudeEstimates<double> c = crude_estimates(instance<double>(), 3);
  EXPECT_LT((c.c1 - numpy_c1).cwiseAbs().maxCoeff(), 1e-14);
  EXPECT_LT((c.c2 - numpy_c2).cwiseAbs().maxCoeff(), 1e-14);
  const CrudeEstimates<mp50> h = crude_estimates(instance<mp50>(), 3);
  // mpmath at 40 digits: C1[0,0] and C1[1,1].
  EXPECT_LT(to_double(abs(h.c1(0, 0) - mp50("2.0167433864473169783355521688776757"))), 1e-33);
  EXPECT_LT(to_double(abs(h.c1(1, 1) - mp50("0.23392731170889873871241064555617592"))), 1e-33);
}

TEST(MultiheadIdentities, CrudeEstimatesAreSumOfWAtZeroAttention) {  // D2 at Theta = 0
  Heads<mp50> heads = instance<mp50>();
  for (Matrix<mp50>& t : heads.theta) t.setZero();
  for (int k : {1, 2, 4}) {
    const CrudeEstimates<mp50> c = crude_estimates(heads, k);
    EXPECT_LT(to_double((c.c1 - heads.w_sum()).cwiseAbs().maxCoeff()), 1e-45);
    EXPECT_LT(to_double((c.c2 - heads.w_sum()).cwiseAbs().maxCoeff()), 1e-45);
  }
}

TEST(MultiheadIdentities, CrudeFirstOrderIsTheDerivativeInEpsilon) {  // D2 linear term
  const Heads<mp50> directions = instance<mp50>();
  const CrudeEstimates<mp50> first = crude_first_order(directions, 3);
  const mp50 eps("1e-15");
  auto at = [&](const mp50& e) {
    Heads<mp50> h = directions;
    for (Matrix<mp50>& t : h.theta) t *= e;
    return crude_estimates(h, 3);
  };
  const CrudeEstimates<mp50> plus = at(eps), minus = at(-eps);
  // Central difference: O(eps^2) = 1e-30 truncation.
  EXPECT_LT(to_double(((plus.c1 - minus.c1) / (2 * eps) - first.c1).cwiseAbs().maxCoeff()), 1e-25);
  EXPECT_LT(to_double(((plus.c2 - minus.c2) / (2 * eps) - first.c2).cwiseAbs().maxCoeff()), 1e-25);
}

TEST(MultiheadIdentities, StudentGradientMatchesNumpyAndFiniteDifferences) {  // D3
  const Matrix<double> g = student_gradient_at_zero(instance<double>(), student_w<double>(), 3);
  EXPECT_LT((g - numpy_grad).cwiseAbs().maxCoeff(), 1e-14);
  const Heads<mp50> teacher = instance<mp50>();
  const Matrix<mp50> ws = student_w<mp50>();
  const Matrix<mp50> exact = student_gradient_at_zero(teacher, ws, 3);
  const mp50 h("1e-15");
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 2; ++c) {
      Matrix<mp50> plus = Matrix<mp50>::Zero(2, 2), minus = plus;
      plus(r, c) = h;
      minus(r, c) = -h;
      const mp50 fd = (student_loss(teacher, plus, ws, 3) - student_loss(teacher, minus, ws, 3)) / (2 * h);
      EXPECT_LT(to_double(abs(fd - exact(r, c))), 1e-25) << r << c;
    }
  }
}

TEST(MultiheadIdentities, LinearResponseMatchesNumpyAndIsTheLimit) {  // D4
  const Matrix<double> lin = linear_response(instance<double>(), student_w<double>(), 3);
  EXPECT_LT((lin - numpy_linear).cwiseAbs().maxCoeff(), 1e-14);
  const Heads<mp50> directions = instance<mp50>();
  const Matrix<mp50> exact_lin = linear_response(directions, directions.w_sum(), 3);
  for (const char* eps_text : {"1e-6", "1e-9"}) {
    const mp50 eps(eps_text);
    Heads<mp50> teacher = directions;
    for (Matrix<mp50>& t : teacher.theta) t *= eps;
    const Matrix<mp50> grad = student_gradient_at_zero(teacher, teacher.w_sum(), 3);
    // grad = -eps Lambda + O(eps^2): relative error O(eps).
    const double rel = to_double(relative_error<mp50>(Matrix<mp50>(-grad / eps), exact_lin));
    EXPECT_LT(rel, 10 * to_double(eps)) << eps_text;
    EXPECT_GT(rel, 0.01 * to_double(eps)) << eps_text;  // the O(eps^2) term is really there
  }
  // All Theta_i = 0 and W_s = sum W_i: the gradient vanishes exactly.
  Heads<mp50> zero = directions;
  for (Matrix<mp50>& t : zero.theta) t.setZero();
  EXPECT_LT(to_double(student_gradient_at_zero(zero, zero.w_sum(), 3).cwiseAbs().maxCoeff()), 1e-45);
}

TEST(MultiheadIdentities, HeuristicIsExactWhenMomentsAreReplacedByMeans) {
  const Heads<double> directions = instance<double>();
  const Matrix<double> ws = student_w<double>();
  const Matrix<double> heuristic = linear_response_heuristic(directions, ws, 4);
  Matrix<double> expected = Matrix<double>::Zero(2, 2);
  for (int i = 0; i < 2; ++i) expected += directions.theta[i] * directions.w[i] * ws.transpose();
  EXPECT_LT((heuristic - expected * 9.0 / 4.0).cwiseAbs().maxCoeff(), 1e-14);
}

TEST(MultiheadIdentities, ConcentrationVarianceMatchesPairEnumeration) {  // D6 at n = 2
  // k = 1, d = 2: 4 inputs, so all 16 ordered pairs give E over two iid samples exactly.
  const Heads<mp50> heads = instance<mp50>();
  auto g = [&](const Matrix<mp50>& X) { return crude_c2_term(heads, X); };
  const ConcentrationMoments<mp50> moments = concentration_moments<mp50>(1, 2, g);
  std::vector<Matrix<mp50>> values;
  Matrix<mp50> X;
  for (std::uint64_t i = 0; i < 4; ++i) {
    cube_input<mp50>(i, 1, 2, X);
    values.push_back(g(X));
  }
  mp50 first(0), second(0);
  for (const Matrix<mp50>& a : values) {
    for (const Matrix<mp50>& b : values) {
      const mp50 e = mp50(2) * ((a + b) / mp50(2) - moments.mean).squaredNorm();
      first += e / 16;
      second += e * e / 16;
    }
  }
  EXPECT_LT(to_double(abs(first - moments.expected_scaled_error())), 1e-45);
  EXPECT_LT(to_double(abs(second - first * first - moments.variance_scaled_error(mp50(2)))), 1e-44);
  EXPECT_LT(to_double(abs(moments.second - moments.mean.squaredNorm() - moments.trace_sigma)), 1e-45);
}

TEST(MultiheadIdentities, LargeMarginFrequencyIsMonotoneAndReachesUniqueArgmax) {  // D7
  const Matrix<double> theta = mat<double>(0.9, -0.35, 0.4, 1.2);
  const std::vector<double> lambdas = {0, 0.5, 1, 2, 4, 8, 16, 64, 256};
  const LargeMargin lm = large_margin_frequency(theta, 3, 0, lambdas, 0.1);
  EXPECT_EQ(lm.probability.front(), 0.0);  // lambda = 0: max softmax = 1/k = 1/3 < 0.9
  for (std::size_t j = 1; j < lambdas.size(); ++j) EXPECT_GE(lm.probability[j], lm.probability[j - 1]);
  EXPECT_GT(lm.min_gap, 0.0);
  EXPECT_LT(lm.unique_argmax, 1.0);  // ties between identical tokens
  const double lambda_star = std::log(2 * 0.9 / 0.1) / lm.min_gap * 1.01;
  const LargeMargin at_star = large_margin_frequency(theta, 3, 0, {lambda_star}, 0.1);
  EXPECT_EQ(at_star.probability.front(), lm.unique_argmax);
}

TEST(MultiheadIdentities, LayerLossIsHalfTheMeanSquaredDifference) {  // E-B3
  const Heads<double> teacher = instance<double>();
  Heads<double> student = teacher;
  EXPECT_EQ(layer_loss<double>(teacher, student, 3).loss, 0.0);
  student.w[1](0, 1) += 0.25;
  student.theta[0](1, 0) -= 0.5;
  double loss = 0, l1 = 0;
  Matrix<double> X;
  for (std::uint64_t i = 0; i < 64; ++i) {
    cube_input<double>(i, 3, 2, X);
    const Matrix<double> R = layer(student, X) - layer(teacher, X);
    loss += R.squaredNorm() / 2 / 64;
    l1 += R.cwiseAbs().sum() / 64;
  }
  const LayerLoss<double> value = layer_loss<double>(teacher, student, 3, 2);
  EXPECT_NEAR(value.loss, loss, 1e-14 * loss);
  EXPECT_NEAR(value.residual_l1, l1, 1e-14 * l1);
  // 50 digits agree with double to the summation bound.
  const LayerLoss<mp50> fine = layer_loss<mp50>(teacher.cast<mp50>(),
                                                                         student.cast<mp50>(), 3);
  EXPECT_NEAR(value.loss, to_double(fine.loss), 1e-13 * loss);
}

}  // namespace
}  // namespace dyncheck::theory::multihead
