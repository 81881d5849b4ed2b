// Minibatch SGD steps on the linear SCB model (see optimizers.hpp).

#include "dyncheck/sim/scb/optimizers.hpp"
#include "dyncheck/sim/scb/steps_from_sums.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>

#include "dyncheck/sim/detail/throw_invalid_argument.hpp"

namespace dyncheck::sim::scb {

namespace {

using detail::throw_invalid_argument;

void check_rates(const char* where, double eta, double eta_A) {
  if (!std::isfinite(eta) || eta < 0.0) throw_invalid_argument(where, "eta must be finite and >= 0", eta);
  if (!std::isfinite(eta_A) || eta_A < 0.0) throw_invalid_argument(where, "eta_A must be finite and >= 0", eta_A);
}

void check_lambda(const char* where, double lambda) {
  if (!std::isfinite(lambda) || lambda < 0.0) throw_invalid_argument(where, "lambda must be finite and >= 0", lambda);
}

/// Draws B examples in groups of BatchGradient::kGroup and adds each model's per-sample gradients to its sums
/// (shapes checked by the callers).
void draw_and_accumulate(std::span<const LinearModel* const> models, std::span<BatchGradient* const> sums,
                         const Sampler& sampler, long long B, Rng& rng,
                         std::array<Example, BatchGradient::kGroup>& examples) {
  for (BatchGradient* s : sums) s->clear();
  constexpr auto group = static_cast<long long>(BatchGradient::kGroup);
  for (long long first = 0; first < B; first += group) {
    const auto size = static_cast<std::size_t>(std::min(group, B - first));
    for (std::size_t j = 0; j < size; ++j) sampler.sample_into(examples[j], rng);
    const std::span<const Example> drawn(examples.data(), size);
    for (std::size_t i = 0; i < models.size(); ++i) accumulate_gradients(*models[i], drawn, *sums[i]);
  }
}

void check_shapes(const char* where, const LinearModel& model, const BatchGradient& sums, const Sampler& sampler) {
  const Eigen::Index n = sampler.N();
  if (model.V.rows() != n || model.V.cols() != n || model.A.rows() != sampler.T() || model.A.cols() != n) {
    throw_invalid_argument(where, "model shapes (V N x N, A T x N) must match the sampler's instance");
  }
  if (sums.V.rows() != n || sums.A.rows() != sampler.T()) {
    throw_invalid_argument(where, "workspace shapes must match the sampler's instance");
  }
}

}  // namespace

void soft_threshold_attention(LinearModel& model, const Eigen::VectorXd& mu, double eta_A, double lambda) {
  for (Eigen::Index k = 0; k < model.A.cols(); ++k) {
    const double threshold = eta_A * lambda / mu(k);
    double* a = model.A.col(k).data();
    for (Eigen::Index t = 0; t < model.A.rows(); ++t) {
      a[t] = a[t] > threshold ? a[t] - threshold : a[t] < -threshold ? a[t] + threshold : 0.0;
    }
  }
}

double draw_batch_gradient(const LinearModel& model, const Sampler& sampler, long long B, Rng& rng,
                           SgdWorkspace& workspace) {
  constexpr const char* where = "scb::draw_batch_gradient";
  if (B < 1) throw_invalid_argument(where, "batch size B must be >= 1", static_cast<double>(B));
  check_shapes(where, model, workspace.sums, sampler);
  const LinearModel* const models[] = {&model};
  BatchGradient* const sums[] = {&workspace.sums};
  draw_and_accumulate(models, sums, sampler, B, rng, workspace.examples);
  return workspace.sums.loss_sum / static_cast<double>(B);
}

void draw_shared_batch_gradients(std::span<const LinearModel* const> models, std::span<BatchGradient* const> sums,
                                 const Sampler& sampler, long long B, Rng& rng,
                                 std::array<Example, BatchGradient::kGroup>& examples) {
  constexpr const char* where = "scb::draw_shared_batch_gradients";
  if (B < 1) throw_invalid_argument(where, "batch size B must be >= 1", static_cast<double>(B));
  if (models.size() != sums.size()) throw_invalid_argument(where, "one gradient sum per model");
  for (std::size_t i = 0; i < models.size(); ++i) check_shapes(where, *models[i], *sums[i], sampler);
  draw_and_accumulate(models, sums, sampler, B, rng, examples);
}

void apply_gradient_step(LinearModel& model, const Eigen::VectorXd& mu, const BatchGradient& sums, double eta,
                         double eta_A, UpdateRule rule) {
  if (sums.samples < 1) throw_invalid_argument("scb::apply_gradient_step", "the gradient sums hold no sample");
  const double inverse_batch = 1.0 / static_cast<double>(sums.samples);
  if (rule.precondition) {
    for (Eigen::Index j = 0; j < model.V.cols(); ++j) model.V.col(j) -= (eta * inverse_batch / mu(j)) * sums.V.col(j);
  } else {
    model.V -= (eta * inverse_batch) * sums.V;
  }
  for (const int k : sums.touched) {
    const double scale = eta_A * inverse_batch / (rule.precondition ? mu(k) : 1.0);
    const auto g = sums.A.col(k);
    const double shift = rule.project ? g.mean() : 0.0;
    model.A.col(k) -= scale * (g.array() - shift).matrix();
  }
}

void stage1_step_from_sums(LinearModel& model, const Instance& instance, const BatchGradient& sums, double eta,
                           double eta_A) {
  check_rates("scb::stage1_step_from_sums", eta, eta_A);
  apply_gradient_step(model, instance.mu, sums, eta, eta_A, {.precondition = true, .project = true});
}

void stage2_prox_step_from_sums(LinearModel& model, const Instance& instance, const BatchGradient& sums, double eta,
                                double eta_A, double lambda) {
  check_lambda("scb::stage2_prox_step_from_sums", lambda);
  stage1_step_from_sums(model, instance, sums, eta, eta_A);
  soft_threshold_attention(model, instance.mu, eta_A, lambda);
}

void plain_sgd_step_from_sums(LinearModel& model, const BatchGradient& sums, double eta, double eta_A) {
  check_rates("scb::plain_sgd_step_from_sums", eta, eta_A);
  apply_gradient_step(model, Eigen::VectorXd(), sums, eta, eta_A, {.precondition = false, .project = false});
}

double stage1_sgd_step(LinearModel& model, const Instance& instance, const Sampler& sampler, long long B,
                       double eta, double eta_A, Rng& rng, SgdWorkspace& workspace) {
  check_rates("scb::stage1_sgd_step", eta, eta_A);
  const double loss = draw_batch_gradient(model, sampler, B, rng, workspace);
  stage1_step_from_sums(model, instance, workspace.sums, eta, eta_A);
  return loss;
}

double stage1_sgd_step(LinearModel& model, const Instance& instance, const Sampler& sampler, long long B,
                       double eta, double eta_A, Rng& rng) {
  SgdWorkspace workspace(sampler.N(), sampler.T());
  return stage1_sgd_step(model, instance, sampler, B, eta, eta_A, rng, workspace);
}

double stage2_prox_sgd_step(LinearModel& model, const Instance& instance, const Sampler& sampler, long long B,
                            double eta, double eta_A, double lambda, Rng& rng, SgdWorkspace& workspace) {
  check_lambda("scb::stage2_prox_sgd_step", lambda);
  check_rates("scb::stage2_prox_sgd_step", eta, eta_A);
  const double loss = draw_batch_gradient(model, sampler, B, rng, workspace);
  stage2_prox_step_from_sums(model, instance, workspace.sums, eta, eta_A, lambda);
  return loss;
}

double stage2_prox_sgd_step(LinearModel& model, const Instance& instance, const Sampler& sampler, long long B,
                            double eta, double eta_A, double lambda, Rng& rng) {
  SgdWorkspace workspace(sampler.N(), sampler.T());
  return stage2_prox_sgd_step(model, instance, sampler, B, eta, eta_A, lambda, rng, workspace);
}

double plain_sgd_step(LinearModel& model, const Sampler& sampler, long long B, double eta, double eta_A, Rng& rng,
                      SgdWorkspace& workspace) {
  check_rates("scb::plain_sgd_step", eta, eta_A);
  const double loss = draw_batch_gradient(model, sampler, B, rng, workspace);
  plain_sgd_step_from_sums(model, workspace.sums, eta, eta_A);
  return loss;
}

double plain_sgd_step(LinearModel& model, const Sampler& sampler, long long B, double eta, double eta_A, Rng& rng) {
  SgdWorkspace workspace(sampler.N(), sampler.T());
  return plain_sgd_step(model, sampler, B, eta, eta_A, rng, workspace);
}

}  // namespace dyncheck::sim::scb
