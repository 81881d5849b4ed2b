#pragma once
// Unbiased uniform integer in {0, ..., n-1}: Lemire's multiply-and-reject.

#include <cstdint>

#include "dyncheck/sim/detail/throw_invalid_argument.hpp"
#include "dyncheck/sim/random/xoshiro256plusplus.hpp"

namespace dyncheck::sim {

namespace detail {

struct Product128 {
  std::uint64_t high;
  std::uint64_t low;
};

/// The full 128-bit product of two 64-bit words from 32-bit halves (portable reference).
constexpr Product128 multiply_64x64_portable(std::uint64_t a, std::uint64_t b) noexcept {
  const std::uint64_t a_lo = a & 0xffffffffU;
  const std::uint64_t a_hi = a >> 32U;
  const std::uint64_t b_lo = b & 0xffffffffU;
  const std::uint64_t b_hi = b >> 32U;
  const std::uint64_t lo_lo = a_lo * b_lo;
  const std::uint64_t hi_lo = a_hi * b_lo;
  const std::uint64_t lo_hi = a_lo * b_hi;
  const std::uint64_t hi_hi = a_hi * b_hi;
  const std::uint64_t cross = (lo_lo >> 32U) + (hi_lo & 0xffffffffU) + lo_hi;
  return {hi_hi + (hi_lo >> 32U) + (cross >> 32U), (cross << 32U) | (lo_lo & 0xffffffffU)};
}

/// The full 128-bit product; one `mul` instruction where the compiler has a 128-bit type.
constexpr Product128 multiply_64x64(std::uint64_t a, std::uint64_t b) noexcept {
#if defined(__SIZEOF_INT128__)
  __extension__ using uint128 = unsigned __int128;  // __extension__: no -Wpedantic warning
  const uint128 product = static_cast<uint128>(a) * b;
  return {static_cast<std::uint64_t>(product >> 64U), static_cast<std::uint64_t>(product)};
#else
  return multiply_64x64_portable(a, b);
#endif
}

}  // namespace detail

/**
 * Uniform on \f$\{0, \dots, n-1\}\f$, exactly, by Lemire's nearly divisionless method
 * (D. Lemire, "Fast random integer generation in an interval", ACM TOMACS 29(1), 2019):
 * for a 64-bit output \f$x\f$, let \f$x n = 2^{64} h + l\f$. Accept \f$h\f$ unless
 * \f$l < (2^{64} - n) \bmod n\f$, in which case draw again. Each \f$h\f$ is then hit by
 * exactly \f$\lfloor 2^{64}/n \rfloor\f$ accepted words, so there is no modulo bias. The
 * division is done only when \f$l < n\f$, i.e. with probability \f$< n/2^{64}\f$; the expected
 * number of draws is below \f$2^{64}/(2^{64}-n) \le 2\f$.
 *
 * Throws std::invalid_argument for n = 0.
 */
inline std::uint64_t uniform_index(Rng& rng, std::uint64_t n) {
  if (n == 0) detail::throw_invalid_argument("uniform_index", "n must be >= 1", n);
  detail::Product128 m = detail::multiply_64x64(rng(), n);
  if (m.low < n) {
    const std::uint64_t threshold = (std::uint64_t{0} - n) % n;  // (2^64 - n) mod n
    while (m.low < threshold) m = detail::multiply_64x64(rng(), n);
  }
  return m.high;
}

}  // namespace dyncheck::sim
