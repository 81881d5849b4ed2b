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

namespace {

/// h = Σ_t a_t e_{x_t}. Small N: four interleaved partial sums, so that repeated tokens do not
/// chain every addition through one memory cell (a store-to-load dependency per token).
void scatter_attention(const int* tokens, const double* a, int T, double* h, int N) {
  constexpr int max_small = 32;
  if (N > max_small) {
    for (int t = 0; t < T; ++t) h[tokens[t]] += a[t];
    return;
  }
  double partial[4 * max_small];  // four rows of N, zeroed only as far as used
  double* p0 = partial;
  double* p1 = partial + N;
  double* p2 = partial + 2 * N;
  double* p3 = partial + 3 * N;
  for (int j = 0; j < 4 * N; ++j) partial[j] = 0.0;
  int t = 0;
  for (; t + 4 <= T; t += 4) {
    p0[tokens[t]] += a[t];
    p1[tokens[t + 1]] += a[t + 1];
    p2[tokens[t + 2]] += a[t + 2];
    p3[tokens[t + 3]] += a[t + 3];
  }
  for (; t < T; ++t) p0[tokens[t]] += a[t];
  for (int j = 0; j < N; ++j) h[j] = (p0[j] + p1[j]) + (p2[j] + p3[j]);
}

}  // namespace

double accumulate_gradient(const LinearModel& model, const Example& example, BatchGradient& sums) {
  const int k = example.query;
  const int T = static_cast<int>(example.tokens.size());
  const auto N = static_cast<int>(model.V.rows());
  const int* tokens = example.tokens.data();
  double* h = sums.h.data();
  double* r = sums.r.data();
  double* g = sums.g.data();
  const double* V = model.V.data();
  double* G_V = sums.V.data();
  sums.h.setZero();
  scatter_attention(tokens, model.A.col(k).data(), T, h, N);
  if (N > 32) {
    // Large N: Eigen's vectorised matrix-vector kernels (a strict-order scalar loop cannot
    // vectorise the dot products under -ffp-contract=off without -ffast-math).
    sums.r.noalias() = -model.V * sums.h;
    sums.r(example.output) += 1.0;
    sums.V.noalias() -= sums.r * sums.h.transpose();
    sums.g.noalias() = model.V.transpose() * sums.r;
  } else {
    // Small N: plain loops avoid the dispatch overhead of dynamic-size Eigen kernels.
    // r = e_o − V h, column by column (V is column-major).
    for (int i = 0; i < N; ++i) r[i] = 0.0;
    for (int j = 0; j < N; ++j) {
      const double* column = V + static_cast<std::ptrdiff_t>(j) * N;
      const double hj = h[j];
      for (int i = 0; i < N; ++i) r[i] -= column[i] * hj;
    }
    r[example.output] += 1.0;
    // One pass over the columns: g_j = V_{:,j}ᵀ r and the rank-1 update G_V{:,j} −= r h_j.
    for (int j = 0; j < N; ++j) {
      const double* column = V + static_cast<std::ptrdiff_t>(j) * N;
      double* gradient_column = G_V + static_cast<std::ptrdiff_t>(j) * N;
      const double hj = h[j];
      double dot = 0.0;
      for (int i = 0; i < N; ++i) {
        dot += column[i] * r[i];
        gradient_column[i] -= r[i] * hj;
      }
      g[j] = dot;
    }
  }
  const double loss = 0.5 * sums.r.squaredNorm();
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
