#pragma once
// splitmix64: the seeding generator of the xoshiro family, and the 64-bit mixer used to derive
// streams.

#include <cstdint>

namespace dyncheck::sim {

/**
 * The splitmix64 output function (Steele, Lea, Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014; constants of Vigna's public-domain splitmix64.c):
 * \f[ z \leftarrow (z \oplus (z \gg 30))\cdot\mathtt{0xbf58476d1ce4e5b9},\quad
 *     z \leftarrow (z \oplus (z \gg 27))\cdot\mathtt{0x94d049bb133111eb},\quad
 *     z \oplus (z \gg 31), \f]
 * all arithmetic modulo \f$2^{64}\f$. Every step is invertible, so the mixer is a bijection of
 * the 64-bit words; derive_stream relies on that to keep distinct inputs distinct.
 */
constexpr std::uint64_t splitmix64_mix(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31U);
}

/// The splitmix64 increment, \f$\lfloor 2^{64}/\varphi \rfloor\f$ made odd.
inline constexpr std::uint64_t splitmix64_gamma = 0x9e3779b97f4a7c15ULL;

/**
 * One step of the splitmix64 generator: advances `state` by splitmix64_gamma and returns the
 * mix of the new state. With state 0 the first output is 0xe220a8397b1dcdaf.
 */
constexpr std::uint64_t splitmix64_next(std::uint64_t& state) noexcept {
  state += splitmix64_gamma;
  return splitmix64_mix(state);
}

}  // namespace dyncheck::sim
