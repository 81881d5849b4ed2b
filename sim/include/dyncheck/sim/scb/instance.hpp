#pragma once
// A Sparse Contextual Bigram instance (P, μ, q) and random instances (specs/scb.md §1, §8).

#include <Eigen/Core>
#include <vector>

#include "dyncheck/sim/random/rng.hpp"

namespace dyncheck::sim::scb {

/**
 * An SCB instance (specs/scb.md §1): vocabulary [N], context length T.
 *
 * - `P` is column-stochastic, \f$P_{ij} = \Pr(x_o = i \mid x_s = j)\f$, so \f$P\mu = \mu\f$.
 * - `mu` is the stationary distribution, \f$\mu > 0\f$, \f$1^\top\mu = 1\f$.
 * - The position law \f$q^{(k)} \in \Delta^{T-1}\f$ is sparse: `support[k]` holds its non-zero
 *   positions (0-based, strictly increasing, in [0, T)) and `weight[k]` the values there
 *   (positive, summing to 1). A T×N matrix is never formed here (T reaches 1e5); dense_q does it
 *   on request for small T.
 */
struct Instance {
  Eigen::MatrixXd P;
  Eigen::VectorXd mu;
  std::vector<std::vector<int>> support;
  std::vector<std::vector<double>> weight;
  int T = 0;
  int draws = 1;  ///< how many P were drawn until one was accepted (random_instance's conditioning)

  int N() const { return static_cast<int>(P.rows()); }
};

/// Throws std::invalid_argument unless `instance` is an SCB instance as documented above:
/// P square N×N (N ≥ 1), entries ≥ 0, columns summing to 1 (±1e-12); μ of size N, > 0, summing
/// to 1 and stationary (‖Pμ − μ‖_∞ ≤ 1e-12); T ≥ 1; for every k a non-empty, strictly
/// increasing support in [0, T) of the same length as its weights, which are > 0 and sum to 1
/// (±1e-12).
void validate(const Instance& instance);

/// The T×N matrix with column k equal to \f$q^{(k)}\f$ (for the theory side of small instances).
Eigen::MatrixXd dense_q(const Instance& instance);

/// \f$\|q^{(k)}\|_2^2\f$ from the sparse weights.
double q_squared_norm(const Instance& instance, int k);

/// How random_instance draws an instance (specs/scb.md §8).
struct InstanceOptions {
  int N = 3;  ///< vocabulary size, ≥ 1
  int T = 50;  ///< context length, ≥ 1
  int Q = 2;  ///< support size of every q^{(k)}, in [1, T]
  double dirichlet_concentration = 1.0;  ///< columns of P ~ Dirichlet(c·1), c > 0 (spec: 1 or 0.3)
  double identity_mix = 0.0;  ///< P ← (1 − m) P + m I, m ∈ [0, 1)
  bool q_uniform = true;  ///< q^{(k)} = 1/Q on its support, else Dirichlet on it
  double q_dirichlet_concentration = 1.0;  ///< concentration of that Dirichlet, > 0
  /// Conditioning (both 0: none): P is redrawn until \f$K_2/K_P^2 \le\f$ noise_ratio_max and
  /// \f$\min_i \mu_i \ge\f$ mu_min (noise_ratio_max ≥ 0, 0 meaning no ceiling; mu_min ≥ 0). Lets a
  /// caller bound the constants its cost follows by parameters alone (issue #10: seed-dependent cost).
  double noise_ratio_max = 0.0;
  double mu_min = 0.0;
  int max_draws = 10000;  ///< P draws before giving up (std::runtime_error); ≥ 1
};

/// \f$K_P = \sum_j \mu_j\|P_{:,j} - \mu\|^2\f$ and \f$K_2 = \operatorname{tr}(P\Sigma P^\top\Sigma)\f$,
/// \f$\Sigma = \operatorname{diag}(\mu) - \mu\mu^\top\f$, of a column-stochastic P with stationary μ
/// (specs/scb.md §1, §5: the stage-1 SNR constant is \f$K_2/K_P^2\f$).
struct InstanceConstants {
  double K_P = 0, K_2 = 0;
};
InstanceConstants instance_constants(const Eigen::MatrixXd& P, const Eigen::VectorXd& mu);

/**
 * A random SCB instance (specs/scb.md §8), drawn from `rng` in this order:
 * 1. for j = 0..N−1 the column \f$P_{:,j} \sim \mathrm{Dirichlet}(c\,\mathbf 1_N)\f$, then
 *    \f$P \leftarrow (1-m)P + mI\f$ (which keeps the stationary distribution);
 * 2. (no draws) μ, the stationary distribution: the least-squares solution of
 *    \f$[P - I;\ \mathbf 1^\top]\mu = [0; 1]\f$ (Householder QR with column pivoting), divided by
 *    its sum; without conditioning, throws std::runtime_error unless \f$\min_i \mu_i > 0\f$ and
 *    \f$\|P\mu-\mu\|_\infty \le 10^{-12}\f$ (a reducible chain has no positive unique μ);
 *    with conditioning (noise_ratio_max > 0 or mu_min > 0), such a P, or one with
 *    K_2/K_P^2 > noise_ratio_max or min μ < mu_min, is rejected and steps 1-2 repeat from the same rng (a deterministic rejection
 *    sampler: the accepted P has the law of step 1 conditioned on the event); after max_draws
 *    rejections throws std::runtime_error. An accepted first draw consumes exactly the draws of
 *    the unconditioned sampler, so an instance that satisfies the conditions is unchanged;
 * 3. for k = 0..N−1: the support, Q distinct positions uniform among the \f$\binom{T}{Q}\f$
 *    subsets (R. Floyd's algorithm, Bentley & Floyd, CACM 30(9) 1987), sorted increasingly; then,
 *    unless q_uniform, its weights \f$\sim \mathrm{Dirichlet}(c_q\mathbf 1_Q)\f$ in support order.
 *
 * Throws std::invalid_argument naming the option when one is out of its documented range.
 */
Instance random_instance(const InstanceOptions& options, Rng& rng);

}  // namespace dyncheck::sim::scb
