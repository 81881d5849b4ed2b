#pragma once
// The random linear-regression instance shared by the calibration claims on SGD: a covariance
// H = Q diag(λ) Qᵀ with eigenvalues spread geometrically over [λ_min, λ_max] and Q a random
// rotation, a target w_* ~ N(0, I), and the start w_0 = 0. Drawn from the claim's own
// "instance" stream, so it depends on the master seed only.

#include <fmt/format.h>

#include <Eigen/Core>
#include <Eigen/QR>
#include <cmath>
#include <string>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/random/fill_standard_normal.hpp"
#include "dyncheck/sim/random/standard_normal.hpp"
#include "dyncheck/sim/random/rng.hpp"

namespace dyncheck::checks::calib {

struct LinearRegressionInstance {
  Eigen::MatrixXd H;
  Eigen::VectorXd w_star;
  Eigen::VectorXd w0;
};

inline LinearRegressionInstance make_linear_regression_instance(const RunContext& context, Eigen::Index d,
                                                                double lambda_min, double lambda_max) {
  sim::Rng rng = sim::derive_stream(context.seed, context.claim_id + "/instance", 0);
  Eigen::MatrixXd gaussian(d, d);
  for (Eigen::Index j = 0; j < d; ++j) sim::fill_standard_normal(rng, gaussian.col(j));
  const Eigen::MatrixXd Q = Eigen::HouseholderQR<Eigen::MatrixXd>(gaussian).householderQ();
  Eigen::VectorXd lambda(d);
  for (Eigen::Index j = 0; j < d; ++j) {
    const double fraction = d == 1 ? 0.0 : static_cast<double>(j) / static_cast<double>(d - 1);
    lambda[j] = lambda_min * portable::pow(lambda_max / lambda_min, fraction);
  }
  LinearRegressionInstance instance;
  instance.H = Q * lambda.asDiagonal() * Q.transpose();
  instance.H = (instance.H + instance.H.transpose()).eval() / 2;  // exactly symmetric input for both sides
  instance.w_star.resize(d);
  sim::fill_standard_normal(rng, instance.w_star);
  instance.w0 = Eigen::VectorXd::Zero(d);
  return instance;
}

/// Validates λ_min ≤ λ_max and η λ_max < 1: the bias bounds divide by 1 − ηλ.  The 1e-12 margin
/// covers the rounding of H = Q Λ Qᵀ, whose eigenvalues the 50-digit theory recomputes.
inline void require_stable_step(double eta, double lambda_min, double lambda_max) {
  if (lambda_min > lambda_max) {
    throw ParamError("lambda_min", fmt::format("parameter 'lambda_min' must be at most lambda_max = {:g}", lambda_max));
  }
  if (eta * lambda_max >= 1 - 1e-12) {
    throw ParamError("eta", fmt::format("parameter 'eta' must be in (0, 1/lambda_max) = (0, {:g}) so that every "
                                        "eigen-direction contracts monotonically",
                                        1 / lambda_max));
  }
}

}  // namespace dyncheck::checks::calib
