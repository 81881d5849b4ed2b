#pragma once
// The SCB optimizers' steps (specs/scb.md §3) from gradient sums already drawn, for runs that share one draw of the
// examples (draw_shared_batch_gradients in optimizers.hpp). stage1_sgd_step, stage2_prox_sgd_step and plain_sgd_step
// (optimizers.hpp) are draw_batch_gradient followed by these, so there is one implementation of each step.

#include <Eigen/Core>

#include "dyncheck/sim/scb/instance.hpp"
#include "dyncheck/sim/scb/model.hpp"

namespace dyncheck::sim::scb {

/**
 * With B = sums.samples: stage 1 is apply_gradient_step preconditioned and projected (optimizers.hpp); stage 2 is
 * that, then soft_threshold_attention(model, instance.mu, eta_A, lambda); plain SGD is apply_gradient_step neither
 * preconditioned nor projected. Throws std::invalid_argument for η, η_A (or λ) not finite and ≥ 0, or sums that
 * hold no sample.
 */
void stage1_step_from_sums(LinearModel& model, const Instance& instance, const BatchGradient& sums, double eta,
                           double eta_A);
void stage2_prox_step_from_sums(LinearModel& model, const Instance& instance, const BatchGradient& sums, double eta,
                                double eta_A, double lambda);
void plain_sgd_step_from_sums(LinearModel& model, const BatchGradient& sums, double eta, double eta_A);

}  // namespace dyncheck::sim::scb
