// Fixed-order dense products of sim/kernels (products.hpp): a portable path and an AVX2 path built from the
// same source. The kernel bodies are always_inline templates on GCC vector extensions (two doubles, an SSE2
// register, on the portable path; four, an AVX register, on the AVX2 path: only how many entries are done at
// once differs); element-wise multiplies and adds only,
// nothing an FMA could contract, and the library is built with -ffp-contract=off anyway. Both paths call the
// same bodies, so every entry sees the same operations in the same order.

#include "dyncheck/sim/kernels/products.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "dyncheck/sim/detail/throw_invalid_argument.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#define DYNCHECK_KERNELS_X86_PATHS 1
#else
#define DYNCHECK_KERNELS_X86_PATHS 0
#endif

#define DYNCHECK_KERNELS_INLINE inline __attribute__((always_inline))

namespace dyncheck::sim::kernels {
namespace fixed_order {
namespace {

// Two doubles (an SSE2 register: the portable path) and four (an AVX register: the AVX2 path); passed by
// reference only (a by-value vector argument would change the ABI between paths).
typedef double v2d __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));

template <typename V>
constexpr int lanes = static_cast<int>(sizeof(V) / sizeof(double));

template <typename V>
DYNCHECK_KERNELS_INLINE void load(V& v, const double* p) {
  std::memcpy(&v, p, sizeof v);
}
template <typename V>
DYNCHECK_KERNELS_INLINE void store(double* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}

/// Rows [R W) x columns [Cols) of C (W = the lanes of V), the inner index left to right.
template <typename V, int R, int Cols>
DYNCHECK_KERNELS_INLINE void block(bool accumulate, int K, const double* A, std::ptrdiff_t lda, const double* B,
                                   std::ptrdiff_t bk, std::ptrdiff_t bj, double* C, std::ptrdiff_t ldc) {
  V c[R][Cols];
  int k = 0;
  if (accumulate) {
    #pragma GCC unroll 8
    for (int j = 0; j < Cols; ++j) {
      #pragma GCC unroll 8
      for (int r = 0; r < R; ++r) load(c[r][j], C + lanes<V> * r + j * ldc);
    }
  } else {
    V a[R];
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r) load(a[r], A + lanes<V> * r);
    #pragma GCC unroll 8
    for (int j = 0; j < Cols; ++j) {
      const double b = B[j * bj];
      #pragma GCC unroll 8
      for (int r = 0; r < R; ++r) c[r][j] = a[r] * b;
    }
    k = 1;
  }
  for (; k < K; ++k) {
    V a[R];
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r) load(a[r], A + lanes<V> * r + k * lda);
    const double* b = B + k * bk;
    #pragma GCC unroll 8
    for (int j = 0; j < Cols; ++j) {
      const double bv = b[j * bj];
      #pragma GCC unroll 8
      for (int r = 0; r < R; ++r) c[r][j] += a[r] * bv;
    }
  }
  #pragma GCC unroll 8
  for (int j = 0; j < Cols; ++j) {
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r) store(C + lanes<V> * r + j * ldc, c[r][j]);
  }
}

template <typename V, int R>
DYNCHECK_KERNELS_INLINE void row_block(bool accumulate, int n, int K, const double* A, std::ptrdiff_t lda,
                                       const double* B, std::ptrdiff_t bk, std::ptrdiff_t bj, double* C,
                                       std::ptrdiff_t ldc) {
  int j = 0;
  for (; j + 4 <= n; j += 4) block<V, R, 4>(accumulate, K, A, lda, B + j * bj, bk, bj, C + j * ldc, ldc);
  switch (n - j) {
    case 3:
      block<V, R, 3>(accumulate, K, A, lda, B + j * bj, bk, bj, C + j * ldc, ldc);
      break;
    case 2:
      block<V, R, 2>(accumulate, K, A, lda, B + j * bj, bk, bj, C + j * ldc, ldc);
      break;
    case 1:
      block<V, R, 1>(accumulate, K, A, lda, B + j * bj, bk, bj, C + j * ldc, ldc);
      break;
    default:
      break;
  }
}

/// The rows left over after the blocks of four, one entry at a time in the same order.
DYNCHECK_KERNELS_INLINE void rows_scalar(bool accumulate, int i0, int m, int n, int K, const double* A,
                                         std::ptrdiff_t lda, const double* B, std::ptrdiff_t bk, std::ptrdiff_t bj,
                                         double* C, std::ptrdiff_t ldc) {
  for (int j = 0; j < n; ++j) {
    for (int i = i0; i < m; ++i) {
      double s;
      int k = 0;
      if (accumulate) {
        s = C[i + j * ldc];
      } else {
        s = A[i] * B[j * bj];
        k = 1;
      }
      for (; k < K; ++k) s += A[i + k * lda] * B[k * bk + j * bj];
      C[i + j * ldc] = s;
    }
  }
}

/// V: the vector type; MaxR: the most vectors of rows per block (2 x 4 accumulators fill 8 of the 16 registers).
template <typename V, int MaxR>
DYNCHECK_KERNELS_INLINE void product_body(bool accumulate, int m, int n, int K, const double* A, std::ptrdiff_t lda,
                                          const double* B, std::ptrdiff_t bk, std::ptrdiff_t bj, double* C,
                                          std::ptrdiff_t ldc) {
  constexpr int W = lanes<V>;
  int i = 0;
  if constexpr (MaxR >= 2) {
    for (; i + 2 * W <= m; i += 2 * W) row_block<V, 2>(accumulate, n, K, A + i, lda, B, bk, bj, C + i, ldc);
  }
  for (; i + W <= m; i += W) row_block<V, 1>(accumulate, n, K, A + i, lda, B, bk, bj, C + i, ldc);
  if (i < m) rows_scalar(accumulate, i, m, n, K, A, lda, B, bk, bj, C, ldc);
}

