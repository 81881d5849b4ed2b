#pragma once
// Full-matrix population loss, gradient and gradient steps of the SCB model, in double
// (specs/scb.md §2, §3, §5). Written from the data model, independently of theory/scb.

#include <Eigen/Core>

#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/scb/instance.hpp"
#include "dyncheck/sim/scb/model.hpp"

namespace dyncheck::sim::scb {

/**
 * The population loss \f$L(V, A) = \tfrac12\,\mathbb E\,\|e_{x_o} - V X a^{(k)}\|^2\f$,
 * \f$k = x_{T+1}\f$ (specs/scb.md §2), computed from the moments of the one-hot context: for
 * a fixed query k, with \f$D = \mathrm{diag}(\mu)\f$ and any N×N matrix B,
 * \f[ \mathbb E[X^\top B X] = \bigl(\mathrm{tr}(BD) - \mu^\top B\mu\bigr) I_T
 *     + (\mu^\top B\mu)\,\mathbf 1\mathbf 1^\top, \qquad
 *     \mathbb E[e_{x_o} \mid X, k] = P X q^{(k)}, \f]
 * so \f$L = \tfrac12 - \sum_k \mu_k\, q_k^\top \mathbb E[X^\top P^\top V X] a_k
 *        + \tfrac12 \sum_k \mu_k\, a_k^\top \mathbb E[X^\top V^\top V X] a_k\f$.
 * (This is the sim's own derivation; theory/scb uses the Σ-inner-product closed form.)
 * Throws std::invalid_argument on shape mismatch. O(N³ + NT).
 */
double population_loss(const Instance& instance, const LinearModel& model);

/// \f$\nabla_V L\f$ (N×N) and \f$\nabla_A L\f$ (T×N, column k = \f$\nabla_{a_k} L\f$).
struct PopulationGradient {
  Eigen::MatrixXd V;
  Eigen::MatrixXd A;
};

/**
 * The population gradient, from the same moments as population_loss: with
 * \f$M(u, w) := \mathbb E[X u w^\top X^\top] = (u\cdot w) D + ((\mathbf 1^\top u)(\mathbf 1^\top w)
 * - u\cdot w)\,\mu\mu^\top\f$,
 * \f[ \nabla_V L = \sum_k \mu_k \bigl[ V M(a_k, a_k) - P M(q_k, a_k) \bigr], \f]
 * \f[ \nabla_{a_k} L = \mu_k \bigl[ \mathbb E[X^\top V^\top V X]\, a_k
 *     - \mathbb E[X^\top V^\top P X]\, q_k \bigr]. \f]
 * O(N³ + NT).
 */
PopulationGradient population_gradient(const Instance& instance, const LinearModel& model);

/**
 * One stage-1 step of preconditioned projected population gradient descent (specs/scb.md §3):
 * \f[ V \leftarrow V - \eta\, \nabla_V L\, D^{-1}, \qquad
 *     a_k \leftarrow a_k - \frac{\eta_A}{\mu_k}\, \Pi_T \nabla_{a_k} L, \quad
 *     \Pi_T = I_T - \mathbf 1\mathbf 1^\top/T, \f]
 * both gradients taken at the old (V, A). Throws std::invalid_argument for η or η_A not finite
 * and ≥ 0.
 */
void population_stage1_step(LinearModel& model, const Instance& instance, double eta, double eta_A);

/**
 * One stage-2 step (specs/scb.md §3, [reconstructed]): the stage-1 step, then the soft threshold
 * \f$a_{k,t} \leftarrow \mathrm{sign}(a_{k,t})\max(|a_{k,t}| - \eta_A\lambda/\mu_k, 0)\f$, with no
 * re-projection onto \f$\mathbf 1^\top a_k = 1\f$. Throws std::invalid_argument for λ not finite
 * and ≥ 0.
 */
void population_stage2_step(LinearModel& model, const Instance& instance, double eta, double eta_A,
                            double lambda);

/**
 * The per-entry noise variances of a batch-B stochastic stage-1 step (specs/scb.md §5,
 * "Gaussian-noise simulations"), at the current model:
 * \f[ \mathrm{Var}(G_{ij}) = \mu_i(1-\mu_i)\Bigl(1 + \frac{\overline{\|a\|^2}}{\mu_j}\Bigr)\Big/B,
 *     \qquad \overline{\|a\|^2} = \sum_k \mu_k \|a_k\|^2, \f]
 * for \f$G = \hat\nabla_V L\, D^{-1}\f$, and \f$\alpha^2 K_2/(B\mu_k)\f$ for each entry of the
 * preconditioned a_k-gradient, with \f$\alpha = \langle V, P\rangle_\Sigma/K_P\f$,
 * \f$K_P = \langle P,P\rangle_\Sigma\f$, \f$K_2 = \mathrm{tr}(P\Sigma P^\top\Sigma)\f$,
 * \f$\Sigma = D - \mu\mu^\top\f$, \f$\langle A,B\rangle_\Sigma = \mathrm{tr}(A\Sigma B^\top)\f$.
 */
struct NoiseVariances {
  Eigen::MatrixXd V;  ///< N×N, variance of entry (i, j) of G
  Eigen::VectorXd a;  ///< N, variance of each entry of the preconditioned a_k-gradient
};
NoiseVariances stage1_noise_variances(const Instance& instance, const LinearModel& model, double batch);

/**
 * The Gaussian-noise surrogate of a batch-B stage-1 SGD step (specs/scb.md §5): the population
 * step of population_stage1_step with independent Gaussian noise added to the preconditioned
 * gradients, of the variances of stage1_noise_variances at the old model:
 * \f[ V \leftarrow V - \eta\,(\nabla_V L\, D^{-1} + \xi_V), \qquad
 *     a_k \leftarrow a_k - \eta_A\,\Pi_T\Bigl(\frac{\nabla_{a_k} L}{\mu_k} + \xi_k\Bigr). \f]
 * The a-noise is projected with \f$\Pi_T\f$ like the gradient it models, so \f$\mathbf 1^\top a_k\f$
 * is kept. Draws, in this order: \f$\xi_V\f$ column-major, then \f$\xi_k\f$ for k = 0..N−1, each
 * entry one NormalSampler value from `rng` (both values of each polar pair used).
 * Throws std::invalid_argument for batch < 1.
 */
void noisy_population_step(LinearModel& model, const Instance& instance, double eta, double eta_A,
                           double batch, Rng& rng);

}  // namespace dyncheck::sim::scb
