// The linear-attention SCB model: initialisation and per-sample gradients (see model.hpp). The
// per-sample arithmetic is in the kernel unit (attention_kernels.hpp, attention_kernels_gradient.hpp).

#include "dyncheck/sim/scb/model.hpp"

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

void check_path(KernelPath path) {
  if (path != default_kernel_path()) require_kernel_path(path);
}

}  // namespace

double accumulate_gradient(const LinearModel& model, const Example& example, BatchGradient& sums, KernelPath path) {
  check_path(path);
  return detail::accumulate_sample(path, model, example, sums);
}

double accumulate_gradient(const LinearModel& model, const Example& example, BatchGradient& sums) {
  return accumulate_gradient(model, example, sums, default_kernel_path());
}

void accumulate_gradients(const LinearModel& model, std::span<const Example> examples, BatchGradient& sums,
                          KernelPath path) {
  check_path(path);
  detail::accumulate_samples(path, model, examples, sums);
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
