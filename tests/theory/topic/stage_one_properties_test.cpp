// Claim C4 of specs/topic.md §9 as RapidCheck properties of theory/topic/stage_one.hpp, over the spec's ranges:
// T in [2, 30], v in [2, 20] (T v <= 150 here, to keep the double LU solves fast), tau in [2, T-1],
// p_m in [0.05, 0.5], p_c, p_r in [0, 0.4] (p_c + p_r <= 0.9), lambda in [1e-6, 1e-1] log-uniform, alpha in [0.05, 2].

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>

#include "dyncheck/theory/topic/stage_one.hpp"

namespace dyncheck::theory::topic {
namespace {

struct Point {
  int T, v, tau;
  double p_m, p_c, p_r, lambda, alpha;
  bool dirichlet;
};

Point draw() {
  Point p{};
  p.T = *rc::gen::inRange(2, 31);
  p.v = *rc::gen::inRange(2, std::min(20, 150 / p.T) + 1);
  p.tau = p.T > 2 ? *rc::gen::inRange(2, p.T) : 2;
  p.p_m = *rc::gen::inRange(50, 501) / 1000.0;
  p.p_c = *rc::gen::inRange(0, 401) / 1000.0;
  p.p_r = *rc::gen::inRange(0, 401) / 1000.0;
  p.lambda = std::pow(10.0, -6 + 5 * (*rc::gen::inRange(0, 1001)) / 1000.0);
  p.alpha = *rc::gen::inRange(50, 2001) / 1000.0;
  p.dirichlet = *rc::gen::arbitrary<bool>() || p.T == 2;
  return p;
}

ThetaMoments<double> moments(const Point& p) {
  return p.dirichlet ? dirichlet_moments<double>(p.T, p.alpha) : subset_moments<double>(p.T, p.tau);
}

RC_GTEST_PROP(TheoryTopicStageOneProperties, ExcludedKeysOptimumIsBlockSymmetricWithPositiveContrast, ()) {
  const Point p = draw();
  const auto m = moments(p);
  const auto summary = block_summary<double>(ridge_solution(excluded_keys_equations<double>(p.T, p.v, m), p.lambda), p.T, p.v);
  const auto closed = excluded_keys_closed_form<double>(p.T, p.v, rho_topic(m, p.v), p.lambda);
  const double scale = closed.same + std::abs(closed.diff);
  const double solve_error = 1e-13 * (1 + 1 / p.lambda) * scale;  // double LU, cond <= (1 + lambda) / lambda
  RC_ASSERT(summary.spread <= solve_error);
  RC_ASSERT(std::abs(summary.mean.diag - summary.mean.same) <= 2 * solve_error);
  RC_ASSERT(std::abs(summary.mean.same - closed.same) <= solve_error);
  RC_ASSERT(std::abs(summary.mean.diff - closed.diff) <= solve_error);
  RC_ASSERT(std::abs(summary.mean.mask) <= solve_error);
  RC_ASSERT(closed.same > closed.diff);
  RC_ASSERT(closed.diff >= 0);
  RC_ASSERT(closed.same < 1.0 / p.v);
  // c_s increases to 1/v as lambda decreases.
  const auto smaller = excluded_keys_closed_form<double>(p.T, p.v, rho_topic(m, p.v), p.lambda / 10);
  RC_ASSERT(smaller.same > closed.same);
  const auto tiny = excluded_keys_closed_form<double>(p.T, p.v, rho_topic(m, p.v), 1e-14);
  RC_ASSERT(std::abs(tiny.same - 1.0 / p.v) <= 1e-8 / p.v);
  // Thm 1 (embedding version): the Gram contrast v (c_s - c_d)^2 > 0.
  RC_ASSERT(p.v * (closed.same - closed.diff) * (closed.same - closed.diff) > 0);
}

RC_GTEST_PROP(TheoryTopicStageOneProperties, AllKeysOptimumIsBlockSymmetricAndItsContrastTendsToOneOverAV, ()) {
  const Point p = draw();
  RC_PRE(p.p_c + p.p_r <= 0.9);
  const auto m = moments(p);
  const auto eq = all_keys_equations<double>(p.T, p.v, m, p.p_m, p.p_c, p.p_r);
  const auto summary = block_summary<double>(ridge_solution(eq, p.lambda), p.T, p.v);
  const double scale = std::abs(summary.mean.same) + std::abs(summary.mean.diff) + std::abs(summary.mean.mask);
  RC_ASSERT(summary.spread <= 1e-13 * (1 + 1 / p.lambda) * scale);
  RC_ASSERT(std::abs(summary.mean.diag - summary.mean.same) <= 1e-13 * (1 + 1 / p.lambda) * scale);
  RC_ASSERT(summary.mean.same > summary.mean.diff);
  const auto f = mask_fractions<double>(p.p_m, p.p_c, p.p_r);
  const auto limit = all_keys_min_norm_closed_form<double>(p.T, p.v, f);
  RC_ASSERT(std::abs(limit.same - limit.diff - 1 / (f.a * p.v)) <= 1e-14 / (f.a * p.v));
  RC_ASSERT(limit.diff < 0);
  // The ridge solution approaches the closed form as lambda -> 0: at lambda = 1e-10 (cond ~ 1e10, LU error ~1e-6).
  const auto small = block_summary<double>(ridge_solution(eq, 1e-10), p.T, p.v);
  RC_ASSERT(std::abs((small.mean.same - small.mean.diff) * f.a * p.v - 1) <= 1e-4);
  RC_ASSERT(p.v * (limit.same - limit.diff) * (limit.same - limit.diff) > 0);
}

}  // namespace
}  // namespace dyncheck::theory::topic
