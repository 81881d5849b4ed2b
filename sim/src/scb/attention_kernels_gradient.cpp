// The per-sample gradient kernels of the SCB model (attention_kernels_gradient.hpp): the N²
// products, the loss, and the fused AVX-512 accumulation for small N, next to the scatter and
// gather of attention_kernels.cpp. The SIMD functions carry __attribute__((target)) and run only
// on the path the caller passes (available_kernel_paths() says which this CPU runs). For N ≤ 32:
// additions, subtractions and multiplications only, each rounded on its own (the library is built
// with -ffp-contract=off), in orders written down here and in attention_kernels.hpp: the same bits
// on every path and with any -march. For N > 32 the products are Eigen's, whose order follows
// Eigen's packet size (and which fuse multiply-adds where -march enables FMA): the same bits on
// every path of one build, not across -march settings.

#include "attention_kernels_gradient.hpp"

#include <algorithm>
#include <array>
#include <cstddef>

#include "attention_kernels_avx512.hpp"

namespace dyncheck::sim::scb {

double half_squared_norm(const double* r, int N) {
  const int aligned_end = N / 4 * 4;
  double c0 = 0.0, c1 = 0.0, c2 = 0.0, c3 = 0.0;
  for (int i = 0; i < aligned_end; i += 4) {
    c0 += r[i] * r[i];
    c1 += r[i + 1] * r[i + 1];
    c2 += r[i + 2] * r[i + 2];
    c3 += r[i + 3] * r[i + 3];
  }
  double p0 = c0 + c2, p1 = c1 + c3;
  if (N - aligned_end >= 2) {
    p0 += r[aligned_end] * r[aligned_end];
    p1 += r[aligned_end + 1] * r[aligned_end + 1];
  }
  double sum = p0 + p1;
  if (N % 2 == 1) sum += r[N - 1] * r[N - 1];
  return 0.5 * sum;
}

namespace detail {
namespace {

constexpr int kMaxSmallN = 32;  // largest N of the scalar-loop products (and of the grouped path)

/// Small N: plain loops avoid the dispatch overhead of dynamic-size Eigen kernels. r = e_o − V h
/// with r_i = (((0 − V_{i0}h_0) − V_{i1}h_1) − …) + 1[i = o], kept in a register per i (no
/// store-to-load chain through r); then in one pass over the columns g_j = V_{:,j}ᵀ r (in
/// increasing i) and the rank-1 update G_V{:,j} −= r h_j. The buffers are distinct (__restrict).
/// (Fixed <= 0: N at run time; else N = Fixed, fully unrolled for the smallest models.)
template <int Fixed>
void small_residual_and_products(const double* __restrict V, const double* __restrict h, int runtime_N, int output,
                                 double* __restrict r, double* __restrict G_V, double* __restrict g) {
  const int N = Fixed > 0 ? Fixed : runtime_N;
  for (int i = 0; i < N; ++i) {
    double sum = 0.0;
    for (int j = 0; j < N; ++j) sum -= V[static_cast<std::ptrdiff_t>(j) * N + i] * h[j];
    r[i] = sum;
  }
  r[output] += 1.0;
  for (int j = 0; j < N; ++j) {
    const double* column = V + static_cast<std::ptrdiff_t>(j) * N;
    double* gradient_column = G_V + static_cast<std::ptrdiff_t>(j) * N;
    const double hj = h[j];
    double dot = 0.0;
    for (int i = 0; i < N; ++i) {
      dot += column[i] * r[i];
      gradient_column[i] -= r[i] * hj;
    }
    g[j] = dot;
  }
}

[[gnu::always_inline]] inline void small_products(int N, const double* V, const double* h, int output, double* r,
                                                  double* G_V, double* g) {
  switch (N) {
    case 1: small_residual_and_products<1>(V, h, N, output, r, G_V, g); break;
    case 2: small_residual_and_products<2>(V, h, N, output, r, G_V, g); break;
    case 3: small_residual_and_products<3>(V, h, N, output, r, G_V, g); break;
    case 4: small_residual_and_products<4>(V, h, N, output, r, G_V, g); break;
    default: small_residual_and_products<0>(V, h, N, output, r, G_V, g); break;
  }
}

/// The inputs and outputs of the N² products of up to kGradientGroup samples, in sample
/// order: h, the output token, and scratch for r and g; loss receives ½‖r‖².
struct GroupProducts {
  std::size_t size = 0;
  std::array<const double*, kGradientGroup> h{};
  std::array<int, kGradientGroup> output{};
  std::array<double*, kGradientGroup> r{}, g{};
  std::array<double, kGradientGroup> loss{};
};

#if DYNCHECK_SCB_X86_KERNELS

// GCC 12's intrinsics fill "don't care" operands with _mm*_undefined_*() (GCC bug 105593; see
// attention_kernels_avx512.hpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

/// half_squared_norm of r (lanes < N ≤ 8) in registers, in its order (attention_kernels.hpp): four
/// sums c_m of the s_i with i ≡ m (mod 4), i < E = 4⌊N/4⌋, in increasing i; then
/// (c_0 + c_2, c_1 + c_3); plus (s_E, s_{E+1}) if N mod 4 ≥ 2; the two lanes added; plus
/// s_{N−1} if N is odd. (Squares are ≥ +0 or NaN, so the sums may start from +0.)
template <int N>
__attribute__((target("avx512f"), always_inline)) inline double half_squared_norm_avx512(__m512d r) {
  constexpr int aligned_end2 = N / 4 * 4, aligned_end = N / 2 * 2;
  const __m512d squares = _mm512_maskz_mul_pd(static_cast<__mmask8>((1U << N) - 1U), r, r);
  __m128d pair = _mm_setzero_pd();
  if constexpr (aligned_end2 > 0) {
    __m256d four = _mm512_castpd512_pd256(squares);
    if constexpr (aligned_end2 == 8) four = _mm256_add_pd(four, _mm512_extractf64x4_pd(squares, 1));
    pair = _mm_add_pd(_mm256_castpd256_pd128(four), _mm256_extractf128_pd(four, 1));
  }
  if constexpr (aligned_end > aligned_end2) {
    const __m256d half = _mm512_extractf64x4_pd(squares, aligned_end2 / 4);
    pair = _mm_add_pd(pair, _mm256_castpd256_pd128(half));
  }
  double sum = _mm_cvtsd_f64(pair) + _mm_cvtsd_f64(_mm_unpackhi_pd(pair, pair));
  if constexpr (N % 2 == 1) sum += _mm512_cvtsd_f64(_mm512_permutexvar_pd(_mm512_set1_epi64(N - 1), squares));
  return 0.5 * sum;
}

/// small_residual_and_products for one sample, N ≤ 8, lane-wise over the index that the scalar
/// loop does not sum over, so that every lane performs the scalar path's operations in its order
/// (a multiply, then a separate add or subtract): r = 0 − V_{:,0}h_0 − V_{:,1}h_1 − … over the
/// columns j of V; g = 0 + (Vᵀ)_{:,0} r_0 + (Vᵀ)_{:,1} r_1 + … over the columns i of Vᵀ (`row`);
/// G_V{:,j} −= r h_j; and the loss ½‖r‖². Everything in registers: column j of V, of Vᵀ and of
/// G_V (`gradient`, updated), h and g (lane j = h_j, g_j).
template <int N>
__attribute__((target("avx512f"), always_inline)) inline void sample_products_avx512(const __m512d* column,
                                                                                  const __m512d* row,
                                                                                  __m512d* gradient, __m512d h,
                                                                                  int output, __m512d& g,
                                                                                  double& loss) {
  __m512d h_j[N];
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) h_j[j] = _mm512_permutexvar_pd(_mm512_set1_epi64(j), h);
  __m512d r = _mm512_setzero_pd();
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) r = _mm512_sub_pd(r, _mm512_mul_pd(column[j], h_j[j]));
  r = _mm512_mask_add_pd(r, static_cast<__mmask8>(1U << output), r, _mm512_set1_pd(1.0));
  g = _mm512_setzero_pd();
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) g = _mm512_add_pd(g, _mm512_mul_pd(row[i], _mm512_permutexvar_pd(_mm512_set1_epi64(i), r)));
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) gradient[j] = _mm512_sub_pd(gradient[j], _mm512_mul_pd(r, h_j[j]));
  loss = half_squared_norm_avx512<N>(r);
}

