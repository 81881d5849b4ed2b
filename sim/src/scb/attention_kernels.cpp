// Scatter and gather kernels of the SCB per-sample gradient, scalar and SIMD (see
// attention_kernels.hpp; the N² products and the fused accumulation are in
// attention_kernels_gradient.cpp). The SIMD functions carry __attribute__((target)) so that the rest of
// the library stays baseline x86-64; they are called only after __builtin_cpu_supports agrees.
// They contain additions and subtractions only (nothing an FMA could contract), and the library
// is built with -ffp-contract=off anyway.

#include "dyncheck/sim/scb/attention_kernels.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "attention_kernels_avx512.hpp"

namespace dyncheck::sim::scb {

namespace {

constexpr int kLanes = 8;  // interleaved partial sums of the N ≤ 8 scatter
constexpr int kMaxLanesN = 8;  // largest N with the eight-lane order
constexpr int kMaxSmallN = 32;  // largest N with the four-lane order, and of the SIMD gathers

/// The eight-lane order's final combination of p_{0..7, j}.
double combine_lanes(const double* p) { return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7])); }

void scatter_lanes8_scalar(const int* tokens, const double* a, int T, int N, double* h) {
  double partial[kLanes][kMaxLanesN] = {};
  for (int t = 0; t < T; ++t) partial[t & (kLanes - 1)][tokens[t]] += a[t];
  for (int j = 0; j < N; ++j) {
    double lanes[kLanes];
    for (int l = 0; l < kLanes; ++l) lanes[l] = partial[l][j];
    h[j] = combine_lanes(lanes);
  }
}

/// Four partial sums (t mod 4 up to the last full group of four; the remaining tokens go to
/// p_0): repeated tokens do not chain every addition through one memory
/// cell (a store-to-load dependency per token). The paths differ only in how they fill the
/// full groups of four.
struct FourLanePartials {
  explicit FourLanePartials(int n) : N(n), p0(partial), p1(partial + n), p2(partial + 2 * n), p3(partial + 3 * n) {
    for (int j = 0; j < 4 * n; ++j) partial[j] = 0.0;
  }
  /// Adds tokens t..T−1 to p_0 and writes h_j = (p_0 + p_1) + (p_2 + p_3).
  void finish(const int* tokens, const double* a, int t, int T, double* h) {
    for (; t < T; ++t) p0[tokens[t]] += a[t];
    for (int j = 0; j < N; ++j) h[j] = (p0[j] + p1[j]) + (p2[j] + p3[j]);
  }

  double partial[4 * kMaxSmallN];
  int N;
  double *p0, *p1, *p2, *p3;
};

void scatter_lanes4_scalar(const int* tokens, const double* a, int T, int N, double* h) {
  FourLanePartials lanes(N);
  int t = 0;
  for (; t + 4 <= T; t += 4) {
    lanes.p0[tokens[t]] += a[t];
    lanes.p1[tokens[t + 1]] += a[t + 1];
    lanes.p2[tokens[t + 2]] += a[t + 2];
    lanes.p3[tokens[t + 3]] += a[t + 3];
  }
  lanes.finish(tokens, a, t, T, h);
}

void scatter_sequential(const int* tokens, const double* a, int T, int N, double* h) {
  for (int j = 0; j < N; ++j) h[j] = 0.0;
  for (int t = 0; t < T; ++t) h[tokens[t]] += a[t];
}

void gather_scalar(const int* __restrict tokens, const double* __restrict g, int T, double* __restrict grad) {
  for (int t = 0; t < T; ++t) grad[t] -= g[tokens[t]];
}

#if DYNCHECK_SCB_X86_KERNELS

// GCC 12's intrinsics fill "don't care" operands with _mm*_undefined_*() (a self-initialised
// variable), which -Wmaybe-uninitialized and -Wuninitialized report at every inlined use (GCC
// bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

template <int N>
__attribute__((target("avx512f"))) void scatter_lanes8_avx512(const int* tokens, const double* a, int T,
                                                              double* h) {
  __m512d sums;
  detail::scatter_lanes8_registers<N, 1>(&tokens, &a, T, &sums);
  _mm512_mask_storeu_pd(h, static_cast<__mmask8>((1U << N) - 1U), sums);
}

/// Adds a ∧ [x = j] to the partial sums of every j; a lane with a = +0 (the padding past T)
/// changes nothing (see the header).
template <int N>
__attribute__((target("avx2"), always_inline)) inline void lanes8_chunk_avx2(__m256d* low, __m256d* high,
                                                                          __m128i tokens_low, __m128i tokens_high,
                                                                          __m256d a_low, __m256d a_high) {
  const __m256i x_low = _mm256_cvtepi32_epi64(tokens_low);
  const __m256i x_high = _mm256_cvtepi32_epi64(tokens_high);
  for (int j = 0; j < N; ++j) {
    const __m256i jj = _mm256_set1_epi64x(j);
    low[j] = _mm256_add_pd(low[j], _mm256_and_pd(a_low, _mm256_castsi256_pd(_mm256_cmpeq_epi64(x_low, jj))));
    high[j] = _mm256_add_pd(high[j], _mm256_and_pd(a_high, _mm256_castsi256_pd(_mm256_cmpeq_epi64(x_high, jj))));
  }
}

