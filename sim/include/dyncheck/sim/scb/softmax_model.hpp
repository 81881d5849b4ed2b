#pragma once
// The softmax-attention variant of the SCB model (specs/scb.md §3.1, OpenReview global response).

#include <Eigen/Core>
#include <vector>

#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/scb/instance.hpp"
#include "dyncheck/sim/scb/model.hpp"
#include "dyncheck/sim/scb/sampler.hpp"

namespace dyncheck::sim::scb {

/**
 * \f$f(X) = V X \sigma(w_k)\f$, \f$k = x_{T+1}\f$, with trainable logits \f$W = [w_1, \dots, w_N]
 * \in \mathbb R^{T\times N}\f$ and \f$\sigma\f$ the softmax over positions (specs/scb.md §3.1).
 */
struct SoftmaxModel {
  Eigen::MatrixXd V;  ///< N×N
  Eigen::MatrixXd W;  ///< T×N attention logits
};

/// \f$V = \mu\mathbf 1^\top\f$ and W = 0, i.e. uniform attention a_k = 1/T.
SoftmaxModel initial_softmax_model(const Instance& instance);

/// \f$\sigma(w)_t = e^{w_t - m} / \sum_s e^{w_s - m}\f$, \f$m = \max_s w_s\f$ (no overflow).
/// libm: portable::exp. Throws std::invalid_argument for an empty or non-finite w.
void softmax(const Eigen::Ref<const Eigen::VectorXd>& w, Eigen::Ref<Eigen::VectorXd> out);

/// The attention matrix \f$[\sigma(w_1), \dots, \sigma(w_N)]\f$ (T×N).
Eigen::MatrixXd attention_matrix(const SoftmaxModel& model);

/// Reusable buffers of softmax SGD: the batch, the linear model at σ(W) for the queries seen,
/// and the gradient sums with respect to that attention.
struct SoftmaxWorkspace {
  SoftmaxWorkspace(int N, int T, long long B);
  std::vector<Example> batch;
  LinearModel at_attention;  ///< V and, in the seen columns, σ(w_k)
  BatchGradient sums;  ///< per-sample gradients w.r.t. (V, a) at a = σ(w)
  Eigen::MatrixXd grad_W;  ///< T×N, Σ_b ∇_W ℓ_b in the seen columns (zero elsewhere)
  std::vector<char> seen;  ///< per query, whether σ(w_k) is already in at_attention this batch
};

/**
 * Draws B examples (in order, Sampler::sample_into) and computes the sums of per-sample gradients
 * of \f$\ell = \tfrac12\|e_{x_o} - VX\sigma(w_k)\|^2\f$: \f$\nabla_V\ell\f$ as in the linear
 * model at \f$a = \sigma(w_k)\f$, and through the softmax Jacobian
 * \f[ \nabla_{w_k}\ell = (\mathrm{diag}(a) - aa^\top)\,\nabla_{a}\ell, \qquad
 *     (\nabla_a\ell)_t = -(V^\top r)_{x_t}. \f]
 * The Jacobian is linear, so it is applied once per seen query to the summed a-gradient:
 * O(B(T + N²) + T·|seen|), σ(w_k) computed once per seen query. Leaves the sums in `workspace`
 * (sums.V, grad_W; sums.A holds the a-gradients) and returns the mean loss.
 */
double draw_softmax_batch_gradient(const SoftmaxModel& model, const Sampler& sampler, long long B, Rng& rng,
                                   SoftmaxWorkspace& workspace);

/**
 * One plain SGD step of the softmax model on a fresh batch of B:
 * \f$V \leftarrow V - \eta\hat\nabla_V L\f$, \f$W \leftarrow W - \eta_W\hat\nabla_W L\f$
 * (\f$\hat\nabla\f$ = batch means). Draws the same examples as a linear-model step from the same
 * engine state (the batch is drawn before any gradient). Returns the mean loss. Throws
 * std::invalid_argument for B < 1, η or η_W not finite and ≥ 0, or mismatched shapes.
 */
double softmax_sgd_step(SoftmaxModel& model, const Sampler& sampler, long long B, double eta, double eta_W, Rng& rng,
                        SoftmaxWorkspace& workspace);
double softmax_sgd_step(SoftmaxModel& model, const Sampler& sampler, long long B, double eta, double eta_W, Rng& rng);

}  // namespace dyncheck::sim::scb
