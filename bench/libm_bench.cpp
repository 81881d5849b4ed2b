// dyncheck::portable's elementary functions vs glibc's (whose variant depends on the CPU), side by
// side: the cost of CPU-independent bits. Each benchmark evaluates one function over 4096 fixed
// arguments in the range the samplers and claims use; items/s is calls per second.
//   cmake --build build/ci --target dyncheck_libm_bench && build/ci/bench/dyncheck_libm_bench
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "dyncheck/portable/math.hpp"

namespace {

std::vector<double> arguments(double lo, double hi) {
  std::vector<double> x(4096);
  std::uint64_t state = 0x853c49e6748fea9bULL;
  for (double& v : x) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    v = lo + (hi - lo) * static_cast<double>(state >> 11) * 0x1p-53;
  }
  return x;
}

template <double (*F)(double)>
void unary(benchmark::State& state, double lo, double hi) {
  const std::vector<double> x = arguments(lo, hi);
  for (auto _ : state) {
    double sum = 0;
    for (double v : x) sum += F(v);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(x.size()));
}

template <double (*F)(double, double)>
void binary(benchmark::State& state, double lo, double hi) {
  const std::vector<double> x = arguments(lo, hi), y = arguments(-hi, hi);
  for (auto _ : state) {
    double sum = 0;
    for (std::size_t i = 0; i < x.size(); ++i) sum += F(x[i], y[i]);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(x.size()));
}

double glibc_exp(double x) { return std::exp(x); }
double glibc_log(double x) { return std::log(x); }
double glibc_log1p(double x) { return std::log1p(x); }
double glibc_expm1(double x) { return std::expm1(x); }
double glibc_tanh(double x) { return std::tanh(x); }
double glibc_pow(double x, double y) { return std::pow(x, y); }

namespace pm = dyncheck::portable;
// One pair per function: BM_<name>_glibc and BM_<name>_portable over the same arguments.
#define DYNCHECK_LIBM_PAIR(kind, name, lo, hi)                                                   \
  void BM_##name##_glibc(benchmark::State& state) { kind<glibc_##name>(state, lo, hi); }       \
  void BM_##name##_portable(benchmark::State& state) { kind<pm::name>(state, lo, hi); }        \
  BENCHMARK(BM_##name##_glibc);                                                                \
  BENCHMARK(BM_##name##_portable);
DYNCHECK_LIBM_PAIR(unary, exp, -20.0, 20.0)
DYNCHECK_LIBM_PAIR(unary, log, 1e-6, 1e3)
DYNCHECK_LIBM_PAIR(unary, log1p, -0.9, 10.0)
DYNCHECK_LIBM_PAIR(unary, expm1, -5.0, 5.0)
DYNCHECK_LIBM_PAIR(unary, tanh, -5.0, 5.0)
DYNCHECK_LIBM_PAIR(binary, pow, 0.01, 10.0)

}  // namespace
