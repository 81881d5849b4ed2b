#include "dyncheck/sim/joma/hierarchy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "dyncheck/sim/detail/throw_invalid_argument.hpp"
#include "dyncheck/sim/random/uniform_index.hpp"

namespace dyncheck::sim::joma {
namespace {

constexpr const char* where = "make_hierarchy";

// C(n, p), saturated at 2^62 (only compared with a latent count).
std::uint64_t binomial(std::uint64_t n, std::uint64_t p) {
  constexpr std::uint64_t cap = std::uint64_t{1} << 62U;
  std::uint64_t c = 1;
  for (std::uint64_t i = 1; i <= p; ++i) {
    // c * (n - p + i) / i is exact at every step (a binomial coefficient); saturate before overflowing.
    if (c > cap / (n - p + i)) return cap;
    c = c * (n - p + i) / i;
  }
  return c;
}

// A uniformly random p-subset of {0..n-1}, sorted: the first p places of a partial Fisher-Yates shuffle.
std::vector<int> random_subset(int n, int p, Rng& rng) {
  std::vector<int> indices(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) indices[static_cast<std::size_t>(i)] = i;
  for (int i = 0; i < p; ++i) {
    const auto j = static_cast<std::size_t>(i) + uniform_index(rng, static_cast<std::uint64_t>(n - i));
    std::swap(indices[static_cast<std::size_t>(i)], indices[j]);
  }
  std::vector<int> subset(indices.begin(), indices.begin() + p);
  std::sort(subset.begin(), subset.end());
  return subset;
}

}  // namespace

Hierarchy make_hierarchy(const HierarchySpec& spec, Rng& rng) {
  if (spec.vocabulary < 3) detail::throw_invalid_argument(where, "vocabulary M must be >= 3", std::uint64_t(spec.vocabulary));
  if (spec.length < 1) detail::throw_invalid_argument(where, "length L must be >= 1", std::uint64_t(spec.length));
  if (spec.latents.empty() || spec.latents.size() != spec.combinations.size()) {
    detail::throw_invalid_argument(where, "latents and combinations need one entry per level (at least one level)");
  }
  Hierarchy h;
  h.spec = spec;
  int below = spec.vocabulary - 1;  // units of the level below: the leaves for level 0
  for (std::size_t l = 0; l < spec.latents.size(); ++l) {
    const int n = spec.latents[l], p = spec.combinations[l];
    const std::string level = "level " + std::to_string(l) + ": ";
    if (p < 1 || p > below) {
      detail::throw_invalid_argument(where, level + "combinations must be in [1, units of the level below]", std::uint64_t(p));
    }
    if (n < 1 || static_cast<std::uint64_t>(n) > binomial(static_cast<std::uint64_t>(below), static_cast<std::uint64_t>(p))) {
      detail::throw_invalid_argument(where, level + "latents must be in [1, C(units below, combinations)]", std::uint64_t(n));
    }
    std::set<std::vector<int>> seen;
    std::vector<std::vector<int>> level_children;
    for (int k = 0; k < n; ++k) {
      std::vector<int> subset;
      do {
        subset = random_subset(below, p, rng);  // the script's rejection of a repeated combination
      } while (!seen.insert(subset).second);
      level_children.push_back(std::move(subset));
    }
    h.children.push_back(std::move(level_children));
    below = n;
  }
  const int levels = h.levels();
  for (int c = 0; c < h.classes(); ++c) {
    std::vector<std::vector<int>> active(static_cast<std::size_t>(levels));
    std::set<int> current{c};
    for (int l = levels - 1; l >= 0; --l) {
      active[static_cast<std::size_t>(l)].assign(current.begin(), current.end());
      std::set<int> next;
      for (const int k : current) {
        const auto& ch = h.children[static_cast<std::size_t>(l)][static_cast<std::size_t>(k)];
        next.insert(ch.begin(), ch.end());
      }
      current = std::move(next);
    }
    if (static_cast<int>(current.size()) > spec.length) {
      detail::throw_invalid_argument(where, "class " + std::to_string(c) + " has more leaves than the length L",
                                     std::uint64_t(current.size()));
    }
    std::vector<std::int64_t> tokens(static_cast<std::size_t>(spec.length), h.padding());
    std::size_t at = tokens.size() - current.size();
    for (const int leaf : current) tokens[at++] = leaf;
    h.active.push_back(std::move(active));
    h.tokens.push_back(std::move(tokens));
  }
  return h;
}

std::vector<std::int64_t> sample_labels(const Hierarchy& hierarchy, std::size_t count, Rng& rng) {
  std::vector<std::int64_t> labels(count);
  for (auto& y : labels) y = static_cast<std::int64_t>(uniform_index(rng, static_cast<std::uint64_t>(hierarchy.classes())));
  return labels;
}

std::vector<std::int64_t> sequences(const Hierarchy& hierarchy, std::span<const std::int64_t> labels) {
  std::vector<std::int64_t> out;
  out.reserve(labels.size() * static_cast<std::size_t>(hierarchy.spec.length));
  for (const auto y : labels) {
    if (y < 0 || y >= hierarchy.classes()) detail::throw_invalid_argument("sequences", "label outside the classes", std::uint64_t(y));
    const auto& t = hierarchy.tokens[static_cast<std::size_t>(y)];
    out.insert(out.end(), t.begin(), t.end());
  }
  return out;
}

std::vector<double> latent_indicators(const Hierarchy& hierarchy, int level, std::span<const std::int64_t> labels) {
  if (level < 0 || level >= hierarchy.levels()) detail::throw_invalid_argument("latent_indicators", "level outside the hierarchy", std::uint64_t(level));
  const auto k_count = static_cast<std::size_t>(hierarchy.spec.latents[static_cast<std::size_t>(level)]);
  std::vector<double> x(labels.size() * k_count, 0.0);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto y = labels[i];
    if (y < 0 || y >= hierarchy.classes()) detail::throw_invalid_argument("latent_indicators", "label outside the classes", std::uint64_t(y));
    for (const int k : hierarchy.active[static_cast<std::size_t>(y)][static_cast<std::size_t>(level)]) {
      x[i * k_count + static_cast<std::size_t>(k)] = 1.0;
    }
  }
  return x;
}

