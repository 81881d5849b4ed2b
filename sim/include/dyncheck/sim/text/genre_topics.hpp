#pragma once
// Real text as topic-model data (specs/topic.md §8 on a substitute corpus): the word tokens of a tagged
// corpus restricted to words (tokens with a letter), a vocabulary of them, each word's topic from the
// documents' genre categories, and documents cut into fixed-length chunks of vocabulary ids (the
// LDA-style "documents" of the one-layer MLM, sim/topic).
//
// Word topics (GenreRule): with c(w, g) the count of word w in the chosen documents of genre g, n_g the
// genre's token count and n = sum_g n_g, word w gets the genre g* maximising its relative frequency
// c(w, g) / n_g (ties: the first genre in alphabetical order), and is topic-specific (labelled) when
//   share  c(w, g*) / c(w)                          >= share_min   (the word points to one genre),
//   ratio  (c(w, g*) / n_g*) / (c(w) / n)           >= ratio_min   (it is over-represented there, not just
//                                                                   frequent in a large genre), and
//   it occurs in at least docs_min chosen documents of g*           (not one document's idiosyncrasy).
// Deterministic: counts only, no sampling.

#include <cstdint>
#include <string>
#include <vector>

#include "dyncheck/sim/text/corpus.hpp"

namespace dyncheck::sim::text {

/// Whether a token is a word: it contains a letter a-z (punctuation, numbers and quotes are not).
bool is_word(const std::string& token);

/// The documents with only their word tokens (is_word) kept, in order.
std::vector<Document> words_only(const std::vector<Document>& documents);

struct GenreRule {
  double share_min = 0.25;  ///< c(w, g*) / c(w)
  double ratio_min = 2.0;   ///< over-representation of w in g*
  long long docs_min = 3;   ///< documents of g* containing w
};

struct GenreTopics {
  std::vector<std::string> genres;  ///< alphabetical
  /// per word id 0..K-1 (vocabulary id - 1: <unk> is not a word here): its genre index, or -1 when not
  /// topic-specific
  std::vector<int> topic;
  std::vector<double> share, ratio;  ///< per word, at its genre g*
  std::vector<long long> count;      ///< per word, c(w) in the chosen documents
};

/// Word topics of the vocabulary's words (ids 1..K of `vocabulary`, returned as 0..K-1) from the chosen
/// documents' genres, by `rule` (see the file comment).
GenreTopics genre_topics(const std::vector<Document>& documents, const std::vector<std::size_t>& which,
                         const Vocabulary& vocabulary, const GenreRule& rule);

/// Each chosen document's in-vocabulary tokens as ids 0..K-1 (vocabulary id - 1; out-of-vocabulary
/// tokens dropped), cut into consecutive chunks of `length` ids; a document's last incomplete chunk is
/// dropped. Chunks in document order.
std::vector<std::vector<int>> vocabulary_chunks(const std::vector<Document>& documents,
                                                const std::vector<std::size_t>& which, const Vocabulary& vocabulary,
                                                std::size_t length);

}  // namespace dyncheck::sim::text
