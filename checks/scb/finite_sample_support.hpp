#pragma once
// Shared pieces of the finite-sample scb claims (specs/scb.md §5, §8 claims 11-14): the random
// instance of a claim, its copy for the theory side, and the two observables of an SGD run.
//
// The observables are definitions, not theory: α̂(V) = ⟨V, P⟩_Σ / K_P (§4.1) and the attention
// correlation y = Σ_k μ_k (⟨a_k, q_k⟩ − 1/T) (§4.3), read off a simulated model in O(N² + NQ).

#include <fmt/format.h>

#include <Eigen/Core>
#include <string>
#include <vector>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/params.hpp"
#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/scb/instance.hpp"
#include "dyncheck/sim/scb/model.hpp"
#include "dyncheck/theory/numeric/eigen.hpp"
#include "dyncheck/theory/scb/instance.hpp"
#include "theory_instance.hpp"  // to_theory, draw_instance, require_sparsity

namespace dyncheck::checks::scb {

/// Double-precision constants used on the measurement side (§1): Σ = D − μμᵀ, K_P, K_2, ρ̄.
struct MeasurementConstants {
  Eigen::MatrixXd sigma;
  double K_P = 0, K_2 = 0, rho_bar = 0;
};

inline MeasurementConstants measurement_constants(const sim::scb::Instance& instance) {
  MeasurementConstants c;
  c.sigma = -instance.mu * instance.mu.transpose();
  c.sigma.diagonal() += instance.mu;
  const Eigen::MatrixXd PS = instance.P * c.sigma;
  c.K_P = (PS * instance.P.transpose()).trace();
  c.K_2 = (PS * instance.P.transpose() * c.sigma).trace();
  for (int k = 0; k < instance.N(); ++k) {
    c.rho_bar += instance.mu[k] * (sim::scb::q_squared_norm(instance, k) - 1.0 / instance.T);
  }
  return c;
}

/// α̂ = ⟨V, P⟩_Σ / K_P and y = Σ_k μ_k(⟨a_k, q_k⟩ − 1/T) of a model.
struct Observables {
  double alpha = 0, y = 0;
};

inline Observables observe(const sim::scb::Instance& instance, const MeasurementConstants& c,
                           const sim::scb::LinearModel& model) {
  Observables o;
  // ⟨V, P⟩_Σ = Σ_j μ_j V_{:,j}·P_{:,j} − (Vμ)·(Pμ): O(N²), not the O(N³) of tr(VΣPᵀ).
  double inner = -(model.V * instance.mu).dot(instance.P * instance.mu);
  for (int j = 0; j < instance.N(); ++j) inner += instance.mu[j] * model.V.col(j).dot(instance.P.col(j));
  o.alpha = inner / c.K_P;
  for (int k = 0; k < instance.N(); ++k) {
    double overlap = 0;
    const auto& support = instance.support[static_cast<std::size_t>(k)];
    const auto& weight = instance.weight[static_cast<std::size_t>(k)];
    for (std::size_t i = 0; i < support.size(); ++i) overlap += weight[i] * model.A(support[i], k);
    o.y += instance.mu[k] * (overlap - 1.0 / instance.T);
  }
  return o;
}

}  // namespace dyncheck::checks::scb
