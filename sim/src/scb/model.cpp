// The linear-attention SCB model: initialisation and per-sample gradients (see model.hpp).

#include "dyncheck/sim/scb/model.hpp"

#include "dyncheck/sim/scb/attention_kernels.hpp"

#include <algorithm>

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
  for (std::size_t i = 0; i < kGroup; ++i) {
    slot_h[i].resize(N);
    slot_r[i].resize(N);
    slot_g[i].resize(N);
  }
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

/// Small N: plain loops avoid the dispatch overhead of dynamic-size Eigen kernels. r = e_o − V h
/// with r_i = (((0 − V_{i0}h_0) − V_{i1}h_1) − …) + 1[i = o], kept in a register per i (no
/// store-to-load chain through r); then in one pass over the columns g_j = V_{:,j}ᵀ r (in
/// increasing i) and the rank-1 update G_V{:,j} −= r h_j. The buffers are distinct (__restrict).
/// (Fixed <= 0: N at run time; else N = Fixed, fully unrolled for the smallest models.)
template <int Fixed>
void small_residual_and_products(const double* __restrict V, const double* __restrict h, int runtime_N, int output,
                                 double* __restrict r, double* __restrict G_V, double* __restrict g) {
  const int N = Fixed > 0 ? Fixed : runtime_N;
  for (int i = 0; i < N; ++i) {
    double sum = 0.0;
    for (int j = 0; j < N; ++j) sum -= V[static_cast<std::ptrdiff_t>(j) * N + i] * h[j];
    r[i] = sum;
  }
  r[output] += 1.0;
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

[[gnu::always_inline]] inline void small_products(int N, const double* V, const double* h, int output, double* r,
                                                  double* G_V, double* g) {
  switch (N) {
    case 1: small_residual_and_products<1>(V, h, N, output, r, G_V, g); break;
    case 2: small_residual_and_products<2>(V, h, N, output, r, G_V, g); break;
    case 3: small_residual_and_products<3>(V, h, N, output, r, G_V, g); break;
    case 4: small_residual_and_products<4>(V, h, N, output, r, G_V, g); break;
    default: small_residual_and_products<0>(V, h, N, output, r, G_V, g); break;
  }
}

[[gnu::always_inline]] inline void count_sample(int k, double loss, BatchGradient& sums) {
  auto& count = sums.count[static_cast<std::size_t>(k)];
  if (count++ == 0) sums.touched.push_back(k);
  ++sums.samples;
  sums.loss_sum += loss;
}

}  // namespace

void accumulate_gradients(const LinearModel& model, std::span<const Example> examples, BatchGradient& sums) {
  const auto N = static_cast<int>(model.V.rows());
  if (N > 32) {
    for (const Example& example : examples) accumulate_gradient(model, example, sums);
    return;
  }
  const KernelPath path = selected_kernel_path();
  const double* V = model.V.data();
  double* G_V = sums.V.data();
  constexpr std::size_t group = BatchGradient::kGroup;
  for (std::size_t first = 0; first < examples.size(); first += group) {
    const std::size_t size = std::min(group, examples.size() - first);
    const Example* batch = examples.data() + first;
    for (std::size_t i = 0; i < size; ++i) {
      scatter_attention(path, batch[i].tokens.data(), model.A.col(batch[i].query).data(),
                        static_cast<int>(batch[i].tokens.size()), N, sums.slot_h[i].data());
    }
    for (std::size_t i = 0; i < size; ++i) {
      small_products(N, V, sums.slot_h[i].data(), batch[i].output, sums.slot_r[i].data(), G_V, sums.slot_g[i].data());
      count_sample(batch[i].query, 0.5 * sums.slot_r[i].squaredNorm(), sums);
    }
    for (std::size_t i = 0; i < size; ++i) {
      gather_attention_gradient(path, batch[i].tokens.data(), sums.slot_g[i].data(),
                                static_cast<int>(batch[i].tokens.size()), N, sums.A.col(batch[i].query).data());
    }
  }
}

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
  const KernelPath path = selected_kernel_path();
  scatter_attention(path, tokens, model.A.col(k).data(), T, N, h);
  if (N > 32) {
    // Large N: Eigen's vectorised matrix-vector kernels (a strict-order scalar loop cannot
    // vectorise the dot products under -ffp-contract=off without -ffast-math).
    sums.r.noalias() = -model.V * sums.h;
    sums.r(example.output) += 1.0;
    sums.V.noalias() -= sums.r * sums.h.transpose();
    sums.g.noalias() = model.V.transpose() * sums.r;
  } else {
    small_products(N, V, h, example.output, r, G_V, g);
  }
  const double loss = 0.5 * sums.r.squaredNorm();
  gather_attention_gradient(path, tokens, g, T, N, sums.A.col(k).data());
  count_sample(k, loss, sums);
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
