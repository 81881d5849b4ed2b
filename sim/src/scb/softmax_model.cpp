// The softmax-attention SCB model and its SGD step (see softmax_model.hpp).

#include "dyncheck/sim/scb/softmax_model.hpp"

#include <cmath>

#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/detail/throw_invalid_argument.hpp"

namespace dyncheck::sim::scb {

namespace {
using detail::throw_invalid_argument;
}  // namespace

SoftmaxModel initial_softmax_model(const Instance& instance) {
  const Eigen::Index n = instance.P.rows();
  return {instance.mu * Eigen::RowVectorXd::Ones(n), Eigen::MatrixXd::Zero(instance.T, n)};
}

void softmax(const Eigen::Ref<const Eigen::VectorXd>& w, Eigen::Ref<Eigen::VectorXd> out) {
  if (w.size() == 0 || !w.allFinite()) throw_invalid_argument("scb::softmax", "logits must be non-empty and finite");
  const double m = w.maxCoeff();
  double sum = 0.0;
  for (Eigen::Index t = 0; t < w.size(); ++t) {
    out(t) = portable::exp(w(t) - m);
    sum += out(t);
  }
  out /= sum;
}

Eigen::MatrixXd attention_matrix(const SoftmaxModel& model) {
  Eigen::MatrixXd a(model.W.rows(), model.W.cols());
  for (Eigen::Index k = 0; k < model.W.cols(); ++k) softmax(model.W.col(k), a.col(k));
  return a;
}

SoftmaxWorkspace::SoftmaxWorkspace(int N, int T, long long B)
    : batch(static_cast<std::size_t>(B)),
      at_attention{Eigen::MatrixXd::Zero(N, N), Eigen::MatrixXd::Zero(T, N)},
      sums(N, T),
      grad_W(Eigen::MatrixXd::Zero(T, N)),
      seen(static_cast<std::size_t>(N), 0) {
  for (auto& example : batch) example.tokens.reserve(static_cast<std::size_t>(T));
}

double draw_softmax_batch_gradient(const SoftmaxModel& model, const Sampler& sampler, long long B, Rng& rng,
                                   SoftmaxWorkspace& workspace) {
  constexpr const char* where = "scb::draw_softmax_batch_gradient";
  if (B < 1) throw_invalid_argument(where, "batch size B must be >= 1", static_cast<double>(B));
  const Eigen::Index n = sampler.N();
  if (model.V.rows() != n || model.V.cols() != n || model.W.rows() != sampler.T() || model.W.cols() != n ||
      workspace.sums.V.rows() != n || workspace.sums.A.rows() != sampler.T()) {
    throw_invalid_argument(where, "model and workspace shapes (V N x N, W T x N) must match the sampler's instance");
  }
  if (workspace.batch.size() != static_cast<std::size_t>(B)) workspace.batch.resize(static_cast<std::size_t>(B));
  for (auto& example : workspace.batch) sampler.sample_into(example, rng);

  // Zero the W-gradient columns of the previous batch, then take σ(w_k) for the queries seen.
  for (const int k : workspace.sums.touched) workspace.grad_W.col(k).setZero();
  workspace.sums.clear();
  std::vector<char>& seen = workspace.seen;
  seen.assign(static_cast<std::size_t>(n), 0);
  workspace.at_attention.V = model.V;
  for (const auto& example : workspace.batch) {
    auto& flag = seen[static_cast<std::size_t>(example.query)];
    if (flag == 0) {
      softmax(model.W.col(example.query), workspace.at_attention.A.col(example.query));
      flag = 1;
    }
  }
  // The grouped kernels: the same bits as accumulate_gradient per example (model.hpp).
  accumulate_gradients(workspace.at_attention, workspace.batch, workspace.sums);
  for (const int k : workspace.sums.touched) {
    const auto a = workspace.at_attention.A.col(k);
    const auto gamma = workspace.sums.A.col(k);
    workspace.grad_W.col(k) = a.cwiseProduct(gamma) - a.dot(gamma) * a;  // (diag(a) − aaᵀ)γ
  }
  return workspace.sums.loss_sum / static_cast<double>(B);
}

double softmax_sgd_step(SoftmaxModel& model, const Sampler& sampler, long long B, double eta, double eta_W, Rng& rng,
                        SoftmaxWorkspace& workspace) {
  constexpr const char* where = "scb::softmax_sgd_step";
  if (!std::isfinite(eta) || eta < 0.0) throw_invalid_argument(where, "eta must be finite and >= 0", eta);
  if (!std::isfinite(eta_W) || eta_W < 0.0) throw_invalid_argument(where, "eta_W must be finite and >= 0", eta_W);
  const double loss = draw_softmax_batch_gradient(model, sampler, B, rng, workspace);
  const double inverse_batch = 1.0 / static_cast<double>(B);
  model.V -= (eta * inverse_batch) * workspace.sums.V;
  for (const int k : workspace.sums.touched) model.W.col(k) -= (eta_W * inverse_batch) * workspace.grad_W.col(k);
  return loss;
}

double softmax_sgd_step(SoftmaxModel& model, const Sampler& sampler, long long B, double eta, double eta_W, Rng& rng) {
  SoftmaxWorkspace workspace(sampler.N(), sampler.T(), B);
  return softmax_sgd_step(model, sampler, B, eta, eta_W, rng, workspace);
}

}  // namespace dyncheck::sim::scb
