// The enumeration of C1 = E[Xᵀ F(X)] over the Boolean cube {±1}^{k×d} (specs/multihead.md B.4 D2;
// F(X) = Σ_i softmax(XΘ_iXᵀ)XW_i, no 1/√d), at (k, d, m) = (4, 4, 2) (2^16 inputs) and (5, 4, 3) (2^20 inputs),
// side by side with the same computation in PyTorch and numpy (CPU, one thread, batched over all 2^{kd} inputs:
// bench/multihead_enum_torch.py, run by this program with /usr/bin/python3).
//
// Benchmarks (items = inputs of the cube):
//   BM_multihead_library/k/d/m/threads   theory::multihead::cube_expectation of Xᵀ layer(heads, X) in double: the
//                                        library's generic path (dynamic Eigen matrices, one input at a time)
//   BM_multihead_kernel/k/d/m/threads    the kernel below, with the same fixed summation order for every thread count
// Both evaluate F(X) for every one of the 2^{kd} inputs (no symmetry reduction). The kernel exploits that a row of X
// takes one of 2^d values: per head it tabulates once the 2^d × 2^d exponentials exp(uᵀΘ_iv − max_v' uᵀΘ_iv')
// (the row maximum shift leaves each softmax row unchanged and keeps every entry <= 1) and the 2^d rows vᵀW_i, so
// that an input costs m k² table reads and m k² d multiply-adds; and it accumulates F's rows per row value u
// (Σ over inputs and tokens with x_a = u of F_a), so that Xᵀ F summed over the cube is Σ_u u ⊗ acc[u] at the end.
// Blocks of 4096 consecutive inputs are summed in index order and combined pairwise in a fixed tree, so that the
// result is bit-identical for 1 and 2 threads; it is checked against the library's enumeration (max |difference|
// printed).
//
// Rates: the 1-thread rows per CPU second of the process (the machine is shared, CPU time is what the other jobs do
// not inflate); the 2-thread scaling from wall time (UseRealTime) of the 1- and 2-thread kernel runs, printed with the
// load average and the 2-thread run's CPU / wall time (how much of the time both threads actually ran). The PyTorch and
// numpy rates are per CPU second of the script (time.process_time), with the input tensor built beforehand (not
// timed), which favours them.
//
// Usage (from the source directory, so that it finds bench/multihead_enum_torch.py):
//   cmake --build build/ci --target dyncheck_multihead_bench
//   build/ci/bench/dyncheck_multihead_bench [--no-torch] [--torch-script=<path>] [Google Benchmark options]

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "dyncheck/theory/multihead/cube.hpp"
#include "dyncheck/theory/multihead/layer.hpp"

namespace {

namespace th = dyncheck::theory::multihead;
using dyncheck::theory::Matrix;

struct Config {
  int k, d, m;
};
constexpr std::array<Config, 2> kConfigs = {{{4, 4, 2}, {5, 4, 3}}};

/// The bench's instance: Θ_i, W_i with N(0, 1) entries from a fixed seed.
th::Heads<double> instance(const Config& c) {
  std::mt19937_64 engine(20261124U + static_cast<unsigned>(100 * c.k + 10 * c.d + c.m));
  std::normal_distribution<double> normal;
  th::Heads<double> heads;
  for (int i = 0; i < c.m; ++i) {
    Matrix<double> theta(c.d, c.d), w(c.d, c.d);
    for (Eigen::Index j = 0; j < theta.size(); ++j) theta.data()[j] = normal(engine);
    for (Eigen::Index j = 0; j < w.size(); ++j) w.data()[j] = normal(engine);
    heads.theta.push_back(theta);
    heads.w.push_back(w);
  }
  return heads;
}

Matrix<double> library_c1(const th::Heads<double>& heads, int k, unsigned threads) {
  return th::cube_expectation<double>(
      k, heads.d(), [&](const Matrix<double>& X) { return Matrix<double>(X.transpose() * th::layer(heads, X)); },
      threads);
}

// ---------------------------------------------------------------- the kernel
template <int K, int D, int M>
struct Kernel {
  static constexpr int R = 1 << D;
  static constexpr std::uint64_t kBlock = 4096;
  alignas(64) double e[M][R][R];  ///< exp(uᵀΘ_iv − max_v' uᵀΘ_iv')
  alignas(64) double v[M][R][D];  ///< vᵀW_i

