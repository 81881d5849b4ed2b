// dyncheck's random engine and samplers, side by side with the alternatives they replace:
// std::mt19937_64 with the std distributions (libstdc++ algorithms), and Boost.Random.
//
// Names are BM_<sampler>/<parameters>/<implementation>, so the alternatives for one task sort
// next to each other. Every benchmark reports items/s; an item is one variate (one engine word,
// one uniform, one normal, ...), except where a comment says otherwise (multinomial: one count vector
// summarizing n = 1e5 tokens; dirichlet: one component; *_build: one table construction).
//
// Cheap draws are timed in batches of kBatch, accumulated into one value that is passed to
// DoNotOptimize once per batch: calling DoNotOptimize on every draw would add a memory clobber
// per draw and force xoshiro's four state words out of registers, which measures the harness.
//
// "reused" = one distribution object constructed outside the timed loop (its cached state, e.g.
// the second normal of a pair, carries over); "per_call" = constructed for every draw, which is
// what code with varying parameters (conditional binomials, Dirichlet shapes) does. dyncheck's
// samplers are functions of (engine, parameters) and have no such split, except Categorical,
// whose table is built once (BM_categorical_build times that).
//
// The std distributions are not reproducible across standard libraries (numerics.md §4); they
// are here only as the speed baseline. Run e.g.
//   build/bench/bench/dyncheck_random_bench --benchmark_min_time=0.05

#include <benchmark/benchmark.h>

#include <boost/random/binomial_distribution.hpp>
#include <boost/random/discrete_distribution.hpp>
#include <boost/random/gamma_distribution.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_01.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dyncheck/sim/random.hpp"

namespace {

namespace ds = dyncheck::sim;

constexpr std::size_t kBatch = 1024;
constexpr std::uint64_t kSeed = 20261122;

/// Registers `fn` under `name` (RegisterBenchmark copies the name).
template <class F>
benchmark::internal::Benchmark* reg(const std::string& name, F&& fn) {
  return benchmark::RegisterBenchmark(name.c_str(), std::forward<F>(fn));
}

void set_items(benchmark::State& state, std::size_t per_iteration) {
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(per_iteration));
}

/// Times kBatch calls of draw(), summed, per iteration.
template <class Draw>
void batch(benchmark::State& state, Draw draw) {
  for (auto _ : state) {
    decltype(draw()) acc{};
    for (std::size_t i = 0; i < kBatch; ++i) acc += draw();
    benchmark::DoNotOptimize(acc);
  }
  set_items(state, kBatch);
}

/// Zipf-like weights p_i ∝ 1/(i+1), normalized: a token distribution with a long tail.
std::vector<double> zipf(std::size_t k) {
  std::vector<double> p(k);
  double sum = 0.0;
  for (std::size_t i = 0; i < k; ++i) sum += p[i] = 1.0 / static_cast<double>(i + 1);
  for (double& x : p) x /= sum;
  return p;
}

