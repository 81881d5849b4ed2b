// Tests of dyncheck/sim/random/fill_standard_normal.hpp.

#include "dyncheck/sim/random/fill_standard_normal.hpp"

#include <gtest/gtest.h>

#include <Eigen/Core>

namespace dyncheck::sim {
namespace {

TEST(SimFillStandardNormal, EvenLengthEqualsTheSamplerSequence) {
  Rng a(11);
  Rng b(11);
  Eigen::VectorXd out(6);
  fill_standard_normal(a, out);
  NormalSampler sampler;
  for (Eigen::Index i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], sampler(b));
  EXPECT_EQ(a, b);
}

TEST(SimFillStandardNormal, OddLengthDiscardsTheLastSecondValue) {
  Rng a(11);
  Rng b(11);
  Eigen::VectorXd out(5);
  fill_standard_normal(a, out);
  NormalSampler sampler;
  for (Eigen::Index i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], sampler(b));
  // The engines agree: the sampler holds the discarded value, fill left nothing behind.
  EXPECT_EQ(a, b);
}

TEST(SimFillStandardNormal, WritesThroughABlockReference) {
  Rng rng(3);
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(4, 3);
  fill_standard_normal(rng, m.col(1));
  EXPECT_TRUE((m.col(0).array() == 0.0).all());
  EXPECT_TRUE((m.col(1).array() != 0.0).all());
  EXPECT_TRUE((m.col(2).array() == 0.0).all());
  Eigen::VectorXd empty(0);
  Rng untouched(3);
  fill_standard_normal(untouched, empty);
  EXPECT_EQ(untouched, Rng(3));
}

}  // namespace
}  // namespace dyncheck::sim
