// One SGD step of the SCB linear-attention model (dyncheck::sim::scb), side by side with the same
// step in PyTorch 1.13 (CPU, one thread; bench/scb_sgd_torch.py, run by this program).
//
// Benchmarks, for (N, T) in {(3, 100), (20, 5000), (500, 10000)} and batch B = 128:
//   BM_scb_stage1_step/N/T          stage1_sgd_step: sampling + per-sample gradients + update
//   BM_scb_stage1_presampled/N/T    the same step (accumulate_gradients + apply_gradient_step) on
//                                   4 batches drawn beforehand and cycled (what the PyTorch script
//                                   times: its batches are drawn by numpy)
//   BM_scb_stage1_presampled_scalar/N/T   the same with the portable scalar kernels forced
//                                   (the path argument of accumulate_gradients; same results bit for bit), to show
//                                   what the run-time dispatched SIMD kernels gain
//   BM_scb_scatter/N/T, BM_scb_gather/N/T   the step's two O(T) kernels alone on the same
//                                   presampled examples: together they bound the step's rate
//   BM_scb_sample/N/T               Sampler::sample_into alone
//   BM_copy_bandwidth/N/T           std::memcpy of a buffer of the size of the data one sample
//                                   touches (V, its gradient, one A column and its gradient, the
//                                   tokens: 16N² + 24T bytes, at least 32 KiB)
// Items are samples (examples), except for BM_copy_bandwidth (bytes copied, read + write).
// With --benchmark_repetitions=K the table shows medians: of the K repetitions of each C++
// benchmark and of K runs of the PyTorch script.
// Rates are per CPU second of the (single-threaded) process, on both sides (the PyTorch script
// uses time.process_time), because the benchmark machine is shared and wall time is inflated by
// other jobs.
//
// After the Google Benchmark run, main() runs /usr/bin/python3 bench/scb_sgd_torch.py (unless
// --no-torch) and prints one table: samples/s of C++ and PyTorch, their ratio, and the achieved
// fraction of the memory-bandwidth limit, i.e. samples/s × bytes touched per sample ÷ copy
// bandwidth at the size of the data one sample touches (the cache level that serves it). Bytes
// touched per sample of the presampled step, counting each pass over an array of the kernels in
// sim/scb/attention_kernels.hpp and attention_kernels_gradient.cpp: the int tokens read twice (scatter into h, gather
// into the a-gradient) 8T, the attention column 8T, the a-gradient column read + write 16T, V read
// twice (Vh and Vᵀr) 16N², the V-gradient read + write 16N²: 32T + 32N² bytes (the N-vectors h,
// r, g and the scatter's partial sums live in registers or L1 and are not counted). With
// sampling, + 4T token writes. A fraction well below 1 means the step is bound by instructions,
// not by moving bytes: for N = 20 mostly the scatter's read-modify-write of a partial sum per
// token (a load and a store whose address is the token), for N = 3 the scatter's compare and
// masked add per token value and chunk of eight tokens, and the fixed cost of each sample (the N²
// products, the loss). The second table (BM_scb_scatter, BM_scb_gather) shows how much of the
// step the two O(T) kernels alone leave room for. For N ≤ 8 the AVX-512 step does not call
// scatter_attention but its own two-sample scatter (same sums), so there the table is a guide,
// not a strict bound.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dyncheck/sim/scb/attention_kernels.hpp"
#include "dyncheck/sim/scb/instance.hpp"
#include "dyncheck/sim/scb/optimizers.hpp"
#include "dyncheck/sim/scb/sampler.hpp"
#include "python_script.hpp"

