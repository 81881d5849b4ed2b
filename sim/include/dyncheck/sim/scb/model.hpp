#pragma once
// The one-layer linear-attention model of the SCB task and its per-sample gradients
// (specs/scb.md §2).

#include <Eigen/Core>
#include <cstddef>
#include <span>
#include <vector>

#include "dyncheck/sim/scb/attention_kernels.hpp"
#include "dyncheck/sim/scb/instance.hpp"
#include "dyncheck/sim/scb/sampler.hpp"

namespace dyncheck::sim::scb {

/**
 * \f$f(X; V, A) = V X a^{(x_{T+1})}\f$ with \f$V \in \mathbb R^{N\times N}\f$ and
 * \f$A = [a^{(1)}, \dots, a^{(N)}] \in \mathbb R^{T\times N}\f$ (column k is the attention of
 * query k over positions), X the N×T one-hot matrix of the context (specs/scb.md §2).
 */
struct LinearModel {
  Eigen::MatrixXd V;  ///< N×N
  Eigen::MatrixXd A;  ///< T×N, column k = a^{(k)}
};

/// The paper's initialisation [paper]: \f$V = \mu\mathbf 1^\top\f$, \f$a^{(k)}_t = 1/T\f$.
LinearModel initial_model(const Instance& instance);

/**
 * Sums of per-sample gradients over a batch, kept sparse in A: only the columns of the queries
 * seen are touched, and clear() zeroes only those, so a batch of B costs O(B(T + N²)), never
 * O(TN). Sums only: the kernels' scratch vectors are their own (attention_kernels.hpp).
 */
struct BatchGradient {
  BatchGradient(int N, int T);

  Eigen::MatrixXd V;  ///< N×N, Σ_b ∇_V ℓ_b
  Eigen::MatrixXd A;  ///< T×N, Σ_b ∇_A ℓ_b (zero outside the touched columns)
  std::vector<long long> count;  ///< per query k, the number of samples with x_{T+1} = k
  std::vector<int> touched;  ///< the queries with count > 0, in first-seen order
  long long samples = 0;
  double loss_sum = 0.0;  ///< Σ_b ℓ_b

  /// Zeroes the sums in O(N² + T·|touched|).
  void clear();

  /// The number of samples accumulate_gradients processes stage by stage; the optimizers draw
  /// examples in groups of this size.
  static constexpr std::size_t kGroup = kGradientGroup;
};

/**
 * Adds the gradient of the per-sample loss \f$\ell = \tfrac12\|e_{x_o} - V h\|^2\f$,
 * \f$h = X a_k = \sum_t a_{k,t} e_{x_t}\f$, \f$r = e_{x_o} - V h\f$ (specs/scb.md §2):
 * \f[ \nabla_V \ell = -r h^\top, \qquad (\nabla_{a_k}\ell)_t = -(V^\top r)_{x_t}, \qquad
 *     \nabla_{a_j}\ell = 0\ (j \ne k), \f]
 * to `sums` and returns ℓ. Cost O(T + N²): h by a scatter over the T tokens, Vh and Vᵀr by
 * two matrix-vector products, the rank-1 update of sums.V, and a gather into column k of sums.A.
 * The scatter and gather run on kernel path `path` (default: default_kernel_path(), the widest
 * this CPU runs); the summation orders of h and of the loss are fixed by N and documented in
 * attention_kernels.hpp, so the results are the same bits on every path and machine.
 * Throws std::invalid_argument if the CPU cannot run `path`.
 * Shapes are the caller's responsibility (checked by the optimizers once per batch).
 */
double accumulate_gradient(const LinearModel& model, const Example& example, BatchGradient& sums, KernelPath path);
double accumulate_gradient(const LinearModel& model, const Example& example, BatchGradient& sums);

/**
 * accumulate_gradient for each example in order, with the same result bit for bit: for N ≤ 32,
 * groups of BatchGradient::kGroup samples are processed stage by stage (all scatters, then the
 * N² products, then all gathers), so that the independent work of neighbouring samples overlaps in
 * the CPU; every sum still receives its terms in sample order. On the AVX-512 path the N² products
 * are computed lane-wise, and for N ≤ 8 with every example of one T the whole call runs in one
 * fused function that keeps V, Vᵀ, the V-gradient and each sample's h, r, g in registers
 * (sim/src/scb/attention_kernels_gradient.cpp).
 */
void accumulate_gradients(const LinearModel& model, std::span<const Example> examples, BatchGradient& sums,
                          KernelPath path);
void accumulate_gradients(const LinearModel& model, std::span<const Example> examples, BatchGradient& sums);

/// The per-sample loss alone, ½‖e_o − V X a_k‖², in O(T + N²) (the norm in half_squared_norm's order).
double sample_loss(const LinearModel& model, const Example& example);

}  // namespace dyncheck::sim::scb
