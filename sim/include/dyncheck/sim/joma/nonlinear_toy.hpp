#pragma once
// The nonlinear toy of draw_figure_4.py (specs/joma.md §4, "Official simulation"): Euler steps of
// v ← v + η (μ − v) ∘ softmax(v^2 / T), and the entropy of softmax(v^2 / T) per iteration.

#include <Eigen/Core>
#include <vector>

namespace dyncheck::sim::joma {

struct NonlinearToyTrajectory {
  std::vector<double> entropy;  ///< H(softmax(v_t^2 / T)) for t = 0..steps (nats)
  Eigen::VectorXd v_final;
};

/// Throws std::invalid_argument for T <= 0, η <= 0, steps < 0 or size mismatch.
NonlinearToyTrajectory nonlinear_softmax_toy(const Eigen::VectorXd& mu, const Eigen::VectorXd& v0, double temperature,
                                             double eta, long long steps);

}  // namespace dyncheck::sim::joma
