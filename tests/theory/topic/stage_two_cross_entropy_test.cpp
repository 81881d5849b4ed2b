// stage_two_loss with the cross-entropy loss (the per-token loss stage_two_token_loss, which the
// squared-loss tests never reach) against two closed forms that follow from the definition:
//  - Delta = c_s - c_d = 0: every logit is equal, each token loses log(v T), so L = log(v T) for any
//    theta summing to 1, any attention and either key set;
//  - E = 1 with the [MASK] keys excluded: every query sees the masses m = theta, so
//    L = sum_t theta_t (-Delta theta_t + log(v sum_s e^{Delta theta_s})).

#include "dyncheck/theory/topic/stage_two.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace dyncheck::theory::topic {
namespace {

TEST(TheoryTopicStageTwo, CrossEntropyWithEqualLogitsIsLogVT) {
  for (const StageTwoKeys keys : {StageTwoKeys::excluded, StageTwoKeys::all}) {
    StageTwoSetting<double> s;
    s.T = 4;
    s.v = 3;
    s.keys = keys;
    s.loss = StageTwoLoss::cross_entropy;
    s.c_s = 0.2;
    s.c_d = 0.2;
    s.c_M = 0.05;  // the [MASK] value leaves the cross-entropy logits Delta m_t unchanged
    const std::vector<double> theta{0.5, 0.3, 0.2, 0.0};
    const double L = stage_two_loss(s, theta, StageTwoAttention<double>{2.5, 0.4, -0.3});
    EXPECT_NEAR(L, std::log(3.0 * 4.0), 1e-14) << static_cast<int>(keys);
  }
}

TEST(TheoryTopicStageTwo, CrossEntropyAtUniformAttentionIsTheThetaSoftmaxLoss) {
  StageTwoSetting<double> s;
  s.T = 4;
  s.v = 3;
  s.keys = StageTwoKeys::excluded;
  s.loss = StageTwoLoss::cross_entropy;
  s.c_s = 0.9;
  s.c_d = -0.4;
  const double Delta = s.c_s - s.c_d;
  const std::vector<double> theta{0.5, 0.3, 0.2, 0.0};
  double z = 0;
  for (const double th : theta) z += std::exp(Delta * th);
  double expected = 0;
  for (const double th : theta) expected += th * (-Delta * th + std::log(s.v * z));
  const double L = stage_two_loss(s, theta, StageTwoAttention<double>{1.0, 0.7, -0.2});
  EXPECT_NEAR(L, expected, 1e-14);
}

}  // namespace
}  // namespace dyncheck::theory::topic