std::string fmt_double(double x) {
  std::string s = std::to_string(x);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// ---------------------------------------------------------------------------------------------
// Engine alone: one 64-bit word.
void register_engine() {
  reg("BM_engine/xoshiro256pp", [](benchmark::State& state) {
    ds::Rng rng(kSeed);
    batch(state, [&] { return rng(); });
  });
  reg("BM_engine/std_mt19937_64", [](benchmark::State& state) {
    std::mt19937_64 mt(kSeed);
    batch(state, [&] { return mt(); });
  });
  reg("BM_engine/boost_mt19937_64", [](benchmark::State& state) {
    boost::random::mt19937_64 mt(kSeed);
    batch(state, [&] { return mt(); });
  });
}

// Uniform double in [0, 1).
void register_uniform01() {
  reg("BM_uniform01/dyncheck", [](benchmark::State& state) {
    ds::Rng rng(kSeed);
    batch(state, [&] { return ds::uniform01(rng); });
  });
  reg("BM_uniform01/std_reused", [](benchmark::State& state) {
    std::mt19937_64 mt(kSeed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    batch(state, [&] { return u(mt); });
  });
  reg("BM_uniform01/boost_reused", [](benchmark::State& state) {
    boost::random::mt19937_64 mt(kSeed);
    boost::random::uniform_01<double> u;
    batch(state, [&] { return u(mt); });
  });
}

// Uniform index in {0, ..., n-1}: a token of a uniform vocabulary.
void register_uniform_index() {
  for (const std::uint64_t n : {std::uint64_t{3}, std::uint64_t{500}}) {
    const std::string p = "BM_uniform_index/n=" + std::to_string(n);
    reg(p + "/dyncheck", [n](benchmark::State& state) {
      ds::Rng rng(kSeed);
      batch(state, [&] { return ds::uniform_index(rng, n); });
    });
    reg(p + "/std_reused", [n](benchmark::State& state) {
      std::mt19937_64 mt(kSeed);
      std::uniform_int_distribution<std::uint64_t> u(0, n - 1);
      batch(state, [&] { return u(mt); });
    });
    reg(p + "/boost_reused", [n](benchmark::State& state) {
      boost::random::mt19937_64 mt(kSeed);
      boost::random::uniform_int_distribution<std::uint64_t> u(0, n - 1);
      batch(state, [&] { return u(mt); });
    });
  }
}

// N(0, 1).
void register_normal() {
  reg("BM_normal/dyncheck_standard_normal", [](benchmark::State& state) {
    ds::Rng rng(kSeed);  // discards the second value of each polar pair
    batch(state, [&] { return ds::standard_normal(rng); });
  });
  reg("BM_normal/dyncheck_NormalSampler", [](benchmark::State& state) {
    ds::Rng rng(kSeed);
    ds::NormalSampler normal;
    batch(state, [&] { return normal(rng); });
  });
  reg("BM_normal/dyncheck_fill_standard_normal", [](benchmark::State& state) {
    ds::Rng rng(kSeed);
    Eigen::VectorXd out(static_cast<Eigen::Index>(kBatch));
    for (auto _ : state) {
      ds::fill_standard_normal(rng, out);
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
    set_items(state, kBatch);
  });
  reg("BM_normal/std_reused", [](benchmark::State& state) {
    std::mt19937_64 mt(kSeed);
    std::normal_distribution<double> normal;
    batch(state, [&] { return normal(mt); });
  });
  reg("BM_normal/std_per_call", [](benchmark::State& state) {
    std::mt19937_64 mt(kSeed);
    batch(state, [&] { return std::normal_distribution<double>()(mt); });
  });
  reg("BM_normal/boost_reused", [](benchmark::State& state) {
    boost::random::mt19937_64 mt(kSeed);  // Boost >= 1.56: ziggurat
    boost::random::normal_distribution<double> normal;
    batch(state, [&] { return normal(mt); });
  });
}

// Gamma(shape, 1): shape < 1 (the boost path) and shape > 1.
void register_gamma() {
  for (const double shape : {0.3, 3.0}) {
    const std::string p = "BM_gamma/shape=" + fmt_double(shape);
    reg(p + "/dyncheck", [shape](benchmark::State& state) {
      ds::Rng rng(kSeed);
      batch(state, [&] { return ds::gamma(rng, shape); });
    });
    reg(p + "/std_reused", [shape](benchmark::State& state) {
      std::mt19937_64 mt(kSeed);
      std::gamma_distribution<double> g(shape, 1.0);
      batch(state, [&] { return g(mt); });
    });
    reg(p + "/std_per_call", [shape](benchmark::State& state) {
      std::mt19937_64 mt(kSeed);
      batch(state, [&] { return std::gamma_distribution<double>(shape, 1.0)(mt); });
    });
    reg(p + "/boost_reused", [shape](benchmark::State& state) {
      boost::random::mt19937_64 mt(kSeed);
      boost::random::gamma_distribution<double> g(shape, 1.0);
      batch(state, [&] { return g(mt); });
    });
  }
}

// Categorical over K Zipf-weighted categories: draws from a table built once, and the build.
void register_categorical() {
  for (const std::size_t k : {std::size_t{3}, std::size_t{500}}) {
    const std::string p = "BM_categorical/K=" + std::to_string(k);
    reg(p + "/dyncheck_alias", [k](benchmark::State& state) {
      ds::Rng rng(kSeed);
      const std::vector<double> w = zipf(k);
      const ds::Categorical cat(w);
      batch(state, [&] { return cat(rng); });
    });
    reg(p + "/std_discrete_reused", [k](benchmark::State& state) {
      std::mt19937_64 mt(kSeed);  // libstdc++: cumulative table + binary search
      const std::vector<double> w = zipf(k);
      std::discrete_distribution<std::size_t> cat(w.begin(), w.end());
      batch(state, [&] { return cat(mt); });
    });
    reg(p + "/boost_discrete_reused", [k](benchmark::State& state) {
      boost::random::mt19937_64 mt(kSeed);  // Boost: alias table
      const std::vector<double> w = zipf(k);
      boost::random::discrete_distribution<std::size_t, double> cat(w.begin(), w.end());
      batch(state, [&] { return cat(mt); });
    });
  }
  // Item = one table built from K weights.
  for (const std::size_t k : {std::size_t{3}, std::size_t{500}}) {
    const std::string p = "BM_categorical_build/K=" + std::to_string(k);
    reg(p + "/dyncheck_alias", [k](benchmark::State& state) {
      const std::vector<double> w = zipf(k);
      for (auto _ : state) {
        ds::Categorical cat(w);
        benchmark::DoNotOptimize(cat);
      }
      set_items(state, 1);
    });
    reg(p + "/std_discrete", [k](benchmark::State& state) {
      const std::vector<double> w = zipf(k);
      for (auto _ : state) {
        std::discrete_distribution<std::size_t> cat(w.begin(), w.end());
        benchmark::DoNotOptimize(cat);
      }
      set_items(state, 1);
    });
    reg(p + "/boost_discrete", [k](benchmark::State& state) {
      const std::vector<double> w = zipf(k);
      for (auto _ : state) {
        boost::random::discrete_distribution<std::size_t, double> cat(w.begin(), w.end());
        benchmark::DoNotOptimize(cat);
      }
      set_items(state, 1);
    });
  }
}

// Binomial(n, p): inversion regime (np < 10) and BTRD regime.
void register_binomial() {
  const std::pair<std::uint64_t, double> cases[] = {{20, 0.1}, {1000, 0.3}, {100000, 0.002}};
  for (const auto& [n, prob] : cases) {
    const std::string p = "BM_binomial/n=" + std::to_string(n) + ",p=" + fmt_double(prob);
    reg(p + "/dyncheck", [n, prob](benchmark::State& state) {
      ds::Rng rng(kSeed);
      batch(state, [&] { return ds::binomial(rng, n, prob); });
    });
    reg(p + "/std_reused", [n, prob](benchmark::State& state) {
      std::mt19937_64 mt(kSeed);
      std::binomial_distribution<std::uint64_t> b(n, prob);
      batch(state, [&] { return b(mt); });
    });
    reg(p + "/std_per_call", [n, prob](benchmark::State& state) {
      std::mt19937_64 mt(kSeed);
      batch(state, [&] { return std::binomial_distribution<std::uint64_t>(n, prob)(mt); });
    });
    reg(p + "/boost_reused", [n, prob](benchmark::State& state) {
      boost::random::mt19937_64 mt(kSeed);
      boost::random::binomial_distribution<std::int64_t, double> b(static_cast<std::int64_t>(n), prob);
      batch(state, [&] { return b(mt); });
    });
    reg(p + "/boost_per_call", [n, prob](benchmark::State& state) {
      boost::random::mt19937_64 mt(kSeed);
      batch(state, [&] {
        return boost::random::binomial_distribution<std::int64_t, double>(
            static_cast<std::int64_t>(n), prob)(mt);
      });
    });
  }
}

/// Sequential conditional binomials with distribution objects built per call (the
/// parameters change with every category), as multinomial does with its own binomial.
template <template <class...> class Binomial, class Engine>
void sequential_binomials(Engine& mt, std::uint64_t n, std::span<const double> p,
                          std::vector<std::uint64_t>& counts) {
  const std::size_t k = p.size();
  std::vector<double> tail(k);
  double sum = 0.0;
  for (std::size_t i = k; i-- > 0;) tail[i] = sum += p[i];
  std::uint64_t remaining = n;
  std::fill(counts.begin(), counts.end(), std::uint64_t{0});
  for (std::size_t i = 0; i + 1 < k && remaining > 0; ++i) {
    counts[i] = Binomial<std::uint64_t>(remaining, p[i] / tail[i])(mt);
    remaining -= counts[i];
  }
  counts[k - 1] = remaining;
}

/// Boost's binomial needs a signed IntType (it calls abs(k - m)); counts fit in int64.
template <class>
class boost_binomial {
 public:
  boost_binomial(std::uint64_t n, double p) : dist_(static_cast<std::int64_t>(n), p) {}
  template <class Engine>
  std::uint64_t operator()(Engine& engine) {
    return static_cast<std::uint64_t>(dist_(engine));
  }

 private:
  boost::random::binomial_distribution<std::int64_t, double> dist_;
};

/// n categorical tokens, counted: what the model needs when it depends only on the counts.
template <class Draw>
void count_tokens(std::uint64_t n, std::vector<std::uint64_t>& counts, Draw draw) {
  std::fill(counts.begin(), counts.end(), std::uint64_t{0});
  for (std::uint64_t t = 0; t < n; ++t) ++counts[draw()];
}

// Multinomial(n = 1e5, Zipf over K): counts directly vs n tokens drawn and counted
// (numerics.md §5). Item = one count vector (n tokens summarized).
void register_multinomial() {
  constexpr std::uint64_t n = 100000;
  for (const std::size_t k : {std::size_t{3}, std::size_t{500}}) {
    const std::string p = "BM_multinomial/n=1e5,K=" + std::to_string(k);
    auto run = [k](auto setup) {
      return [k, setup](benchmark::State& state) {
        const std::vector<double> w = zipf(k);
        std::vector<std::uint64_t> counts(k);
        auto draw_counts = setup(w);
        for (auto _ : state) {
          draw_counts(counts);
          benchmark::DoNotOptimize(counts.data());
          benchmark::ClobberMemory();
        }
        set_items(state, 1);
      };
    };
    reg(p + "/dyncheck_multinomial", run([](const std::vector<double>& w) {
          return [rng = ds::Rng(kSeed), &w](std::vector<std::uint64_t>& c) mutable {
            ds::multinomial(rng, n, w, c);
          };
        }));
    reg(p + "/std_binomials_per_call", run([](const std::vector<double>& w) {
          return [mt = std::mt19937_64(kSeed), &w](std::vector<std::uint64_t>& c) mutable {
            sequential_binomials<std::binomial_distribution>(mt, n, w, c);
          };
        }));
    reg(p + "/boost_binomials_per_call", run([](const std::vector<double>& w) {
          return [mt = boost::random::mt19937_64(kSeed), &w](std::vector<std::uint64_t>& c) mutable {
            sequential_binomials<boost_binomial>(mt, n, w, c);
          };
        }));
    reg(p + "/dyncheck_categorical_count", run([](const std::vector<double>& w) {
          return [rng = ds::Rng(kSeed), cat = ds::Categorical(w)](std::vector<std::uint64_t>& c) mutable {
            count_tokens(n, c, [&] { return cat(rng); });
          };
        }));
    reg(p + "/std_discrete_count", run([](const std::vector<double>& w) {
          return [mt = std::mt19937_64(kSeed),
                  cat = std::discrete_distribution<std::size_t>(w.begin(), w.end())](
                     std::vector<std::uint64_t>& c) mutable {
            count_tokens(n, c, [&] { return cat(mt); });
          };
        }));
    reg(p + "/boost_discrete_count", run([](const std::vector<double>& w) {
          return [mt = boost::random::mt19937_64(kSeed),
                  cat = boost::random::discrete_distribution<std::size_t, double>(w.begin(), w.end())](
                     std::vector<std::uint64_t>& c) mutable {
            count_tokens(n, c, [&] { return cat(mt); });
          };
        }));
  }
}

// Dirichlet(alpha, ..., alpha) over K components. The alternatives normalize independent gamma
// variates with a gamma distribution built per component (the shapes differ in general), which
// returns NaN where all variates underflow (tiny alpha); dyncheck works in log space.
// Boost draws Gamma(1) as an exponential (ziggurat), hence its speed at alpha = 1.
// Item = one component.
void register_dirichlet() {
  const std::pair<std::size_t, double> cases[] = {{3, 1.0}, {3, 0.5}, {500, 0.1}};
  for (const auto& [k, alpha] : cases) {
    const std::string p = "BM_dirichlet/K=" + std::to_string(k) + ",alpha=" + fmt_double(alpha);
    reg(p + "/dyncheck", [k, alpha](benchmark::State& state) {
      ds::Rng rng(kSeed);
      const std::vector<double> a(k, alpha);
      std::vector<double> out(k);
      for (auto _ : state) {
        ds::dirichlet(rng, a, out);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
      }
      set_items(state, k);
    });
    auto normalized_gammas = [k, alpha](auto make_engine, auto make_gamma) {
      return [k, alpha, make_engine, make_gamma](benchmark::State& state) {
        auto engine = make_engine();
        const std::vector<double> a(k, alpha);
        std::vector<double> out(k);
        for (auto _ : state) {
          double sum = 0.0;
          for (std::size_t i = 0; i < k; ++i) sum += out[i] = make_gamma(a[i])(engine);
          for (double& x : out) x /= sum;
          benchmark::DoNotOptimize(out.data());
          benchmark::ClobberMemory();
        }
        set_items(state, k);
      };
    };
    reg(p + "/std_gamma_per_call",
        normalized_gammas([] { return std::mt19937_64(kSeed); },
                          [](double s) { return std::gamma_distribution<double>(s, 1.0); }));
    reg(p + "/boost_gamma_per_call",
        normalized_gammas([] { return boost::random::mt19937_64(kSeed); },
                          [](double s) { return boost::random::gamma_distribution<double>(s, 1.0); }));
  }
}

[[maybe_unused]] const bool registered = [] {
  register_engine();
  register_uniform01();
  register_uniform_index();
  register_normal();
  register_gamma();
  register_categorical();
  register_binomial();
  register_multinomial();
  register_dirichlet();
  return true;
}();

}  // namespace
