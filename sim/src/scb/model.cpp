// The linear-attention SCB model: initialisation and per-sample gradients (see model.hpp). The
// arithmetic is in the kernel unit (attention_kernels.hpp, attention_kernels_gradient.hpp); this
// file maps examples and sums onto it and keeps the counts.

#include "dyncheck/sim/scb/model.hpp"

#include <algorithm>
#include <array>

#include "attention_kernels_gradient.hpp"

namespace dyncheck::sim::scb {

LinearModel initial_model(const Instance& instance) {
  const Eigen::Index n = instance.P.rows();
  LinearModel model;
  model.V = instance.mu * Eigen::RowVectorXd::Ones(n);
  model.A = Eigen::MatrixXd::Constant(instance.T, n, 1.0 / static_cast<double>(instance.T));
  return model;
}

BatchGradient::BatchGradient(int N, int T)
    : V(Eigen::MatrixXd::Zero(N, N)), A(Eigen::MatrixXd::Zero(T, N)), count(static_cast<std::size_t>(N), 0) {
  touched.reserve(static_cast<std::size_t>(N));
}

void BatchGradient::clear() {
  V.setZero();
  for (const int k : touched) {
    A.col(k).setZero();
    count[static_cast<std::size_t>(k)] = 0;
  }
  touched.clear();
  samples = 0;
  loss_sum = 0.0;
}

namespace {

detail::KernelSample kernel_sample(const LinearModel& model, const Example& example, BatchGradient& sums) {
  return {example.tokens.data(), static_cast<int>(example.tokens.size()), model.A.col(example.query).data(),
          sums.A.col(example.query).data(), example.output};
}

void count_sample(int k, double loss, BatchGradient& sums) {
  auto& count = sums.count[static_cast<std::size_t>(k)];
  if (count++ == 0) sums.touched.push_back(k);
  ++sums.samples;
  sums.loss_sum += loss;
}

void check_path(KernelPath path) {
  if (path != default_kernel_path()) require_kernel_path(path);
}

}  // namespace

double accumulate_gradient(const LinearModel& model, const Example& example, BatchGradient& sums, KernelPath path) {
  check_path(path);
  const double loss = detail::accumulate_sample(path, model.V, kernel_sample(model, example, sums), sums.V);
  count_sample(example.query, loss, sums);
  return loss;
}

double accumulate_gradient(const LinearModel& model, const Example& example, BatchGradient& sums) {
  return accumulate_gradient(model, example, sums, default_kernel_path());
}

void accumulate_gradients(const LinearModel& model, std::span<const Example> examples, BatchGradient& sums,
                          KernelPath path) {
  check_path(path);
  // Chunks of up to 64 samples: the kernels' views and losses on the stack. The counts and the loss
  // sum touch nothing the kernels write, so adding them after each chunk, in sample order, gives
  // the bits of accumulate_gradient called per example.
  constexpr std::size_t chunk = 64;
  std::array<detail::KernelSample, chunk> views;
  std::array<double, chunk> losses;
  for (std::size_t first = 0; first < examples.size(); first += chunk) {
    const std::size_t size = std::min(chunk, examples.size() - first);
    for (std::size_t i = 0; i < size; ++i) views[i] = kernel_sample(model, examples[first + i], sums);
    detail::accumulate_samples(path, model.V, std::span<const detail::KernelSample>(views.data(), size), sums.V,
                               losses.data());
    for (std::size_t i = 0; i < size; ++i) count_sample(examples[first + i].query, losses[i], sums);
  }
}

void accumulate_gradients(const LinearModel& model, std::span<const Example> examples, BatchGradient& sums) {
  accumulate_gradients(model, examples, sums, default_kernel_path());
}

double sample_loss(const LinearModel& model, const Example& example) {
  const Eigen::Index n = model.V.rows();
  Eigen::VectorXd h = Eigen::VectorXd::Zero(n);
  const auto a = model.A.col(example.query);
  for (std::size_t t = 0; t < example.tokens.size(); ++t) h(example.tokens[t]) += a(static_cast<Eigen::Index>(t));
  Eigen::VectorXd r = -model.V * h;
  r(example.output) += 1.0;
  return half_squared_norm(r.data(), static_cast<int>(n));
}

}  // namespace dyncheck::sim::scb