/// accumulate_samples for N ≤ 8 on the AVX-512 path, every sample with T tokens, in one
/// function: the scatters of two samples share a loop (attention_kernels_avx512.hpp), and h, r,
/// g never leave registers (g is the gather's table); V, Vᵀ (V_transposed, column-major) and
/// G_V stay in registers for the whole call. Each sample is finished (products, loss, gather)
/// before the next, so every sum gets its terms in sample order, as in accumulate_sample.
template <int N>
__attribute__((target("avx512f"))) void accumulate_small_avx512(const double* V, const double* V_transposed,
                                                                const Eigen::MatrixXd& A,
                                                                std::span<const Example> samples, int T,
                                                                BatchGradient& sums) {
  double* G_V = sums.V.data();
  constexpr auto valid = static_cast<__mmask8>((1U << N) - 1U);
  __m512d column[N], row[N], gradient[N];
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) {
    column[j] = _mm512_maskz_loadu_pd(valid, V + N * j);
    row[j] = _mm512_maskz_loadu_pd(valid, V_transposed + N * j);
    gradient[j] = _mm512_maskz_loadu_pd(valid, G_V + N * j);
  }
  for (std::size_t first = 0; first < samples.size(); first += 2) {
    const std::size_t count = std::min<std::size_t>(2, samples.size() - first);
    const std::array<const int*, 2> tokens{samples[first].tokens.data(), samples[first + count - 1].tokens.data()};
    const std::array<const double*, 2> attention{A.col(samples[first].query).data(),
                                                 A.col(samples[first + count - 1].query).data()};
    __m512d h[2];
    if (count == 2) {
      detail::scatter_lanes8_registers<N, 2>(tokens.data(), attention.data(), T, h);
    } else {
      detail::scatter_lanes8_registers<N, 1>(tokens.data(), attention.data(), T, h);
    }
    for (std::size_t i = 0; i < count; ++i) {
      const Example& sample = samples[first + i];
      __m512d g;
      double loss;
      sample_products_avx512<N>(column, row, gradient, h[i], sample.output, g, loss);
      count_sample(sample.query, loss, sums);
      detail::gather_registers<1>(&g, tokens[i], T, sums.A.col(sample.query).data());
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) _mm512_mask_storeu_pd(G_V + N * j, valid, gradient[j]);
}

