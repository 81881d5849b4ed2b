// Claim scb.sgd_step_unbiased  [derived]  (specs/scb.md §3, §5; §8 claim 10)
//
// (a) The stage-1 SGD step is unbiased: the mean over samples of the per-sample preconditioned,
//     projected gradients equals the population direction of spec §3,
//       \f[ \mathbb E\bigl[\nabla_V\ell\,D^{-1}\bigr] = \nabla_V L\,D^{-1},\qquad
//           \mathbb E\bigl[\mu_k^{-1}\Pi_T\nabla_{a_k}\ell\bigr] = \mu_k^{-1}\Pi_T\nabla_{a_k}L. \f]
// (b) At the initialisation V = μ1ᵀ, a_k = 1/T one sample moves α̂(V) = ⟨V,P⟩_Σ/K_P by
//       \f[ \Delta\hat\alpha = \eta\,(P(h-\mu))^\top(e_{x_o}-\mu)/K_P,\qquad
//           \mathbb E\Delta\hat\alpha = \eta/T,\qquad \mathrm{Var}\,\Delta\hat\alpha = \frac{\eta^2K_2}{TK_P^2}(1 + O(1/T)). \f]
// Theory: theory/scb stage1_population_step (direction = old − new at η = η_A = 1) and constants
//   (K_P, K_2) in 50 and 100 digits.
// Simulated: (a) R replicates of the mean of M per-sample preconditioned gradients at a random
//   point (sim/scb apply_gradient_step with η = η_A = 1 on the batch sums); (b) R replicates of M
//   one-sample stage-1 steps from the initialisation (the V-update of apply_gradient_step), each
//   replicate's mean and unbiased variance of Δα̂.
// Tolerances: Student-t half-widths over replicates, Bonferroni over every compared entry; (a) and
//   the mean in (b) have no bias. The variance's O(1/T) term is derived here exactly [derived]: with
//   m_j = P_{:,j} − μ, C_j = E[(e_o−μ)(e_o−μ)ᵀ | x_s = j] = diag(P_j) − P_jμᵀ − μP_jᵀ + μμᵀ,
//   S_3 = Σ_j μ_j m_jᵀC_jm_j and K_2' = tr(PᵀΣPΣ) (tokens iid, x_s independent of the other T − 1),
//       \f[ \mathrm{Var}\,\Delta\hat\alpha = \frac{\eta^2\,[(T-1)K_2' + S_3 - K_P^2]}{T^2K_P^2}; \f]
//   the leading-order comparison takes |exact − leading| as its bias term, and a second comparison
//   checks the exact finite-T formula with no bias.
// Resolution: `resolution` × the largest entry of each block and × the variance (spec: 5%);
//   `resolution_mean` × η/T for the mean (spec: within 3 SE; 10% by default, which a 1/(2T) drift misses by far).
// Mutants: no_preconditioner (direction ∇L without D⁻¹ and 1/μ_k), no_projection (a-direction
//   without Π_T), mean_half (η/(2T)), variance_without_1_over_T (η²K_2/K_P²).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "dyncheck/checks/experiment.hpp"
#include "claims.hpp"
#include "dyncheck/checks/reference_value.hpp"
#include "dyncheck/checks/replicate_summary.hpp"
#include "dyncheck/checks/stats.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/scb/model.hpp"
#include "dyncheck/sim/scb/optimizers.hpp"
#include "dyncheck/sim/scb/sampler.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/population_gradient.hpp"
#include "dyncheck/theory/scb/population_step.hpp"
#include "sim_theory_instance.hpp"
#include "worst_entry.hpp"

