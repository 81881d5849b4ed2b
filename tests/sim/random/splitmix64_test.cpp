// Tests of dyncheck/sim/random/splitmix64.hpp.

#include "dyncheck/sim/random/splitmix64.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>

namespace dyncheck::sim {
namespace {

// The inverse of splitmix64_mix: undo each xorshift (x ^= x >> s is inverted by repeating it
// until the shifts pass 64 bits) and each odd multiplication (by the inverse mod 2^64, from
// Newton's iteration y <- y (2 - a y), which doubles the correct low bits each step).
constexpr std::uint64_t inverse_mod_2_64(std::uint64_t a) {
  std::uint64_t y = a;  // correct to 3 bits for odd a
  for (int i = 0; i < 6; ++i) y *= 2 - a * y;
  return y;
}
constexpr std::uint64_t unxorshift(std::uint64_t x, unsigned s) {
  std::uint64_t y = x;
  for (unsigned shift = s; shift < 64; shift += s) y = x ^ (y >> s);
  return y;
}
constexpr std::uint64_t splitmix64_unmix(std::uint64_t z) {
  z = unxorshift(z, 31);
  z *= inverse_mod_2_64(0x94d049bb133111ebULL);
  z = unxorshift(z, 27);
  z *= inverse_mod_2_64(0xbf58476d1ce4e5b9ULL);
  return unxorshift(z, 30);
}

TEST(SimSplitmix64, SeedZeroGivesTheReferenceOutputs) {
  // Vigna's splitmix64.c with x = 0; the first value is the widely quoted 0xe220a8397b1dcdaf.
  std::uint64_t state = 0;
  EXPECT_EQ(splitmix64_next(state), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(splitmix64_next(state), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(splitmix64_next(state), 0x06c45d188009454fULL);
  EXPECT_EQ(state, 3 * splitmix64_gamma);
}

TEST(SimSplitmix64, IsUsableAtCompileTime) {
  static_assert(splitmix64_mix(splitmix64_gamma) == 0xe220a8397b1dcdafULL);
  static_assert(splitmix64_unmix(splitmix64_mix(12345)) == 12345);
}

// derive_stream's distinctness argument needs the mixer to be a bijection.
RC_GTEST_PROP(SimSplitmix64, MixIsABijectionWithAnExplicitInverse, (std::uint64_t x)) {
  RC_ASSERT(splitmix64_unmix(splitmix64_mix(x)) == x);
  RC_ASSERT(splitmix64_mix(splitmix64_unmix(x)) == x);
}

}  // namespace
}  // namespace dyncheck::sim