template <typename V>
DYNCHECK_KERNELS_INLINE void squared_distances_body(int n, int p, const double* Q, std::ptrdiff_t ldq,
                                                    const double* K, std::ptrdiff_t ldk, double* L,
                                                    std::ptrdiff_t ldl) {
  constexpr int W = lanes<V>;
  for (int b = 0; b < n; ++b) {
    int a = 0;
    for (; a + W <= n; a += W) {
      V s = {};
      for (int j = 0; j < p; ++j) {
        V q;
        load(q, Q + a + j * ldq);
        const V diff = q - K[b + j * ldk];
        s += diff * diff;
      }
      store(L + a + b * ldl, s);
    }
    for (; a < n; ++a) {
      double s = 0;
      for (int j = 0; j < p; ++j) {
        const double diff = Q[a + j * ldq] - K[b + j * ldk];
        s += diff * diff;
      }
      L[a + b * ldl] = s;
    }
  }
}

void product_portable(bool accumulate, int m, int n, int K, const double* A, std::ptrdiff_t lda, const double* B,
                      std::ptrdiff_t bk, std::ptrdiff_t bj, double* C, std::ptrdiff_t ldc) {
  product_body<v2d, 2>(accumulate, m, n, K, A, lda, B, bk, bj, C, ldc);
}

void squared_distances_portable(int n, int p, const double* Q, std::ptrdiff_t ldq, const double* K,
                                std::ptrdiff_t ldk, double* L, std::ptrdiff_t ldl) {
  squared_distances_body<v2d>(n, p, Q, ldq, K, ldk, L, ldl);
}

#if DYNCHECK_KERNELS_X86_PATHS
__attribute__((target("avx2"))) void product_avx2(bool accumulate, int m, int n, int K, const double* A,
                                                  std::ptrdiff_t lda, const double* B, std::ptrdiff_t bk,
                                                  std::ptrdiff_t bj, double* C, std::ptrdiff_t ldc) {
  product_body<v4d, 2>(accumulate, m, n, K, A, lda, B, bk, bj, C, ldc);
}

__attribute__((target("avx2"))) void squared_distances_avx2(int n, int p, const double* Q, std::ptrdiff_t ldq,
                                                            const double* K, std::ptrdiff_t ldk, double* L,
                                                            std::ptrdiff_t ldl) {
  squared_distances_body<v4d>(n, p, Q, ldq, K, ldk, L, ldl);
}
#endif

bool cpu_runs(SimdPath path) {
  if (path == SimdPath::portable) return true;
#if DYNCHECK_KERNELS_X86_PATHS
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
#else
  return false;
#endif
}

}  // namespace

void product(SimdPath path, bool accumulate, int m, int n, int K, const double* A, std::ptrdiff_t lda,
             const double* B, std::ptrdiff_t bk, std::ptrdiff_t bj, double* C, std::ptrdiff_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (K <= 0) sim::detail::throw_invalid_argument("sim::kernels::product", "the inner dimension must be >= 1",
                                                static_cast<double>(K));
#if DYNCHECK_KERNELS_X86_PATHS
  if (path == SimdPath::avx2) {
    product_avx2(accumulate, m, n, K, A, lda, B, bk, bj, C, ldc);
    return;
  }
#else
  (void)path;
#endif
  product_portable(accumulate, m, n, K, A, lda, B, bk, bj, C, ldc);
}

void squared_distances(SimdPath path, int n, int p, const double* Q, std::ptrdiff_t ldq, const double* K,
                       std::ptrdiff_t ldk, double* L, std::ptrdiff_t ldl) {
#if DYNCHECK_KERNELS_X86_PATHS
  if (path == SimdPath::avx2) {
    squared_distances_avx2(n, p, Q, ldq, K, ldk, L, ldl);
    return;
  }
#else
  (void)path;
#endif
  squared_distances_portable(n, p, Q, ldq, K, ldk, L, ldl);
}

double sum_squares(const double* x, std::ptrdiff_t size) {
  double p[4] = {0.0, 0.0, 0.0, 0.0};
  std::ptrdiff_t i = 0;
  for (; i + 4 <= size; i += 4) {
#pragma GCC unroll 4
    for (int l = 0; l < 4; ++l) p[l] += x[i + l] * x[i + l];
  }
  for (; i < size; ++i) p[0] += x[i] * x[i];
  return (p[0] + p[1]) + (p[2] + p[3]);
}

}  // namespace fixed_order

std::vector<SimdPath> available_simd_paths() {
  std::vector<SimdPath> paths;
  for (const SimdPath path : {SimdPath::portable, SimdPath::avx2}) {
    if (fixed_order::cpu_runs(path)) paths.push_back(path);
  }
  return paths;
}

const char* simd_path_name(SimdPath path) noexcept { return path == SimdPath::avx2 ? "avx2" : "portable"; }

namespace {
SimdPath widest_path() {
  static const SimdPath widest = fixed_order::cpu_runs(SimdPath::avx2) ? SimdPath::avx2 : SimdPath::portable;
  return widest;
}
thread_local bool path_chosen = false;
thread_local SimdPath chosen_path = SimdPath::portable;
}  // namespace

SimdPath simd_path() noexcept { return path_chosen ? chosen_path : widest_path(); }

void use_simd_path(SimdPath path) {
  if (!fixed_order::cpu_runs(path)) {
    throw std::invalid_argument(std::string("sim::kernels::use_simd_path: this CPU does not run the ") +
                                simd_path_name(path) + " path");
  }
  chosen_path = path;
  path_chosen = true;
}

}  // namespace dyncheck::sim::kernels
