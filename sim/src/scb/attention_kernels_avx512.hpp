#pragma once
// Register-level pieces of the AVX-512 SCB kernels (attention_kernels.hpp), shared by the
// kernels in attention_kernels.cpp and the fused small-N accumulation in
// attention_kernels_gradient.cpp, so that both
// perform the same additions in the same order. Private to the library; include only in a
// translation unit that calls these functions after checking that the CPU runs AVX-512F.
// Additions and subtractions only: nothing an FMA could contract.

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DYNCHECK_SCB_X86_KERNELS 1
#include <immintrin.h>
#else
#define DYNCHECK_SCB_X86_KERNELS 0
#endif

#if DYNCHECK_SCB_X86_KERNELS

namespace dyncheck::sim::scb::detail {

// GCC 12's intrinsics fill "don't care" operands with _mm*_undefined_*() (a self-initialised
// variable), which -Wmaybe-uninitialized and -Wuninitialized report at every inlined use (GCC
// bug 105593). The user of these functions repeats this around its own.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

inline constexpr int kLanes8 = 8;

/// Adds the lanes of a to partial[j] where x = j (one vector of eight lanes per j). The masks
/// come from one compare of sixteen 32-bit tokens per j: bits 0-7 for the chunk of a_low, bits
/// 8-15 for that of a_high. Lanes outside `valid` have x = 0 and a = 0 from the masked loads, but are also
/// masked out, so nothing is added for them.
template <int N>
__attribute__((target("avx512f"), always_inline)) inline void lanes8_pair_avx512(__m512d* partial, __m512i x,
                                                                              __m512d a_low, __m512d a_high,
                                                                              __mmask16 valid) {
  // Keeps a in registers: GCC would otherwise fold its load into each of the N masked adds, and
  // the loads, not the adds, would limit the loop.
  __asm__("" : "+v"(a_low), "+v"(a_high));
  __mmask16 is_j[N];
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) is_j[j] = _mm512_mask_cmpeq_epi32_mask(valid, x, _mm512_set1_epi32(j));
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) partial[j] = _mm512_mask_add_pd(partial[j], static_cast<__mmask8>(is_j[j]), partial[j], a_low);
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) {
    partial[j] = _mm512_mask_add_pd(partial[j], static_cast<__mmask8>(is_j[j] >> 8U), partial[j], a_high);
  }
}

/// h_j = ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7)) of slot[j] = (p0, ..., p7) for the
/// eight slots j, in registers: pairs of slots are added lane pair by lane pair (unpack), then
/// blocks of two lanes (permute), then the halves (shuffle), and lane j of the result is h_j. The
/// operands of every addition are those of combine_lanes (sometimes swapped, which IEEE addition
/// allows). Slots not in the bit set `Used` are zero and are skipped where a whole pair or quad is.
template <unsigned Used>
__attribute__((target("avx512f"), always_inline)) inline __m512d combine_slots_avx512(const __m512d* slot) {
  // Level 1: pairs[m] lane 2i + e = p_{2i} + p_{2i+1} of slot 2m + e.
  __m512d pairs[4];
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) {
    pairs[m] = (Used >> (2 * m) & 3U) == 0U ? _mm512_setzero_pd()
                                             : _mm512_add_pd(_mm512_unpacklo_pd(slot[2 * m], slot[2 * m + 1]),
                                                             _mm512_unpackhi_pd(slot[2 * m], slot[2 * m + 1]));
  }
  // Level 2: quads[q] lane e = (p_0 + p_1) + (p_2 + p_3) and lane 4 + e = (p_4 + p_5) + (p_6 + p_7)
  // of slot 4q + e.
  __m512d quads[2];
#pragma GCC unroll 2
  for (int q = 0; q < 2; ++q) {
    const __m512d first = _mm512_mask_permutex_pd(pairs[2 * q], 0xCC, pairs[2 * q + 1], 0x4E);
    const __m512d second = _mm512_mask_permutex_pd(pairs[2 * q + 1], 0x33, pairs[2 * q], 0x4E);
    quads[q] = (Used >> (4 * q) & 15U) == 0U ? _mm512_setzero_pd() : _mm512_add_pd(first, second);
  }
  // Level 3: lane j = (lanes 0-3 of quads) + (lanes 4-7 of quads).
  return _mm512_add_pd(_mm512_shuffle_f64x2(quads[0], quads[1], 0x44), _mm512_shuffle_f64x2(quads[0], quads[1], 0xEE));
}

