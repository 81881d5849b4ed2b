#pragma once
// The per-sample gradient kernels of the SCB model behind model.hpp's accumulate_gradient(s):
// scatter h = X a_k, residual r = e_o − V h, V-gradient G_V −= r hᵀ, g = Vᵀ r, gather
// grad_{a_k} −= g_{x_t}, and the loss ½‖r‖² (attention_kernels.hpp, half_squared_norm). Private to
// the library. The scratch vectors h, r, g belong to this unit (on the stack for N ≤ 32, one
// thread-local set above), not to the caller's objects.

#include <Eigen/Core>
#include <span>

#include "dyncheck/sim/scb/attention_kernels.hpp"

namespace dyncheck::sim::scb::detail {

/// One sample as the kernels see it: views into the caller's example and sums.
struct KernelSample {
  const int* tokens = nullptr;            ///< x_1..x_T, each in [0, N)
  int T = 0;
  const double* attention = nullptr;      ///< a_k (T entries), k the sample's query
  double* attention_gradient = nullptr;   ///< column k of the A-gradient sum (T entries, updated)
  int output = 0;                         ///< x_o in [0, N)
};

/// One sample on `path`: the scatter and gather on `path`, the N² products in scalar loops (N ≤ 32)
/// or Eigen's matrix-vector products (N > 32); G_V (N×N) updated; returns ½‖r‖².
double accumulate_sample(KernelPath path, const Eigen::MatrixXd& V, const KernelSample& sample, Eigen::MatrixXd& G_V);

/**
 * accumulate_sample for each sample in order, the same bits, losses[s] = ½‖r_s‖². For N ≤ 32,
 * groups of kGradientGroup samples are processed stage by stage (all scatters, then the N²
 * products in sample order, then all gathers), so that the independent work of neighbouring samples
 * overlaps in the CPU. On the AVX-512 path the N² products are computed lane-wise (the same
 * operations in the same order in every lane, with Vᵀ copied once per call), and for N ≤ 8 with
 * every sample of one T the whole call runs in one function that keeps V, Vᵀ, the V-gradient and
 * each sample's h, r, g in registers and scatters two samples in one loop. Every sum receives its
 * terms in sample order (G_V from the products, each A-gradient column from the gathers).
 */
void accumulate_samples(KernelPath path, const Eigen::MatrixXd& V, std::span<const KernelSample> samples,
                        Eigen::MatrixXd& G_V, double* losses);

}  // namespace dyncheck::sim::scb::detail
