// Full-matrix population loss, gradient and steps (see population_gd.hpp for the derivation).

#include "dyncheck/sim/scb/population_gd.hpp"

#include <cmath>

#include "dyncheck/sim/detail/throw_invalid_argument.hpp"
#include "dyncheck/sim/random/standard_normal.hpp"

namespace dyncheck::sim::scb {

namespace {

using detail::throw_invalid_argument;

void check_shapes(const Instance& instance, const LinearModel& model, const char* where) {
  const Eigen::Index n = instance.P.rows();
  if (model.V.rows() != n || model.V.cols() != n) throw_invalid_argument(where, "V must be N x N");
  if (model.A.rows() != instance.T || model.A.cols() != n) throw_invalid_argument(where, "A must be T x N");
  if (instance.support.size() != static_cast<std::size_t>(n)) throw_invalid_argument(where, "instance needs N position laws");
}

void check_rate(const char* where, const char* name, double value) {
  if (!std::isfinite(value) || value < 0.0) throw_invalid_argument(where, std::string(name) + " must be finite and >= 0", value);
}

/// The scalars of E[XᵀBX] = d1 I + d2 11ᵀ for B = VᵀV and c1 I + c2 11ᵀ for B = VᵀP (or PᵀV):
/// d1 = tr(VᵀVD) − μᵀVᵀVμ, d2 = μᵀVᵀVμ, c1 = tr(VᵀPD) − μᵀVᵀPμ, c2 = μᵀVᵀPμ.
struct ContextMoments {
  double c1, c2, d1, d2;
};

ContextMoments context_moments(const Instance& instance, const Eigen::MatrixXd& V) {
  const Eigen::VectorXd& mu = instance.mu;
  const Eigen::VectorXd V_mu = V * mu;
  const Eigen::VectorXd P_mu = instance.P * mu;
  const double trace_VPD = (V.cwiseProduct(instance.P) * mu).sum();
  const double trace_VVD = (V.cwiseProduct(V) * mu).sum();
  return {trace_VPD - V_mu.dot(P_mu), V_mu.dot(P_mu), trace_VVD - V_mu.squaredNorm(), V_mu.squaredNorm()};
}

/// Per-query scalars: s_k = 1ᵀa_k, n_k = ‖a_k‖², qa_k = q_kᵀa_k, sq_k = 1ᵀq_k.
struct QueryScalars {
  double s, n, qa, sq;
};

QueryScalars query_scalars(const Instance& instance, const LinearModel& model, Eigen::Index k) {
  const auto a = model.A.col(k);
  const auto& support = instance.support[static_cast<std::size_t>(k)];
  const auto& weight = instance.weight[static_cast<std::size_t>(k)];
  double qa = 0.0, sq = 0.0;
  for (std::size_t i = 0; i < support.size(); ++i) {
    qa += weight[i] * a(support[i]);
    sq += weight[i];
  }
  return {a.sum(), a.squaredNorm(), qa, sq};
}

/// ∇_{a_k}L / μ_k = (d1 a_k + d2 s_k 1) − (c1 q_k + c2 sq_k 1), written into `out` (size T).
void a_gradient_over_mu(const Instance& instance, const LinearModel& model, Eigen::Index k, const ContextMoments& m,
                        const QueryScalars& s, Eigen::Ref<Eigen::VectorXd> out) {
  out = m.d1 * model.A.col(k);
  out.array() += m.d2 * s.s - m.c2 * s.sq;
  const auto& support = instance.support[static_cast<std::size_t>(k)];
  const auto& weight = instance.weight[static_cast<std::size_t>(k)];
  for (std::size_t i = 0; i < support.size(); ++i) out(support[i]) -= m.c1 * weight[i];
}

Eigen::MatrixXd v_gradient(const Instance& instance, const LinearModel& model) {
  const Eigen::VectorXd& mu = instance.mu;
  // Σ_k μ_k M(a_k, a_k) = c_aa D + r_aa μμᵀ and Σ_k μ_k M(q_k, a_k) = c_qa D + r_qa μμᵀ.
  double c_aa = 0.0, r_aa = 0.0, c_qa = 0.0, r_qa = 0.0;
  for (Eigen::Index k = 0; k < model.A.cols(); ++k) {
    const QueryScalars s = query_scalars(instance, model, k);
    c_aa += mu(k) * s.n;
    r_aa += mu(k) * (s.s * s.s - s.n);
    c_qa += mu(k) * s.qa;
    r_qa += mu(k) * (s.sq * s.s - s.qa);
  }
  Eigen::MatrixXd gradient = c_aa * (model.V * mu.asDiagonal()) - c_qa * (instance.P * mu.asDiagonal());
  gradient.noalias() += (r_aa * (model.V * mu) - r_qa * (instance.P * mu)) * mu.transpose();
  return gradient;
}

}  // namespace

double population_loss(const Instance& instance, const LinearModel& model) {
  check_shapes(instance, model, "scb::population_loss");
  const ContextMoments m = context_moments(instance, model.V);
  double loss = 0.5;
  for (Eigen::Index k = 0; k < model.A.cols(); ++k) {
    const QueryScalars s = query_scalars(instance, model, k);
    loss += instance.mu(k) * (0.5 * (m.d1 * s.n + m.d2 * s.s * s.s) - (m.c1 * s.qa + m.c2 * s.sq * s.s));
  }
  return loss;
}

PopulationGradient population_gradient(const Instance& instance, const LinearModel& model) {
  check_shapes(instance, model, "scb::population_gradient");
  PopulationGradient gradient{v_gradient(instance, model), Eigen::MatrixXd(model.A.rows(), model.A.cols())};
  const ContextMoments m = context_moments(instance, model.V);
  for (Eigen::Index k = 0; k < model.A.cols(); ++k) {
    a_gradient_over_mu(instance, model, k, m, query_scalars(instance, model, k), gradient.A.col(k));
    gradient.A.col(k) *= instance.mu(k);
  }
  return gradient;
}

void population_stage1_step(LinearModel& model, const Instance& instance, double eta, double eta_A) {
  constexpr const char* where = "scb::population_stage1_step";
  check_shapes(instance, model, where);
  check_rate(where, "eta", eta);
  check_rate(where, "eta_A", eta_A);
  const Eigen::MatrixXd g_V = v_gradient(instance, model);
  const ContextMoments m = context_moments(instance, model.V);
  Eigen::VectorXd g(model.A.rows());
  for (Eigen::Index k = 0; k < model.A.cols(); ++k) {
    // (η_A/μ_k) Π_T ∇_{a_k}L = η_A Π_T (∇_{a_k}L/μ_k); a_k uses only the old V through m.
    a_gradient_over_mu(instance, model, k, m, query_scalars(instance, model, k), g);
    g.array() -= g.mean();
    model.A.col(k) -= eta_A * g;
  }
  model.V -= eta * (g_V * instance.mu.cwiseInverse().asDiagonal());
}

void population_stage2_step(LinearModel& model, const Instance& instance, double eta, double eta_A, double lambda) {
  check_rate("scb::population_stage2_step", "lambda", lambda);
  population_stage1_step(model, instance, eta, eta_A);
  for (Eigen::Index k = 0; k < model.A.cols(); ++k) {
    const double threshold = eta_A * lambda / instance.mu(k);
    for (Eigen::Index t = 0; t < model.A.rows(); ++t) {
      const double a = model.A(t, k);
      model.A(t, k) = a > threshold ? a - threshold : a < -threshold ? a + threshold : 0.0;
    }
  }
}

NoiseVariances stage1_noise_variances(const Instance& instance, const LinearModel& model, double batch) {
  constexpr const char* where = "scb::stage1_noise_variances";
  check_shapes(instance, model, where);
  if (!(batch >= 1.0) || !std::isfinite(batch)) throw_invalid_argument(where, "batch must be finite and >= 1", batch);
  const Eigen::VectorXd& mu = instance.mu;
  const Eigen::Index n = mu.size();
  // ⟨A,B⟩_Σ = tr(A D Bᵀ) − (Aμ)ᵀ(Bμ); K_2 = tr(PΣPᵀΣ).
  auto sigma_inner = [&](const Eigen::MatrixXd& X, const Eigen::MatrixXd& Y) {
    return (X.cwiseProduct(Y) * mu).sum() - (X * mu).dot(Y * mu);
  };
  const Eigen::MatrixXd Sigma = Eigen::MatrixXd(mu.asDiagonal()) - mu * mu.transpose();
  const double K_P = sigma_inner(instance.P, instance.P);
  const double K_2 = (instance.P * Sigma * instance.P.transpose() * Sigma).trace();
  const double alpha = sigma_inner(model.V, instance.P) / K_P;
  double mean_a_squared = 0.0;
  for (Eigen::Index k = 0; k < n; ++k) mean_a_squared += mu(k) * model.A.col(k).squaredNorm();

  NoiseVariances variances{Eigen::MatrixXd(n, n), Eigen::VectorXd(n)};
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = 0; i < n; ++i) {
      variances.V(i, j) = mu(i) * (1.0 - mu(i)) * (1.0 + mean_a_squared / mu(j)) / batch;
    }
  }
  for (Eigen::Index k = 0; k < n; ++k) variances.a(k) = alpha * alpha * K_2 / (batch * mu(k));
  return variances;
}

