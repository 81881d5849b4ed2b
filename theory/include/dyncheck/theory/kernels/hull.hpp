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
// The mirror of D4 [derived]: (y - t)^2 is convex in y, so on the interval it is largest at an endpoint, and for
// every W^Q, W^K the softmax loss is at most UB = 1/2 sum_{i,a} max((t_ia - min_b u_ib)^2, (t_ia - max_b u_ib)^2):
// LB <= f <= UB, so a softmax run can stall at most at the factor UB/LB above its floor.
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

/// max((t - lower)^2, (t - upper)^2): the largest squared distance from t to a point of the interval (an endpoint,
/// by convexity); with `nearest` the smaller of the two (a mutant's slip).
inline double squared_farthest(double t, const Interval& hull, bool nearest = false) {
  const double low = (t - hull.lower) * (t - hull.lower), high = (t - hull.upper) * (t - hull.upper);
  return nearest ? std::min(low, high) : std::max(low, high);
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

namespace dyncheck::theory::kernels {

/// The Euclidean projection of c onto the probability simplex (sort-based; Held, Wolfe, Crowder 1974;
/// Duchi et al. 2008): max(c - tau, 0) with tau chosen so that the entries sum to 1.
inline Eigen::VectorXd project_to_simplex(const Eigen::VectorXd& c) {
  Eigen::VectorXd sorted = c;
  std::sort(sorted.data(), sorted.data() + sorted.size(), [](double a, double b) { return a > b; });
  double cumulative = 0, tau = 0;
  for (Eigen::Index k = 0; k < sorted.size(); ++k) {
    cumulative += sorted(k);
    const double candidate = (cumulative - 1) / static_cast<double>(k + 1);
    if (sorted(k) - candidate > 0) tau = candidate;
  }
  return (c.array() - tau).cwiseMax(0.0).matrix();
}

/// dist(y, conv{rows of V}) for vector output, with a certificate.
struct HullDistance {
  double upper = 0;     ///< |y - p| for the hull point p found (a feasible point: an upper bound)
  double lower = 0;     ///< max(0, (g'y - max_b g'v_b)/|g|), g = y - p: a separating-hyperplane lower bound
  double kkt_gap = 0;   ///< upper - lower: 0 exactly at the projection (its optimality certificate)
};

/// Projected gradient on the simplex weights c (p = V'c), step 1/|V V'|_F, `iterations` steps, then the
/// certificate. Whatever the iterate, `lower` is a valid lower bound: every hull point z has g'z <= max_b g'v_b.
inline HullDistance hull_distance(const Eigen::MatrixXd& V, const Eigen::VectorXd& y, int iterations = 500) {
  const Eigen::Index n = V.rows();
  Eigen::VectorXd c = Eigen::VectorXd::Constant(n, 1.0 / static_cast<double>(n));
  const Eigen::MatrixXd G = V * V.transpose();
  const Eigen::VectorXd Vy = V * y;
  const double step = 1.0 / std::max(G.norm(), 1e-300);
  for (int k = 0; k < iterations; ++k) c = project_to_simplex(c - step * (G * c - Vy));
  const Eigen::VectorXd p = V.transpose() * c;
  const Eigen::VectorXd g = y - p;
  HullDistance h;
  h.upper = g.norm();
  if (h.upper > 0) {
    const double support = (V * g).maxCoeff();
    h.lower = std::max(0.0, (g.dot(y) - support) / h.upper);
  }
  h.kkt_gap = h.upper - h.lower;
  return h;
}

}  // namespace dyncheck::theory::kernels
