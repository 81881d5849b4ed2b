// The linear-attention SCB model: initialisation and per-sample gradients (see model.hpp).

#include "dyncheck/sim/scb/model.hpp"

namespace dyncheck::sim::scb {

LinearModel initial_model(const Instance& instance) {
  const Eigen::Index n = instance.P.rows();
  LinearModel model;
  model.V = instance.mu * Eigen::RowVectorXd::Ones(n);
  model.A = Eigen::MatrixXd::Constant(instance.T, n, 1.0 / static_cast<double>(instance.T));
  return model;
}

BatchGradient::BatchGradient(int N, int T)
    : V(Eigen::MatrixXd::Zero(N, N)),
      A(Eigen::MatrixXd::Zero(T, N)),
      count(static_cast<std::size_t>(N), 0),
      h(N),
      r(N),
      g(N) {
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

double accumulate_gradient(const LinearModel& model, const Example& example, BatchGradient& sums) {
  const int k = example.query;
  const int T = static_cast<int>(example.tokens.size());
  const int* tokens = example.tokens.data();
  const double* a = model.A.col(k).data();
  double* h = sums.h.data();
  sums.h.setZero();
  for (int t = 0; t < T; ++t) h[tokens[t]] += a[t];
  sums.r.noalias() = -model.V * sums.h;
  sums.r(example.output) += 1.0;
  const double loss = 0.5 * sums.r.squaredNorm();
  sums.V.noalias() -= sums.r * sums.h.transpose();
  sums.g.noalias() = model.V.transpose() * sums.r;
  const double* g = sums.g.data();
  double* grad_a = sums.A.col(k).data();
  for (int t = 0; t < T; ++t) grad_a[t] -= g[tokens[t]];
  auto& count = sums.count[static_cast<std::size_t>(k)];
  if (count++ == 0) sums.touched.push_back(k);
  ++sums.samples;
  sums.loss_sum += loss;
  return loss;
}

double sample_loss(const LinearModel& model, const Example& example) {
  const Eigen::Index n = model.V.rows();
  Eigen::VectorXd h = Eigen::VectorXd::Zero(n);
  const auto a = model.A.col(example.query);
  for (std::size_t t = 0; t < example.tokens.size(); ++t) h(example.tokens[t]) += a(static_cast<Eigen::Index>(t));
  Eigen::VectorXd r = -model.V * h;
  r(example.output) += 1.0;
  return 0.5 * r.squaredNorm();
}

}  // namespace dyncheck::sim::scb
