// Validation, dense q and random SCB instances (see instance.hpp).

#include "dyncheck/sim/scb/instance.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

#include "dyncheck/sim/detail/throw_invalid_argument.hpp"
#include "dyncheck/sim/random/dirichlet.hpp"
#include "dyncheck/sim/random/uniform_index.hpp"

namespace dyncheck::sim::scb {

namespace {

constexpr double stochastic_tolerance = 1e-12;

using detail::throw_invalid_argument;

}  // namespace

void validate(const Instance& instance) {
  constexpr const char* where = "scb::validate";
  const Eigen::Index n = instance.P.rows();
  if (n < 1 || instance.P.cols() != n) throw_invalid_argument(where, "P must be square N x N with N >= 1");
  if (instance.mu.size() != n) throw_invalid_argument(where, "mu must have N entries");
  if (instance.T < 1) throw_invalid_argument(where, "T must be >= 1", static_cast<double>(instance.T));
  if (!instance.P.allFinite() || (instance.P.array() < 0.0).any()) {
    throw_invalid_argument(where, "P entries must be finite and >= 0");
  }
  for (Eigen::Index j = 0; j < n; ++j) {
    const double sum = instance.P.col(j).sum();
    if (std::abs(sum - 1.0) > stochastic_tolerance) {
      throw_invalid_argument(where, "P must be column-stochastic (column " + std::to_string(j) + " sums to)", sum);
    }
  }
  if (!instance.mu.allFinite() || instance.mu.minCoeff() <= 0.0) throw_invalid_argument(where, "mu must be > 0");
  if (std::abs(instance.mu.sum() - 1.0) > stochastic_tolerance) {
    throw_invalid_argument(where, "mu must sum to 1", instance.mu.sum());
  }
  const double residual = (instance.P * instance.mu - instance.mu).lpNorm<Eigen::Infinity>();
  if (residual > stochastic_tolerance) throw_invalid_argument(where, "mu must be stationary, |P mu - mu|_inf", residual);
  if (instance.support.size() != static_cast<std::size_t>(n) || instance.weight.size() != static_cast<std::size_t>(n)) {
    throw_invalid_argument(where, "support and weight must have N entries");
  }
  for (std::size_t k = 0; k < instance.support.size(); ++k) {
    const auto& support = instance.support[k];
    const auto& weight = instance.weight[k];
    const std::string column = "q^(" + std::to_string(k) + ")";
    if (support.empty() || support.size() != weight.size()) {
      throw_invalid_argument(where, column + ": support must be non-empty and as long as its weights");
    }
    double sum = 0.0;
    for (std::size_t i = 0; i < support.size(); ++i) {
      if (support[i] < 0 || support[i] >= instance.T || (i > 0 && support[i] <= support[i - 1])) {
        throw_invalid_argument(where, column + ": support must be strictly increasing in [0, T)",
                               static_cast<double>(support[i]));
      }
      if (!std::isfinite(weight[i]) || weight[i] <= 0.0) {
        throw_invalid_argument(where, column + ": weights must be finite and > 0", weight[i]);
      }
      sum += weight[i];
    }
    if (std::abs(sum - 1.0) > stochastic_tolerance) throw_invalid_argument(where, column + ": weights must sum to 1", sum);
  }
}

Eigen::MatrixXd dense_q(const Instance& instance) {
  Eigen::MatrixXd q = Eigen::MatrixXd::Zero(instance.T, instance.P.cols());
  for (std::size_t k = 0; k < instance.support.size(); ++k) {
    for (std::size_t i = 0; i < instance.support[k].size(); ++i) {
      q(instance.support[k][i], static_cast<Eigen::Index>(k)) = instance.weight[k][i];
    }
  }
  return q;
}

double q_squared_norm(const Instance& instance, int k) {
  double sum = 0.0;
  for (const double w : instance.weight.at(static_cast<std::size_t>(k))) sum += w * w;
  return sum;
}

InstanceConstants instance_constants(const Eigen::MatrixXd& P, const Eigen::VectorXd& mu) {
  Eigen::MatrixXd sigma = -mu * mu.transpose();
  sigma.diagonal() += mu;
  const Eigen::MatrixXd W = P * sigma * P.transpose();  // P Σ Pᵀ
  return {W.trace(), (W * sigma).trace()};
}

Instance random_instance(const InstanceOptions& options, Rng& rng) {
  constexpr const char* where = "scb::random_instance";
  if (options.N < 1) throw_invalid_argument(where, "N must be >= 1", static_cast<double>(options.N));
  if (options.T < 1) throw_invalid_argument(where, "T must be >= 1", static_cast<double>(options.T));
  if (options.Q < 1 || options.Q > options.T) {
    throw_invalid_argument(where, "Q must be in [1, T]", static_cast<double>(options.Q));
  }
  if (!(options.dirichlet_concentration > 0.0) || !std::isfinite(options.dirichlet_concentration)) {
    throw_invalid_argument(where, "dirichlet_concentration must be finite and > 0", options.dirichlet_concentration);
  }
  if (!(options.identity_mix >= 0.0 && options.identity_mix < 1.0)) {
    throw_invalid_argument(where, "identity_mix must be in [0, 1)", options.identity_mix);
  }
  if (!options.q_uniform &&
      (!(options.q_dirichlet_concentration > 0.0) || !std::isfinite(options.q_dirichlet_concentration))) {
    throw_invalid_argument(where, "q_dirichlet_concentration must be finite and > 0", options.q_dirichlet_concentration);
  }

  if (!(options.noise_ratio_max >= 0.0) || !std::isfinite(options.noise_ratio_max)) {
    throw_invalid_argument(where, "noise_ratio_max must be finite and >= 0", options.noise_ratio_max);
  }
  if (!(options.mu_min >= 0.0) || !std::isfinite(options.mu_min)) {
    throw_invalid_argument(where, "mu_min must be finite and >= 0", options.mu_min);
  }
  if (options.max_draws < 1) throw_invalid_argument(where, "max_draws must be >= 1", static_cast<double>(options.max_draws));

  const Eigen::Index n = options.N;
  Instance instance;
  instance.T = options.T;
  const bool conditioned = options.noise_ratio_max > 0.0 || options.mu_min > 0.0;
  const std::vector<double> concentration(static_cast<std::size_t>(n), options.dirichlet_concentration);
  for (int draw = 1;; ++draw) {
    instance.P.resize(n, n);
    for (Eigen::Index j = 0; j < n; ++j) {
      dirichlet(rng, concentration, std::span<double>(instance.P.col(j).data(), static_cast<std::size_t>(n)));
    }
    if (options.identity_mix > 0.0) {
      instance.P *= 1.0 - options.identity_mix;
      instance.P.diagonal().array() += options.identity_mix;
    }

    // Stationary distribution: (P − I)μ = 0 with 1ᵀμ = 1, solved as one least-squares system.
    Eigen::MatrixXd system(n + 1, n);
    system.topRows(n) = instance.P - Eigen::MatrixXd::Identity(n, n);
    system.row(n).setOnes();
    Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n + 1);
    rhs(n) = 1.0;
    instance.mu = system.colPivHouseholderQr().solve(rhs);
    instance.mu /= instance.mu.sum();
    const double residual = (instance.P * instance.mu - instance.mu).lpNorm<Eigen::Infinity>();
    const bool stationary = instance.mu.minCoeff() > 0.0 && residual <= stochastic_tolerance;
    if (!conditioned) {
      if (!stationary) {
        throw std::runtime_error("scb::random_instance: the drawn P has no positive stationary distribution (min mu = " +
                                 std::to_string(instance.mu.minCoeff()) + ", residual " + std::to_string(residual) + ")");
      }
      break;
    }
    bool accepted = stationary && instance.mu.minCoeff() >= options.mu_min;
    if (accepted && options.noise_ratio_max > 0.0) {
      const InstanceConstants c = instance_constants(instance.P, instance.mu);
      accepted = c.K_P > 0.0 && c.K_2 <= options.noise_ratio_max * c.K_P * c.K_P;
    }
    if (accepted) {
      instance.draws = draw;
      break;
    }
    if (draw >= options.max_draws) {
      throw std::runtime_error("scb::random_instance: none of " + std::to_string(options.max_draws) +
                               " drawn P has K_2/K_P^2 <= " + std::to_string(options.noise_ratio_max) + " and min mu >= " +
                               std::to_string(options.mu_min));
    }
  }

  instance.support.resize(static_cast<std::size_t>(n));
  instance.weight.resize(static_cast<std::size_t>(n));
  const std::vector<double> q_concentration(static_cast<std::size_t>(options.Q), options.q_dirichlet_concentration);
  for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) {
    // Floyd: for j = T−Q..T−1 draw t uniform in [0, j]; take t unless taken, else j.
    std::set<int> chosen;
    for (int j = options.T - options.Q; j < options.T; ++j) {
      const auto t = static_cast<int>(uniform_index(rng, static_cast<std::uint64_t>(j) + 1));
      if (!chosen.insert(t).second) chosen.insert(j);
    }
    instance.support[k].assign(chosen.begin(), chosen.end());
    auto& weight = instance.weight[k];
    weight.assign(static_cast<std::size_t>(options.Q), 1.0 / static_cast<double>(options.Q));
    if (!options.q_uniform) dirichlet(rng, q_concentration, weight);
  }
  return instance;
}

}  // namespace dyncheck::sim::scb
