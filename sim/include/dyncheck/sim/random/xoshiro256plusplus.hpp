#pragma once
// The random engine of dyncheck: xoshiro256++ (Blackman & Vigna 2021).

#include <array>
#include <cstdint>

#include "dyncheck/sim/random/splitmix64.hpp"

namespace dyncheck::sim {

/**
 * xoshiro256++ 1.0 (D. Blackman, S. Vigna, "Scrambled linear pseudorandom number generators",
 * ACM TOMS 47(4), 2021; reference code prng.di.unimi.it/xoshiro256plusplus.c).
 *
 * State \f$s \in (\{0,1\}^{64})^4 \setminus \{0\}\f$, period \f$2^{256}-1\f$. One step outputs
 * \f$\mathrm{rotl}(s_0 + s_3, 23) + s_0\f$ and applies the linear map
 * \f$t = s_1 \ll 17;\ s_2 \mathrel{\oplus}= s_0;\ s_3 \mathrel{\oplus}= s_1;\ s_1 \mathrel{\oplus}=
 * s_2; \ s_0 \mathrel{\oplus}= s_3;\ s_2 \mathrel{\oplus}= t;\ s_3 = \mathrm{rotl}(s_3, 45)\f$.
 *
 * Why this engine: it is fully specified (unlike the std distributions layered on std engines),
 * passes BigCrush and PractRand, costs about a nanosecond per 64-bit word, and has jump
 * polynomials for non-overlapping substreams. The four state words are seeded, as the authors
 * recommend, with four consecutive outputs of splitmix64 started at `seed`; those are distinct
 * images of a bijection, so the state is never all zero.
 *
 * Satisfies std::uniform_random_bit_generator, but never pass it to a std::*_distribution:
 * their algorithms are implementation-defined (numerics.md §4). Use the samplers in this folder.
 */
class Xoshiro256PlusPlus {
 public:
  using result_type = std::uint64_t;
  using state_type = std::array<std::uint64_t, 4>;

  /// Seeds the state with splitmix64(seed) outputs 1..4.
  explicit Xoshiro256PlusPlus(std::uint64_t seed) noexcept {
    std::uint64_t sm = seed;
    for (auto& word : s_) word = splitmix64_next(sm);
  }

  /// Uses `state` as is (for reference test vectors); throws std::invalid_argument if all zero.
  explicit Xoshiro256PlusPlus(const state_type& state);

  result_type operator()() noexcept {
    const std::uint64_t result = rotl(s_[0] + s_[3], 23) + s_[0];
    const std::uint64_t t = s_[1] << 17U;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }

  /// Advances the state by \f$2^{128}\f$ steps (the reference jump polynomial): gives
  /// \f$2^{128}\f$ non-overlapping subsequences of length \f$2^{128}\f$.
  void jump() noexcept;
  /// Advances the state by \f$2^{192}\f$ steps (the reference long-jump polynomial).
  void long_jump() noexcept;

  const state_type& state() const noexcept { return s_; }

  friend bool operator==(const Xoshiro256PlusPlus&, const Xoshiro256PlusPlus&) = default;

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, unsigned k) noexcept {
    return (x << k) | (x >> (64U - k));
  }
  void apply_jump(const state_type& polynomial) noexcept;

  state_type s_{};
};

using Rng = Xoshiro256PlusPlus;

}  // namespace dyncheck::sim
