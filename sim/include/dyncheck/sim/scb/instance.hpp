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
};

/**
 * A random SCB instance (specs/scb.md §8), drawn from `rng` in this order:
 * 1. for j = 0..N−1 the column \f$P_{:,j} \sim \mathrm{Dirichlet}(c\,\mathbf 1_N)\f$, then
 *    \f$P \leftarrow (1-m)P + mI\f$ (which keeps the stationary distribution);
 * 2. (no draws) μ, the stationary distribution: the least-squares solution of
 *    \f$[P - I;\ \mathbf 1^\top]\mu = [0; 1]\f$ (Householder QR with column pivoting), divided by
 *    its sum; throws std::runtime_error unless \f$\min_i \mu_i > 0\f$ and
 *    \f$\|P\mu-\mu\|_\infty \le 10^{-12}\f$ (a reducible chain has no positive unique μ);
 * 3. for k = 0..N−1: the support, Q distinct positions uniform among the \f$\binom{T}{Q}\f$
 *    subsets (R. Floyd's algorithm, Bentley & Floyd, CACM 30(9) 1987), sorted increasingly; then,
 *    unless q_uniform, its weights \f$\sim \mathrm{Dirichlet}(c_q\mathbf 1_Q)\f$ in support order.
 *
 * Throws std::invalid_argument naming the option when one is out of its documented range.
 */
Instance random_instance(const InstanceOptions& options, Rng& rng);

}  // namespace dyncheck::sim::scb