void noisy_population_step(LinearModel& model, const Instance& instance, double eta, double eta_A, double batch,
                           Rng& rng) {
  constexpr const char* where = "scb::noisy_population_step";
  check_rate(where, "eta", eta);
  check_rate(where, "eta_A", eta_A);
  const NoiseVariances variances = stage1_noise_variances(instance, model, batch);
  const Eigen::MatrixXd g_V = v_gradient(instance, model);
  const ContextMoments m = context_moments(instance, model.V);
  NormalSampler normal;
  Eigen::MatrixXd noise_V(g_V.rows(), g_V.cols());
  for (Eigen::Index j = 0; j < noise_V.cols(); ++j) {
    for (Eigen::Index i = 0; i < noise_V.rows(); ++i) noise_V(i, j) = std::sqrt(variances.V(i, j)) * normal(rng);
  }
  Eigen::VectorXd g(model.A.rows());
  for (Eigen::Index k = 0; k < model.A.cols(); ++k) {
    a_gradient_over_mu(instance, model, k, m, query_scalars(instance, model, k), g);
    const double sd = std::sqrt(variances.a(k));
    for (Eigen::Index t = 0; t < g.size(); ++t) g(t) += sd * normal(rng);
    g.array() -= g.mean();
    model.A.col(k) -= eta_A * g;
  }
  model.V -= eta * (g_V * instance.mu.cwiseInverse().asDiagonal() + noise_V);
}

}  // namespace dyncheck::sim::scb
