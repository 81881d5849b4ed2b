#pragma once
// Minibatch SGD on noisy linear regression: x ~ N(0, H), y = xᵀw_* + σε, ε ~ N(0, 1),
// per-sample loss ½(xᵀw − y)². The calibration family's known-answer simulation.

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <stdexcept>
#include <vector>

#include "dyncheck/sim/random/fill_standard_normal.hpp"
#include "dyncheck/sim/random/standard_normal.hpp"
#include "dyncheck/sim/random/rng.hpp"

namespace dyncheck::sim::calib {

class NoisyLinearRegression {
 public:
  NoisyLinearRegression(const Eigen::MatrixXd& H, Eigen::VectorXd w_star, double sigma)
      : w_star_(std::move(w_star)), sigma_(sigma) {
    Eigen::LLT<Eigen::MatrixXd> cholesky(H);
    if (cholesky.info() != Eigen::Success || H.rows() != w_star_.size()) {
      throw std::invalid_argument("NoisyLinearRegression: H must be symmetric positive definite and match w_star");
    }
    factor_ = cholesky.matrixL();
  }

  Eigen::Index dimension() const { return w_star_.size(); }

  /// Runs SGD with step `eta` and batch size `batch` from w0 for record_steps.back() steps and
  /// returns w_k for each k in `record_steps` (ascending), one column per recorded step.
  /// Each sample: z ~ N(0, I_d), x = L z (H = L Lᵀ), ε ~ N(0, 1), drawn in that order.
  Eigen::MatrixXd sgd(const Eigen::VectorXd& w0, double eta, std::size_t batch,
                      const std::vector<long long>& record_steps, Rng& rng) const {
    const Eigen::Index d = dimension();
    Eigen::MatrixXd recorded(d, static_cast<Eigen::Index>(record_steps.size()));
    Eigen::VectorXd w = w0, gradient(d), z(d), x(d);
    std::size_t next = 0;
    for (long long step = 0; next < record_steps.size(); ++step) {
      while (next < record_steps.size() && record_steps[next] == step) recorded.col(static_cast<Eigen::Index>(next++)) = w;
      if (next == record_steps.size()) break;
      gradient.setZero();
      for (std::size_t b = 0; b < batch; ++b) {
        fill_standard_normal(rng, z);
        x.noalias() = factor_ * z;
        const double y = x.dot(w_star_) + sigma_ * standard_normal(rng);
        gradient += (x.dot(w) - y) * x;
      }
      w -= (eta / static_cast<double>(batch)) * gradient;
    }
    return recorded;
  }

 private:
  Eigen::VectorXd w_star_;
  double sigma_;
  Eigen::MatrixXd factor_;
};

}  // namespace dyncheck::sim::calib
