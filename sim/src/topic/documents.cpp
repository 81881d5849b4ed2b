#include "dyncheck/sim/topic/documents.hpp"

#include <numeric>
#include <span>
#include <stdexcept>
#include <string>

#include "dyncheck/sim/random/bernoulli.hpp"
#include "dyncheck/sim/random/categorical.hpp"
#include "dyncheck/sim/random/dirichlet.hpp"
#include "dyncheck/sim/random/uniform01.hpp"
#include "dyncheck/sim/random/uniform_index.hpp"

namespace dyncheck::sim::topic {
namespace {

[[noreturn]] void invalid(const std::string& what) { throw std::invalid_argument("sim::topic: " + what); }

}  // namespace

void DocumentLaw::validate() const {
  if (T < 1) invalid("T must be >= 1, got " + std::to_string(T));
  if (v < 1) invalid("v must be >= 1, got " + std::to_string(v));
  if (prior == TopicPrior::dirichlet && !(alpha > 0 && alpha < 1e300)) invalid("alpha must be finite and > 0");
  if (prior == TopicPrior::subset && (tau < 1 || tau > T)) {
    invalid("tau must be in [1, T], got " + std::to_string(tau));
  }
  if (N_min < 1 || N_max < N_min) {
    invalid("document length range must satisfy 1 <= N_min <= N_max, got [" + std::to_string(N_min) + ", " +
            std::to_string(N_max) + "]");
  }
}

void MaskingLaw::validate() const {
  if (!(p_m > 0 && p_m <= 1)) invalid("p_m must be in (0, 1]");
  if (!(p_c >= 0 && p_r >= 0 && p_c + p_r <= 1)) invalid("p_c, p_r must be >= 0 with p_c + p_r <= 1");
}

void sample_document(const DocumentLaw& law, Rng& rng, std::vector<int>& words, std::vector<double>& theta) {
  law.validate();
  const auto span = static_cast<std::uint64_t>(law.N_max - law.N_min + 1);
  const int N = law.N_min + static_cast<int>(uniform_index(rng, span));
  const auto T = static_cast<std::size_t>(law.T);
  theta.assign(T, 0.0);
  words.resize(static_cast<std::size_t>(N));
  if (law.prior == TopicPrior::subset) {
    // Partial Fisher-Yates: the first tau entries of a uniformly shuffled 0..T-1 are a uniform tau-subset.
    std::vector<int> topics(T);
    std::iota(topics.begin(), topics.end(), 0);
    const auto tau = static_cast<std::size_t>(law.tau);
    for (std::size_t i = 0; i < tau; ++i) {
      const std::size_t j = i + static_cast<std::size_t>(uniform_index(rng, T - i));
      std::swap(topics[i], topics[j]);
    }
    for (std::size_t i = 0; i < tau; ++i) theta[static_cast<std::size_t>(topics[i])] = 1.0 / static_cast<double>(tau);
    for (int& word : words) {
      const int topic = topics[static_cast<std::size_t>(uniform_index(rng, tau))];
      word = topic * law.v + static_cast<int>(uniform_index(rng, static_cast<std::uint64_t>(law.v)));
    }
    return;
  }
  const std::vector<double> alpha(T, law.alpha);
  dirichlet(rng, alpha, theta);
  const Categorical topic_of(std::span<const double>(theta.data(), theta.size()));
  for (int& word : words) {
    const auto topic = static_cast<int>(topic_of(rng));
    word = topic * law.v + static_cast<int>(uniform_index(rng, static_cast<std::uint64_t>(law.v)));
  }
}

void mask_document(const MaskingLaw& law, int V, const std::vector<int>& words, Rng& rng, MaskedDocument& out) {
  law.validate();
  if (V < 1) invalid("V must be >= 1");
  const std::size_t N = words.size();
  out.words = words;
  out.input = words;
  out.selected.assign(N, 0);
  out.selected_count = 0;
  do {
    out.selected_count = 0;
    for (std::size_t n = 0; n < N; ++n) {
      out.selected[n] = bernoulli(rng, law.p_m) ? 1 : 0;
      out.selected_count += out.selected[n];
    }
  } while (law.redraw_if_none && N > 0 && out.selected_count == 0);
  const auto random_ids = static_cast<std::uint64_t>(law.random_over_all_ids ? V + 4 : V);
  for (std::size_t n = 0; n < N; ++n) {
    if (out.selected[n] == 0) continue;
    const double u = uniform01(rng);
    if (u < law.p_c) continue;
    out.input[n] = u < law.p_c + law.p_r ? static_cast<int>(uniform_index(rng, random_ids)) : V;
  }
}

void draw_document(const DocumentLaw& law, const MaskingLaw& masking, Rng& rng, Document& out) {
  std::vector<int> words;
  sample_document(law, rng, words, out.theta);
  mask_document(masking, law.V(), words, rng, out.masked);
}

}  // namespace dyncheck::sim::topic