template <int N>
__attribute__((target("avx2"))) void scatter_lanes8_avx2(const int* tokens, const double* a, int T, double* h) {
  __m256d low[N], high[N];  // lanes 0-3 and 4-7 of p_{. j}
  for (int j = 0; j < N; ++j) low[j] = high[j] = _mm256_setzero_pd();
  int t = 0;
  for (; t + kLanes <= T; t += kLanes) {
    lanes8_chunk_avx2<N>(low, high, _mm_loadu_si128(reinterpret_cast<const __m128i*>(tokens + t)),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(tokens + t + 4)), _mm256_loadu_pd(a + t),
                         _mm256_loadu_pd(a + t + 4));
  }
  if (t < T) {
    // Masked loads: past T, token 0 with weight +0, which adds nothing.
    const int rest = T - t;
    const __m256i lane = _mm256_setr_epi64x(0, 1, 2, 3);
    const __m256i mask_low = _mm256_cmpgt_epi64(_mm256_set1_epi64x(rest), lane);
    const __m256i mask_high = _mm256_cmpgt_epi64(_mm256_set1_epi64x(rest - 4), lane);
    const __m128i lane32 = _mm_setr_epi32(0, 1, 2, 3);
    const __m128i mask32_low = _mm_cmpgt_epi32(_mm_set1_epi32(rest), lane32);
    const __m128i mask32_high = _mm_cmpgt_epi32(_mm_set1_epi32(rest - 4), lane32);
    lanes8_chunk_avx2<N>(low, high, _mm_maskload_epi32(tokens + t, mask32_low),
                         _mm_maskload_epi32(tokens + t + 4, mask32_high), _mm256_maskload_pd(a + t, mask_low),
                         _mm256_maskload_pd(a + t + 4, mask_high));
  }
  for (int j = 0; j < N; ++j) {
    alignas(32) double lanes[kLanes];
    _mm256_store_pd(lanes, low[j]);
    _mm256_store_pd(lanes + 4, high[j]);
    h[j] = combine_lanes(lanes);
  }
}

/// The four-lane order of scatter_lanes4_scalar with fewer memory operations per token: the
/// tokens two at a time through one 64-bit load, the weights four at a time through one 256-bit
/// load, split in registers. Each token then costs one load and one store of its partial sum,
/// against three loads and a store in the scalar loop (measured 15% faster at N = 20, T = 5000).
__attribute__((target("avx2"))) void scatter_lanes4_avx2(const int* tokens, const double* a, int T, int N,
                                                         double* h) {
  FourLanePartials lanes(N);
  double* const p0 = lanes.p0;
  double* const p1 = lanes.p1;
  double* const p2 = lanes.p2;
  double* const p3 = lanes.p3;
  int t = 0;
  for (; t + 4 <= T; t += 4) {
    std::uint64_t x01 = 0, x23 = 0;
    std::memcpy(&x01, tokens + t, sizeof x01);
    std::memcpy(&x23, tokens + t + 2, sizeof x23);
    const auto x0 = static_cast<std::uint32_t>(x01), x1 = static_cast<std::uint32_t>(x01 >> 32U);
    const auto x2 = static_cast<std::uint32_t>(x23), x3 = static_cast<std::uint32_t>(x23 >> 32U);
    const __m256d weights = _mm256_loadu_pd(a + t);
    const __m128d a01 = _mm256_castpd256_pd128(weights), a23 = _mm256_extractf128_pd(weights, 1);
    _mm_store_sd(p0 + x0, _mm_add_sd(_mm_load_sd(p0 + x0), a01));
    _mm_store_sd(p1 + x1, _mm_add_sd(_mm_load_sd(p1 + x1), _mm_unpackhi_pd(a01, a01)));
    _mm_store_sd(p2 + x2, _mm_add_sd(_mm_load_sd(p2 + x2), a23));
    _mm_store_sd(p3 + x3, _mm_add_sd(_mm_load_sd(p3 + x3), _mm_unpackhi_pd(a23, a23)));
  }
  lanes.finish(tokens, a, t, T, h);
}

using ScatterLanes8 = void (*)(const int*, const double*, int, double*);