  explicit Kernel(const th::Heads<double>& heads) {
    for (int i = 0; i < M; ++i) {
      for (int u = 0; u < R; ++u) {
        std::array<double, R> z{};
        for (int w = 0; w < R; ++w) {
          double s = 0;
          for (int b = 0; b < D; ++b) {
            for (int c = 0; c < D; ++c) s += sign(u, b) * heads.theta[i](b, c) * sign(w, c);
          }
          z[w] = s;
        }
        const double top = *std::max_element(z.begin(), z.end());
        for (int w = 0; w < R; ++w) e[i][u][w] = std::exp(z[w] - top);
        for (int c = 0; c < D; ++c) {
          double s = 0;
          for (int b = 0; b < D; ++b) s += sign(u, b) * heads.w[i](b, c);
          v[i][u][c] = s;
        }
      }
    }
  }

  static double sign(int row_value, int b) { return ((row_value >> b) & 1) != 0 ? -1.0 : 1.0; }

  /// acc[u][c] += Σ over inputs in [begin, end) and tokens a with row value u of F_a(c), in index order.
  void block(std::uint64_t begin, std::uint64_t end, double (&acc)[R][D]) const {
    for (std::uint64_t index = begin; index < end; ++index) {
      int r[K];
      for (int a = 0; a < K; ++a) r[a] = static_cast<int>((index >> (a * D)) & (R - 1));
      for (int a = 0; a < K; ++a) {
        double f[D] = {};
        for (int i = 0; i < M; ++i) {
          const double* row = e[i][r[a]];
          double total = 0;
          double num[D] = {};
          for (int b = 0; b < K; ++b) {
            const double w = row[r[b]];
            total += w;
            const double* vb = v[i][r[b]];
            for (int c = 0; c < D; ++c) num[c] += w * vb[c];
          }
          const double inverse = 1.0 / total;
          for (int c = 0; c < D; ++c) f[c] += num[c] * inverse;
        }
        for (int c = 0; c < D; ++c) acc[r[a]][c] += f[c];
      }
    }
  }

  /// C1 = E[Xᵀ F(X)], d × d.
  Matrix<double> c1(unsigned threads) const {
    const std::uint64_t inputs = std::uint64_t{1} << (K * D);
    const std::uint64_t blocks = (inputs + kBlock - 1) / kBlock;
    std::vector<std::array<std::array<double, D>, R>> sums(blocks);
    auto run = [&](unsigned t) {
      for (std::uint64_t b = t; b < blocks; b += threads) {
        double acc[R][D] = {};
        block(b * kBlock, std::min(inputs, (b + 1) * kBlock), acc);
        for (int u = 0; u < R; ++u) {
          for (int c = 0; c < D; ++c) sums[b][u][c] = acc[u][c];
        }
      }
    };
    if (threads <= 1) {
      run(0);
    } else {
      std::vector<std::jthread> pool;
      for (unsigned t = 0; t < threads; ++t) pool.emplace_back(run, t);
    }
    // Pairwise combination in a fixed tree over the blocks.
    for (std::uint64_t width = 1; width < blocks; width *= 2) {
      for (std::uint64_t b = 0; b + width < blocks; b += 2 * width) {
        for (int u = 0; u < R; ++u) {
          for (int c = 0; c < D; ++c) sums[b][u][c] += sums[b + width][u][c];
        }
      }
    }
    Matrix<double> out = Matrix<double>::Zero(D, D);
    for (int u = 0; u < R; ++u) {
      for (int b = 0; b < D; ++b) {
        for (int c = 0; c < D; ++c) out(b, c) += sign(u, b) * sums[0][u][c];
      }
    }
    return out / static_cast<double>(inputs);
  }
};

Matrix<double> kernel_c1(const Config& c, const th::Heads<double>& heads, unsigned threads) {
  if (c.k == 4 && c.d == 4 && c.m == 2) return std::make_unique<Kernel<4, 4, 2>>(heads)->c1(threads);
  if (c.k == 5 && c.d == 4 && c.m == 3) return std::make_unique<Kernel<5, 4, 3>>(heads)->c1(threads);
  std::abort();
}

void bm_library(benchmark::State& state, Config c, unsigned threads) {
  const th::Heads<double> heads = instance(c);
  for (auto _ : state) benchmark::DoNotOptimize(library_c1(heads, c.k, threads));
  state.SetItemsProcessed(state.iterations() * (std::int64_t{1} << (c.k * c.d)));
}

void bm_kernel(benchmark::State& state, Config c, unsigned threads) {
  const th::Heads<double> heads = instance(c);
  for (auto _ : state) benchmark::DoNotOptimize(kernel_c1(c, heads, threads));
  state.SetItemsProcessed(state.iterations() * (std::int64_t{1} << (c.k * c.d)));
}

std::string name(const char* kind, const Config& c, unsigned threads) {
  return std::string(kind) + "/" + std::to_string(c.k) + "/" + std::to_string(c.d) + "/" + std::to_string(c.m) + "/" +
         std::to_string(threads);
}

/// Keeps every run's items/s (per CPU second, or per wall second with UseRealTime) for the summary table.
class RecordingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      const auto items = run.counters.find("items_per_second");
      if (items != run.counters.end()) rates_[run.run_name.str()] = items->second.value;
      if (run.real_accumulated_time > 0) busy_[run.run_name.str()] = run.cpu_accumulated_time / run.real_accumulated_time;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  /// items/s of the run named `name` exactly, or of the first whose name starts with `name` + "/" (Google Benchmark
  /// appends "/process_time/real_time" and the like).
  double rate(const std::string& name) const {
    if (const auto r = rates_.find(name); r != rates_.end()) return r->second;
    for (const auto& [key, value] : rates_) {
      if (key.rfind(name + "/", 0) == 0) return value;
    }
    return 0.0;
  }
  /// CPU seconds per iteration over wall seconds per iteration of that run (threads busy on average).
  double busy(const std::string& name) const {
    for (const auto& [key, value] : busy_) {
      if (key == name || key.rfind(name + "/", 0) == 0) return value;
    }
    return 0.0;
  }

