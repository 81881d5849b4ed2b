// Tests of dyncheck/sim/random/xoshiro256plusplus.hpp. Golden values come from
// tests/sim/random/reference_values.py, an independent Python implementation of the reference
// C code; the jump values there are checked against A^(2^128) and A^(2^192) over GF(2).

#include "dyncheck/sim/random/xoshiro256plusplus.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <concepts>
#include <cstdint>
#include <random>
#include <stdexcept>

namespace dyncheck::sim {
namespace {

static_assert(std::uniform_random_bit_generator<Xoshiro256PlusPlus>);
static_assert(std::same_as<Rng, Xoshiro256PlusPlus>);

TEST(SimXoshiro256PlusPlus, StateOneTwoThreeFourGivesTheReferenceOutputs) {
  // First output rotl(1 + 4, 23) + 1 = 41943041 can be checked by hand.
  Rng rng(Rng::state_type{1, 2, 3, 4});
  const std::array<std::uint64_t, 6> expected = {0x2800001ULL,          0x3800067ULL,
                                                 0xcc00003800067ULL,    0xcc201994400b2ULL,
                                                 0x8012a2019ac433cdULL, 0x8a69978acdee33baULL};
  for (const std::uint64_t value : expected) EXPECT_EQ(rng(), value);
}

TEST(SimXoshiro256PlusPlus, SeedingUsesFourSplitmix64Outputs) {
  const Rng rng(0);
  const Rng::state_type expected = {0xe220a8397b1dcdafULL, 0x6e789e6aa1b965f4ULL,
                                    0x06c45d188009454fULL, 0xf88bb8a8724c81ecULL};
  EXPECT_EQ(rng.state(), expected);
}

TEST(SimXoshiro256PlusPlus, SeededOutputsAreGolden) {
  Rng zero(0);
  for (const std::uint64_t value :
       {0x53175d61490b23dfULL, 0x61da6f3dc380d507ULL, 0x5c0fdf91ec9a7bfcULL, 0x02eebf8c3bbe5e1aULL,
        0x7eca04ebaf4a5eeaULL, 0x0543c37757f08d9aULL}) {
    EXPECT_EQ(zero(), value);
  }
  Rng other(12345);
  for (const std::uint64_t value :
       {0x8d948a82def8a568ULL, 0x3477f953796702a0ULL, 0x15caa2fce6db8d69ULL, 0x2cef8853c20c6dd0ULL,
        0x43ff3fff9c039cd9ULL, 0xb9c18b4a72333287ULL}) {
    EXPECT_EQ(other(), value);
  }
}

TEST(SimXoshiro256PlusPlus, JumpEqualsTheMatrixPowerTwoTo128) {
  Rng rng(7);
  rng.jump();
  const Rng::state_type expected = {0x7eb3c0607fc567e2ULL, 0x551d653fa4de09ebULL,
                                    0x95c90b5c98ca9ef6ULL, 0x99c20c8c8db7bd5eULL};
  EXPECT_EQ(rng.state(), expected);
}

TEST(SimXoshiro256PlusPlus, LongJumpEqualsTheMatrixPowerTwoTo192) {
  Rng rng(7);
  rng.long_jump();
  const Rng::state_type expected = {0xaba5daa027b728edULL, 0x9fb151487194a6c3ULL,
                                    0x442496666662e082ULL, 0xa620cc0e867e4ec9ULL};
  EXPECT_EQ(rng.state(), expected);
}

TEST(SimXoshiro256PlusPlus, ZeroStateIsRejected) {
  EXPECT_THROW(Rng(Rng::state_type{0, 0, 0, 0}), std::invalid_argument);
}

TEST(SimXoshiro256PlusPlus, BoundsCoverAllWords) {
  EXPECT_EQ(Rng::min(), 0U);
  EXPECT_EQ(Rng::max(), 0xffffffffffffffffULL);
}

// A jump is a polynomial in the step map A, so it commutes with A.
RC_GTEST_PROP(SimXoshiro256PlusPlus, JumpCommutesWithAStep, (std::uint64_t seed)) {
  Rng jumped_then_stepped(seed);
  jumped_then_stepped.jump();
  jumped_then_stepped();
  Rng stepped_then_jumped(seed);
  stepped_then_jumped();
  stepped_then_jumped.jump();
  RC_ASSERT(jumped_then_stepped == stepped_then_jumped);
}

RC_GTEST_PROP(SimXoshiro256PlusPlus, EqualSeedsGiveEqualStreams, (std::uint64_t seed)) {
  Rng a(seed);
  Rng b(seed);
  for (int i = 0; i < 16; ++i) RC_ASSERT(a() == b());
}

}  // namespace
}  // namespace dyncheck::sim
