// dyncheck/theory/multihead/cube.hpp
//
// Exact expectations over the Boolean cube {±1}^{k×d} by enumeration (specs/multihead.md B.4),
// templated on the scalar, with a summation order fixed by the cube alone:
//   - the 2^{kd} inputs are cut into blocks of `cube_block` consecutive indices (fewer when the
//     cube is smaller); a block is summed sequentially in index order;
//   - the block sums are combined pairwise, in a binary tree fixed by the number of blocks.
// Threads take whole blocks, so the result is bit-identical for every thread count. Round-off:
// a block sum carries at most (L - 1) eps of the sum of |terms| (L = block length) and the tree
// log2(blocks) eps more (Higham, Accuracy and Stability, §4.2 and §4.3), so
//   |computed - exact| <= (L + kd) eps E|g|  (entrywise, on top of the terms' own errors):
// cube_summation_error() returns that factor (L + kd) eps. The final division by 2^{kd} is exact.
//
// Input index i ↦ X with X(a, b) = -1 when bit a·d + b of i is set, +1 otherwise.
//
// A biased cube (the "non-symmetric sampler" control): each entry is +1 with probability p
// instead of 1/2; the expectation is then Σ_i w_i g(X_i), w_i = p^{#(+1)} (1-p)^{#(-1)}, summed
// in the same fixed order (cube_expectation_biased).
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace dyncheck::theory::multihead {

/// Inputs per sequentially summed block.
inline constexpr std::uint64_t cube_block = 256;
/// Largest k·d the enumeration accepts (2^26 inputs): a guard against overflow and runaway cost;
/// the claims refuse much smaller cubes by their cost model.
inline constexpr int max_cube_bits = 26;

/// The input with index `index` on {±1}^{k×d}.
template <class S>
void cube_input(std::uint64_t index, int k, int d, Matrix<S>& X) {
  X.resize(k, d);
  for (int a = 0; a < k; ++a) {
    for (int b = 0; b < d; ++b) {
      X(a, b) = ((index >> static_cast<unsigned>(a * d + b)) & 1U) != 0 ? S(-1) : S(1);
    }
  }
}

/// The relative summation-error factor (L + kd) eps_S of cube_expectation (see the header).
template <class S>
double cube_summation_error(int k, int d) {
  const int bits = k * d;
  const double inputs = static_cast<double>(std::uint64_t{1} << static_cast<unsigned>(bits));
  const double block = std::min(inputs, static_cast<double>(cube_block));
  return (block + bits) * to_double(std::numeric_limits<S>::epsilon());
}

namespace detail {

inline void check_cube(int k, int d) {
  if (k < 1 || d < 1 || k * d > max_cube_bits) {
    throw std::invalid_argument("cube_expectation: need k >= 1, d >= 1 and k*d <= " + std::to_string(max_cube_bits) +
                                ", got k = " + std::to_string(k) + ", d = " + std::to_string(d));
  }
}

/// Pairwise sum of parts[begin, end) in the fixed tree (split at the midpoint).
template <class S>
Matrix<S> pairwise(const std::vector<Matrix<S>>& parts, std::size_t begin, std::size_t end) {
  if (end - begin == 1) return parts[begin];
  const std::size_t middle = begin + (end - begin) / 2;
  Matrix<S> left = pairwise(parts, begin, middle);
  left += pairwise(parts, middle, end);
  return left;
}

/// Σ_i weight(i) g(X_i) in the fixed order; weight == nullptr means weight 1.
template <class S, class G, class Weight>
Matrix<S> cube_sum(int k, int d, G&& g, Weight&& weight, unsigned threads) {
  check_cube(k, d);
  const std::uint64_t inputs = std::uint64_t{1} << static_cast<unsigned>(k * d);
  const std::uint64_t block = std::min(inputs, cube_block);
  const std::uint64_t blocks = inputs / block;
  std::vector<Matrix<S>> sums(static_cast<std::size_t>(blocks));
  auto run_block = [&](std::uint64_t b) {
    Matrix<S> X;
    Matrix<S> sum;
    for (std::uint64_t i = b * block; i < (b + 1) * block; ++i) {
      cube_input<S>(i, k, d, X);
      if (i == b * block) {
        sum = weight(i) * g(X);
      } else {
        sum += weight(i) * g(X);
      }
    }
    sums[static_cast<std::size_t>(b)] = std::move(sum);
  };
  if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
  const auto workers = static_cast<unsigned>(std::min<std::uint64_t>(threads, blocks));
  if (workers <= 1) {
    for (std::uint64_t b = 0; b < blocks; ++b) run_block(b);
  } else {
    std::vector<std::exception_ptr> errors(workers);
    {
      std::vector<std::jthread> pool;
      for (unsigned t = 0; t < workers; ++t) {
        pool.emplace_back([&, t] {
          try {
            for (std::uint64_t b = t; b < blocks; b += workers) run_block(b);
          } catch (...) {
            errors[t] = std::current_exception();
          }
        });
      }
    }
    for (const std::exception_ptr& error : errors) {
      if (error) std::rethrow_exception(error);
    }
  }
  return pairwise(sums, 0, sums.size());
}

}  // namespace detail

/// E[g(X)], X uniform on {±1}^{k×d}; `g(const Matrix<S>& X)` returns a Matrix<S> of a fixed
/// shape and is called concurrently from `threads` threads (0: all cores). Bit-identical for
/// every thread count.
template <class S, class G>
Matrix<S> cube_expectation(int k, int d, G&& g, unsigned threads = 1) {
  Matrix<S> sum = detail::cube_sum<S>(k, d, g, [](std::uint64_t) { return S(1); }, threads);
  // Division by 2^{kd}: exact in binary floating point.
  return sum / S(static_cast<double>(std::uint64_t{1} << static_cast<unsigned>(k * d)));
}

/// E_p[g(X)] with each entry +1 with probability p (independently): the biased control.
template <class S, class G>
Matrix<S> cube_expectation_biased(int k, int d, const S& p, G&& g, unsigned threads = 1) {
  if (!(p > S(0) && p < S(1))) throw std::invalid_argument("cube_expectation_biased: need 0 < p < 1");
  const int bits = k * d;
  return detail::cube_sum<S>(
      k, d, g,
      [&](std::uint64_t i) {
        S w(1);
        for (int j = 0; j < bits; ++j) w *= ((i >> static_cast<unsigned>(j)) & 1U) != 0 ? S(1) - p : p;
        return w;
      },
      threads);
}

}  // namespace dyncheck::theory::multihead
