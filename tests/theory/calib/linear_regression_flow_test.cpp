#include "dyncheck/theory/calib/linear_regression_flow.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "dyncheck/theory/numeric/scalar.hpp"

namespace dyncheck::theory::calib {
namespace {

using S = mp50;

/// A 3x3 SPD matrix with eigenvalues in [lo, hi] from a rotation fixed by three angles.
Matrix<S> spd_matrix(double a, double b, double c, double lo, double hi) {
  Matrix<S> R = Matrix<S>::Identity(3, 3);
  const double angles[3] = {a, b, c};
  for (int k = 0; k < 3; ++k) {
    Matrix<S> G = Matrix<S>::Identity(3, 3);
    const int i = k, j = (k + 1) % 3;
    G(i, i) = cos(S(angles[k]));
    G(j, j) = cos(S(angles[k]));
    G(i, j) = -sin(S(angles[k]));
    G(j, i) = sin(S(angles[k]));
    R = R * G;
  }
  Vector<S> lambda(3);
  lambda << S(lo), S((lo + hi) / 2), S(hi);
  return R * lambda.asDiagonal() * R.transpose();
}

LinearRegressionFlow<S> example_flow(const Matrix<S>& H) {
  Vector<S> w_star(3), w0(3);
  w_star << S(1), S(-2), S("0.5");
  w0 << S(0), S(0), S(0);
  return {H, w_star, w0};
}

TEST(LinearRegressionFlow, GradientDescentMeanIsRepeatedMultiplicationToFiftyDigits) {
  const Matrix<S> H = spd_matrix(0.3, 1.1, -0.7, 0.5, 2.0);
  const auto flow = example_flow(H);
  const S eta("0.05");
  Vector<S> w(3);
  w << S(0), S(0), S(0);
  Vector<S> w_star(3);
  w_star << S(1), S(-2), S("0.5");
  for (int k = 0; k < 40; ++k) w = w - eta * H * (w - w_star);
  EXPECT_LT(to_double((w - flow.gradient_descent_mean(eta, 40)).cwiseAbs().maxCoeff()), 1e-45);
}

TEST(LinearRegressionFlow, FlowSatisfiesItsOdeByCentralDifferences) {
  const Matrix<S> H = spd_matrix(0.2, -0.4, 0.9, 0.5, 1.5);
  const auto flow = example_flow(H);
  Vector<S> w_star(3);
  w_star << S(1), S(-2), S("0.5");
  const S t("0.7"), h("1e-12");
  const Vector<S> derivative = (flow.gradient_flow_mean(t + h) - flow.gradient_flow_mean(t - h)) / (2 * h);
  const Vector<S> field = -H * (flow.gradient_flow_mean(t) - w_star);
  EXPECT_LT(to_double((derivative - field).cwiseAbs().maxCoeff()), 1e-20);  // O(h^2) truncation
}

// The O(eta) bounds must hold against the exact discrete mean, for any stable step and horizon.
RC_GTEST_PROP(LinearRegressionFlow, DiscretisationAndRemainderBoundsHold, ()) {
  const double a = *rc::gen::inRange(-300, 300) / 100.0;
  const double b = *rc::gen::inRange(-300, 300) / 100.0;
  const double lo = *rc::gen::inRange(1, 100) / 100.0;
  const double hi = lo + *rc::gen::inRange(0, 300) / 100.0;
  const auto flow = example_flow(spd_matrix(a, b, 0.4, lo, hi));
  const double eta = *rc::gen::inRange(1, 99) / 100.0 / hi;  // eta * lambda_max < 1
  const long long steps = *rc::gen::inRange(1, 400);
  const S eta_s(eta);
  const S t = eta_s * S(steps);
  const Vector<S> gap = flow.gradient_descent_mean(eta_s, steps) - flow.gradient_flow_mean(t);
  const Vector<S> bias = flow.discretisation_bias_bound(eta_s, steps);
  const Vector<S> remainder = (gap / eta_s - flow.first_order_gap_coefficient(t)).cwiseAbs();
  const Vector<S> remainder_bound = flow.first_order_remainder_bound(eta_s, steps);
  for (int i = 0; i < 3; ++i) {
    RC_ASSERT(abs(gap[i]) <= bias[i] * (1 + S("1e-40")) + S("1e-45"));
    RC_ASSERT(remainder[i] <= remainder_bound[i] * (1 + S("1e-40")) + S("1e-45"));
  }
}

TEST(LinearRegressionFlow, RejectsUnstableStepsAndIndefiniteMatrices) {
  const auto flow = example_flow(spd_matrix(0.1, 0.2, 0.3, 0.5, 2.0));
  EXPECT_THROW((void)flow.discretisation_bias_bound(S("0.6"), 10), std::invalid_argument);
  EXPECT_THROW((void)flow.first_order_remainder_bound(S("0.5"), 10), std::invalid_argument);
  Matrix<S> indefinite = Matrix<S>::Identity(3, 3);
  indefinite(2, 2) = S(-1);
  EXPECT_THROW(example_flow(indefinite), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::theory::calib
