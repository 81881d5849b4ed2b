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

/// Moments of one sample's alpha-hat increment at init, Z = (P(h - mu))^T (e_{x_o} - mu) (Delta alpha-hat =
/// eta Z / K_P; h = the context's token frequencies, x_1..x_T iid mu, x_o ~ P e_{x_s}), exactly. With
/// d_x = P(e_x - mu), f_x = d_x - (mu^T d_x) 1 and u = (1/T) sum_j f_{x_j} (iid, mean 0), Z = u_{x_o} and
/// x_o ~ mu + d_{x_s}; only index patterns in which every context position other than s occurs twice or more
/// survive the expectation:
///   E Z   = (1/T) E d^T f = K_P / T,
///   E Z^2 = (1/T) sum_o mu_o E f_o^2 + (1/T^2) sum_o E d_o f_o^2 = K_2/T + M_3/T^2,
///   E Z^3 = (1/T^2) sum_o mu_o E f_o^3 + (1/T^3) sum_o (E d_o f_o^3 + 3 (T - 1) E[d_o f_o] E[f_o^2]),
/// expectations over x ~ mu. The variance is K_2/T (spec §5) plus an O(1/T^2) part that does not scale with K_2.
struct IncrementMoments {
  double variance = 0, third = 0;  ///< of Z: variance and third central moment
};

inline IncrementMoments increment_moments(const sim::scb::Instance& instance, int T) {
  const int N = instance.N();
  const Eigen::VectorXd& mu = instance.mu;
  Eigen::VectorXd mu_f2 = Eigen::VectorXd::Zero(N), df = Eigen::VectorXd::Zero(N), f2 = Eigen::VectorXd::Zero(N);
  double mean_Tz = 0, mu_f3 = 0, d_f2 = 0, d_f3 = 0;
  for (int x = 0; x < N; ++x) {
    const Eigen::VectorXd d = instance.P.col(x) - instance.P * mu;
    const Eigen::VectorXd f = (d.array() - mu.dot(d)).matrix();
    for (int o = 0; o < N; ++o) {
      mean_Tz += mu[x] * d[o] * f[o];
      mu_f3 += mu[x] * mu[o] * f[o] * f[o] * f[o];
      mu_f2[o] += mu[x] * mu[o] * f[o] * f[o];
      d_f2 += mu[x] * d[o] * f[o] * f[o];
      d_f3 += mu[x] * d[o] * f[o] * f[o] * f[o];
      df[o] += mu[x] * d[o] * f[o];
      f2[o] += mu[x] * f[o] * f[o];
    }
  }
  const double Td = T;
  const double m1 = mean_Tz / Td;
  const double m2 = mu_f2.sum() / Td + d_f2 / (Td * Td);
  const double m3 = mu_f3 / (Td * Td) + (d_f3 + 3 * (Td - 1) * df.dot(f2)) / (Td * Td * Td);
  return {m2 - m1 * m1, m3 - 3 * m1 * m2 + 2 * m1 * m1 * m1};
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