/// The same for 8 < N ≤ 32, N at run time, each N-vector in `Blocks` registers of eight; V, Vᵀ
/// and G_V are read from memory (L1) as the scalar path does.
template <int Blocks>
__attribute__((target("avx512f"))) void group_products_blocks_avx512(int N, const double* V,
                                                                     const double* V_transposed,
                                                                     GroupProducts& group, double* G_V) {
  __mmask8 valid[Blocks];
  int lanes[Blocks];
#pragma GCC unroll 4
  for (int b = 0; b < Blocks; ++b) {
    lanes[b] = std::min(N - 8 * b, 8);
    valid[b] = static_cast<__mmask8>((1U << lanes[b]) - 1U);
  }
  for (std::size_t s = 0; s < group.size; ++s) {
    const double* h = group.h[s];
    __m512d r[Blocks];
#pragma GCC unroll 4
    for (int b = 0; b < Blocks; ++b) r[b] = _mm512_setzero_pd();
    for (int j = 0; j < N; ++j) {
      const __m512d h_j = _mm512_set1_pd(h[j]);
#pragma GCC unroll 4
      for (int b = 0; b < Blocks; ++b) {
        r[b] = _mm512_sub_pd(r[b], _mm512_mul_pd(_mm512_maskz_loadu_pd(valid[b], V + N * j + 8 * b), h_j));
      }
    }
    const int output = group.output[s];
#pragma GCC unroll 4
    for (int b = 0; b < Blocks; ++b) {
      const auto is_output = static_cast<__mmask8>(output / 8 == b ? 1U << (output % 8) : 0U);
      r[b] = _mm512_mask_add_pd(r[b], is_output, r[b], _mm512_set1_pd(1.0));
    }
    __m512d g[Blocks];
#pragma GCC unroll 4
    for (int b = 0; b < Blocks; ++b) g[b] = _mm512_setzero_pd();
#pragma GCC unroll 4
    for (int b = 0; b < Blocks; ++b) {
      for (int l = 0; l < lanes[b]; ++l) {
        const int i = 8 * b + l;
        const __m512d r_i = _mm512_permutexvar_pd(_mm512_set1_epi64(l), r[b]);
#pragma GCC unroll 4
        for (int c = 0; c < Blocks; ++c) {
          g[c] = _mm512_add_pd(g[c], _mm512_mul_pd(_mm512_maskz_loadu_pd(valid[c], V_transposed + N * i + 8 * c), r_i));
        }
      }
    }
    for (int j = 0; j < N; ++j) {
      const __m512d h_j = _mm512_set1_pd(h[j]);
#pragma GCC unroll 4
      for (int b = 0; b < Blocks; ++b) {
        double* gradient = G_V + N * j + 8 * b;
        _mm512_mask_storeu_pd(gradient, valid[b],
                              _mm512_sub_pd(_mm512_maskz_loadu_pd(valid[b], gradient), _mm512_mul_pd(r[b], h_j)));
      }
    }
#pragma GCC unroll 4
    for (int b = 0; b < Blocks; ++b) {
      _mm512_mask_storeu_pd(group.r[s] + 8 * b, valid[b], r[b]);
      _mm512_mask_storeu_pd(group.g[s] + 8 * b, valid[b], g[b]);
    }
    group.loss[s] = half_squared_norm(group.r[s], N);
  }
}

