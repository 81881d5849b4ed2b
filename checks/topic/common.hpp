#pragma once
// Parameter sets and helpers shared by the topic claims (declared once; a claim's Params holds them
// as members constructed with its `this`).

#include <fmt/format.h>

#include <string>

#include "dyncheck/checks/param_set.hpp"
#include "dyncheck/checks/params.hpp"
#include "dyncheck/sim/topic/documents.hpp"
#include "dyncheck/sim/topic/model.hpp"

namespace dyncheck::checks::topic {

inline void require(bool ok, const std::string& name, const std::string& message) {
  if (!ok) throw ParamError(name, message);
}

/// \f$\binom{n}{k}\f$ in double (the number of tau-subsets of T topics; exact for the claims' n <= 12).
inline double subsets_of(int n, int k) {
  double c = 1;
  for (int i = 1; i <= k; ++i) c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
  return c;
}

/// T topics of v words each (V = T v words, D = V + 1 ids with [MASK]).
struct Vocabulary {
  Vocabulary(ParamSet* owner, long long T_max, long long v_max, long long T_min = 2)
      : T{owner, "T", 10, closed(static_cast<double>(T_min), static_cast<double>(T_max)), "number of topics"},
        v{owner, "v", 10, closed(1, static_cast<double>(v_max)), "words per topic"} {}
  Int T;
  Int v;
  long long V() const { return T.value() * v.value(); }
};

/// The MLM masking probabilities (specs/topic.md §2).
struct Masking {
  explicit Masking(ParamSet* owner)
      : p_m{owner, "p_m", 0.15, closed(0.01, 0.9), "probability that a position is selected for the MLM loss"},
        p_c{owner, "p_c", 0.1, closed(0, 0.9), "probability that a selected position keeps its word"},
        p_r{owner, "p_r", 0.1, closed(0, 0.9), "probability that a selected position becomes a random word"} {}
  Real p_m;
  Real p_c;
  Real p_r;
  /// The simulator's masking law with these probabilities (empty masks redrawn, random words over the V words).
  sim::topic::MaskingLaw law() const {
    return {.p_m = p_m, .p_c = p_c, .p_r = p_r, .redraw_if_none = true, .random_over_all_ids = false};
  }
  void check() const {
    require(p_c + p_r <= 0.9, "p_r", fmt::format("p_c + p_r must be <= 0.9 (got {:g} + {:g})", p_c.value(), p_r.value()));
  }
};

/// Document lengths N ~ U{N_min..N_max}. The ranges meet at 150 (the spec's N_max), so that every pair of values
/// in them is valid (N_min <= N_max) and random points of the fuzz test are not refused for their order.
struct Lengths {
  Lengths(ParamSet* owner, long long N_max_limit)
      : N_min{owner, "N_min", 100, closed(2, 150), "shortest document"},
        N_max{owner, "N_max", 150, closed(150, static_cast<double>(N_max_limit)), "longest document"} {}
  Int N_min;
  Int N_max;
  void check() const {
    require(N_min.value() <= N_max.value(), "N_max",
            fmt::format("must be >= N_min = {} (got {})", N_min.value(), N_max.value()));
  }
};

/// E[#selected tokens | N] = p_m N / (1 - (1 - p_m)^N) (empty masks redrawn), averaged over N ~ U{N_min..N_max}.
inline double expected_selected(long long N_min, long long N_max, double p_m) {
  double selected = 0;
  for (long long N = N_min; N <= N_max; ++N) {
    double none = 1;
    for (long long i = 0; i < N; ++i) none *= 1 - p_m;
    selected += p_m * static_cast<double>(N) / (1 - none);
  }
  return selected / static_cast<double>(N_max - N_min + 1);
}

/// The model with one-hot embedding over the V words and [MASK] (num_inputs = d = V + 1), keys at the
/// unselected positions, squared loss; a claim sets what it trains on top of this.
inline sim::topic::Structure one_hot_squared_structure(int V) {
  sim::topic::Structure s;
  s.V = V;
  s.num_inputs = V + 1;
  s.d = V + 1;
  s.keys = sim::topic::KeySet::unselected;
  s.loss = sim::topic::Loss::squared;
  return s;
}

}  // namespace dyncheck::checks::topic