 private:
  std::map<std::string, double> rates_, busy_;
};

std::string load_average() {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen("/proc/loadavg", "r"), std::fclose);
  std::array<char, 128> text{};
  if (!file || std::fgets(text.data(), static_cast<int>(text.size()), file.get()) == nullptr) return "unknown";
  std::string out(text.data());
  while (!out.empty() && (out.back() == '\n')) out.pop_back();
  return out;
}

struct ScriptResult {
  double rate = 0;
  Matrix<double> result;
};

/// Runs the PyTorch / numpy script on the bench's instances; impl -> config index -> result.
std::map<std::string, std::map<int, ScriptResult>> run_script(const std::string& script) {
  std::string command = "/usr/bin/python3 " + script + " --impl both";
  for (const Config& c : kConfigs) {
    const th::Heads<double> heads = instance(c);
    command += " --config '" + std::to_string(c.k) + "," + std::to_string(c.d) + "," + std::to_string(c.m) + ":";
    for (int i = 0; i < c.m; ++i) {
      for (const Matrix<double>* mat : {&heads.theta[static_cast<std::size_t>(i)], &heads.w[static_cast<std::size_t>(i)]}) {
        for (Eigen::Index j = 0; j < mat->size(); ++j) {
          char number[40];
          std::snprintf(number, sizeof number, " %.17g", mat->data()[j]);
          command += number;
        }
      }
    }
    command += "'";
  }
  std::map<std::string, std::map<int, ScriptResult>> out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return out;
  std::array<char, 8192> line{};
  while (std::fgets(line.data(), static_cast<int>(line.size()), pipe.get()) != nullptr) {
    char impl[16] = {};
    int k = 0, d = 0, m = 0;
    if (std::sscanf(line.data(), "{\"impl\": \"%15[a-z]\", \"k\": %d, \"d\": %d, \"m\": %d", impl, &k, &d, &m) != 4) continue;
    const char* rate = std::strstr(line.data(), "\"inputs_per_second\": ");
    const char* result = std::strstr(line.data(), "\"result\": [");
    if (rate == nullptr || result == nullptr) continue;
    ScriptResult r;
    r.rate = std::strtod(rate + 21, nullptr);
    r.result = Matrix<double>(d, d);
    const char* p = result + 11;
    for (Eigen::Index j = 0; j < r.result.size(); ++j) {
      char* next = nullptr;
      r.result.data()[j] = std::strtod(p, &next);
      p = next + 1;  // skip ',' or ']'
    }
    for (int i = 0; i < static_cast<int>(kConfigs.size()); ++i) {
      if (kConfigs[static_cast<std::size_t>(i)].k == k && kConfigs[static_cast<std::size_t>(i)].d == d &&
          kConfigs[static_cast<std::size_t>(i)].m == m) {
        out[impl][i] = r;
      }
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool with_script = true;
  std::string script = "bench/multihead_enum_torch.py";
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--no-torch") {
      with_script = false;
    } else if (arg.rfind("--torch-script=", 0) == 0) {
      script = arg.substr(15);
    } else {
      args.push_back(argv[i]);
    }
  }
  for (const Config& c : kConfigs) {
    benchmark::RegisterBenchmark(name("BM_multihead_library", c, 1).c_str(), bm_library, c, 1U)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(name("BM_multihead_kernel", c, 1).c_str(), bm_kernel, c, 1U)
        ->Unit(benchmark::kMillisecond);
    // Wall time for the scaling; CPU time of the whole process (both threads) beside it.
    for (unsigned threads : {1U, 2U}) {
      benchmark::RegisterBenchmark((name("BM_multihead_kernel", c, threads) + "_wall").c_str(), bm_kernel, c, threads)
          ->Unit(benchmark::kMillisecond)
          ->MeasureProcessCPUTime()
          ->UseRealTime();
    }
  }
  const std::string load_before = load_average();
  int new_argc = static_cast<int>(args.size());
  benchmark::Initialize(&new_argc, args.data());
  RecordingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  std::map<std::string, std::map<int, ScriptResult>> scripts;
  if (with_script) scripts = run_script(script);

  std::printf("\nE[X' F(X)] over {+-1}^(k x d) by enumeration, double; inputs/s (higher is better)\n");
  std::printf("load average (/proc/loadavg) before the benchmarks: %s; after: %s; cores: %u\n", load_before.c_str(),
              load_average().c_str(), std::thread::hardware_concurrency());
  std::printf("%2s %2s %2s | %10s %10s | %10s %10s | %7s | %10s %10s %7s %9s %7s | %9s %9s\n", "k", "d", "m", "library",
              "kernel", "PyTorch", "numpy", "ratio", "1t wall", "2t wall", "scaling", "2t busy", "cpu eff", "|k - lib|",
              "|k - py|");
  for (int i = 0; i < static_cast<int>(kConfigs.size()); ++i) {
    const Config& c = kConfigs[static_cast<std::size_t>(i)];
    const th::Heads<double> heads = instance(c);
    const double library = reporter.rate(name("BM_multihead_library", c, 1));
    const double kernel = reporter.rate(name("BM_multihead_kernel", c, 1));
    const double wall1 = reporter.rate(name("BM_multihead_kernel", c, 1) + "_wall");
    const double wall2 = reporter.rate(name("BM_multihead_kernel", c, 2) + "_wall");
    const double busy1 = reporter.busy(name("BM_multihead_kernel", c, 1) + "_wall");
    const double busy2 = reporter.busy(name("BM_multihead_kernel", c, 2) + "_wall");
    // Inputs per process CPU second on 2 threads over that on 1 thread: 1 when splitting costs nothing.
    const double efficiency = wall1 > 0 && busy2 > 0 ? (wall2 / busy2) / (wall1 / busy1) : 0.0;
    const Matrix<double> ours = kernel_c1(c, heads, 1);
    const double versus_library = (ours - library_c1(heads, c.k, 2)).cwiseAbs().maxCoeff();
    const bool identical = (ours - kernel_c1(c, heads, 2)).cwiseAbs().maxCoeff() == 0.0;
    double torch = 0, numpy = 0, versus_script = 0;
    if (auto t = scripts["torch"].find(i); t != scripts["torch"].end()) {
      torch = t->second.rate;
      versus_script = std::max(versus_script, (ours - t->second.result).cwiseAbs().maxCoeff());
    }
    if (auto n = scripts["numpy"].find(i); n != scripts["numpy"].end()) {
      numpy = n->second.rate;
      versus_script = std::max(versus_script, (ours - n->second.result).cwiseAbs().maxCoeff());
    }
    const double fastest = std::max(torch, numpy);
    std::printf("%2d %2d %2d | %10.4g %10.4g | %10.4g %10.4g | %7.3g | %10.4g %10.4g %7.3g %9.3g %7.3g | %9.2g %9.2g%s\n",
                c.k, c.d, c.m, library, kernel, torch, numpy, fastest > 0 ? kernel / fastest : 0.0, wall1, wall2,
                wall1 > 0 ? wall2 / wall1 : 0.0, busy2, efficiency, versus_library, versus_script,
                identical ? "" : "  (1 and 2 threads differ!)");
  }
  std::printf("library, kernel = 1 thread, inputs per CPU second; PyTorch, numpy = 1 thread, per CPU second, the whole\n"
              "cube as one batch (inputs built beforehand); ratio = kernel / max(PyTorch, numpy) (target >= 10);\n"
              "1t wall, 2t wall = the kernel's inputs per wall second on 1 and 2 threads; scaling = 2t / 1t (target\n"
              ">= 1.8, which needs 2 idle cores: compare the load average); 2t busy = the 2-thread run's process CPU\n"
              "time / wall time (2 when both threads ran all the time); cpu eff = inputs per process CPU second on 2\n"
              "threads / on 1 thread (1: splitting costs nothing, so 2 idle cores would give scaling 2 x cpu eff);\n"
              "|k - lib|, |k - py| = largest entry difference of the kernel's result from the library's enumeration\n"
              "and from the scripts' results.\n");
  benchmark::Shutdown();
  return 0;
}