namespace dyncheck::checks::scb {
namespace {

using theory::Matrix;
using theory::Vector;

/// A mid-training point: V = μ1ᵀ + ½(P − μ1ᵀ) + 0.1u/√N (so Π_T does not remove all a-noise, as
/// it would at V = μ1ᵀ), a_k = 1/T + ½(q_k − 1/T) + 0.5u/T rescaled to 1ᵀa_k ∈ [0.8, 1.2].
sim::scb::LinearModel evaluation_point(const RunContext& context, const sim::scb::Instance& instance) {
  sim::Rng rng = sim::derive_stream(context.seed, context.claim_id + "/point", 0);
  auto uniform = [&rng] { return 2.0 * sim::uniform01(rng) - 1.0; };
  const Eigen::Index N = instance.N(), T = instance.T;
  sim::scb::LinearModel point = sim::scb::initial_model(instance);
  point.V = 0.5 * (instance.P + point.V);
  for (Eigen::Index i = 0; i < point.V.size(); ++i) point.V.data()[i] += 0.1 * uniform() / std::sqrt(static_cast<double>(N));
  const Eigen::MatrixXd q = sim::scb::dense_q(instance);
  for (Eigen::Index k = 0; k < N; ++k) {
    for (Eigen::Index t = 0; t < T; ++t) {
      point.A(t, k) = 0.5 / static_cast<double>(T) + 0.5 * q(t, k) + 0.5 * uniform() / static_cast<double>(T);
    }
    point.A.col(k) *= (1.0 + 0.2 * uniform()) / point.A.col(k).sum();
  }
  return point;
}

/// The population preconditioned direction (η = η_A = 1) of the claim's theory or of a mutant.
template <class S>
std::pair<Matrix<S>, Matrix<S>> theory_direction(const theory::scb::Instance<S>& instance, const Matrix<S>& V,
                                                 const Matrix<S>& A, const RunContext& context) {
  if (context.mutant_is("no_preconditioner") || context.mutant_is("no_projection")) {
    const theory::scb::Gradient<S> g = theory::scb::population_gradient(instance, V, A);
    Matrix<S> dV = g.V, dA = g.A;
    const bool precondition = context.mutant_is("no_projection");
    for (Eigen::Index k = 0; k < A.cols(); ++k) {
      if (precondition) {
        dV.col(k) /= instance.mu[k];
        dA.col(k) /= instance.mu[k];
      } else {
        dA.col(k).array() -= dA.col(k).mean();
      }
    }
    return {dV, dA};
  }
  Matrix<S> V_next = V, A_next = A;
  theory::scb::stage1_population_step(instance, V_next, A_next, S(1), S(1));
  return {V - V_next, A - A_next};
}

class SgdStepUnbiased final : public Claim {
 public:
  const ClaimInfo& info() const override { return info_; }

