// SGD steps per second of the JoMA block (sim/joma), side by side with the same step in PyTorch
// (CPU, one thread) in one run: softmax attention with temperature 0.5, identity embeddings
// (d = M_C + 10), linear activation, CE over K classes, one fixed minibatch, SGD lr 0.1 on z and W.
// The PyTorch figure comes from /usr/bin/python3 (python3-torch), timed inside Python over many steps
// after a warm-up, and is reported as manual time per step.
//   build/ci/bench/dyncheck_joma_bench --benchmark_min_time=0.2

#include <benchmark/benchmark.h>

#include <array>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dyncheck/sim/joma/data.hpp"
#include "dyncheck/sim/joma/embeddings.hpp"
#include "dyncheck/sim/joma/sgd.hpp"
#include "dyncheck/sim/random/derive_stream.hpp"
#include "python_script.hpp"

namespace {

namespace bench = dyncheck::bench;
using namespace dyncheck::sim;

void BM_JomaSgdStep_Cpp(benchmark::State& state) {
  const auto m = static_cast<Eigen::Index>(state.range(0)), k = static_cast<Eigen::Index>(state.range(1)),
             batch_size = static_cast<Eigen::Index>(state.range(2));
  const Eigen::Index d = m + 10;
  Rng rng = derive_stream(1, "joma_bench", 0);
  const Eigen::MatrixXd X = joma::figure_2_3_token_distributions(m, 0, k, false, rng);
  const joma::JomaBlock block(joma::identity_embeddings(d, m),
                              {joma::AttentionKernel::softmax, joma::Activation::identity, joma::Loss::cross_entropy,
                               0.5, 0.1},
                              {}, k);
  joma::BlockParameters p = joma::gaussian_parameters(m, d, k, 0.01, 0.01, rng);
  const joma::Batch batch = joma::class_conditional_batch(X, batch_size, rng);
  joma::JomaSgd sgd({0.1, 0.1, 0, 0});
  for (auto _ : state) {
    benchmark::DoNotOptimize(sgd.step(block, p, batch).loss);
  }
  state.SetItemsProcessed(state.iterations());  // items/s = SGD steps per second
}

// The PyTorch step, timed in Python; prints seconds per step.
constexpr const char* pytorch_script = R"PY(
import sys, time, torch
torch.set_num_threads(1)
torch.manual_seed(0)
M, K, B = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
d, T = M + 10, 0.5
X = torch.rand(M, K, dtype=torch.float64); X = X / X.sum(0, keepdim=True)
U = torch.eye(d, M + 1, dtype=torch.float64)
labels = torch.randint(0, K, (B,))
x = X[:, labels]
W = (torch.randn(d, K, dtype=torch.float64) / 100).requires_grad_()
z = (torch.randn(M, dtype=torch.float64) / 100).requires_grad_()
opt = torch.optim.SGD([W, z], lr=0.1)
loss_fn = torch.nn.CrossEntropyLoss()
def step():
    opt.zero_grad()
    b = torch.softmax(z[:, None] / T + x.log(), dim=0)
    f = U[:, :M] @ b + U[:, M][:, None]
    loss = loss_fn(f.t() @ W, labels)
    loss.backward()
    opt.step()
for _ in range(200): step()
n = 2000 if M < 100 else 300
t0 = time.perf_counter()
for _ in range(n): step()
print((time.perf_counter() - t0) / n)
)PY";

double pytorch_seconds_per_step(long m, long k, long batch) {
  // The script goes through a temporary file; arguments are integers, so the command needs no quoting.
  char path[] = "/tmp/dyncheck_joma_bench_XXXXXX.py";
  const int fd = mkstemps(path, 3);
  if (fd < 0) throw std::runtime_error("cannot create a temporary file for the PyTorch script");
  FILE* file = fdopen(fd, "w");
  std::fputs(pytorch_script, file);
  std::fclose(file);
  try {
    const std::vector<bench::ScriptRow> rows =
        bench::run_python_script(path, std::to_string(m) + " " + std::to_string(k) + " " + std::to_string(batch));
    std::remove(path);
    if (rows.front().columns.size() != 1) throw bench::ScriptError("expected one number (seconds per step)");
    return rows.front().columns.front();
  } catch (...) {
    std::remove(path);
    throw;
  }
}

void BM_JomaSgdStep_PyTorch(benchmark::State& state) {
  double seconds = 0;
  try {
    seconds = pytorch_seconds_per_step(static_cast<long>(state.range(0)), static_cast<long>(state.range(1)),
                                       static_cast<long>(state.range(2)));
  } catch (const std::exception& e) {
    state.SkipWithError((std::string("PyTorch unavailable: ") + e.what()).c_str());
    for (auto _ : state) {
    }
    return;
  }
  for (auto _ : state) state.SetIterationTime(seconds);
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_JomaSgdStep_Cpp)->Args({20, 20, 1})->Args({256, 256, 64});
BENCHMARK(BM_JomaSgdStep_PyTorch)->Args({20, 20, 1})->Args({256, 256, 64})->UseManualTime()->Iterations(1);

}  // namespace