namespace {

namespace bench = dyncheck::bench;
namespace scb = dyncheck::sim::scb;
using dyncheck::sim::Rng;

constexpr long long kBatch = 128;
constexpr std::array<std::pair<int, int>, 3> kConfigs{{{3, 100}, {20, 5000}, {500, 10000}}};

scb::Instance bench_instance(int N, int T) {
  Rng rng(20261122);
  return scb::random_instance({.N = N, .T = T, .Q = std::min(4, T)}, rng);
}

double bytes_per_sample(int N, int T, bool with_sampling) {
  const double t = T, n = N;
  return 32.0 * t + 32.0 * n * n + (with_sampling ? 4.0 * t : 0.0);
}

/// The data one sample touches: V, its gradient, one attention column and its gradient column,
/// the tokens. This, not the whole T x N matrices, sets which cache level serves the traffic.
double hot_set_bytes(int N, int T) { return 16.0 * N * N + 24.0 * static_cast<double>(T); }

void stage1_step(benchmark::State& state, int N, int T) {
  const scb::Instance instance = bench_instance(N, T);
  const scb::Sampler sampler(instance);
  scb::LinearModel model = scb::initial_model(instance);
  scb::SgdWorkspace workspace(N, T);
  Rng rng(1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(scb::stage1_sgd_step(model, instance, sampler, kBatch, 1e-3, 1e-3, rng, workspace));
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

void stage1_presampled(benchmark::State& state, int N, int T, scb::KernelPath path) {
  const scb::Instance instance = bench_instance(N, T);
  const scb::Sampler sampler(instance);
  scb::LinearModel model = scb::initial_model(instance);
  scb::SgdWorkspace workspace(N, T);
  Rng rng(2);
  std::vector<std::vector<scb::Example>> batches(4);
  for (auto& batch : batches) {
    for (long long b = 0; b < kBatch; ++b) batch.push_back(sampler.sample(rng));
  }
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& batch = batches[i++ % batches.size()];
    workspace.sums.clear();
    scb::accumulate_gradients(model, batch, workspace.sums, path);
    scb::apply_gradient_step(model, instance.mu, workspace.sums, 1e-3, 1e-3, {});
    benchmark::DoNotOptimize(model.V.data());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

/// The two O(T) kernels of the step alone (attention_kernels.hpp, the dispatched path), on the
/// same 4 × 128 presampled examples as stage1_presampled: every step must scatter each sample's
/// context into h and gather its a-gradient, so 1 / (1/scatter + 1/gather) samples/s bounds what
/// any step built on these kernels can reach.
void kernel_only(benchmark::State& state, int N, int T, bool scatter) {
  const scb::Instance instance = bench_instance(N, T);
  const scb::Sampler sampler(instance);
  const scb::LinearModel model = scb::initial_model(instance);
  Rng rng(2);
  std::vector<scb::Example> examples;
  for (long long b = 0; b < 4 * kBatch; ++b) examples.push_back(sampler.sample(rng));
  Eigen::MatrixXd gradient = Eigen::MatrixXd::Zero(T, N);
  const Eigen::VectorXd g = Eigen::VectorXd::LinSpaced(N, 0.5, 1.5);
  Eigen::VectorXd h(N);
  const scb::KernelPath path = scb::default_kernel_path();
  std::size_t i = 0;
  for (auto _ : state) {
    const scb::Example& example = examples[i++ % examples.size()];
    if (scatter) {
      scb::scatter_attention(path, example.tokens.data(), model.A.col(example.query).data(), T, N, h.data());
      benchmark::DoNotOptimize(h.data());
    } else {
      scb::gather_attention_gradient(path, example.tokens.data(), g.data(), T, N, gradient.col(example.query).data());
      benchmark::DoNotOptimize(gradient.data());
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void sample_only(benchmark::State& state, int N, int T) {
  const scb::Instance instance = bench_instance(N, T);
  const scb::Sampler sampler(instance);
  scb::Example example;
  Rng rng(3);
  for (auto _ : state) {
    sampler.sample_into(example, rng);
    benchmark::DoNotOptimize(example.tokens.data());
  }
  state.SetItemsProcessed(state.iterations());
}

void copy_bandwidth(benchmark::State& state, std::size_t bytes) {
  std::vector<char> from(bytes, 1), to(bytes, 0);
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), bytes);
    benchmark::DoNotOptimize(to.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(2 * bytes));
}

/// Records items/s and bytes/s of every run next to the usual console output: the median over
/// the repetitions when --benchmark_repetitions > 1 (the machine is shared, so one repetition
/// can be slowed down by other jobs), else the single run.
class RecordingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type == Run::RT_Aggregate && !median) continue;
      auto& target = median ? medians_ : singles_;
      const auto items = run.counters.find("items_per_second");
      const auto bytes = run.counters.find("bytes_per_second");
      if (items != run.counters.end()) target[run.run_name.str()] = items->second.value;
      if (bytes != run.counters.end()) target[run.run_name.str()] = bytes->second.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  double rate(const std::string& name) const {
    if (const auto m = medians_.find(name); m != medians_.end()) return m->second;
    const auto s = singles_.find(name);
    return s != singles_.end() ? s->second : 0.0;
  }

 private:
  std::map<std::string, double> medians_, singles_;
};

std::string name(const char* kind, int N, int T) { return std::string(kind) + "/" + std::to_string(N) + "/" + std::to_string(T); }

/// {"N": 3, "T": 100, ..., "samples_per_second": x} -> x for (N, T), from the script's rows.
std::map<std::pair<int, int>, double> run_torch(const std::string& script) {
  std::map<std::pair<int, int>, double> rates;
  for (const bench::ScriptRow& row : bench::run_python_script(script, "--batch " + std::to_string(kBatch))) {
    if (row.has("samples_per_second")) rates[{row.integer("N"), row.integer("T")}] = row.number("samples_per_second");
  }
  return rates;
}

}  // namespace

int main(int argc, char** argv) {
  bool with_torch = true;
  int repetitions = 1;  // --benchmark_repetitions, read before Google Benchmark consumes it
  std::string script = "bench/scb_sgd_torch.py";
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--no-torch") {
      with_torch = false;
    } else if (arg.rfind("--torch-script=", 0) == 0) {
      script = arg.substr(15);
    } else {
      if (arg.rfind("--benchmark_repetitions=", 0) == 0) repetitions = std::max(1, std::atoi(arg.c_str() + 24));
      args.push_back(argv[i]);
    }
  }
  for (const auto& [N, T] : kConfigs) {
    benchmark::RegisterBenchmark(name("BM_scb_stage1_step", N, T).c_str(), stage1_step, N, T);
    benchmark::RegisterBenchmark(name("BM_scb_stage1_presampled", N, T).c_str(), stage1_presampled, N, T,
                                 scb::default_kernel_path());
    benchmark::RegisterBenchmark(name("BM_scb_stage1_presampled_scalar", N, T).c_str(), stage1_presampled, N, T,
                                 scb::KernelPath::scalar);
    benchmark::RegisterBenchmark(name("BM_scb_scatter", N, T).c_str(), kernel_only, N, T, true);
    benchmark::RegisterBenchmark(name("BM_scb_gather", N, T).c_str(), kernel_only, N, T, false);
    benchmark::RegisterBenchmark(name("BM_scb_sample", N, T).c_str(), sample_only, N, T);
    const auto bytes = static_cast<std::size_t>(std::max(hot_set_bytes(N, T), 32768.0));
    benchmark::RegisterBenchmark(("BM_copy_bandwidth/" + std::to_string(N) + "/" + std::to_string(T)).c_str(),
                                 copy_bandwidth, bytes);
  }
  int new_argc = static_cast<int>(args.size());
  benchmark::Initialize(&new_argc, args.data());
  RecordingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  std::map<std::pair<int, int>, double> torch;
  int status = 0;
  if (with_torch) {
    // As many runs of the script as repetitions of the C++ benchmarks, and their median.
    std::map<std::pair<int, int>, std::vector<double>> runs;
    for (int r = 0; r < repetitions && status == 0; ++r) {
      const auto rates = bench::script_side_or_report("dyncheck_scb_bench", status, [&] { return run_torch(script); });
      for (const auto& [config, rate] : rates) runs[config].push_back(rate);
    }
    for (auto& [config, rates] : runs) {
      std::sort(rates.begin(), rates.end());
      const std::size_t n = rates.size();
      torch[config] = n % 2 == 1 ? rates[n / 2] : 0.5 * (rates[n / 2 - 1] + rates[n / 2]);
    }
  }
  std::printf("\nSCB stage-1 SGD step, batch B = %lld, double; samples/s (higher is better); kernel path %s\n",
              kBatch, scb::kernel_path_name(scb::default_kernel_path()));
  std::printf("%5s %6s | %12s %12s %12s %12s | %12s %8s %8s | %9s %9s\n", "N", "T", "C++ step", "C++ presamp",
              "(scalar)", "sampler", "PyTorch", "ratio", "ratio*", "bw frac", "bw frac*");
  for (const auto& [N, T] : kConfigs) {
    const double step = reporter.rate(name("BM_scb_stage1_step", N, T));
    const double presampled = reporter.rate(name("BM_scb_stage1_presampled", N, T));
    const double presampled_scalar = reporter.rate(name("BM_scb_stage1_presampled_scalar", N, T));
    const double sampler = reporter.rate(name("BM_scb_sample", N, T));
    const double bandwidth = reporter.rate("BM_copy_bandwidth/" + std::to_string(N) + "/" + std::to_string(T));
    const auto t = torch.find({N, T});
    const double torch_rate = t != torch.end() ? t->second : 0.0;
    const double fraction = bandwidth > 0 ? presampled * bytes_per_sample(N, T, false) / bandwidth : 0.0;
    const double fraction_step = bandwidth > 0 ? step * bytes_per_sample(N, T, true) / bandwidth : 0.0;
    std::printf("%5d %6d | %12.4g %12.4g %12.4g %12.4g | %12.4g %8.3g %8.3g | %9.3f %9.3f\n", N, T, step, presampled,
                presampled_scalar, sampler, torch_rate, torch_rate > 0 ? presampled / torch_rate : 0.0,
                torch_rate > 0 ? step / torch_rate : 0.0, fraction, fraction_step);
  }
  std::printf("(scalar) = C++ presampled with the portable scalar kernels (same results bit for bit);\n"
              "ratio = C++ presampled / PyTorch (both time the step on batches drawn beforehand);\n"
              "ratio* = C++ step including its own sampling / PyTorch step without sampling.\n"
              "bw frac = presampled samples/s x (32T + 32N^2) bytes / copy bandwidth at the per-sample hot-set size;\n"
              "bw frac* = the same for the full step with sampling (36T + 32N^2 bytes).\n");

