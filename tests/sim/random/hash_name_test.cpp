// Tests of dyncheck/sim/random/hash_name.hpp against published FNV-1a 64 values.

#include "dyncheck/sim/random/hash_name.hpp"

#include <gtest/gtest.h>

#include <string_view>

namespace dyncheck::sim {
namespace {

TEST(SimHashName, MatchesKnownFnv1aValues) {
  static_assert(hash_name("") == 0xcbf29ce484222325ULL);  // the offset basis
  EXPECT_EQ(hash_name(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(hash_name("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(hash_name("foobar"), 0x85944171f73967e8ULL);
  EXPECT_EQ(hash_name("calib.sgd_mean_matches_gradient_flow/eta=0.05"), 0x37b3c53ec18907b7ULL);
}

TEST(SimHashName, HashesBytesNotCharacters) {
  // A byte >= 0x80 must be hashed as unsigned (a signed char would sign-extend into the xor).
  constexpr std::string_view high("\xff", 1);
  EXPECT_EQ(hash_name(high), (0xcbf29ce484222325ULL ^ 0xffULL) * 0x100000001b3ULL);
}

}  // namespace
}  // namespace dyncheck::sim
