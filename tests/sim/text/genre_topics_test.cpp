#include "dyncheck/sim/text/genre_topics.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace dyncheck::sim::text {
namespace {

const std::filesystem::path fixture = DYNCHECK_TEXT_FIXTURE;

// The fixture: ca01 (news) "the fulton county said `` no evidence '' . it cost 1-1/2 dollars , atlanta's (or more)
// the end", cb01 (editorial) "the the the jury ! don't", cb02 (editorial) "jury said that the end ?".
std::vector<Document> fixture_words() { return words_only(load_tagged_corpus(fixture, std::nullopt)); }

TEST(SimTextGenreTopics, WordsOnlyKeepsTokensWithALetter) {
  EXPECT_TRUE(is_word("don"));
  EXPECT_TRUE(is_word("1st"));
  EXPECT_FALSE(is_word("1-1/2"));
  EXPECT_FALSE(is_word("``"));
  EXPECT_FALSE(is_word("'"));
  const auto documents = fixture_words();
  ASSERT_EQ(documents.size(), 3u);
  EXPECT_EQ(documents[0].tokens, (std::vector<std::string>{"the", "fulton", "county", "said", "no", "evidence", "it",
                                                           "cost", "dollars", "atlanta", "s", "or", "more", "the", "end"}));
  EXPECT_EQ(documents[1].tokens, (std::vector<std::string>{"the", "the", "the", "jury", "don", "t"}));
  EXPECT_EQ(documents[0].category, "news");
}

// Hand counts: n_editorial = 11, n_news = 15, n = 26. "the": editorial 4/11 vs news 2/15, share 4/6, ratio
// (4/11)/(6/26) = 1.576; "jury": editorial only, share 1, ratio 26/11; "said": editorial 1/11 vs news 1/15, share 1/2,
// ratio (1/11)/(2/26) = 1.18; "fulton": news only, share 1, ratio 26/15, in one document.
TEST(SimTextGenreTopics, LabelsByRelativeFrequencyShareRatioAndDocuments) {
  const auto documents = fixture_words();
  const std::vector<std::size_t> all{0, 1, 2};
  const auto vocabulary = build_vocabulary(documents, all, 100);
  const auto id = [&](const std::string& w) { return static_cast<std::size_t>(vocabulary.id(w) - 1); };
  const auto topics = genre_topics(documents, all, vocabulary, {.share_min = 0.5, .ratio_min = 1.2, .docs_min = 1});
  ASSERT_EQ(topics.genres, (std::vector<std::string>{"editorial", "news"}));
  ASSERT_EQ(topics.topic.size(), vocabulary.size() - 1);
  EXPECT_EQ(topics.topic[id("the")], 0);
  EXPECT_NEAR(topics.share[id("the")], 4.0 / 6.0, 1e-15);
  EXPECT_NEAR(topics.ratio[id("the")], (4.0 / 11.0) / (6.0 / 26.0), 1e-14);
  EXPECT_EQ(topics.topic[id("jury")], 0);
  EXPECT_NEAR(topics.ratio[id("jury")], 26.0 / 11.0, 1e-14);
  EXPECT_EQ(topics.topic[id("said")], -1);  // ratio 1.18 < 1.2
  EXPECT_NEAR(topics.ratio[id("said")], (1.0 / 11.0) / (2.0 / 26.0), 1e-14);
  EXPECT_EQ(topics.topic[id("fulton")], 1);
  EXPECT_EQ(topics.count[id("the")], 6);
  // Two documents required: fulton (one news document) loses its label; the and jury (both editorial ones) keep it.
  const auto strict = genre_topics(documents, all, vocabulary, {.share_min = 0.5, .ratio_min = 1.2, .docs_min = 2});
  EXPECT_EQ(strict.topic[id("fulton")], -1);
  EXPECT_EQ(strict.topic[id("the")], 0);
  EXPECT_EQ(strict.topic[id("jury")], 0);
  // A share above 2/3 removes "the".
  const auto narrow = genre_topics(documents, all, vocabulary, {.share_min = 0.7, .ratio_min = 1.2, .docs_min = 1});
  EXPECT_EQ(narrow.topic[id("the")], -1);
  EXPECT_EQ(narrow.topic[id("jury")], 0);
}

TEST(SimTextGenreTopics, ChunksAreConsecutiveInVocabularyIdsWithoutTheTail) {
  const auto documents = fixture_words();
  const std::vector<std::size_t> all{0, 1, 2};
  const auto vocabulary = build_vocabulary(documents, all, 100);
  const auto id = [&](const std::string& w) { return static_cast<int>(vocabulary.id(w) - 1); };
  const auto chunks = vocabulary_chunks(documents, all, vocabulary, 4);
  ASSERT_EQ(chunks.size(), 5u);  // 15 tokens -> 3 chunks, 6 -> 1, 5 -> 1
  EXPECT_EQ(chunks[0], (std::vector<int>{id("the"), id("fulton"), id("county"), id("said")}));
  EXPECT_EQ(chunks[3], (std::vector<int>{id("the"), id("the"), id("the"), id("jury")}));
  EXPECT_EQ(chunks[4], (std::vector<int>{id("jury"), id("said"), id("that"), id("the")}));
  // Out-of-vocabulary tokens are dropped before chunking: top 3 = the, end, jury.
  const auto small = build_vocabulary(documents, all, 3);
  const auto few = vocabulary_chunks(documents, {0}, small, 2);
  ASSERT_EQ(few.size(), 1u);  // the, the, end -> one chunk, tail dropped
  EXPECT_EQ(few[0], (std::vector<int>{0, 0}));
  EXPECT_THROW(vocabulary_chunks(documents, all, vocabulary, 0), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::sim::text
