#pragma once
// Minibatch SGD variants of the SCB paper's algorithm (specs/scb.md §3) on the linear model.

#include <Eigen/Core>
#include <array>
#include <span>

#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/scb/instance.hpp"
#include "dyncheck/sim/scb/model.hpp"
#include "dyncheck/sim/scb/normalise.hpp"
#include "dyncheck/sim/scb/sampler.hpp"

namespace dyncheck::sim::scb {

/// Reusable buffers of one SGD run: the gradient sums and one group of examples (no allocation
/// per step once constructed).
struct SgdWorkspace {
  SgdWorkspace(int N, int T) : sums(N, T) {
    for (Example& example : examples) example.tokens.reserve(static_cast<std::size_t>(T));
  }
  BatchGradient sums;
  std::array<Example, BatchGradient::kGroup> examples;
};

/**
 * Draws B examples from `sampler` (in order, each with Sampler::sample_into) and leaves the sums
 * of their per-sample gradients in workspace.sums (cleared first); returns the mean loss. The
 * examples are drawn and accumulated (accumulate_gradients) a group of BatchGradient::kGroup at
 * a time, with the same random stream and sums as one at a time.
 * Throws std::invalid_argument for B < 1 or shapes that do not match the sampler.
 */
double draw_batch_gradient(const LinearModel& model, const Sampler& sampler, long long B, Rng& rng,
                           SgdWorkspace& workspace);

/**
 * draw_batch_gradient for several models on ONE batch: the B examples are drawn once (the same
 * draws, in the same groups of BatchGradient::kGroup, as draw_batch_gradient makes) and each
 * model's per-sample gradients are summed into sums[i] (cleared first), so sums[i] is, bit for bit,
 * what draw_batch_gradient(*models[i], ...) leaves from the same generator state. For runs that share
 * a sample stream (paired comparisons of optimizers), the examples are drawn once instead of once
 * per run. Throws std::invalid_argument for B < 1, models.size() != sums.size() or shapes that do
 * not match the sampler.
 */
void draw_shared_batch_gradients(std::span<const LinearModel* const> models, std::span<BatchGradient* const> sums,
                                 const Sampler& sampler, long long B, Rng& rng,
                                 std::array<Example, BatchGradient::kGroup>& examples);

/// How apply_gradient_step turns gradient sums into a step.
struct UpdateRule {
  bool precondition = true;  ///< V: right-multiply by D⁻¹; a_k: divide by μ_k (§3 stage 1)
  bool project = true;  ///< a_k: apply Π_T = I − 11ᵀ/T (keeps 1ᵀa_k)
};

/**
 * With \f$\hat\nabla = \text{sums}/B\f$ (B = sums.samples): \f$V \leftarrow V - \eta\,\hat\nabla_V
 * [D^{-1}]\f$ and, for every query k seen in the batch, \f$a_k \leftarrow a_k - \eta_A
 * [\mu_k^{-1}][\Pi_T]\hat\nabla_{a_k}\f$ (brackets: by `rule`). Columns of unseen queries have zero
 * gradient and are left alone, so the cost is O(N² + T·|seen|).
 */
void apply_gradient_step(LinearModel& model, const Eigen::VectorXd& mu, const BatchGradient& sums, double eta,
                         double eta_A, UpdateRule rule);

/**
 * Stage 1 (specs/scb.md §3): one preconditioned projected SGD step on a fresh batch of B,
 * \f$V \leftarrow V - \eta\hat\nabla_V L\,D^{-1}\f$,
 * \f$a_k \leftarrow a_k - (\eta_A/\mu_k)\Pi_T\hat\nabla_{a_k}L\f$. Returns the batch's mean loss.
 * Throws std::invalid_argument for B < 1, or η, η_A not finite and ≥ 0.
 */
double stage1_sgd_step(LinearModel& model, const Instance& instance, const Sampler& sampler, long long B,
                       double eta, double eta_A, Rng& rng, SgdWorkspace& workspace);
double stage1_sgd_step(LinearModel& model, const Instance& instance, const Sampler& sampler, long long B,
                       double eta, double eta_A, Rng& rng);

/// The ℓ1 proximal step of stage 2 alone, \f$a_{k,t} \leftarrow \mathrm{sign}(a_{k,t})\max(|a_{k,t}| -
/// \eta_A\lambda/\mu_k, 0)\f$ on every entry of A (O(TN)).
void soft_threshold_attention(LinearModel& model, const Eigen::VectorXd& mu, double eta_A, double lambda);

/**
 * Stage 2 (specs/scb.md §3, [reconstructed]): the stage-1 step, then the ℓ1 proximal step
 * \f$a_{k,t} \leftarrow \mathrm{sign}(a_{k,t})\max(|a_{k,t}| - \eta_A\lambda/\mu_k, 0)\f$ on every
 * entry of A (O(TN)), without re-projection onto \f$\mathbf 1^\top a_k = 1\f$. λ ≥ 0.
 */
double stage2_prox_sgd_step(LinearModel& model, const Instance& instance, const Sampler& sampler, long long B,
                            double eta, double eta_A, double lambda, Rng& rng, SgdWorkspace& workspace);
double stage2_prox_sgd_step(LinearModel& model, const Instance& instance, const Sampler& sampler, long long B,
                            double eta, double eta_A, double lambda, Rng& rng);

/// Plain unregularised SGD (no preconditioning, no projection): \f$V \leftarrow V -
/// \eta\hat\nabla_V L\f$, \f$A \leftarrow A - \eta_A\hat\nabla_A L\f$.
double plain_sgd_step(LinearModel& model, const Sampler& sampler, long long B, double eta, double eta_A, Rng& rng,
                      SgdWorkspace& workspace);
double plain_sgd_step(LinearModel& model, const Sampler& sampler, long long B, double eta, double eta_A, Rng& rng);

}  // namespace dyncheck::sim::scb