constexpr ScatterLanes8 kScatterAvx512[kMaxLanesN] = {
    scatter_lanes8_avx512<1>, scatter_lanes8_avx512<2>, scatter_lanes8_avx512<3>, scatter_lanes8_avx512<4>,
    scatter_lanes8_avx512<5>, scatter_lanes8_avx512<6>, scatter_lanes8_avx512<7>, scatter_lanes8_avx512<8>};
constexpr ScatterLanes8 kScatterAvx2[kMaxLanesN] = {
    scatter_lanes8_avx2<1>, scatter_lanes8_avx2<2>, scatter_lanes8_avx2<3>, scatter_lanes8_avx2<4>,
    scatter_lanes8_avx2<5>, scatter_lanes8_avx2<6>, scatter_lanes8_avx2<7>, scatter_lanes8_avx2<8>};

/// g in `Tables` registers of eight (N ≤ 8 Tables); chunks of eight tokens.
template <int Tables>
__attribute__((target("avx512f"))) void gather_avx512(const int* tokens, const double* g, int T, int N,
                                                      double* grad) {
  // Masked loads straight from g (g_j for j ≥ N is never looked up; those lanes are 0): copying
  // g to a padded table first measured slower, the vector loads waiting for the scalar stores.
  __m512d table[Tables];
#pragma GCC unroll 4
  for (int part = 0; part < Tables; ++part) {
    const int count = std::min(N - kLanes * part, kLanes);
    table[part] = count <= 0 ? _mm512_setzero_pd()
                             : _mm512_maskz_loadu_pd(static_cast<__mmask8>((1U << count) - 1U), g + kLanes * part);
  }
  detail::gather_registers<Tables>(table, tokens, T, grad);
}

#pragma GCC diagnostic pop

bool cpu_runs(KernelPath path) {
  __builtin_cpu_init();
  switch (path) {
    case KernelPath::scalar:
      return true;
    case KernelPath::avx2:
      return __builtin_cpu_supports("avx2") != 0;
    case KernelPath::avx512:
      return __builtin_cpu_supports("avx512f") != 0;
  }
  return false;
}

#else

bool cpu_runs(KernelPath path) { return path == KernelPath::scalar; }

#endif

}  // namespace

const char* kernel_path_name(KernelPath path) noexcept {
  switch (path) {
    case KernelPath::scalar:
      return "scalar";
    case KernelPath::avx2:
      return "avx2";
    case KernelPath::avx512:
      return "avx512";
  }
  return "?";
}

std::vector<KernelPath> available_kernel_paths() {
  std::vector<KernelPath> paths;
  for (const KernelPath path : {KernelPath::scalar, KernelPath::avx2, KernelPath::avx512}) {
    if (cpu_runs(path)) paths.push_back(path);
  }
  return paths;
}

KernelPath default_kernel_path() noexcept {
  // A function-local constant: initialised once (thread-safe), never written again.
  static const KernelPath widest = [] {
    KernelPath path = KernelPath::scalar;
    for (const KernelPath candidate : {KernelPath::avx2, KernelPath::avx512}) {
      if (cpu_runs(candidate)) path = candidate;
    }
    return path;
  }();
  return widest;
}

void require_kernel_path(KernelPath path) {
  if (!cpu_runs(path)) {
    throw std::invalid_argument(std::string("scb: this CPU cannot run the ") + kernel_path_name(path) +
                                " kernel path");
  }
}

void scatter_attention(KernelPath path, const int* tokens, const double* a, int T, int N, double* h) {
  if (N <= kMaxLanesN) {
#if DYNCHECK_SCB_X86_KERNELS
    if (path == KernelPath::avx512) return kScatterAvx512[N - 1](tokens, a, T, h);
    if (path == KernelPath::avx2) return kScatterAvx2[N - 1](tokens, a, T, h);
#endif
    return scatter_lanes8_scalar(tokens, a, T, N, h);
  }
  if (N <= kMaxSmallN) {
#if DYNCHECK_SCB_X86_KERNELS
    if (path != KernelPath::scalar) return scatter_lanes4_avx2(tokens, a, T, N, h);
#endif
    return scatter_lanes4_scalar(tokens, a, T, N, h);
  }
  scatter_sequential(tokens, a, T, N, h);
}

void gather_attention_gradient(KernelPath path, const int* tokens, const double* g, int T, int N, double* grad) {
#if DYNCHECK_SCB_X86_KERNELS
  if (N <= kMaxSmallN) {
    if (path == KernelPath::avx512) {
      if (N <= kLanes) return gather_avx512<1>(tokens, g, T, N, grad);
      if (N <= 2 * kLanes) return gather_avx512<2>(tokens, g, T, N, grad);
      return gather_avx512<4>(tokens, g, T, N, grad);
    }
  }
#else
  (void)path;
  (void)N;
#endif
  gather_scalar(tokens, g, T, grad);
}

}  // namespace dyncheck::sim::scb
