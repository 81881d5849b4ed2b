// Property tests of theory/multihead over random k, d, m, attention and projection scales (RapidCheck;
// the seed is pinned by RC_PARAMS in tests/CMakeLists.txt). Reals are drawn as integers mapped to a grid
// (numerics.md §2c: gen::arbitrary<double> is unbounded).

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "dyncheck/theory/multihead/identities.hpp"

namespace dyncheck::theory::multihead {
namespace {

/// A pseudo-random matrix from a 64-bit state (splitmix64), entries uniform in [-scale, scale].
Matrix<double> matrix(std::uint64_t& state, int d, double scale) {
  Matrix<double> out(d, d);
  for (Eigen::Index i = 0; i < out.size(); ++i) {
    state += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
    z ^= z >> 31U;
    out.data()[i] = scale * (2.0 * static_cast<double>(z >> 11U) * 0x1.0p-53 - 1.0);
  }
  return out;
}

struct Case {
  int k, d, m;
  Heads<double> heads;
  Matrix<double> w_student;
};

Case random_case() {
  Case c{*rc::gen::inRange(1, 5), *rc::gen::inRange(1, 4), *rc::gen::inRange(1, 4), {}, {}};
  RC_PRE(c.k * c.d <= 10);
  std::uint64_t state = *rc::gen::arbitrary<std::uint64_t>();
  const double theta_scale = *rc::gen::inRange(0, 31) / 10.0;         // 0 .. 3
  const double w_scale = std::pow(10.0, *rc::gen::inRange(-10, 11) / 10.0);  // 0.1 .. 10
  for (int i = 0; i < c.m; ++i) {
    c.heads.theta.push_back(matrix(state, c.d, theta_scale));
    c.heads.w.push_back(matrix(state, c.d, w_scale));
  }
  c.w_student = matrix(state, c.d, w_scale);
  return c;
}

double bound(const Heads<double>& heads) {
  double b = 0;
  for (const Matrix<double>& w : heads.w) b += w.cwiseAbs().colwise().sum().maxCoeff();
  return b;
}

RC_GTEST_PROP(MultiheadProperties, CrudeEstimatesAreSumWAtZeroAttention, ()) {
  Case c = random_case();
  for (Matrix<double>& t : c.heads.theta) t.setZero();
  const CrudeEstimates<double> e = crude_estimates(c.heads, c.k);
  const double tolerance = 4 * cube_summation_error<double>(c.k, c.d) * c.k * bound(c.heads);
  RC_ASSERT((e.c1 - c.heads.w_sum()).cwiseAbs().maxCoeff() <= tolerance);
  RC_ASSERT((e.c2 - c.heads.w_sum()).cwiseAbs().maxCoeff() <= tolerance);
}

RC_GTEST_PROP(MultiheadProperties, EnumerationIsBitIdenticalForAnyThreadCount, ()) {
  const Case c = random_case();
  const unsigned threads = static_cast<unsigned>(*rc::gen::inRange(2, 9));
  const Matrix<double> one = student_gradient_at_zero(c.heads, c.w_student, c.k, 1);
  const Matrix<double> many = student_gradient_at_zero(c.heads, c.w_student, c.k, threads);
  for (Eigen::Index i = 0; i < one.size(); ++i) RC_ASSERT(one.data()[i] == many.data()[i]);
}

RC_GTEST_PROP(MultiheadProperties, StudentGradientMatchesCentralDifferences, ()) {
  const Case c = random_case();
  const Matrix<double> exact = student_gradient_at_zero(c.heads, c.w_student, c.k);
  const double h = 1e-5;
  const int r = *rc::gen::inRange(0, c.d), col = *rc::gen::inRange(0, c.d);
  Matrix<double> plus = Matrix<double>::Zero(c.d, c.d), minus = plus;
  plus(r, col) = h;
  minus(r, col) = -h;
  const double fd = (student_loss(c.heads, plus, c.w_student, c.k) - student_loss(c.heads, minus, c.w_student, c.k)) /
                    (2 * h);
  // Truncation O(h^2) times the third derivative, and the loss's rounding / h; both below 1e-5 of the scale.
  const double scale = 1 + std::pow(bound(c.heads) + c.w_student.cwiseAbs().colwise().sum().maxCoeff(), 2) * c.k * c.d * c.d;
  RC_ASSERT(std::abs(fd - exact(r, col)) <= 1e-5 * scale);
}

RC_GTEST_PROP(MultiheadProperties, LayerIsOddAndCubeMeanOfFIsZero, ()) {
  const Case c = random_case();
  const Matrix<double> mean = cube_expectation<double>(c.k, c.d, [&](const Matrix<double>& X) { return layer(c.heads, X); });
  RC_ASSERT(mean.cwiseAbs().maxCoeff() <= 4 * cube_summation_error<double>(c.k, c.d) * bound(c.heads));
}

RC_GTEST_PROP(MultiheadProperties, ConcentrationExpectationIsTraceOfCovariance, ()) {
  const Case c = random_case();
  const ConcentrationMoments<double> moments = concentration_moments<double>(
      c.k, c.d, [&](const Matrix<double>& X) { return crude_c2_term(c.heads, X); });
  const double scale = std::max(1.0, moments.second);
  RC_ASSERT(std::abs(moments.second - moments.mean.squaredNorm() - moments.trace_sigma) <= 1e-12 * scale);
  RC_ASSERT(moments.trace_sigma >= -1e-12 * scale);
  // Var(n |C_n - C|^2) >= 0 for every n (a moment inequality the formula must respect).
  for (double n : {1.0, 2.0, 10.0, 1e6}) RC_ASSERT(moments.variance_scaled_error(n) >= -1e-9 * scale * scale);
}

}  // namespace
}  // namespace dyncheck::theory::multihead
