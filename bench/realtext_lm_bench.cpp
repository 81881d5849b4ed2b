// Training speed of the real-text language model (sim/text/transformer_lm.hpp, the libtorch plugin)
// against the same model in Python PyTorch (bench/realtext_lm_torch.py, Debian's python3-torch), one
// thread each, in one run. Both train on the same synthetic xorshift64 token stream (the model's cost does
// not depend on which tokens it reads) with the same sizes, dropout, Adam and clipping; both report
// training tokens per CPU second of their process over the training steps only, after `warmup` untimed
// steps (per CPU second because the machine is shared: wall time is inflated by other jobs). With
// --repetitions=K each side runs K times and the table shows the medians. The 1-minute load average is printed
// before and after (per-CPU-second rates still move with the load: shared caches and memory bandwidth).
// Run from the source directory (it finds bench/realtext_lm_torch.py there):
//   cmake --build build/ci --target dyncheck_realtext_bench
//   build/ci/bench/dyncheck_realtext_bench [--steps=100] [--repetitions=3] [--no-torch]
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dyncheck/sim/text/transformer_lm.hpp"

namespace {

using dyncheck::sim::text::LmConfig;

std::vector<std::int64_t> synthetic_tokens(std::size_t n, std::int64_t vocabulary) {
  std::vector<std::int64_t> ids(n);
  std::uint64_t x = 0x9E3779B97F4A7C15ULL;
  for (auto& id : ids) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    id = static_cast<std::int64_t>(x % static_cast<std::uint64_t>(vocabulary));
  }
  return ids;
}

double load_average() {
  double load[1] = {-1};
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Tokens per CPU second over `steps` steps after `warmup`: the difference of two runs' step CPU times.
double cpp_rate(const LmConfig& base, std::int64_t warmup, std::int64_t steps) {
  const auto rows = static_cast<std::size_t>(base.bptt * (warmup + steps) + 1);
  const auto train = synthetic_tokens(rows * static_cast<std::size_t>(base.batch), base.vocabulary);
  const auto validation = synthetic_tokens(static_cast<std::size_t>((base.bptt + 1) * base.eval_batch), base.vocabulary);
  LmConfig c = base;
  c.eval_every = warmup + steps;
  c.eval_windows = 1;
  c.steps = warmup;
  const double warm = dyncheck::sim::text::train_transformer_lm(train, validation, c).train_cpu_seconds;
  c.steps = warmup + steps;
  const double all = dyncheck::sim::text::train_transformer_lm(train, validation, c).train_cpu_seconds;
  return static_cast<double>(steps * c.bptt * c.batch) / (all - warm);
}

double torch_rate(const std::string& script, const LmConfig& c, std::int64_t warmup, std::int64_t steps) {
  const std::string command =
      fmt::format("/usr/bin/python3 {} --vocabulary {} --emsize {} --layers {} --heads {} --dropout {} --bptt {} "
                  "--batch {} --steps {} --warmup {}",
                  script, c.vocabulary, c.emsize, c.layers, c.heads, c.dropout, c.bptt, c.batch, steps, warmup);
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) throw std::runtime_error("cannot run " + command);
  char line[512];
  double rate = -1;
  while (std::fgets(line, sizeof line, pipe.get()) != nullptr) {
    double value = 0;
    if (std::sscanf(line, "tokens_per_cpu_second %lf", &value) == 1) rate = value;
  }
  if (rate <= 0) throw std::runtime_error("no rate from: " + command);
  return rate;
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t steps = 100, warmup = 5;
  int repetitions = 1;
  bool torch = true;
  std::string script = "bench/realtext_lm_torch.py";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--steps=", 0) == 0) {
      steps = std::stoll(arg.substr(8));
    } else if (arg.rfind("--repetitions=", 0) == 0) {
      repetitions = std::stoi(arg.substr(14));
    } else if (arg == "--no-torch") {
      torch = false;
    } else if (arg.rfind("--torch-script=", 0) == 0) {
      script = arg.substr(15);
    } else {
      fmt::print(stderr, "usage: {} [--steps=N] [--repetitions=K] [--no-torch] [--torch-script=PATH]\n", argv[0]);
      return 2;
    }
  }
  if (const auto why = dyncheck::sim::text::torch_unavailable()) {
    fmt::print(stderr, "{}\n", *why);
    return 1;
  }
  fmt::print("training tokens per CPU second, 1 thread, bptt 35, batch 20, dropout 0.2, Adam + clip 0.5, "
             "{} steps after {} warm-up, median of {}\n",
             steps, warmup, repetitions);
  fmt::print("load average at start {:.2f}\n", load_average());
  fmt::print("{:>10} {:>7} {:>7} {:>14} {:>14} {:>8}\n", "vocabulary", "emsize", "layers", "C++ libtorch",
             "Python torch", "C++/Py");
  struct Size {
    std::int64_t vocabulary, emsize, layers;
  };
  for (const Size size : {Size{2001, 200, 1}, Size{10001, 200, 1}, Size{2001, 200, 2}}) {
    LmConfig c;
    c.vocabulary = size.vocabulary;
    c.emsize = size.emsize;
    c.layers = size.layers;
    std::vector<double> cpp, py;
    for (int r = 0; r < repetitions; ++r) {
      cpp.push_back(cpp_rate(c, warmup, steps));
      if (torch) py.push_back(torch_rate(script, c, warmup, steps));
    }
    const double a = median(cpp);
    if (torch) {
      const double b = median(py);
      fmt::print("{:>10} {:>7} {:>7} {:>14.0f} {:>14.0f} {:>8.3f}\n", c.vocabulary, c.emsize, c.layers, a, b, a / b);
    } else {
      fmt::print("{:>10} {:>7} {:>7} {:>14.0f} {:>14} {:>8}\n", c.vocabulary, c.emsize, c.layers, a, "-", "-");
    }
  }
  fmt::print("load average at end {:.2f}\n", load_average());
  return 0;
}