  Verdict run(const RunContext& context) const override {
    const sim::scb::Instance instance = make_instance(context);
    const Eigen::Index N = instance.N(), T = instance.T;
    const double eta = context.params.get("eta");
    const double resolution_fraction = context.params.get("resolution");
    const sim::scb::LinearModel point = evaluation_point(context, instance);
    const std::vector<Eigen::Index> entries = selected_attention_entries(instance);
    const Eigen::Index n_V = N * N, n_A = static_cast<Eigen::Index>(entries.size());
    const sim::scb::Sampler sampler(instance);
    const std::size_t replicates = context.budget.pick<std::size_t>(8, 64, 256);
    // Samples per replicate from a work budget in units of one token operation; the unit costs
    // include the per-step overhead (clearing sums, applying the step) measured at small T.
    const double work = context.budget.pick(5e5, 2.4e9, 2.4e10);
    auto samples_for = [&](double share, double units) {
      return static_cast<long long>(std::clamp(share * work / (static_cast<double>(replicates) * units), 100.0, 1e7));
    };
    const auto t_units = static_cast<double>(T), n_units = static_cast<double>(N * N);
    const long long work_samples_a = samples_for(0.25, 2 * t_units + n_units + 64);
    const long long work_samples_b = samples_for(0.75, 4 * t_units + 4 * n_units + 300);

    // Theory: [direction V (N²), direction A (selected), E Δα̂, Var Δα̂ leading order].
    const ReferenceVector theory_value = reference_vector([&]<class S>() {
      const theory::scb::Instance<S> th = to_theory<S>(instance);
      const auto [dV, dA] = theory_direction<S>(th, point.V.cast<S>(), point.A.cast<S>(), context);
      const theory::scb::Constants<S> c = theory::scb::constants(th);
      const S t(static_cast<double>(T)), e(eta);
      Vector<S> out(n_V + n_A + 2);
      for (Eigen::Index i = 0; i < n_V; ++i) out[i] = dV.data()[i];
      for (Eigen::Index i = 0; i < n_A; ++i) out[n_V + i] = dA.data()[entries[static_cast<std::size_t>(i)]];
      out[n_V + n_A] = context.mutant_is("mean_half") ? e / (2 * t) : e / t;
      out[n_V + n_A + 1] = context.mutant_is("variance_without_1_over_T") ? e * e * c.K_2 / (c.K_P * c.K_P)
                                                                         : e * e * c.K_2 / (t * c.K_P * c.K_P);
      return out;
    });

    // The exact finite-T variance (derived above), in double from the instance.
    const Eigen::VectorXd& mu = instance.mu;
    const Eigen::MatrixXd Sigma = Eigen::MatrixXd(mu.asDiagonal()) - mu * mu.transpose();
    const Eigen::MatrixXd& P = instance.P;
    const double K_P = (P * Sigma * P.transpose()).trace();
    const double K_2_prime = (P.transpose() * Sigma * P * Sigma).trace();
    double S_3 = 0.0;
    for (Eigen::Index j = 0; j < N; ++j) {
      const Eigen::VectorXd m = P.col(j) - mu;
      Eigen::MatrixXd C = Eigen::MatrixXd(P.col(j).asDiagonal()) - P.col(j) * mu.transpose() - mu * P.col(j).transpose() +
                          mu * mu.transpose();
      S_3 += mu(j) * m.dot(C * m);
    }
    const double t_real = static_cast<double>(T);
    const double exact_variance =
        eta * eta * ((t_real - 1.0) * K_2_prime + S_3 - K_P * K_P) / (t_real * t_real * K_P * K_P);
    const double exact_variance_error = 64.0 * static_cast<double>(N * N * N) * std::numeric_limits<double>::epsilon() * exact_variance;

    // (b)'s sample count: at least what makes the predicted half-width of the mean increment
    // 0.6 x its resolution (from the exact variance and the Student-t quantile of this claim's
    // share), at most 3 x the work budget's count, so low-SNR instances are not starved.
    const double resolution_mean = context.params.get("resolution_mean");
    const std::size_t compared_quantities = static_cast<std::size_t>(n_V + n_A + 3);
    const double t_quantile =
        stats::student_t_half_width(stats::Summary{replicates, 0.0, 1.0, 0.0, 0.0},
                                    stats::bonferroni_share(context.false_failure_rate(), compared_quantities))
            .value * std::sqrt(static_cast<double>(replicates));
    const double needed_total = portable::pow(t_quantile * std::sqrt(exact_variance) / (0.6 * resolution_mean * eta / t_real), 2);
    const long long samples_b = std::clamp(static_cast<long long>(needed_total / static_cast<double>(replicates)) + 1,
                                           work_samples_b, 3 * work_samples_b);

    // (a) Mean preconditioned per-sample gradients at the point, M per replicate.
    auto mean_direction = [&](long long M, sim::Rng& rng) {
      sim::scb::SgdWorkspace workspace(static_cast<int>(N), static_cast<int>(T));
      sim::scb::draw_batch_gradient(point, sampler, M, rng, workspace);
      sim::scb::LinearModel moved = point;
      sim::scb::apply_gradient_step(moved, instance.mu, workspace.sums, 1.0, 1.0, {});
      const Eigen::MatrixXd dV = point.V - moved.V, dA = point.A - moved.A;
      Eigen::MatrixXd result(n_V + n_A, 1);
      result.col(0).head(n_V) = Eigen::Map<const Eigen::VectorXd>(dV.data(), n_V);
      for (Eigen::Index i = 0; i < n_A; ++i) result(n_V + i, 0) = dA.data()[entries[static_cast<std::size_t>(i)]];
      return result;
    };
    // Its M: a pilot on its own stream (8 replicates of 2000 samples) estimates each entry's
    // per-sample spread; M is the smallest count whose predicted half-width is 0.6 x the block's
    // resolution for every entry, clamped to [1, 3] x the work budget's count. The verdict's
    // replicates are fresh draws, so choosing M this way leaves their statistics unchanged.
    long long samples_a = work_samples_a;
    {
      constexpr long long pilot_samples = 2000;
      const std::vector<Eigen::MatrixXd> pilot = sim::run_replicates(
          replicate_options(context, "pilot", 8), [&](std::size_t, sim::Rng& rng) { return mean_direction(pilot_samples, rng); });
      const auto pilot_summaries = summarize_replicates(pilot, "pilot mean preconditioned gradient");
      const double block_V = theory_value.value.head(n_V).cwiseAbs().maxCoeff();
      const double block_A = theory_value.value.segment(n_V, n_A).cwiseAbs().maxCoeff();
      double needed = 0.0;
      for (Eigen::Index i = 0; i < n_V + n_A; ++i) {
        const double per_sample_variance = pilot_summaries[static_cast<std::size_t>(i)][0].variance * pilot_samples;
        const double target = 0.6 * resolution_fraction * (i < n_V ? block_V : block_A);
        needed = std::max(needed, t_quantile * t_quantile * per_sample_variance / (target * target));
      }
      samples_a = std::clamp(static_cast<long long>(needed / static_cast<double>(replicates)) + 1, work_samples_a,
                             3 * work_samples_a);
    }
    const std::vector<Eigen::MatrixXd> directions = sim::run_replicates(
        replicate_options(context, "preconditioned_gradient", replicates), [&](std::size_t, sim::Rng& rng) {
          return mean_direction(samples_a, rng);
        });
    // (b) One-sample stage-1 steps from the initialisation: replicate mean and variance of Δα̂.
    const sim::scb::LinearModel start = sim::scb::initial_model(instance);
    const Eigen::VectorXd P_mu = P * mu;
    auto alpha_hat = [&](const Eigen::MatrixXd& V) {  // ⟨V, P⟩_Σ / K_P, Σ-inner product by definition
      return ((V.cwiseProduct(P) * mu).sum() - (V * mu).dot(P_mu)) / K_P;
    };
    const double alpha_start = alpha_hat(start.V);
    const std::vector<Eigen::MatrixXd> increments = sim::run_replicates(
        replicate_options(context, "alpha_increment", replicates), [&](std::size_t, sim::Rng& rng) {
          sim::scb::LinearModel model = start;
          sim::scb::SgdWorkspace workspace(static_cast<int>(N), static_cast<int>(T));
          stats::RunningMoments moments;
          for (long long m = 0; m < samples_b; ++m) {
            sim::scb::draw_batch_gradient(model, sampler, 1, rng, workspace);
            sim::scb::apply_gradient_step(model, mu, workspace.sums, eta, 0.0, {});  // η_A = 0: A stays uniform
            moments.add(alpha_hat(model.V) - alpha_start);
            model.V = start.V;
          }
          const stats::Summary s = moments.summary();
          Eigen::MatrixXd result(2, 1);
          result << s.mean, s.variance;
          return result;
        });

    const auto direction_summaries = summarize_replicates(directions, "mean preconditioned gradient");
    const auto increment_summaries = summarize_replicates(increments, "alpha increment");
    const std::size_t compared = static_cast<std::size_t>(n_V + n_A + 3);
    const double delta = stats::bonferroni_share(context.false_failure_rate(), compared);
    Eigen::VectorXd measured(n_V + n_A + 2), half(n_V + n_A + 2);
    std::string t_reason;
    for (Eigen::Index i = 0; i < n_V + n_A + 2; ++i) {
      const stats::Summary& s = i < n_V + n_A ? direction_summaries[static_cast<std::size_t>(i)][0]
                                              : increment_summaries[static_cast<std::size_t>(i - n_V - n_A)][0];
      const stats::HalfWidth h = stats::student_t_half_width(s, delta);
      measured[i] = s.mean;
      half[i] = h.value;
      if (i == 0) t_reason = h.reason;
    }
    const std::string reason_a = fmt::format(
        "{}; each replicate is the mean of M = {} iid per-sample preconditioned gradients (close to normal); "
        "Bonferroni over {} compared quantities", t_reason, samples_a, compared);
    const std::string reason_b = fmt::format(
        "Student-t over R = {} replicates, each the mean / unbiased variance of M = {} iid one-sample increments "
        "(close to normal); Bonferroni over {} compared quantities", replicates, samples_b, compared);

    Verdict verdict;
    auto add_block = [&](const std::string& label, Eigen::Index begin, Eigen::Index size) {
      const Eigen::VectorXd tolerance = theory_value.error.segment(begin, size) + half.segment(begin, size);
      const Eigen::Index w =
          begin + worst_entry(theory_value.value.segment(begin, size), measured.segment(begin, size), tolerance);
      std::string where;
      if (w < n_V) {
        where = fmt::format("entry ({}, {}), worst of {}", w % N, w / N, size);
      } else {
        const Eigen::Index flat = entries[static_cast<std::size_t>(w - n_V)];
        where = fmt::format("a_(t={}, k={}), worst of {}", flat % T, flat / T, size);
      }
      verdict.comparisons.push_back(compare(
          fmt::format("{}: {}", label, where), {theory_value.value[w], theory_value.error[w], ReferenceVector::reason},
          {measured[w], half[w], reason_a}, {0.0, "none: per-sample gradients are unbiased and the step is linear in them"},
          {resolution_fraction * theory_value.value.segment(begin, size).cwiseAbs().maxCoeff(),
           fmt::format("{:g} x the largest entry of the block", resolution_fraction)}));
    };
    add_block("mean of grad_V l D^-1 = grad_V L D^-1", 0, n_V);
    add_block("mean of Pi_T grad_a_k l / mu_k = Pi_T grad_a_k L / mu_k", n_V, n_A);

    const Eigen::Index i_mean = n_V + n_A, i_var = n_V + n_A + 1;
    verdict.comparisons.push_back(compare(
        "E d(alpha_hat) of one sample at init = eta / T", {theory_value.value[i_mean], theory_value.error[i_mean], ReferenceVector::reason},
        {measured[i_mean], half[i_mean], reason_b}, {0.0, "none: exact (derived; uses P mu = mu)"},
        {resolution_mean * eta / t_real, fmt::format("{:g} x eta / T (parameter resolution_mean)", resolution_mean)}));
    // The O(1/T) term of the claim's own leading order (not of a mutant's), in double.
    const double K_2 = (P * Sigma * P.transpose() * Sigma).trace();
    const double correction = std::abs(exact_variance - eta * eta * K_2 / (t_real * K_P * K_P));
    verdict.comparisons.push_back(compare(
        "Var d(alpha_hat) = eta^2 K_2 / (T K_P^2) (leading order)",
        {theory_value.value[i_var], theory_value.error[i_var], ReferenceVector::reason}, {measured[i_var], half[i_var], reason_b},
        {correction + exact_variance_error,
         fmt::format("the O(1/T) term, |exact - leading| = eta^2 |S_3 - K_P^2 + (T-1) K_2' - T K_2| / (T^2 K_P^2) with "
                     "S_3 = {:.4g}, K_2' = tr(P' Sigma P Sigma) = {:.4g} (derived, see the claim's header)",
                     S_3, K_2_prime)},
        {resolution_fraction * theory_value.value[i_var], fmt::format("{:g} x the variance", resolution_fraction)}));
    verdict.comparisons.push_back(compare(
        "Var d(alpha_hat) = eta^2 [(T-1) K_2' + S_3 - K_P^2] / (T^2 K_P^2) (exact, derived)",
        {exact_variance, exact_variance_error, "double evaluation of the exact formula, 64 N^3 eps relative"},
        {measured[i_var], half[i_var], reason_b}, {0.0, "none: exact"},
        {resolution_fraction * exact_variance, fmt::format("{:g} x the variance", resolution_fraction)}));

    verdict.notes.push_back(describe(instance, context));
    verdict.notes.push_back(fmt::format(
        "(a) at V = mu 1' + (P - mu 1')/2 + 0.1 u/sqrt(N), a_k = 1/(2T) + q_k/2 + u/(2T) rescaled to 1'a_k in [0.8, "
        "1.2]; R = {} replicates of M = {} samples. (b) from V = mu 1', a = 1/T, eta = {:g}; R = {} replicates of "
        "M = {} one-sample steps. K_P = {:.5g}, K_2 = tr(P Sigma P' Sigma).",
        replicates, samples_a, eta, replicates, samples_b, K_P));
    verdict.notes.push_back(
        "[derived]: the preconditioners of the reconstructed stage-1 rule (spec §3) and the SNR computation of spec §5.");
    return verdict;
  }