  std::printf("\nThe step's two O(T) kernels alone (dispatched path, same presampled examples); samples/s\n");
  std::printf("%5s %6s | %12s %12s %12s | %12s %12s\n", "N", "T", "scatter", "gather", "both", "bound ratio",
              "step/both");
  for (const auto& [N, T] : kConfigs) {
    const double scatter = reporter.rate(name("BM_scb_scatter", N, T));
    const double gather = reporter.rate(name("BM_scb_gather", N, T));
    const double both = scatter > 0 && gather > 0 ? 1.0 / (1.0 / scatter + 1.0 / gather) : 0.0;
    const double presampled = reporter.rate(name("BM_scb_stage1_presampled", N, T));
    const auto t = torch.find({N, T});
    const double torch_rate = t != torch.end() ? t->second : 0.0;
    std::printf("%5d %6d | %12.4g %12.4g %12.4g | %12.3g %12.3f\n", N, T, scatter, gather, both,
                torch_rate > 0 ? both / torch_rate : 0.0, both > 0 ? presampled / both : 0.0);
  }
  std::printf("both = 1 / (1/scatter + 1/gather): no step that scatters h and gathers the a-gradient with these\n"
              "kernels can exceed it; bound ratio = both / PyTorch; step/both = the share of that bound the\n"
              "presampled step reaches (the rest is V h, V^T r, the update and per-sample overhead).\n");
  benchmark::Shutdown();
  return status;
}