/// h = X a for one sample (N ≤ 8) in the eight-lane order of attention_kernels.hpp, as lane j of
/// `Samples` registers for `Samples` samples of the same T, which share one loop so that their
/// chains of dependent additions overlap (each sample's sums are exactly those of a loop of its
/// own).
template <int N, int Samples>
__attribute__((target("avx512f"), always_inline)) inline void scatter_lanes8_registers(const int* const* tokens,
                                                                                    const double* const* a, int T,
                                                                                    __m512d* h) {
  __m512d partial[Samples][N];  // partial[s][j] lane l = p_{l j} of sample s
#pragma GCC unroll 2
  for (int s = 0; s < Samples; ++s) {
#pragma GCC unroll 8
    for (int j = 0; j < N; ++j) partial[s][j] = _mm512_setzero_pd();
  }
  int t = 0;
  for (; t + 2 * kLanes8 <= T; t += 2 * kLanes8) {
#pragma GCC unroll 2
    for (int s = 0; s < Samples; ++s) {
      lanes8_pair_avx512<N>(partial[s], _mm512_loadu_si512(tokens[s] + t), _mm512_loadu_pd(a[s] + t),
                            _mm512_loadu_pd(a[s] + t + kLanes8), 0xFFFF);
    }
  }
  if (t < T) {
    // Masked loads: the lanes past T are neither read nor added.
    const auto valid = static_cast<__mmask16>((1U << (T - t)) - 1U);
#pragma GCC unroll 2
    for (int s = 0; s < Samples; ++s) {
      lanes8_pair_avx512<N>(partial[s], _mm512_maskz_loadu_epi32(valid, tokens[s] + t),
                            _mm512_maskz_loadu_pd(static_cast<__mmask8>(valid), a[s] + t),
                            _mm512_maskz_loadu_pd(static_cast<__mmask8>(valid >> 8U), a[s] + t + kLanes8), valid);
    }
  }
  constexpr unsigned used = (1U << N) - 1U;
  if constexpr (Samples == 2 && N <= 4) {
    // Both samples in one combination: sample 0 in slots 0..N−1, sample 1 in slots 4..3+N.
    __m512d slot[8];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      slot[j] = j < N ? partial[0][j] : _mm512_setzero_pd();
      slot[4 + j] = j < N ? partial[1][j] : _mm512_setzero_pd();
    }
    h[0] = combine_slots_avx512<used | used << 4U>(slot);
    h[1] = _mm512_shuffle_f64x2(h[0], h[0], 0xEE);
  } else {
#pragma GCC unroll 2
    for (int s = 0; s < Samples; ++s) {
      __m512d slot[8];
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) slot[j] = j < N ? partial[s][j] : _mm512_setzero_pd();
      h[s] = combine_slots_avx512<used>(slot);
    }
  }
}

/// g_x for eight tokens x (64-bit lanes) from g in `Tables` registers of eight: one permute for
/// N ≤ 8, a two-table permute (vpermt2pd) for N ≤ 16, two and a blend on bit 4 of x for N ≤ 32.
template <int Tables>
__attribute__((target("avx512f"), always_inline)) inline __m512d look_up_avx512(const __m512d* table, __m512i x) {
  if constexpr (Tables == 1) {
    return _mm512_permutexvar_pd(x, table[0]);
  } else if constexpr (Tables == 2) {
    return _mm512_permutex2var_pd(table[0], x, table[1]);
  } else {
    const __m512d low = _mm512_permutex2var_pd(table[0], x, table[1]);
    const __m512d high = _mm512_permutex2var_pd(table[2], x, table[3]);
    return _mm512_mask_blend_pd(_mm512_test_epi64_mask(x, _mm512_set1_epi64(16)), low, high);
  }
}

/// grad_t −= g_{x_t} for the lanes of `valid` of the chunk at `tokens` (masked loads and store:
/// the other lanes are neither read nor written).
template <int Tables>
__attribute__((target("avx512f"), always_inline)) inline void gather_chunk_avx512(const __m512d* table,
                                                                               const int* tokens, double* grad,
                                                                               __mmask8 valid) {
  const __m512i x = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(_mm512_maskz_loadu_epi32(valid, tokens)));
  const __m512d values = look_up_avx512<Tables>(table, x);
  _mm512_mask_storeu_pd(grad, valid, _mm512_sub_pd(_mm512_maskz_loadu_pd(valid, grad), values));
}

/// grad_t −= g_{x_t} for t < T, g in `Tables` registers of eight (N ≤ 8 Tables); chunks of eight
/// tokens, the last one masked.
template <int Tables>
__attribute__((target("avx512f"), always_inline)) inline void gather_registers(const __m512d* table, const int* tokens,
                                                                            int T, double* grad) {
  int t = 0;
  for (; t + kLanes8 <= T; t += kLanes8) {
    const __m512i x = _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(tokens + t)));
    _mm512_storeu_pd(grad + t, _mm512_sub_pd(_mm512_loadu_pd(grad + t), look_up_avx512<Tables>(table, x)));
  }
  if (t < T) gather_chunk_avx512<Tables>(table, tokens + t, grad + t, static_cast<__mmask8>((1U << (T - t)) - 1U));
}

#pragma GCC diagnostic pop

}  // namespace dyncheck::sim::scb::detail

#endif
