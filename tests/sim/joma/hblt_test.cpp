// sim/joma/hblt.hpp: tree shape and the edge channel's agreement rate.
#include "dyncheck/sim/joma/hblt.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "dyncheck/sim/random/derive_stream.hpp"

namespace dyncheck::sim::joma {
namespace {

TEST(SimJomaHblt, CompleteTreeShape) {
  Rng rng = derive_stream(1, "hblt", 0);
  const LatentTree tree = complete_latent_tree(3, 2, 0.5, 0.9, 0.5, rng);
  EXPECT_EQ(tree.parent.size(), 15U);
  EXPECT_EQ(leaves(tree).size(), 8U);
}

TEST(SimJomaHblt, EdgeAgreementRateWithinFiveSigma) {
  // One edge with rho = 0.4: P(child = parent) = 0.7; 5 sigma false-failure rate ≈ 6e-7.
  Rng rng = derive_stream(2, "hblt", 0);
  const LatentTree tree{{-1, 0}, {0, 0.4}, 0.3};
  const int n = 20000;
  int agree = 0;
  for (int i = 0; i < n; ++i) {
    const auto v = sample_latent_tree(tree, rng);
    agree += v[0] == v[1];
  }
  EXPECT_NEAR(agree / double(n), 0.7, 5 * std::sqrt(0.21 / n));
}

}  // namespace
}  // namespace dyncheck::sim::joma