namespace {

bool holds(const Hierarchy& h, int c, int leaf) {
  const auto& t = h.tokens[static_cast<std::size_t>(c)];
  return std::find(t.begin(), t.end(), static_cast<std::int64_t>(leaf)) != t.end();
}

// The descendant leaves of latent k of level `level`.
std::set<int> descendants(const Hierarchy& h, int level, int k) {
  std::set<int> current{k};
  for (int l = level; l >= 0; --l) {
    std::set<int> next;
    for (const int u : current) {
      const auto& ch = h.children[static_cast<std::size_t>(l)][static_cast<std::size_t>(u)];
      next.insert(ch.begin(), ch.end());
    }
    current = std::move(next);
  }
  return current;
}

}  // namespace

double leaf_cooccurrence(const Hierarchy& hierarchy, int l, int m) {
  for (const int leaf : {l, m}) {
    if (leaf < 0 || leaf >= hierarchy.padding()) {
      detail::throw_invalid_argument("leaf_cooccurrence", "leaves are 0..M-2", std::uint64_t(leaf));
    }
  }
  int both = 0, with_m = 0;
  for (int c = 0; c < hierarchy.classes(); ++c) {
    if (!holds(hierarchy, c, m)) continue;
    ++with_m;
    both += holds(hierarchy, c, l) ? 1 : 0;
  }
  if (with_m == 0) detail::throw_invalid_argument("leaf_cooccurrence", "no class holds leaf m", std::uint64_t(m));
  return static_cast<double>(both) / static_cast<double>(with_m);
}

int common_ancestor_level(const Hierarchy& hierarchy, int l, int m) {
  for (int level = 0; level < hierarchy.levels(); ++level) {
    for (int k = 0; k < hierarchy.spec.latents[static_cast<std::size_t>(level)]; ++k) {
      const auto d = descendants(hierarchy, level, k);
      if (d.count(l) != 0 && d.count(m) != 0) return level;
    }
  }
  return -1;
}

std::vector<int> used_leaves(const Hierarchy& hierarchy) {
  std::set<int> used;
  for (const auto& t : hierarchy.tokens) {
    for (const auto token : t) {
      if (token != hierarchy.padding()) used.insert(static_cast<int>(token));
    }
  }
  return {used.begin(), used.end()};
}

std::vector<double> best_correlations(std::span<const double> x, std::size_t k_count, std::span<const double> y,
                                      std::size_t h_count, bool zero_mean) {
  if (k_count == 0 || h_count == 0 || x.size() % k_count != 0 || y.size() % h_count != 0 ||
      x.size() / k_count != y.size() / h_count || x.empty()) {
    detail::throw_invalid_argument("best_correlations", "x [n x k] and y [n x h] need the same n >= 1 and k, h >= 1");
  }
  const std::size_t n = x.size() / k_count;
  // Column-major copies, centred when zero_mean (the script's x - x.mean(dim=0)).
  auto columns = [n, zero_mean](std::span<const double> m, std::size_t cols) {
    std::vector<std::vector<double>> out(cols, std::vector<double>(n));
    for (std::size_t j = 0; j < cols; ++j) {
      double mean = 0;
      for (std::size_t i = 0; i < n; ++i) mean += m[i * cols + j];
      mean = zero_mean ? mean / static_cast<double>(n) : 0.0;
      for (std::size_t i = 0; i < n; ++i) out[j][i] = m[i * cols + j] - mean;
    }
    return out;
  };
  const auto xc = columns(x, k_count), yc = columns(y, h_count);
  auto norm = [](const std::vector<double>& v) {
    double s = 0;
    for (const double a : v) s += a * a;
    return std::sqrt(s) + 1e-9;  // the script's x.norm(dim=0) + 1e-9
  };
  std::vector<double> y_norm(h_count);
  for (std::size_t h = 0; h < h_count; ++h) y_norm[h] = norm(yc[h]);
  std::vector<double> best(k_count, -std::numeric_limits<double>::infinity());
  for (std::size_t k = 0; k < k_count; ++k) {
    const double x_norm = norm(xc[k]);
    for (std::size_t h = 0; h < h_count; ++h) {
      double dot = 0;
      for (std::size_t i = 0; i < n; ++i) dot += xc[k][i] * yc[h][i];
      best[k] = std::max(best[k], dot / x_norm / y_norm[h]);
    }
  }
  return best;
}

}  // namespace dyncheck::sim::joma
