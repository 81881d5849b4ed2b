#pragma once
// The kernels of the SCB per-sample gradient (specs/scb.md §2): the two O(T) loops (the scatter
// h = X a_k and the gather of the a-gradient) and the loss ½‖r‖², each with a portable scalar path
// and wide SIMD paths chosen at run time. Every path of a kernel gives bit-identical results: the
// SIMD paths perform the same IEEE additions in the same order as the scalar path, lane by lane.
// The N² products and the fused AVX-512 accumulation that model.hpp's accumulate_gradient(s) use
// live in the same unit (sim/src/scb/attention_kernels_gradient.cpp, private).
//
// The path is an argument of every kernel: there is no global selection. default_kernel_path()
// is the widest path the CPU runs, decided once on first use and never changed.

#include <cstddef>
#include <vector>

namespace dyncheck::sim::scb {

/// An implementation of the kernels below. scalar is portable C++; avx2 and avx512 exist on
/// x86-64 builds and run only where the CPU (and OS) support them (avx512 needs AVX-512F).
enum class KernelPath { scalar, avx2, avx512 };

/// "scalar", "avx2", "avx512".
const char* kernel_path_name(KernelPath path) noexcept;

/// The paths this CPU can run, scalar first.
std::vector<KernelPath> available_kernel_paths();

/// The widest path this CPU runs (the last of available_kernel_paths()), decided once, on the first
/// call (thread-safe), and constant afterwards: what accumulate_gradient(s) use when no path is given.
KernelPath default_kernel_path() noexcept;

/// Throws std::invalid_argument naming `path` if this CPU cannot run it.
void require_kernel_path(KernelPath path);

/// The number of samples accumulate_gradients processes stage by stage (model.hpp).
inline constexpr std::size_t kGradientGroup = 4;

/**
 * ½‖r‖² = ½ Σ_{i<N} r_i², N ≥ 1, in a fixed summation order that depends on N alone (not on the
 * compiler's flags or Eigen's packet size), with s_i = r_i · r_i: four sums c_m of the s_i with
 * i ≡ m (mod 4) for i < E = 4⌊N/4⌋, each in increasing i; then the pair (c_0 + c_2, c_1 + c_3);
 * plus (s_E, s_{E+1}) if N mod 4 ≥ 2; the pair's two entries added; plus s_{N−1} if N is odd; times ½.
 * (It is the order in which Eigen 3.4 sums a 16-byte aligned vector with SSE2, two doubles a
 * packet, which the loss used before it was written down here: the results did not move.)
 * The AVX-512 accumulation computes the same sums in registers.
 */
double half_squared_norm(const double* r, int N);

/**
 * \f$h = X a = \sum_{t=0}^{T-1} a_t e_{x_t} \in \mathbb R^N\f$ (h is overwritten), tokens in
 * [0, N), T ≥ 0, N ≥ 1. The summation order is fixed by N alone:
 *  - N ≤ 8: eight interleaved partial sums, \f$p_{l,j} = \sum_{t \equiv l \ (8)} a_t [x_t = j]\f$
 *    added in increasing t from +0, then \f$h_j = ((p_{0j} + p_{1j}) + (p_{2j} + p_{3j})) +
 *    ((p_{4j} + p_{5j}) + (p_{6j} + p_{7j}))\f$. The SIMD paths keep \f$p_{\cdot j}\f$ in one
 *    vector register per j and add a masked by \f$[x_t = j]\f$ (AVX-512: merge-masked add, the
 *    masks of sixteen tokens from one compare per j, the final combination in registers; AVX2:
 *    add of a ∧ mask, i.e. of +0 in the other lanes, which leaves a partial sum that started at
 *    +0 unchanged: such a sum is never −0, and x + (+0) = x for every other x, inf and NaN included).
 *  - 8 < N ≤ 32: four interleaved partial sums (t mod 4 for t < 4⌊T/4⌋, the last T mod 4 tokens
 *    into p_0), combined as ((p_0 + p_1) + (p_2 + p_3)). The SIMD paths keep the partial sums in
 *    memory as the scalar path does, but read tokens and weights with wide loads split in
 *    registers (one load and one store per token instead of three loads and a store).
 *  - N > 32: one sum per j in increasing t.
 */
void scatter_attention(KernelPath path, const int* tokens, const double* a, int T, int N, double* h);

/**
 * \f$\text{grad}_t \leftarrow \text{grad}_t - g_{x_t}\f$ for t < T: one subtraction per entry, so
 * every path gives the same bits. The AVX-512 path looks g up in registers for N ≤ 32, eight
 * tokens at a time (one vpermpd for N ≤ 8, one vpermt2pd for N ≤ 16, two and a blend for N ≤ 32);
 * the other paths and larger N use the scalar loop (AVX2's hardware gather measured slower than
 * the scalar loop on AMD Zen 4).
 */
void gather_attention_gradient(KernelPath path, const int* tokens, const double* g, int T, int N, double* grad);

}  // namespace dyncheck::sim::scb
