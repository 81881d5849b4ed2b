#include "dyncheck/sim/text/genre_topics.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace dyncheck::sim::text {

bool is_word(const std::string& token) {
  return std::any_of(token.begin(), token.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

std::vector<Document> words_only(const std::vector<Document>& documents) {
  std::vector<Document> out;
  out.reserve(documents.size());
  for (const Document& d : documents) {
    Document kept{d.name, d.category, {}, d.tagged_tokens};
    for (const auto& token : d.tokens) {
      if (is_word(token)) kept.tokens.push_back(token);
    }
    out.push_back(std::move(kept));
  }
  return out;
}

GenreTopics genre_topics(const std::vector<Document>& documents, const std::vector<std::size_t>& which,
                         const Vocabulary& vocabulary, const GenreRule& rule) {
  if (vocabulary.size() < 1) throw std::invalid_argument("genre_topics: empty vocabulary");
  GenreTopics result;
  std::map<std::string, int> genre_index;
  for (const auto d : which) genre_index.emplace(documents.at(d).category, 0);
  for (auto& [name, index] : genre_index) {
    index = static_cast<int>(result.genres.size());
    result.genres.push_back(name);
  }
  const std::size_t K = vocabulary.size() - 1, G = result.genres.size();
  std::vector<double> c(K * G, 0.0), n_g(G, 0.0);
  std::vector<long long> docs(K * G, 0);
  std::vector<std::size_t> last_seen(K, static_cast<std::size_t>(-1));
  for (const auto d : which) {
    const auto g = static_cast<std::size_t>(genre_index.at(documents[d].category));
    for (const auto& token : documents[d].tokens) {
      const auto id = vocabulary.id(token);
      if (id == 0) continue;
      const auto w = static_cast<std::size_t>(id - 1);
      c[w * G + g] += 1;
      n_g[g] += 1;
      if (last_seen[w] != d) {
        last_seen[w] = d;
        ++docs[w * G + g];
      }
    }
  }
  double n = 0;
  for (const double x : n_g) n += x;
  result.topic.assign(K, -1);
  result.share.assign(K, 0.0);
  result.ratio.assign(K, 0.0);
  result.count.assign(K, 0);
  for (std::size_t w = 0; w < K; ++w) {
    double c_w = 0;
    for (std::size_t g = 0; g < G; ++g) c_w += c[w * G + g];
    result.count[w] = static_cast<long long>(c_w);
    if (c_w == 0) continue;
    std::size_t best = 0;
    double best_frequency = -1;
    for (std::size_t g = 0; g < G; ++g) {
      if (n_g[g] == 0) continue;
      const double frequency = c[w * G + g] / n_g[g];
      if (frequency > best_frequency) {
        best_frequency = frequency;
        best = g;
      }
    }
    result.share[w] = c[w * G + best] / c_w;
    result.ratio[w] = best_frequency / (c_w / n);
    if (result.share[w] >= rule.share_min && result.ratio[w] >= rule.ratio_min && docs[w * G + best] >= rule.docs_min) {
      result.topic[w] = static_cast<int>(best);
    }
  }
  return result;
}

std::vector<std::vector<int>> vocabulary_chunks(const std::vector<Document>& documents,
                                                const std::vector<std::size_t>& which, const Vocabulary& vocabulary,
                                                std::size_t length) {
  if (length == 0) throw std::invalid_argument("vocabulary_chunks: length must be >= 1");
  std::vector<std::vector<int>> chunks;
  std::vector<int> ids;
  for (const auto d : which) {
    ids.clear();
    for (const auto& token : documents.at(d).tokens) {
      const auto id = vocabulary.id(token);
      if (id != 0) ids.push_back(static_cast<int>(id - 1));
    }
    for (std::size_t start = 0; start + length <= ids.size(); start += length) {
      chunks.emplace_back(ids.begin() + static_cast<std::ptrdiff_t>(start),
                          ids.begin() + static_cast<std::ptrdiff_t>(start + length));
    }
  }
  return chunks;
}

}  // namespace dyncheck::sim::text