#pragma GCC diagnostic pop

using AccumulateSmallAvx512 = void (*)(const double*, const double*, const Eigen::MatrixXd&, std::span<const Example>,
                                       int, BatchGradient&);
constexpr AccumulateSmallAvx512 kAccumulateSmallAvx512[8] = {
    accumulate_small_avx512<1>, accumulate_small_avx512<2>, accumulate_small_avx512<3>, accumulate_small_avx512<4>,
    accumulate_small_avx512<5>, accumulate_small_avx512<6>, accumulate_small_avx512<7>, accumulate_small_avx512<8>};

#endif

/// The N² products and losses of a group (N ≤ 32) on `path`: the same bits on every path (for
/// N ≤ 8 the AVX-512 path uses accumulate_small_avx512 instead, when every T is the same).
/// V_transposed is Vᵀ, column-major, read by the AVX-512 path only.
void group_products(KernelPath path, int N, const double* V, const double* V_transposed, GroupProducts& group,
                    double* G_V) {
#if DYNCHECK_SCB_X86_KERNELS
  if (path == KernelPath::avx512 && N > 8) {
    if (N <= 16) return group_products_blocks_avx512<2>(N, V, V_transposed, group, G_V);
    if (N <= 24) return group_products_blocks_avx512<3>(N, V, V_transposed, group, G_V);
    return group_products_blocks_avx512<4>(N, V, V_transposed, group, G_V);
  }
#else
  (void)path;
  (void)V_transposed;
#endif
  for (std::size_t s = 0; s < group.size; ++s) {
    small_products(N, V, group.h[s], group.output[s], group.r[s], G_V, group.g[s]);
    group.loss[s] = half_squared_norm(group.r[s], N);
  }
}

/// N > 32: Eigen's vectorised matrix-vector kernels (a strict-order scalar loop cannot vectorise
/// the dot products under -ffp-contract=off without -ffast-math). h, r, g are scratch.
double large_sample(KernelPath path, const LinearModel& model, const Example& example, BatchGradient& sums,
                    Eigen::VectorXd& h, Eigen::VectorXd& r, Eigen::VectorXd& g) {
  const auto N = static_cast<int>(model.V.rows());
  const int T = static_cast<int>(example.tokens.size());
  scatter_attention(path, example.tokens.data(), model.A.col(example.query).data(), T, N, h.data());
  r.noalias() = -model.V * h;
  r(example.output) += 1.0;
  sums.V.noalias() -= r * h.transpose();
  g.noalias() = model.V.transpose() * r;
  const double loss = half_squared_norm(r.data(), N);
  gather_attention_gradient(path, example.tokens.data(), g.data(), T, N, sums.A.col(example.query).data());
  count_sample(example.query, loss, sums);
  return loss;
}

