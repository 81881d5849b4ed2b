// The linear-attention SCB model: initialisation and per-sample gradients (see model.hpp).

#include "dyncheck/sim/scb/model.hpp"

#include "dyncheck/sim/scb/attention_kernels.hpp"

#include <algorithm>

#include "attention_kernels_avx512.hpp"

namespace dyncheck::sim::scb {

LinearModel initial_model(const Instance& instance) {
  const Eigen::Index n = instance.P.rows();
  LinearModel model;
  model.V = instance.mu * Eigen::RowVectorXd::Ones(n);
  model.A = Eigen::MatrixXd::Constant(instance.T, n, 1.0 / static_cast<double>(instance.T));
  return model;
}

BatchGradient::BatchGradient(int N, int T)
    : V(Eigen::MatrixXd::Zero(N, N)),
      A(Eigen::MatrixXd::Zero(T, N)),
      count(static_cast<std::size_t>(N), 0),
      h(N),
      r(N),
      g(N) {
  for (std::size_t i = 0; i < kGroup; ++i) {
    slot_h[i].resize(N);
    slot_r[i].resize(N);
    slot_g[i].resize(N);
  }
  touched.reserve(static_cast<std::size_t>(N));
}

void BatchGradient::clear() {
  V.setZero();
  for (const int k : touched) {
    A.col(k).setZero();
    count[static_cast<std::size_t>(k)] = 0;
  }
  touched.clear();
  samples = 0;
  loss_sum = 0.0;
}

namespace {

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

/// The inputs and outputs of the N² products of up to BatchGradient::kGroup samples, in sample
/// order: h, the output token, and scratch for r (16-byte aligned, as a VectorXd's) and g; loss
/// receives ½‖r‖².
struct GroupProducts {
  std::size_t size = 0;
  std::array<const double*, BatchGradient::kGroup> h{};
  std::array<int, BatchGradient::kGroup> output{};
  std::array<double*, BatchGradient::kGroup> r{}, g{};
  std::array<double, BatchGradient::kGroup> loss{};
};

/// ½‖r‖² as the scalar path computes it: Eigen's squaredNorm of a VectorXd (its data 16-byte
/// aligned), whose summation order the AVX-512 path reproduces.
double half_squared_norm(const double* r, int N) {
  return 0.5 * Eigen::Map<const Eigen::VectorXd, Eigen::Aligned16>(r, N).squaredNorm();
}

[[gnu::always_inline]] inline void count_sample(int k, double loss, BatchGradient& sums) {
  auto& count = sums.count[static_cast<std::size_t>(k)];
  if (count++ == 0) sums.touched.push_back(k);
  ++sums.samples;
  sums.loss_sum += loss;
}

#if DYNCHECK_SCB_X86_KERNELS

// GCC 12's intrinsics fill "don't care" operands with _mm*_undefined_*() (GCC bug 105593; see
// attention_kernels_avx512.hpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

/// half_squared_norm of r (lanes < N ≤ 8) in registers, in the order of Eigen 3.4's vectorised
/// sum of the squares s_i with SSE2 (two doubles a packet) over a 16-byte aligned vector: four
/// sums c_m of the s_i with i ≡ m (mod 4), i < E₂ = 4⌊N/4⌋, in increasing i; then
/// (c_0 + c_2, c_1 + c_3); plus (s_{E₂}, s_{E₂+1}) if N mod 4 ≥ 2; the two lanes added; plus
/// s_{N−1} if N is odd. (Squares are ≥ +0 or NaN, so the sums may start from +0.)
static_assert(Eigen::internal::packet_traits<double>::size == 2,
              "half_squared_norm_avx512 reproduces Eigen's SSE2 summation order: build the library without "
              "-mavx (its SIMD kernels are chosen at run time) or change it with Eigen's packet size");
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

/// accumulate_gradients for N ≤ 8 on the AVX-512 path, every example with T tokens, in one
/// function: the scatters of two samples share a loop (attention_kernels_avx512.hpp), and h, r,
/// g never leave registers (g is the gather's table); V, Vᵀ (V_transposed, column-major) and
/// G_V stay in registers for the whole call. Each sample is finished (products, count, gather)
/// before the next, so every sum gets its terms in sample order, as in accumulate_gradient.
template <int N>
__attribute__((target("avx512f"))) void accumulate_small_avx512(const LinearModel& model, const double* V_transposed,
                                                                std::span<const Example> examples, int T,
                                                                BatchGradient& sums) {
  constexpr auto valid = static_cast<__mmask8>((1U << N) - 1U);
  const double* V = model.V.data();
  double* G_V = sums.V.data();
  __m512d column[N], row[N], gradient[N];
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) {
    column[j] = _mm512_maskz_loadu_pd(valid, V + N * j);
    row[j] = _mm512_maskz_loadu_pd(valid, V_transposed + N * j);
    gradient[j] = _mm512_maskz_loadu_pd(valid, G_V + N * j);
  }
  for (std::size_t first = 0; first < examples.size(); first += 2) {
    const std::size_t count = std::min<std::size_t>(2, examples.size() - first);
    const std::array<const int*, 2> tokens{examples[first].tokens.data(), examples[first + count - 1].tokens.data()};
    const std::array<const double*, 2> attention{model.A.col(examples[first].query).data(),
                                                 model.A.col(examples[first + count - 1].query).data()};
    __m512d h[2];
    if (count == 2) {
      detail::scatter_lanes8_registers<N, 2>(tokens.data(), attention.data(), T, h);
    } else {
      detail::scatter_lanes8_registers<N, 1>(tokens.data(), attention.data(), T, h);
    }
    for (std::size_t i = 0; i < count; ++i) {
      const Example& example = examples[first + i];
      __m512d g;
      double loss;
      sample_products_avx512<N>(column, row, gradient, h[i], example.output, g, loss);
      count_sample(example.query, loss, sums);
      detail::gather_registers<1>(&g, tokens[i], T, sums.A.col(example.query).data());
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

using AccumulateSmallAvx512 = void (*)(const LinearModel&, const double*, std::span<const Example>, int,
                                       BatchGradient&);
constexpr AccumulateSmallAvx512 kAccumulateSmallAvx512[8] = {
    accumulate_small_avx512<1>, accumulate_small_avx512<2>, accumulate_small_avx512<3>, accumulate_small_avx512<4>,
    accumulate_small_avx512<5>, accumulate_small_avx512<6>, accumulate_small_avx512<7>, accumulate_small_avx512<8>};

#endif

/// The N² products and losses of a group (N ≤ 32) on `path`: the same bits on every path (for
/// N ≤ 8 the AVX-512 path uses accumulate_small_avx512 instead).
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

}  // namespace

void accumulate_gradients(const LinearModel& model, std::span<const Example> examples, BatchGradient& sums) {
  const auto N = static_cast<int>(model.V.rows());
  if (N > 32) {
    for (const Example& example : examples) accumulate_gradient(model, example, sums);
    return;
  }
  const KernelPath path = selected_kernel_path();
  const double* V = model.V.data();
  double* G_V = sums.V.data();
  constexpr std::size_t group = BatchGradient::kGroup;
  // Vᵀ for the lane-wise g = Vᵀr of the AVX-512 path (the other paths never read it); made before
  // the first scatter, so that its stores are done before the vector loads of the products read them.
  std::array<double, 32 * 32> V_transposed;
  if (path == KernelPath::avx512) {
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j < N; ++j) V_transposed[static_cast<std::size_t>(N * i + j)] = V[N * j + i];
    }
  }
#if DYNCHECK_SCB_X86_KERNELS
  if (path == KernelPath::avx512 && N <= 8 && !examples.empty()) {
    const std::size_t T = examples.front().tokens.size();
    bool same_T = true;
    for (const Example& example : examples) same_T = same_T && example.tokens.size() == T;
    if (same_T) return kAccumulateSmallAvx512[N - 1](model, V_transposed.data(), examples, static_cast<int>(T), sums);
  }
#endif
  GroupProducts products;
  for (std::size_t i = 0; i < group; ++i) {
    products.h[i] = sums.slot_h[i].data();
    products.r[i] = sums.slot_r[i].data();
    products.g[i] = sums.slot_g[i].data();
  }
  for (std::size_t first = 0; first < examples.size(); first += group) {
    const std::size_t size = std::min(group, examples.size() - first);
    const Example* batch = examples.data() + first;
    for (std::size_t i = 0; i < size; ++i) {
      scatter_attention(path, batch[i].tokens.data(), model.A.col(batch[i].query).data(),
                        static_cast<int>(batch[i].tokens.size()), N, sums.slot_h[i].data());
    }
    products.size = size;
    for (std::size_t i = 0; i < size; ++i) products.output[i] = batch[i].output;
    group_products(path, N, V, V_transposed.data(), products, G_V);
    for (std::size_t i = 0; i < size; ++i) count_sample(batch[i].query, products.loss[i], sums);
    for (std::size_t i = 0; i < size; ++i) {
      gather_attention_gradient(path, batch[i].tokens.data(), sums.slot_g[i].data(),
                                static_cast<int>(batch[i].tokens.size()), N, sums.A.col(batch[i].query).data());
    }
  }
}

double accumulate_gradient(const LinearModel& model, const Example& example, BatchGradient& sums) {
  const int k = example.query;
  const int T = static_cast<int>(example.tokens.size());
  const auto N = static_cast<int>(model.V.rows());
  const int* tokens = example.tokens.data();
  double* h = sums.h.data();
  double* r = sums.r.data();
  double* g = sums.g.data();
  const double* V = model.V.data();
  double* G_V = sums.V.data();
  const KernelPath path = selected_kernel_path();
  scatter_attention(path, tokens, model.A.col(k).data(), T, N, h);
  if (N > 32) {
    // Large N: Eigen's vectorised matrix-vector kernels (a strict-order scalar loop cannot
    // vectorise the dot products under -ffp-contract=off without -ffast-math).
    sums.r.noalias() = -model.V * sums.h;
    sums.r(example.output) += 1.0;
    sums.V.noalias() -= sums.r * sums.h.transpose();
    sums.g.noalias() = model.V.transpose() * sums.r;
  } else {
    small_products(N, V, h, example.output, r, G_V, g);
  }
  const double loss = 0.5 * sums.r.squaredNorm();
  gather_attention_gradient(path, tokens, g, T, N, sums.A.col(k).data());
  count_sample(k, loss, sums);
  return loss;
}

double sample_loss(const LinearModel& model, const Example& example) {
  const Eigen::Index n = model.V.rows();
  Eigen::VectorXd h = Eigen::VectorXd::Zero(n);
  const auto a = model.A.col(example.query);
  for (std::size_t t = 0; t < example.tokens.size(); ++t) h(example.tokens[t]) += a(static_cast<Eigen::Index>(t));
  Eigen::VectorXd r = -model.V * h;
  r(example.output) += 1.0;
  return 0.5 * r.squaredNorm();
}

}  // namespace dyncheck::sim::scb
