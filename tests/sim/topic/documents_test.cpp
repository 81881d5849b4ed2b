// Tests of sim/topic/documents.hpp: lengths, topic supports, word and mask frequencies.

#include "dyncheck/sim/topic/documents.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

namespace dyncheck::sim::topic {
namespace {

TEST(SimTopicDocuments, SubsetDocumentsUseExactlyTauTopicsAndUniformWords) {
  DocumentLaw law{.T = 6, .v = 4, .prior = TopicPrior::subset, .alpha = 0.1, .tau = 2, .N_min = 30, .N_max = 40};
  Rng rng(7);
  std::vector<int> words;
  std::vector<double> theta;
  std::vector<double> frequency(static_cast<std::size_t>(law.V()), 0.0);
  double tokens = 0;
  for (int doc = 0; doc < 2000; ++doc) {
    sample_document(law, rng, words, theta);
    ASSERT_GE(words.size(), 30U);
    ASSERT_LE(words.size(), 40U);
    std::set<int> topics;
    for (const int w : words) {
      ASSERT_GE(w, 0);
      ASSERT_LT(w, law.V());
      topics.insert(w / law.v);
      EXPECT_DOUBLE_EQ(theta[static_cast<std::size_t>(w / law.v)], 0.5);
      frequency[static_cast<std::size_t>(w)] += 1;
      tokens += 1;
    }
    EXPECT_LE(topics.size(), 2U);
  }
  // Every word has probability 1/V by symmetry; 7e4 tokens: sd of a frequency ~ sqrt(p/n) = 7.7e-4.
  for (const double f : frequency) EXPECT_NEAR(f / tokens, 1.0 / law.V(), 6e-3);
}

TEST(SimTopicDocuments, DirichletThetaSumsToOneAndMatchesItsMeanSquare) {
  DocumentLaw law{.T = 5, .v = 3, .prior = TopicPrior::dirichlet, .alpha = 0.5, .tau = 1, .N_min = 1, .N_max = 1};
  Rng rng(11);
  std::vector<int> words;
  std::vector<double> theta;
  double second = 0;
  const int docs = 20000;
  for (int doc = 0; doc < docs; ++doc) {
    sample_document(law, rng, words, theta);
    double sum = 0;
    for (const double t : theta) sum += t;
    EXPECT_NEAR(sum, 1.0, 1e-12);
    second += theta[0] * theta[0];
  }
  // E theta_i^2 = alpha (alpha + 1) / (T alpha (T alpha + 1)) = 0.75 / (2.5 * 3.5).
  EXPECT_NEAR(second / docs, 0.75 / 8.75, 4e-3);
}

TEST(SimTopicDocuments, MaskingRatesFollowTheLaw) {
  MaskingLaw law{.p_m = 0.3, .p_c = 0.2, .p_r = 0.1, .redraw_if_none = true, .random_over_all_ids = false};
  const int V = 12;
  std::vector<int> words(200);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = static_cast<int>(i % 12);
  Rng rng(3);
  MaskedDocument out;
  double selected = 0, kept = 0, masked = 0, total = 0;
  for (int rep = 0; rep < 300; ++rep) {
    mask_document(law, V, words, rng, out);
    int count = 0;
    for (std::size_t n = 0; n < words.size(); ++n) {
      total += 1;
      if (out.selected[n] == 0) {
        EXPECT_EQ(out.input[n], words[n]);
        continue;
      }
      ++count;
      selected += 1;
      if (out.input[n] == V) masked += 1;
      if (out.input[n] == words[n]) kept += 1;
      EXPECT_LE(out.input[n], V);
    }
    EXPECT_EQ(count, out.selected_count);
  }
  EXPECT_NEAR(selected / total, 0.3, 0.01);
  EXPECT_NEAR(masked / selected, 0.7, 0.02);
  // Kept: p_c, plus a random token that happens to be the word (p_r / V).
  EXPECT_NEAR(kept / selected, 0.2 + 0.1 / V, 0.02);
}

TEST(SimTopicDocuments, RedrawGuaranteesASelectedPosition) {
  MaskingLaw law{.p_m = 0.01, .p_c = 0, .p_r = 0, .redraw_if_none = true, .random_over_all_ids = true};
  std::vector<int> words{1, 2, 3};
  Rng rng(5);
  MaskedDocument out;
  for (int rep = 0; rep < 200; ++rep) {
    mask_document(law, 4, words, rng, out);
    EXPECT_GE(out.selected_count, 1);
  }
}

TEST(SimTopicDocuments, InvalidLawsAreRefused) {
  DocumentLaw law;
  law.tau = 0;
  law.prior = TopicPrior::subset;
  EXPECT_THROW(law.validate(), std::invalid_argument);
  MaskingLaw masking;
  masking.p_c = 0.7;
  masking.p_r = 0.5;
  EXPECT_THROW(masking.validate(), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::sim::topic