 private:
  ClaimInfo info_{
      .id = "scb.sgd_step_unbiased",
      .family = "scb",
      .paper = "Ren, Wang, Lee (NeurIPS 2024), sparse contextual bigrams",
      .source = "specs/scb.md §3 (stage 1), §5 (stage-1 SNR), §8 claim 10",
      .tag = Provenance::derived,
      .statement = "Mean per-sample preconditioned projected gradients equal the population ones, and at "
                   "initialisation one sample moves alpha_hat by eta/T on average with variance "
                   "eta^2 K_2 / (T K_P^2) (1 + O(1/T)).",
      .latex = R"(\mathbb E\Delta\hat\alpha = \eta/T,\quad \mathrm{Var}\,\Delta\hat\alpha = \frac{\eta^2K_2}{TK_P^2}\bigl(1+O(1/T)\bigr))",
      .simulation = "R replicates of M per-sample preconditioned gradients at a random point; R replicates of M "
                    "one-sample stage-1 steps from V = mu 1', a = 1/T.",
      .params = [] {
        std::vector<ParamSpec> specs = instance_param_specs(3, 50, 2);
        specs.push_back({"eta", 0.5, 0, 1, false, true, "V step size of the one-sample steps in (b)"});
        specs.push_back({"resolution", 0.05, 0, 1, false, true,
                         "detectable discrepancy: fraction of the block's largest entry and of the variance"});
        specs.push_back({"resolution_mean", 0.1, 0, 1, false, true,
                         "detectable discrepancy of the mean increment, as a fraction of eta/T"});
        return specs;
      }(),
      .mutants =
          {
              {"no_preconditioner", "population direction grad L without D^-1 and 1/mu_k"},
              {"no_projection", "a-direction without the projection Pi_T"},
              {"mean_half", "E d(alpha_hat) = eta / (2T)"},
              {"variance_without_1_over_T", "Var d(alpha_hat) = eta^2 K_2 / K_P^2"},
          },
  };
};

}  // namespace

std::unique_ptr<Claim> make_sgd_step_unbiased() { return std::make_unique<SgdStepUnbiased>(); }

}  // namespace dyncheck::checks::scb
