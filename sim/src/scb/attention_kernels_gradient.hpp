#pragma once
// The per-sample gradient kernels of the SCB model behind model.hpp's accumulate_gradient(s):
// scatter h = X a_k, residual r = e_o − V h, V-gradient G_V −= r hᵀ, g = Vᵀ r, gather
// grad_{a_k} −= g_{x_t}, the loss ½‖r‖² (attention_kernels.hpp, half_squared_norm) and the counts.
// Private to the library. The scratch vectors h, r, g belong to this unit (on the stack for N ≤ 32, one
// thread-local set above), not to the caller's objects.

#include <Eigen/Core>
#include <span>

#include "dyncheck/sim/scb/attention_kernels.hpp"
#include "dyncheck/sim/scb/model.hpp"
#include "dyncheck/sim/scb/sampler.hpp"

namespace dyncheck::sim::scb::detail {

/// Adds sample k's count and loss to `sums` (the bookkeeping of every path).
[[gnu::always_inline]] inline void count_sample(int k, double loss, BatchGradient& sums) {
  auto& count = sums.count[static_cast<std::size_t>(k)];
  if (count++ == 0) sums.touched.push_back(k);
  ++sums.samples;
  sums.loss_sum += loss;
}

/// accumulate_gradient (model.hpp) on `path`: the scatter and gather on `path`, the N² products in
/// scalar loops (N ≤ 32) or Eigen's matrix-vector products (N > 32); returns ½‖r‖².
double accumulate_sample(KernelPath path, const LinearModel& model, const Example& example, BatchGradient& sums);

/**
 * accumulate_gradients (model.hpp) on `path`: accumulate_sample for each example in order, the
 * same bits. For N ≤ 32, groups of kGradientGroup samples are processed stage by stage (all
 * scatters, then the N² products, losses and counts in sample order, then all gathers), so that the
 * independent work of neighbouring samples overlaps in the CPU. On the AVX-512 path the N² products
 * are computed lane-wise (the same operations in the same order in every lane, with Vᵀ copied once
 * per call), and for N ≤ 8 with every example of one T the whole call runs in one function that
 * keeps V, Vᵀ, the V-gradient and each sample's h, r, g in registers and scatters two samples in
 * one loop. Every sum receives its terms in sample order (sums.V from the products, each column of
 * sums.A from the gathers, loss_sum from the losses).
 */
void accumulate_samples(KernelPath path, const LinearModel& model, std::span<const Example> examples,
                        BatchGradient& sums);

}  // namespace dyncheck::sim::scb::detail
