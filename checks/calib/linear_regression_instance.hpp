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

#include "dyncheck/checks/param_set.hpp"

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

/// Validates λ_min ≤ λ_max, the conditioning of H and η λ_max < 1: the bias bounds divide by 1 − ηλ.
/// The 1e-12 margin covers the rounding of H = Q Λ Qᵀ, whose eigenvalues the 50-digit theory recomputes.
inline void require_stable_step(double eta, double lambda_min, double lambda_max) {
  if (lambda_min > lambda_max) {
    throw ParamError("lambda_min", fmt::format("parameter 'lambda_min' must be at most lambda_max = {:g}", lambda_max));
  }
  if (lambda_min < 1e-9 * lambda_max) {
    throw ParamError("lambda_min", fmt::format("parameter 'lambda_min' must be at least 1e-9 lambda_max = {:g}: H is "
                                               "formed in double, whose rounding (about d eps lambda_max) must not "
                                               "reach its smallest eigenvalue (the simulation factors H by Cholesky)",
                                               1e-9 * lambda_max));
  }
  if (eta * lambda_max >= 1 - 1e-12) {
    throw ParamError("eta", fmt::format("parameter 'eta' must be in (0, 1/lambda_max) = (0, {:g}) so that every "
                                        "eigen-direction contracts monotonically",
                                        1 / lambda_max));
  }
}

/// Each claim's defaults for the shared parameters (its numbers are those of its defaults).
struct LinearRegressionDefaults {
  long long d;
  double lambda_min, lambda_max, eta, sigma;
  long long batch;
  const char* eta_description;  ///< the step's role in the claim; "; also eta * lambda_max < 1" is appended
};

/// The parameters shared by the calib claims on SGD for linear regression: the instance (d, the
/// eigenvalue range of H), the label noise and SGD's step and batch. Declared once here; a claim's
/// Params derives from it, gives its defaults and adds its own fields after these.
struct LinearRegressionParams : ParamSet {
  explicit LinearRegressionParams(const LinearRegressionDefaults& defaults)
      : d(this, "d", defaults.d, closed(1, 16), "dimension"),
        lambda_min(this, "lambda_min", defaults.lambda_min, open_closed(0, 10),
                   "smallest eigenvalue of H; at least 1e-9 lambda_max", Scale::log),
        lambda_max(this, "lambda_max", defaults.lambda_max, open_closed(0, 10),
                   "largest eigenvalue of H; at least lambda_min", Scale::log),
        eta(this, "eta", defaults.eta, open_closed(0, 1),
            std::string(defaults.eta_description) + "; also eta * lambda_max < 1", Scale::log),
        sigma(this, "sigma", defaults.sigma, closed(0, 10), "label-noise standard deviation"),
        batch(this, "batch", defaults.batch, closed(1, 4096), "minibatch size", Scale::log) {}

  Int d;
  Real lambda_min;
  Real lambda_max;
  Real eta;
  Real sigma;
  Int batch;

  /// The conditions of require_stable_step.
  void check_instance() const { require_stable_step(eta, lambda_min, lambda_max); }

  /// Refuses R SGD runs of `steps` steps each when their work exceeds what `budget` affords
  /// (sgd_work_limit); ParamError names the parameters that set the cost.
  /// `steps_from` says how the steps follow from the parameters, `time` names the time parameter.
  void check_sgd_cost(double replicates, double steps, const Budget& budget, const std::string& steps_from,
                      const std::string& time) const;
};

/// Work of one SGD sample in dimension d, in the unit of sgd_work_limit: the product x = L z
/// (d^2) and about 8 d for the d normal draws, two dot products and the update.
inline double sgd_sample_work(double d) { return d * d + 8 * d; }

/// Work a budget affords for the SGD runs of one claim. Measured: calib.discretisation_gap_first_order at
/// its ci defaults (4096 x 140 steps x 64 samples x (4 + 16) = 7.3e8 units) took 1.6 s of CPU on one
/// thread (4.5 s of wall time on the loaded shared machine): ~4.5e8 units per CPU-second. smoke:
/// ~0.2 s, ci: ~4.5 s (2.7x the defaults' cost; a 3.8e9 point took 47 s of wall time on the shared
/// machine under full load, so 2e9 keeps a ci point well inside a minute there), full: ~30 min.
inline double sgd_work_limit(const Budget& budget) { return budget.pick(1e8, 2e9, 8e11); }

inline void LinearRegressionParams::check_sgd_cost(double replicates, double steps, const Budget& budget,
                                                   const std::string& steps_from, const std::string& time) const {
  const double work = replicates * steps * static_cast<double>(batch.value()) * sgd_sample_work(static_cast<double>(d.value()));
  const double limit = sgd_work_limit(budget);
  if (work > limit) {
    throw ParamError("eta", fmt::format("the {} budget cannot afford this point: {:g} replicates x {:g} SGD steps "
                                        "({}) x batch {} in d = {} is {:.3g} units of work (d^2 + 8d a sample), more "
                                        "than its limit {:.3g}; raise eta, or lower {}, batch or d",
                                        to_string(budget.level), replicates, steps, steps_from, batch.value(),
                                        d.value(), work, limit, time));
  }
}

}  // namespace dyncheck::checks::calib
