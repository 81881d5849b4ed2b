// Tests of dyncheck/sim/random/derive_stream.hpp; golden values from reference_values.py.

#include "dyncheck/sim/random/derive_stream.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <string>

namespace dyncheck::sim {
namespace {

TEST(SimDeriveStream, SeedsAreGolden) {
  EXPECT_EQ(derive_seed(0, "", 0), 0xa6bbc8dcbe30928cULL);
  EXPECT_EQ(derive_seed(42, "calib.x", 0), 0x3ec23db3a2ad068dULL);
  EXPECT_EQ(derive_seed(42, "calib.x", 1), 0xcabc2da0430c2f95ULL);
  EXPECT_EQ(derive_seed(42, "calib.y", 0), 0xbc338db89fb17795ULL);
  EXPECT_EQ(derive_seed(43, "calib.x", 0), 0xd583c6d5a71a3b1bULL);
}

TEST(SimDeriveStream, FirstOutputsAreGolden) {
  Rng rng = derive_stream(42, "calib.x", 0);
  EXPECT_EQ(rng(), 0x405c756f1dfd408bULL);
  EXPECT_EQ(rng(), 0x065e9ca57dc2b856ULL);
  EXPECT_EQ(rng(), 0x7bc4ddae1f30d1c2ULL);
}

TEST(SimDeriveStream, IsAPureFunctionOfItsArguments) {
  EXPECT_EQ(derive_stream(7, "scb.escape_time_log_T/T=100", 3),
            derive_stream(7, std::string("scb.escape_time_log_T/T=100"), 3));
}

// Distinct replicates and distinct master seeds give distinct seeds by construction (each
// derivation stage is a bijection); names are distinct unless FNV-1a collides.
RC_GTEST_PROP(SimDeriveStream, DistinctReplicatesGiveDistinctStreams,
              (std::uint64_t seed, std::string name, std::uint64_t r1, std::uint64_t r2)) {
  RC_PRE(r1 != r2);
  RC_ASSERT(derive_seed(seed, name, r1) != derive_seed(seed, name, r2));
  RC_ASSERT(!(derive_stream(seed, name, r1) == derive_stream(seed, name, r2)));
}

RC_GTEST_PROP(SimDeriveStream, DistinctMasterSeedsGiveDistinctStreams,
              (std::uint64_t s1, std::uint64_t s2, std::string name, std::uint64_t replicate)) {
  RC_PRE(s1 != s2);
  RC_ASSERT(derive_seed(s1, name, replicate) != derive_seed(s2, name, replicate));
}

RC_GTEST_PROP(SimDeriveStream, DistinctNamesGiveDistinctStreams,
              (std::uint64_t seed, std::string n1, std::string n2, std::uint64_t replicate)) {
  RC_PRE(n1 != n2);
  RC_ASSERT(derive_seed(seed, n1, replicate) != derive_seed(seed, n2, replicate));
}

TEST(SimDeriveStream, SuffixedNamesDiffer) {
  EXPECT_NE(derive_seed(1, "calib.a", 0), derive_seed(1, "calib.a/eta=0.05", 0));
  EXPECT_NE(derive_seed(1, "calib.a/eta=0.05", 0), derive_seed(1, "calib.a/eta=0.1", 0));
}

}  // namespace
}  // namespace dyncheck::sim
