#include "dyncheck/sim/text/transformer_lm.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace dyncheck::sim::text {
namespace {

TEST(SimTextLm, UniformCausalEntropyAtBptt35) {
  // (1/35) sum_{n=1}^{35} ln n = ln(35!)/35 = 2.63251... (specs/joma.md §6: 2.6325)
  EXPECT_NEAR(uniform_causal_entropy(35), std::lgamma(36.0) / 35.0, 1e-13);
  EXPECT_NEAR(uniform_causal_entropy(35), 2.6325, 5e-5);
  EXPECT_EQ(uniform_causal_entropy(1), 0.0);
  EXPECT_THROW((void)uniform_causal_entropy(0), std::invalid_argument);
}

std::vector<std::int64_t> tokens(std::size_t n, std::int64_t vocabulary, std::uint64_t salt) {
  std::vector<std::int64_t> ids(n);
  std::uint64_t x = 0x9E3779B97F4A7C15ULL ^ salt;
  for (auto& id : ids) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    id = static_cast<std::int64_t>(x % static_cast<std::uint64_t>(vocabulary));
  }
  return ids;
}

LmConfig small(std::int64_t steps) {
  LmConfig c;
  c.vocabulary = 50;
  c.emsize = 16;
  c.layers = 2;
  c.batch = 4;
  c.eval_batch = 2;
  c.steps = steps;
  c.eval_every = 3;
  c.learning_rate = 1e-3;
  return c;
}

TEST(SimTextLm, WithoutThePluginTheErrorNamesTheInstallCommand) {
  const auto why = torch_unavailable();
  if (!why) GTEST_SKIP() << "the libtorch plugin is built; the unavailable path is not reachable";
  EXPECT_NE(why->find("libtorch-dev"), std::string::npos) << *why;
  EXPECT_THROW((void)train_transformer_lm(tokens(400, 50, 1), tokens(200, 50, 2), small(1)), std::runtime_error);
}

// The measurement path itself: with zero query/key projections the attention is uniform over the keys the
// causal mask allows, so the measured entropy must be the mean of ln n; over all keys it is ln bptt.
TEST(SimTextLm, MeasuredEntropyOfUniformCausalAttention) {
  if (const auto why = torch_unavailable()) GTEST_SKIP() << *why;
  auto c = small(0);
  c.uniform_attention = true;
  const auto run = train_transformer_lm(tokens(4000, 50, 1), tokens(2000, 50, 2), c);
  ASSERT_EQ(run.checkpoints.size(), 1u);
  for (std::size_t l = 0; l < 2; ++l) {
    // float32 softmax of equal logits: weights 1/n to ~1e-7 relative, entropy to ~1e-6
    EXPECT_NEAR(run.checkpoints[0].entropy[l], uniform_causal_entropy(35), 1e-5);
    EXPECT_NEAR(run.checkpoints[0].entropy_all_keys[l], std::log(35.0), 1e-5);
  }
}

// Plumbing: a few steps train, checkpoints at 0, 3, 6, 7, finite, and the same seed repeats bit for bit
// (1 thread, same process).
TEST(SimTextLm, FewStepsTrainAndRepeatWithTheSeed) {
  if (const auto why = torch_unavailable()) GTEST_SKIP() << *why;
  const auto train = tokens(4000, 50, 1), validation = tokens(2000, 50, 2);
  const auto a = train_transformer_lm(train, validation, small(7));
  const auto b = train_transformer_lm(train, validation, small(7));
  ASSERT_EQ(a.checkpoints.size(), 4u);
  EXPECT_EQ(a.checkpoints.back().step, 7);
  for (std::size_t i = 0; i < a.checkpoints.size(); ++i) {
    EXPECT_TRUE(std::isfinite(a.checkpoints[i].val_loss));
    EXPECT_EQ(a.checkpoints[i].val_loss, b.checkpoints[i].val_loss);
    EXPECT_EQ(a.checkpoints[i].entropy, b.checkpoints[i].entropy);
    ASSERT_EQ(a.checkpoints[i].entropy.size(), 2u);
    for (const double h : a.checkpoints[i].entropy) {
      EXPECT_GE(h, 0.0);
      EXPECT_LE(h, uniform_causal_entropy(35) + 1e-6);
    }
  }
  // Untrained, the logits are near uniform: the loss starts near ln 50 = 3.91.
  EXPECT_NEAR(a.checkpoints[0].val_loss, std::log(50.0), 0.5);
  auto other = small(7);
  other.seed = 2;
  EXPECT_NE(train_transformer_lm(train, validation, other).checkpoints.back().val_loss,
            a.checkpoints.back().val_loss);
  EXPECT_GT(a.tokens_per_second, 0.0);
}

// Each run has its own generator and one intra-op thread: runs in parallel repeat the sequential ones bit for bit.
TEST(SimTextLm, ParallelRunsEqualSequentialOnes) {
  if (const auto why = torch_unavailable()) GTEST_SKIP() << *why;
  const auto train = tokens(4000, 50, 1), validation = tokens(2000, 50, 2);
  auto a = small(4), b = small(4);
  b.seed = 5;
  b.learning_rate = 1e-2;
  const auto together = train_transformer_lms(train, validation, {a, b}, 2);
  const auto alone = train_transformer_lm(train, validation, b);
  ASSERT_EQ(together.size(), 2u);
  EXPECT_EQ(together[1].checkpoints.back().val_loss, alone.checkpoints.back().val_loss);
  EXPECT_EQ(together[1].checkpoints.back().entropy, alone.checkpoints.back().entropy);
  EXPECT_EQ(together[0].checkpoints.back().val_loss, train_transformer_lm(train, validation, a).checkpoints.back().val_loss);
}

TEST(SimTextLm, BadConfigIsInvalidArgument) {
  if (const auto why = torch_unavailable()) GTEST_SKIP() << *why;
  auto c = small(1);
  c.emsize = 15;
  EXPECT_THROW((void)train_transformer_lm(tokens(4000, 50, 1), tokens(2000, 50, 2), c), std::invalid_argument);
  EXPECT_THROW((void)train_transformer_lm(tokens(4000, 60, 1), tokens(2000, 50, 2), small(1)), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::sim::text