/// h, r, g for N > 32: one set per thread, grown on demand, so that no call allocates once warm.
/// Scratch only: every entry is written before it is read, so nothing carries from one call to the
/// next (VectorXd storage, aligned as Eigen aligns it, so its products see the same alignment).
struct LargeScratch {
  Eigen::VectorXd h, r, g;
};

LargeScratch& large_scratch(int N) {
  thread_local LargeScratch scratch;
  if (scratch.h.size() != N) {
    scratch.h.resize(N);
    scratch.r.resize(N);
    scratch.g.resize(N);
  }
  return scratch;
}

}  // namespace

double accumulate_sample(KernelPath path, const LinearModel& model, const Example& example, BatchGradient& sums) {
  const auto N = static_cast<int>(model.V.rows());
  if (N > kMaxSmallN) {
    LargeScratch& scratch = large_scratch(N);
    return large_sample(path, model, example, sums, scratch.h, scratch.r, scratch.g);
  }
  const int T = static_cast<int>(example.tokens.size());
  alignas(64) std::array<double, kMaxSmallN> h, r, g;
  scatter_attention(path, example.tokens.data(), model.A.col(example.query).data(), T, N, h.data());
  small_products(N, model.V.data(), h.data(), example.output, r.data(), sums.V.data(), g.data());
  const double loss = half_squared_norm(r.data(), N);
  gather_attention_gradient(path, example.tokens.data(), g.data(), T, N, sums.A.col(example.query).data());
  count_sample(example.query, loss, sums);
  return loss;
}

void accumulate_samples(KernelPath path, const LinearModel& model, std::span<const Example> examples,
                        BatchGradient& sums) {
  const auto N = static_cast<int>(model.V.rows());
  if (examples.empty()) return;
  if (N > kMaxSmallN) {
    LargeScratch& scratch = large_scratch(N);
    for (const Example& example : examples) large_sample(path, model, example, sums, scratch.h, scratch.r, scratch.g);
    return;
  }
  const double* V = model.V.data();
  double* G_V = sums.V.data();
  // Vᵀ for the lane-wise g = Vᵀr of the AVX-512 path (the other paths never read it); made before
  // the first scatter, so that its stores are done before the vector loads of the products read them.
  alignas(64) std::array<double, kMaxSmallN * kMaxSmallN> V_transposed;
  if (path == KernelPath::avx512) {
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j < N; ++j) V_transposed[static_cast<std::size_t>(N * i + j)] = V[N * j + i];
    }
  }
#if DYNCHECK_SCB_X86_KERNELS
  if (path == KernelPath::avx512 && N <= 8) {
    const std::size_t T = examples.front().tokens.size();
    bool same_T = true;
    for (const Example& example : examples) same_T = same_T && example.tokens.size() == T;
    if (same_T) {
      return kAccumulateSmallAvx512[N - 1](V, V_transposed.data(), model.A, examples, static_cast<int>(T), sums);
    }
  }
#endif
  constexpr std::size_t group = kGradientGroup;
  alignas(64) std::array<std::array<double, kMaxSmallN>, group> h, r, g;
  GroupProducts products;
  for (std::size_t i = 0; i < group; ++i) {
    products.h[i] = h[i].data();
    products.r[i] = r[i].data();
    products.g[i] = g[i].data();
  }
  for (std::size_t first = 0; first < examples.size(); first += group) {
    const std::size_t size = std::min(group, examples.size() - first);
    const Example* batch = examples.data() + first;
    for (std::size_t i = 0; i < size; ++i) {
      scatter_attention(path, batch[i].tokens.data(), model.A.col(batch[i].query).data(),
                        static_cast<int>(batch[i].tokens.size()), N, h[i].data());
    }
    products.size = size;
    for (std::size_t i = 0; i < size; ++i) products.output[i] = batch[i].output;
    group_products(path, N, V, V_transposed.data(), products, G_V);
    for (std::size_t i = 0; i < size; ++i) count_sample(batch[i].query, products.loss[i], sums);
    for (std::size_t i = 0; i < size; ++i) {
      gather_attention_gradient(path, batch[i].tokens.data(), g[i].data(), static_cast<int>(batch[i].tokens.size()),
                                N, sums.A.col(batch[i].query).data());
    }
  }
}

}  // namespace detail
}  // namespace dyncheck::sim::scb
