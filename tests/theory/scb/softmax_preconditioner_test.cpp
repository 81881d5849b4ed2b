#include "dyncheck/theory/scb/softmax_preconditioner.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "dyncheck/theory/numeric/scalar.hpp"

namespace dyncheck::theory::scb {
namespace {

using S = mp50;

TEST(SoftmaxPreconditioner, AtUniformAttentionIsProjectorOverTSquaredExactly) {
  for (long long T : {2LL, 3LL, 7LL, 40LL}) {
    const Vector<S> a = Vector<S>::Constant(T, S(1) / S(T));
    const Matrix<S> difference = softmax_preconditioner(a) - uniform_attention_preconditioner<S>(T);
    EXPECT_LT(to_double(difference.cwiseAbs().maxCoeff()), 1e-49) << "T = " << T;
  }
  // In double: exact up to rounding of the entries (1/T^2 scale).
  const Eigen::VectorXd a = Eigen::VectorXd::Constant(16, 1.0 / 16);
  EXPECT_LT((softmax_preconditioner(a) - uniform_attention_preconditioner<double>(16)).cwiseAbs().maxCoeff(), 1e-18);
}

// The softmax Jacobian by central differences of softmax in 50 digits, squared, against the formula.
TEST(SoftmaxPreconditioner, IsTheSquaredSoftmaxJacobian) {
  const int T = 6;
  Vector<S> w(T);
  w << S("0.3"), S("-1.2"), S("2.0"), S("0.0"), S("0.7"), S("-0.4");
  auto softmax = [](const Vector<S>& z) {
    Vector<S> e = z.unaryExpr([](const S& v) { return exp(v); });
    return Vector<S>(e / e.sum());
  };
  const S h("1e-20");
  Matrix<S> J(T, T);
  for (int j = 0; j < T; ++j) {
    Vector<S> up = w, down = w;
    up[j] += h;
    down[j] -= h;
    J.col(j) = (softmax(up) - softmax(down)) / (2 * h);
  }
  EXPECT_LT(to_double((J * J - softmax_preconditioner(softmax(w))).cwiseAbs().maxCoeff()), 1e-25);
}

// max |J^2 - (a1(1-a1))^2 e1 e1^T| <= concentrated_remainder_bound(a1, b_max), over random attention.
RC_GTEST_PROP(ConcentratedPreconditioner, RemainderWithinTheEntrywiseBound, ()) {
  const long long T = *rc::gen::inRange(2, 60);
  const S a1 = S(*rc::gen::inRange(1, 1000)) / 1000;
  std::vector<int> raw = *rc::gen::container<std::vector<int>>(static_cast<std::size_t>(T - 1), rc::gen::inRange(0, 1000));
  Vector<S> a(T);
  a[0] = a1;
  S total = S(0);
  for (long long j = 1; j < T; ++j) total += S(raw[static_cast<std::size_t>(j - 1)] + 1);
  for (long long j = 1; j < T; ++j) a[j] = (1 - a1) * S(raw[static_cast<std::size_t>(j - 1)] + 1) / total;
  const S b_max = a.tail(T - 1).maxCoeff();
  const Matrix<S> remainder = softmax_preconditioner(a) - concentrated_preconditioner(a1, T);
  RC_ASSERT(remainder.cwiseAbs().maxCoeff() <= concentrated_remainder_bound(a1, b_max) * (1 + S(1e-40)));
  // R_11 = a1^2 ||b||^2 exactly.
  RC_ASSERT(to_double(abs(remainder(0, 0) - a1 * a1 * a.tail(T - 1).squaredNorm())) < 1e-45);
}

}  // namespace
}  // namespace dyncheck::theory::scb
