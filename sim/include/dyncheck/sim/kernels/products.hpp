#pragma once
// Fixed-order dense products and reductions of sim/kernels (used by attention.cpp; public for the bench and tests).
//
// Every entry of a product is summed left to right over the inner index, each product rounded before its
// addition (the library is built with -ffp-contract=off, and the SIMD paths use separate multiplies and adds):
//   c = (((c_0 + a_0 b_0) + a_1 b_1) + ...) + a_{K-1} b_{K-1},
// with c_0 the destination's entry when accumulating; otherwise the sum starts at a_0 b_0. The order depends on
// nothing but K: not on the sizes' blocking, the vector width or the CPU. The portable path and the AVX2 path
// (compiled with __attribute__((target("avx2"))), called only when the CPU runs AVX2) vectorise across
// independent entries (four rows of the destination at a time) and so perform the same IEEE operations on
// every entry in the same order: their results are identical bit for bit (tests/sim/kernels checks this).
// This replaces Eigen's GEMM, whose order depends on its blocking and packet size (and whose packing dominated
// the small products of the model: 4 x 16 times 16 x 16 at (N, n, d) = (4, 4, 16)).

#include <cstddef>

#include "dyncheck/sim/kernels/attention.hpp"

namespace dyncheck::sim::kernels::fixed_order {

/// C = A B, or C + A B when `accumulate`: C is m x n with entry (i, j) at C[i + j ldc]; A is m x K with entry
/// (i, k) at A[i + k lda]; B is K x n with entry (k, j) at B[k bk + j bj] (so a transposed operand is a stride
/// swap). K >= 1. C must not overlap A or B.
void product(SimdPath path, bool accumulate, int m, int n, int K, const double* A, std::ptrdiff_t lda,
             const double* B, std::ptrdiff_t bk, std::ptrdiff_t bj, double* C, std::ptrdiff_t ldc);

/// L(a, b) = sum_j (Q(a, j) - K(b, j))^2, summed left to right over j from 0 (the squared distances of the
/// Gaussian kernel as direct differences). Q is n x p (Q[a + j ldq]), K is n x p (K[b + j ldk]), L is n x n
/// (L[a + b ldl]).
void squared_distances(SimdPath path, int n, int p, const double* Q, std::ptrdiff_t ldq, const double* K,
                       std::ptrdiff_t ldk, double* L, std::ptrdiff_t ldl);

/// sum_i x_i^2 in a fixed order: four partial sums p_{i mod 4} over the full groups of four (left to right),
/// the remaining entries added to p_0, then (p_0 + p_1) + (p_2 + p_3). The same on every path.
double sum_squares(const double* x, std::ptrdiff_t size);

}  // namespace dyncheck::sim::kernels::fixed_order
