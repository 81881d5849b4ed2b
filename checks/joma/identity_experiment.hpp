#pragma once
// The experiment behind the exact per-step invariant claims (specs/joma.md §2 "General form",
// §7 claims 1-3 and the near-orthogonal control): minibatch SGD on the JoMA block, with the
// invariant and its predicted per-step change evaluated by theory/joma at every step.

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>
#include <tuple>

#include "dyncheck/checks/params.hpp"
#include "dyncheck/sim/joma/data.hpp"
#include "dyncheck/sim/joma/embeddings.hpp"
#include "dyncheck/sim/joma/sgd.hpp"
#include "dyncheck/sim/random/fill_standard_normal.hpp"
#include "dyncheck/theory/joma/invariants.hpp"
#include "dyncheck/theory/joma/softmax_invariant.hpp"

namespace dyncheck::checks::joma {

struct IdentitySetting {
  sim::joma::AttentionKernel kernel = sim::joma::AttentionKernel::exp;
  Eigen::Index tokens = 20, hidden = 20, extra_dimensions = 10, batch = 4;
  int classes = 5;
  double temperature = 0.7, rate_ratio = 1.5, eta_w = 0.1, init_scale = 0.1, alpha = 1.0;
  sim::joma::Activation activation = sim::joma::Activation::leaky_relu;
  sim::joma::Loss loss = sim::joma::Loss::cross_entropy;
  long long steps = 2000;
  double momentum = 0, weight_decay = 0;
  double embedding_perturbation = -1;  ///< < 0: random orthonormal U; else perturbed_embeddings(ε)
  /// Control: a second query token (its own logits z') whose samples update the shared W; the loss is the
  /// mean over both queries' batches. The invariant of the first query then breaks (spec §1 Assumption 2).
  bool second_query = false;
  bool full_batch = false;             ///< one fixed Dirichlet batch for every step (deterministic GD)
};

/// The state of a run at one recorded step, with the sums of squared steps up to it: what a theory of
/// the invariant needs to predict I_t - I_0 (the mutants' coefficients are applied in `predict`).
struct IdentitySnapshot {
  long long step = 0;
  Eigen::VectorXd z;
  Eigen::MatrixXd V;                ///< U_C^T W (M_C x K)
  Eigen::VectorXd squared_v_steps;  ///< S_t = sum_{s<t} sum_k (Delta v_{k,s})^2, per token
  Eigen::VectorXd squared_z_steps;  ///< Z_t = sum_{s<t} (Delta z_s)^2, per token
  double roundoff_bound = 0;        ///< the a-priori round-off bound of the identity up to this step
  /// Every field, for sim::ReplicateExchange (an MPI group splits the runs; issue #16).
  auto exchange_fields() { return std::tie(step, z, V, squared_v_steps, squared_z_steps, roundoff_bound); }
};

struct IdentityRun {
  double worst_residual = 0;  ///< max_t |I_t - I_0 - P_t|_∞, P_t the summed predicted changes
  double roundoff_bound = 0;  ///< max_t of the a-priori round-off bound (see roundoff_factor)
  double max_abs_z = 0;
  double final_defect = 0;      ///< |I_T - I_0|_∞: the continuous-time invariant's violation
  double final_balance = 0;     ///< |κ/2 Σ_k (v_k(T)^2 - v_k(0)^2)|_∞ (what the invariant balances)
  double mean_abs_cosine = 0;
  std::vector<double> times, correlation;  ///< NC(z_t, ẑ_t) for plots
  Eigen::VectorXd z_final, z_hat_final;
  /// Step 0, every `record_every`-th step (when > 0) and the last step.
  std::vector<IdentitySnapshot> snapshots;
  /// The step at which the run stopped because the state left the range where a step stays finite
  /// (exp attention with max z/T > 50, |z| or |W| > 1e8, or a step that overflowed: the blow-up of the
  /// unbounded linear loss, claim 5); -1 when it ran all its steps.
  long long stopped_at = -1;
  /// Every field, for sim::ReplicateExchange (an MPI group splits the runs; issue #16).
  auto exchange_fields() {
    return std::tie(worst_residual, roundoff_bound, max_abs_z, final_defect, final_balance, mean_abs_cosine, times,
                    correlation, z_final, z_hat_final, snapshots, stopped_at);
  }
};

/// Kernel-dependent constants: κ_z = η_z/(η_w T) for exp, ρ = η_z/η_w for linear.
inline double invariant_kappa(const IdentitySetting& s) {
  return s.kernel == sim::joma::AttentionKernel::linear ? s.rate_ratio : s.rate_ratio / s.temperature;
}

/// Round-off allowance per unit magnitude: γ_n = n u/(1 - n u) with n = 2(d + M_C + K) + 8, the
/// longest chain of dependent operations in one step (backward dot products over d, M_C and K,
/// the invariant's sum over K, and the few updates), charged to every magnitude that enters the
/// identity (Higham, Accuracy and Stability, §3.1: a first-order worst-case bound).
inline double roundoff_factor(const IdentitySetting& s) {
  const double n = 2.0 * static_cast<double>(s.tokens + 1 + s.extra_dimensions + s.tokens + s.hidden) + 8.0;
  const double u = std::numeric_limits<double>::epsilon() / 2;
  return n * u / (1 - n * u);
}

inline IdentityRun run_identity_experiment(const IdentitySetting& s, sim::Rng& rng, long long record_every = 0) {
  using sim::joma::AttentionKernel;
  const Eigen::Index d = s.tokens + 1 + s.extra_dimensions + (s.second_query ? 1 : 0);
  sim::joma::Embeddings U, U_second;
  if (s.second_query) {
    // M_C + 2 orthonormal columns: U_C, u_q of the tracked query, and u_q' of the second one.
    const sim::joma::Embeddings all = sim::joma::random_orthonormal_embeddings(d, s.tokens + 1, rng);
    U = {all.contextual.leftCols(s.tokens), all.query};
    U_second = {all.contextual.leftCols(s.tokens), all.contextual.col(s.tokens)};
  } else {
    U = s.embedding_perturbation < 0 ? sim::joma::random_orthonormal_embeddings(d, s.tokens, rng)
                                     : sim::joma::perturbed_embeddings(d, s.tokens, s.embedding_perturbation, rng);
  }
  Eigen::VectorXd readout_entries(s.classes * s.hidden), loss_entries(s.classes * s.classes);
  sim::fill_standard_normal(rng, readout_entries);
  sim::fill_standard_normal(rng, loss_entries);
  sim::joma::Readout readout{Eigen::Map<Eigen::MatrixXd>(readout_entries.data(), s.classes, s.hidden) /
                                 std::sqrt(static_cast<double>(s.hidden)),
                             Eigen::Map<Eigen::MatrixXd>(loss_entries.data(), s.classes, s.classes)};
  const bool linear = s.kernel == AttentionKernel::linear;
  const sim::joma::JomaBlock block(U, {s.kernel, s.activation, s.loss, linear ? 1.0 : s.temperature, 0.1}, readout,
                                   s.hidden);
  sim::joma::BlockParameters p = sim::joma::gaussian_parameters(s.tokens, d, s.hidden, s.init_scale, s.init_scale, rng);
  std::optional<sim::joma::JomaBlock> second_block;
  sim::joma::BlockParameters p_second = p;  // z' starts equal to z; W is shared (copied in every step)
  if (s.second_query) {
    second_block.emplace(U_second, block.spec(), readout, s.hidden);
  }
  if (linear) p.z.array() += 1.0;  // away from z = 0, where z^2 carries no information (§7 claim 2)
  sim::joma::JomaSgd sgd({s.rate_ratio * s.eta_w, s.eta_w, s.momentum, s.weight_decay});
  const sim::joma::Batch fixed = sim::joma::dirichlet_batch(s.tokens, s.batch, s.alpha, s.classes, rng);

  const double kappa = invariant_kappa(s);
  auto invariant = [&](const Eigen::VectorXd& z, const Eigen::MatrixXd& V) -> Eigen::VectorXd {
    return linear ? theory::joma::linear_invariant<double>(z, V, kappa)
                  : theory::joma::exp_invariant<double>(z, V, kappa);
  };
  auto magnitude = [&](const Eigen::VectorXd& z, const Eigen::MatrixXd& V) {
    const Eigen::ArrayXd sq = V.array().square().rowwise().sum();
    return linear ? (z.array().square() + kappa * sq).maxCoeff() : (z.array().abs() + kappa / 2 * sq).maxCoeff();
  };

  IdentityRun run;
  run.mean_abs_cosine = sim::joma::mean_absolute_cosine(U);
  Eigen::MatrixXd V = U.contextual.transpose() * p.W;
  const Eigen::MatrixXd V_initial = V;
  const Eigen::VectorXd I0 = invariant(p.z, V);
  const double S0 = magnitude(p.z, V);
  Eigen::VectorXd predicted = Eigen::VectorXd::Zero(s.tokens);
  double step_magnitudes = 0;
  const double gamma = roundoff_factor(s);
  Eigen::VectorXd squared_v_steps = Eigen::VectorXd::Zero(s.tokens), squared_z_steps = Eigen::VectorXd::Zero(s.tokens);
  auto snapshot = [&](long long t) {
    run.snapshots.push_back({t, p.z, V, squared_v_steps, squared_z_steps, run.roundoff_bound});
  };
  snapshot(0);
  auto record = [&](long long t) {
    const Eigen::VectorXd lhs = linear ? Eigen::VectorXd(p.z.array().square().matrix()) : p.z;
    const Eigen::VectorXd rhs = linear ? Eigen::VectorXd(I0 + kappa * V.array().square().rowwise().sum().matrix())
                                       : Eigen::VectorXd(I0 + kappa / 2 * V.array().square().rowwise().sum().matrix());
    // NC is undefined while either side is constant over the tokens (e.g. z = W = 0 at init_scale 0): not plotted.
    auto spread = [](const Eigen::VectorXd& v) { return v.maxCoeff() - v.minCoeff(); };
    if (!(spread(lhs) > 0 && spread(rhs) > 0)) return;
    run.correlation.push_back(theory::joma::normalised_correlation<double>(lhs, rhs));
    run.times.push_back(static_cast<double>(t) * s.eta_w);
  };
  if (record_every > 0) record(0);
  for (long long t = 0; t < s.steps; ++t) {
    const double z_limit = linear ? 1e8 : 50 * s.temperature;
    if (p.z.maxCoeff() > z_limit || p.z.cwiseAbs().maxCoeff() > 1e8 || p.W.cwiseAbs().maxCoeff() > 1e8) {
      run.stopped_at = t;
      if (run.snapshots.back().step != t) snapshot(t);
      break;
    }
    const Eigen::VectorXd z_before = p.z;
    const Eigen::MatrixXd V_before = V, W_before = p.W;
    if (s.second_query) {
      // Plain SGD on the mean of both queries' losses: each gradient enters with weight 1/2.
      const sim::joma::Batch first = sim::joma::dirichlet_batch(s.tokens, s.batch, s.alpha, s.classes, rng);
      const sim::joma::Batch second = sim::joma::dirichlet_batch(s.tokens, s.batch, s.alpha, s.classes, rng);
      p_second.W = p.W;
      const sim::joma::BlockGradient g1 = block.gradient(p, first);
      const sim::joma::BlockGradient g2 = second_block->gradient(p_second, second);
      p.z -= 0.5 * s.rate_ratio * s.eta_w * g1.z;
      p_second.z -= 0.5 * s.rate_ratio * s.eta_w * g2.z;
      p.W -= 0.5 * s.eta_w * (g1.W + g2.W);
    } else {
      sgd.step(block, p, s.full_batch ? fixed : sim::joma::dirichlet_batch(s.tokens, s.batch, s.alpha, s.classes, rng));
    }
    V.noalias() = U.contextual.transpose() * p.W;
    const Eigen::VectorXd I = invariant(p.z, V);
    if (!(p.z.allFinite() && p.W.allFinite() && I.allFinite() && (V - V_before).array().square().allFinite())) {
      // The step overflowed (the unbounded linear loss blows up, claim 5): the identity is checked up to step t.
      p.z = z_before;
      p.W = W_before;
      V = V_before;
      run.stopped_at = t;
      if (run.snapshots.back().step != t) snapshot(t);
      break;
    }
    Eigen::VectorXd change;
    if (linear) {
      change = theory::joma::linear_invariant_step_change<double>(z_before, p.z, V_before, V, kappa);
    } else {
      change = theory::joma::exp_invariant_step_change<double>(V_before, V, kappa);
    }
    predicted += change;
    squared_v_steps += (V - V_before).array().square().rowwise().sum().matrix();
    squared_z_steps += (p.z - z_before).array().square().matrix();
    const Eigen::ArrayXd cross = (V_before.array().abs() * (V - V_before).array().abs()).rowwise().sum();
    const Eigen::ArrayXd z_weight =
        linear ? Eigen::ArrayXd((p.z + z_before).array().abs()) : Eigen::ArrayXd::Ones(p.z.size());
    step_magnitudes += ((p.z - z_before).array().abs() * z_weight + (linear ? 2 : 1) * kappa * cross).maxCoeff();
    const double residual = (I - I0 - predicted).cwiseAbs().maxCoeff();
    const double bound = gamma * (S0 + magnitude(p.z, V) + step_magnitudes);
    if (!std::isfinite(residual)) throw std::runtime_error("non-finite invariant residual at step " + std::to_string(t));
    run.worst_residual = std::max(run.worst_residual, residual);
    run.roundoff_bound = std::max(run.roundoff_bound, bound);
    run.max_abs_z = std::max(run.max_abs_z, p.z.cwiseAbs().maxCoeff());
    if (record_every > 0 && (t + 1) % record_every == 0) record(t + 1);
    if ((record_every > 0 && (t + 1) % record_every == 0) || t + 1 == s.steps) snapshot(t + 1);
  }
  const Eigen::VectorXd I_final = invariant(p.z, V);
  run.final_defect = (I_final - I0).cwiseAbs().maxCoeff();
  run.final_balance =
      (kappa / 2 * (V.array().square() - V_initial.array().square()).rowwise().sum()).abs().maxCoeff();
  run.z_final = p.z;
  run.z_hat_final = linear ? Eigen::VectorXd(I0 + kappa * V.array().square().rowwise().sum().matrix())
                           : Eigen::VectorXd(I0 + kappa / 2 * V.array().square().rowwise().sum().matrix());
  return run;
}

/// Activation from a claim parameter (0 identity, 1 ReLU, 2 leaky ReLU, 3 SiLU, 4 tanh); -1 cycles over
/// replicates.
inline sim::joma::Activation activation_for(long long parameter, std::size_t replicate) {
  const long long index = parameter < 0 ? static_cast<long long>(replicate % 5) : parameter;
  return static_cast<sim::joma::Activation>(index);
}

/// Loss from a claim parameter (0 CE, 1 squared, 2 linear); -1 alternates CE and squared over replicates
/// (offset from the activations' cycle). The linear loss is unbounded below: with exp attention its logits
/// blow up in finite time (claim 5), so thousands of steps of it end in overflow; it is run only on request.
inline sim::joma::Loss loss_for(long long parameter, std::size_t replicate) {
  const long long index = parameter < 0 ? static_cast<long long>((replicate / 5 + replicate) % 2) : parameter;
  return static_cast<sim::joma::Loss>(index);
}

}  // namespace dyncheck::checks::joma
