#pragma once
// The topic family's data (specs/topic.md §1-§2): LDA-style documents over T disjoint topics of v
// words each, and BERT-style MLM masking.
//
// Token ids: words 0..V-1 (V = T v; word i has topic i / v), then [MASK] = V. With the code's
// "random token over all ids" option the random replacement is uniform over V + 4 ids: the V words,
// [MASK] (= V) and three further specials V+1..V+3 (PAD, START, END of the authors' code), which a
// model must then embed (num_input_ids).

#include <cstdint>
#include <vector>

#include "dyncheck/sim/random/rng.hpp"

namespace dyncheck::sim::topic {

/// The document-topic law: theta ~ Dir(alpha 1_T), or theta = 1_S / tau for a uniform tau-subset S.
enum class TopicPrior { dirichlet, subset };

struct DocumentLaw {
  int T = 10;          ///< topics
  int v = 10;          ///< words per topic
  TopicPrior prior = TopicPrior::dirichlet;
  double alpha = 0.1;  ///< Dirichlet concentration (prior = dirichlet)
  int tau = 3;         ///< topics per document (prior = subset), 1 <= tau <= T
  int N_min = 100;     ///< document length N ~ U{N_min..N_max}
  int N_max = 150;

  int V() const { return T * v; }
  /// Throws std::invalid_argument naming the field when the law is not valid.
  void validate() const;
};

/**
 * One document of `law`: N ~ U{N_min..N_max} (uniform_index), theta as the prior says (Dirichlet via
 * sim::dirichlet; a tau-subset by a partial Fisher-Yates shuffle of the topics), then for each
 * position a topic z_n ~ theta and a word uniform in z_n's words (Dirichlet: the topic by a
 * cumulative search on theta, O(T) per token only when T is small; an alias table otherwise). Cost
 * O(T + N). `theta` (size T) receives the document's topic proportions. `words` is resized to N.
 */
void sample_document(const DocumentLaw& law, Rng& rng, std::vector<int>& words, std::vector<double>& theta);

/// MLM masking (specs/topic.md §2).
struct MaskingLaw {
  double p_m = 0.15;  ///< each position selected with probability p_m
  double p_c = 0.1;   ///< a selected position keeps its word ("correct")
  double p_r = 0.1;   ///< a selected position becomes a uniformly random token
  bool redraw_if_none = true;         ///< the code redraws the whole mask when nothing was selected
  bool random_over_all_ids = false;   ///< the code's random token: uniform over V + 4 ids, not the V words

  /// Throws std::invalid_argument unless 0 < p_m <= 1, p_c, p_r >= 0 and p_c + p_r <= 1.
  void validate() const;
};

/// A masked document: the model's input ids, and which positions carry a loss (their target is
/// the original word).
struct MaskedDocument {
  std::vector<int> input;               ///< ids in [0, V + 1), or [0, V + 4) with random_over_all_ids
  std::vector<int> words;               ///< the original words (targets)
  std::vector<std::uint8_t> selected;   ///< 1 where the MLM loss is taken
  int selected_count = 0;
};

/**
 * Masks `words` (vocabulary size V) in place into `out`: per position a Bernoulli(p_m) selection
 * (the whole mask redrawn while nothing is selected, if redraw_if_none and N >= 1), then for each
 * selected position one uniform U: U < p_c keeps the word, U < p_c + p_r replaces it with a random
 * token (uniform_index over V, or over V + 4 ids), otherwise [MASK] = V. Cost O(N).
 */
void mask_document(const MaskingLaw& law, int V, const std::vector<int>& words, Rng& rng, MaskedDocument& out);

/// The number of input ids a model needs for this masking: V + 1, or V + 4 with random_over_all_ids.
inline int num_input_ids(const MaskingLaw& law, int V) { return law.random_over_all_ids ? V + 4 : V + 1; }

/// A sampled and masked document.
struct Document {
  MaskedDocument masked;
  std::vector<double> theta;
};

/// sample_document then mask_document, from the same stream.
void draw_document(const DocumentLaw& law, const MaskingLaw& masking, Rng& rng, Document& out);

}  // namespace dyncheck::sim::topic
