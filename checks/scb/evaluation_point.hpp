#pragma once
// The random point (V, A) at which the Monte-Carlo claims compare per-sample quantities with the
// population ones (scb.population_loss_and_gradient, scb.sgd_step_unbiased): between the
// initialisation and the ground truth, with noise, so that every term of the closed forms is active.

#include <Eigen/Core>
#include <cmath>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/random/uniform01.hpp"
#include "dyncheck/sim/scb/instance.hpp"
#include "dyncheck/sim/scb/model.hpp"

namespace dyncheck::checks::scb {

/// V = ½(P + V_0) + V_noise u/√N entrywise (V_0 of sim::scb::initial_model); a_k[t] = a_entry(q_k[t], u),
/// then a_k rescaled to 1ᵀa_k = 1 + sum_noise u. Each u is uniform in [-1, 1], drawn in that order from
/// the claim's stream (seed, "<claim id>/point", 0); the claim's a_entry says how a_k mixes q_k and 1/T.
template <class AttentionEntry>
sim::scb::LinearModel evaluation_point(const RunContext& context, const sim::scb::Instance& instance, double V_noise,
                                       AttentionEntry a_entry, double sum_noise) {
  sim::Rng rng = sim::derive_stream(context.seed, context.claim_id + "/point", 0);
  auto uniform = [&rng] { return 2.0 * sim::uniform01(rng) - 1.0; };
  const Eigen::Index N = instance.N(), T = instance.T;
  sim::scb::LinearModel point = sim::scb::initial_model(instance);
  point.V = 0.5 * (instance.P + point.V);
  for (Eigen::Index i = 0; i < point.V.size(); ++i) point.V.data()[i] += V_noise * uniform() / std::sqrt(static_cast<double>(N));
  const Eigen::MatrixXd q = sim::scb::dense_q(instance);
  for (Eigen::Index k = 0; k < N; ++k) {
    for (Eigen::Index t = 0; t < T; ++t) point.A(t, k) = a_entry(q(t, k), uniform());
    point.A.col(k) *= (1.0 + sum_noise * uniform()) / point.A.col(k).sum();
  }
  return point;
}

}  // namespace dyncheck::checks::scb
