// dyncheck/theory/kernels/hull.hpp
//
// specs/kernels.md A.4 D4 [derived]: every softmax output row is a convex combination of the
// value rows, y_ia in conv{v_i1, ..., v_in} (v_b = x_b' W^V W^O), whatever W^Q and W^K are, so for
// every parameter value of a softmax model trained in W^Q and W^K only
//   f >= LB = 1/2 sum_{i,a} dist(y*_ia, conv{v_ib})^2.
// Scalar output: conv = [min_b u_ib, max_b u_ib], so
//   LB = 1/2 sum_{i,a} (max(0, t_ia - max_b u_ib)^2 + max(0, min_b u_ib - t_ia)^2).
// D5: the unnormalised Gaussian row is sum_b c_b u_b with c in (0, 1]^n, an interval with endpoints
// sum_{u_b < 0} u_b and sum_{u_b > 0} u_b (the reachable set's closure, scalar output).
// `drop_largest` (a mutant's knob) leaves the token with the largest value out of the hull.
#pragma once

#include <algorithm>
#include <vector>

#include "dyncheck/theory/numeric/eigen.hpp"

namespace dyncheck::theory::kernels {

struct Interval {
  double lower = 0, upper = 0;
};

/// [min_b u_b, max_b u_b] (without the largest value when drop_largest and n >= 2).
inline Interval softmax_hull(const Eigen::VectorXd& u, bool drop_largest = false) {
  Eigen::VectorXd values = u;
  if (drop_largest && values.size() >= 2) {
    Eigen::Index largest = 0;
    values.maxCoeff(&largest);
    values(largest) = values.minCoeff();
  }
  return {values.minCoeff(), values.maxCoeff()};
}

/// [sum of the negative u_b, sum of the positive u_b]: the closure of the unnormalised Gaussian row's range.
inline Interval gaussian_reach(const Eigen::VectorXd& u) {
  Interval r;
  for (Eigen::Index b = 0; b < u.size(); ++b) (u(b) < 0 ? r.lower : r.upper) += u(b);
  return r;
}

/// dist(t, [lower, upper])^2.
inline double squared_distance(double t, const Interval& hull) {
  const double above = std::max(0.0, t - hull.upper), below = std::max(0.0, hull.lower - t);
  return above * above + below * below;
}

/// LB = 1/2 sum_{i,a} dist(t_ia, hull(u_i))^2 for scalar output: u[i] the n values of sample i,
/// t[i] its n targets.
inline double softmax_loss_floor(const std::vector<Eigen::VectorXd>& u, const std::vector<Eigen::VectorXd>& t,
                                 bool drop_largest = false) {
  double lb = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    const Interval hull = softmax_hull(u[i], drop_largest);
    for (Eigen::Index a = 0; a < t[i].size(); ++a) lb += squared_distance(t[i](a), hull);
  }
  return lb / 2;
}

}  // namespace dyncheck::theory::kernels
