// Claim scb.stage_two_l1_error_flat_in_T  [reconstructed]  (specs/scb.md §3 stage 2, §5, §8 claim 13)
//
// Stage 2 as reconstructed in §3: the stage-1 step, then the soft threshold
// a_{k,t} ← sign(a_{k,t}) max(|a_{k,t}| − η_A λ/μ_k, 0), no re-projection, final normalisation.
// Population ([derived] for this rule): off-support entries become exactly 0, the normalised
//   a_k equals q_k exactly for q uniform on its support, and ‖V/colsum − P‖_F ∝ λ (ratio 10 for
//   λ vs λ/10).
// SGD: with the threshold ≥ 3× the per-step attention-noise std, the squared attention error
//   e_A² = Σ_k ‖â_k − q_k‖² after a fixed number of steps does not grow from T to 4T. Without ℓ1
//   (spec: "it grows ∝ T/B") the noise part of the error, E e_A² − e_A²(noiseless population),
//   follows the noise-corrected reduced model (§5) at T and at 4T, once the model's attention noise
//   uses the residual covariance of the current state ([derived] here, theory::scb::
//   attention_gradient_variance): σ_k² = α²[K_2 − (2α⟨q_k,a_k⟩ − α²‖a_k‖²)K_4 + (μ−m)ᵀW(μ−m)],
//   W = PΣPᵀ, K_4 = tr W². §5's stage-1 value α²K_2 (E[rrᵀ] ≈ Σ, attention near uniform)
//   over-predicts the stage-2 noise floor about 2–3x: it is a mutant here, not the reference.
//   e_A² = Σ_k [(1 − β_k)²ρ_k + ω_k] is exact when 1ᵀa_k = 1, which stage 2 without ℓ1 keeps.
// Start of stage 2: the population stage-1 state at the first step with α ≥ ½ (exact, computed
//   by the sim's population GD; the step count from theory::scb::reduced_gd_step).
// λ_SGD = κ K_P μ_min / (2Q): the per-step shrinkage is a fraction κ of the on-support signal step
//   η_A α K_P/Q at α = ½, so true entries survive; B must make λ ≥ 3 max_k √(K_2 μ_k / B) (noise std
//   at α ≤ 1; ParamError on B otherwise); B = 0 picks four times that minimum.
// η_A K_P >= 0.1: the SGD runs last a fixed number of steps; slower attention rates leave the
//   off-support mass in place within them (issue #10: η_A K_P = 0.0102 failed).
// B_no_l1 must be at least the auto value below (ParamError otherwise, like B); B_no_l1 = 0 picks the batch at which §5's stationary noise ω* at 4T is ρ̄/2 (ω* ≤ ρ̄/8 at T):
//   the unregularised noise floor is of the order of the signal, as in "SGD fails from its variance".
// Cost: refused up front (ParamError) when the SGD runs exceed seeds x steps x (B + B_no_l1) x 5T =
//   6e10 at ci (the default, 9.7e9 with 48 seeds, takes ~20 s) or the population runs 2 x steps x T x N² = 5e6.
// Seeds: 48 at ci (24 before: seeds 3 and 5 were INCONCLUSIVE, the Student-t width of the noise part
//   at T exceeding half the predicted value), 24 where 48 would exceed the limit.
// Tolerances:
//   population (λ_pop = κ_pop K_P μ_min/(2Q_pop), relative like the SGD λ: an absolute λ killed
//     every entry of a column with small μ_k, issue #10 seed 2; the run lasts until every
//     off-support entry is 0 at λ/10, from the derived bound max_off μ_max/(η_A λ/10) steps, plus
//     pop_steps): off-support max |a| = 0 exactly; max |â − q| ≤ 1e-12 (on-support entries follow the
//     same recurrence; only round-off separates them); ratio 10 ± 2 (20%: O(λ²) terms and the drift
//     along the flat valley V → cP, from the spec).
//   SGD with ℓ1: difference of the two means = 0 ± (Student-t half-widths) + leak bias: an
//     off-support entry survives a step only when its noise exceeds the threshold z σ, adding
//     E[(|Z| − z)₊²] σ² per entry, so 3T N such entries add at most 3TN E[(|Z|−z)₊²] σ²_max / s²_min.
//   SGD without ℓ1: Student-t half-width of the mean + the noiseless value's error; bias 10% of the
//     predicted noise part (the allowance spec §8 claim 11 gives the noise-corrected model: second-
//     order fluctuations; here also x_t treated as independent of r, O(1/T), and V⊥ dropped from the
//     attention noise, O(ν)).
// Resolution: ℓ1 comparison: half the model's growth without ℓ1 (the growth a useless ℓ1 would keep);
//   without ℓ1: half the predicted noise part at T, half its growth T → 4T at 4T.
// Mutants: error_quadratic_in_lambda (ratio 100), l1_keeps_noise_floor (with ℓ1 the error grows as
//   the model's error without ℓ1), l1_keeps_5_percent_of_noise_floor (the small mutant: 5% of it;
//   the ℓ1 comparison resolves a growth of (leak bias + half-widths), about 4% of the model's growth
//   at the defaults), noise_floor_flat_in_T (without ℓ1 the noise part at 4T equals that
//   at T), stage_one_attention_noise (§5's literal α²K_2 attention noise in stage 2).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "dyncheck/checks/experiment.hpp"
#include "claims.hpp"
#include "dyncheck/checks/reference_value.hpp"
#include "dyncheck/checks/stats.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/replicates.hpp"
#include "dyncheck/sim/scb/normalise.hpp"
#include "dyncheck/sim/scb/optimizers.hpp"
#include "dyncheck/sim/scb/population_gd.hpp"
#include "dyncheck/sim/scb/sampler.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/noise_corrected.hpp"
#include "dyncheck/theory/scb/reduced_recurrence.hpp"
#include "dyncheck/theory/scb/reduced_state.hpp"
#include "finite_sample_support.hpp"

namespace dyncheck::checks::scb {
namespace {

constexpr int comparisons_total = 6;

/// E[(|Z| − z)₊²] for Z ~ N(0, 1): 2[(1 + z²)Φ̄(z) − zφ(z)].
double truncated_square_excess(double z) {
  const double phi = portable::exp(-z * z / 2) / std::sqrt(2 * M_PI);
  const double tail = 0.5 * portable::erfc(z / std::sqrt(2.0));
  return 2 * ((1 + z * z) * tail - z * phi);
}

/// Σ_k ‖a_k/1ᵀa_k − q_k‖² and ‖V diag(1ᵀV)⁻¹ − P‖_F of a model (normalised copy).
struct StageTwoError {
  double attention_sq = 0, value = 0, min_mass = 0, alpha = 0;
};

StageTwoError stage_two_error(const sim::scb::Instance& instance, sim::scb::LinearModel model) {
  StageTwoError e;
  e.alpha = observe(instance, measurement_constants(instance), model).alpha;
  e.min_mass = model.A.colwise().sum().minCoeff();
  sim::scb::normalise(model);
  const Eigen::MatrixXd q = sim::scb::dense_q(instance);
  e.attention_sq = (model.A - q).squaredNorm();
  e.value = (model.V - instance.P).norm();
  return e;
}

/// Columns of stage_two_model's result.
enum ModelColumn : Eigen::Index {
  escape_steps = 0,     ///< steps to α ≥ ½ (population)
  noisy_at_B = 1,       ///< E e_A² after `steps` noise-corrected steps at B (attention noise of the state)
  noiseless = 2,        ///< e_A² after `steps` population steps
  noisy_plain = 3,      ///< the same as noisy_at_B at B_no_l1
  spec_noise_plain = 4  ///< at B_no_l1 with spec §5's stage-1 attention noise α²K_2
};

/// Theory: the reduced state at the first step with α ≥ ½ (exact population recurrence), then
/// `steps` noise-corrected steps at batch B and at B_no_l1 (columns: ModelColumn).
template <class S>
theory::Vector<S> stage_two_model(const theory::scb::Instance<S>& instance, long long steps, const S& eta,
                                  const S& eta_A_K_P, const S& batch, const S& batch_plain) {
  const theory::scb::Constants<S> c = theory::scb::constants(instance);
  const theory::scb::AttentionNoiseConstants<S> noise = theory::scb::attention_noise_constants(instance);
  const auto N = instance.mu.size();
  const S eta_A = eta_A_K_P / c.K_P;
  theory::scb::ReducedState<S> state{instance.mu, S(0), S(0), theory::Vector<S>::Zero(N), theory::Vector<S>::Zero(N)};
  long long t1 = 0;
  while (state.alpha < S(0.5)) {
    state = theory::scb::reduced_gd_step(instance, c, state, eta, eta_A);
    if (++t1 > 100000) throw std::runtime_error("stage_two_model: population escape not reached in 1e5 steps");
  }
  theory::scb::ReducedState<S> at_B = state, clean = state, plain = state, spec_plain = state;
  for (long long t = 0; t < steps; ++t) {
    at_B = theory::scb::noise_corrected_step(instance, c, noise, at_B, eta, eta_A, batch);
    plain = theory::scb::noise_corrected_step(instance, c, noise, plain, eta, eta_A, batch_plain);
    spec_plain = theory::scb::noise_corrected_step(instance, c, spec_plain, eta, eta_A, batch_plain);
    clean = theory::scb::reduced_gd_step(instance, c, clean, eta, eta_A);
  }
  auto error_sq = [&](const theory::scb::ReducedState<S>& s) {
    S sum = S(0);
    for (Eigen::Index k = 0; k < N; ++k) sum += (S(1) - s.beta[k]) * (S(1) - s.beta[k]) * c.rho[k] + s.omega[k];
    return sum;
  };
  theory::Vector<S> out(5);
  out << S(t1), error_sq(at_B), error_sq(clean), error_sq(plain), error_sq(spec_plain);
  return out;
}

class StageTwoL1ErrorFlatInT final : public Claim {
 public:
  const ClaimInfo& info() const override { return info_; }

  Verdict run(const RunContext& context) const override {
    const auto& p = context.params;
    const int N = static_cast<int>(p.get_int("N")), T = static_cast<int>(p.get_int("T"));
    const int Q = static_cast<int>(p.get_int("Q"));
    require_sparsity(Q, T);
    const double eta = p.get("eta"), eta_A_K_P = p.get("eta_A_K_P"), kappa = p.get("lambda_fraction");
    const long long batch_param = p.get_int("B");
    const long long batch_plain_param = p.get_int("B_no_l1");
    // Smoke runs only the plumbing: at most 2 stage-2 steps (the verdict is then INCONCLUSIVE).
    const long long steps = context.budget.level == BudgetLevel::smoke ? std::min<long long>(2, p.get_int("steps"))
                                                                        : p.get_int("steps");
    const double lambda_pop_fraction = p.get("lambda_pop_fraction");
    const long long pop_steps_min = p.get_int("pop_steps");
    std::size_t seeds = context.budget.pick<std::size_t>(2, 48, 64);
    const double delta = context.false_failure_rate() / comparisons_total;
    Verdict verdict;

    // B = 0 (auto) is resolved from the instance at T (P and μ are the same at 4T).
    // One stream for T and 4T: random_instance draws P (hence μ) first, so both sides share P and μ
    // and differ only in their supports.
    sim::scb::Instance probe = draw_instance(context, {.N = N, .T = T, .Q = Q}, "instance");
    const MeasurementConstants probe_mc = measurement_constants(probe);
    const double eta_A = eta_A_K_P / probe_mc.K_P;  // P and μ are the same at T and 4T
    const double alpha_escape = 0.5;  // stage 2 starts at the first α ≥ ½; λ uses this lower bound
    const double lambda = kappa * alpha_escape * probe_mc.K_P * probe.mu.minCoeff() / Q;
    const double b_min = 9 * probe_mc.K_2 * probe.mu.maxCoeff() / (lambda * lambda);
    constexpr double batch_max = 1e6;  // the range of parameter 'B'
    if (b_min > batch_max) {
      throw ParamError("B", fmt::format("no batch in the range of parameter 'B' [1, 1e6] works for this instance: the "
                                        "threshold eta_A lambda/mu_k must be >= 3 x the per-step attention noise std, "
                                        "which needs B >= {:.3g} (grows like Q^2/(K_P^2 mu_min^2)); use a smaller Q or "
                                        "N, or a larger lambda_fraction",
                                        b_min));
    }
    const long long batch =
        batch_param > 0 ? batch_param : static_cast<long long>(std::ceil(std::min(4 * b_min, batch_max)));
    if (static_cast<double>(batch) < b_min) {
      throw ParamError("B", fmt::format("parameter 'B' must be 0 (auto) or an integer in [{}, 1e6] for this instance: "
                                        "the threshold eta_A lambda/mu_k must be >= 3 x the per-step attention noise "
                                        "std eta_A alpha sqrt(K_2/(B mu_k)) at alpha <= 1 (spec §8 claim 13)",
                                        static_cast<long long>(std::ceil(b_min))));
    }
    // B_no_l1 = 0 (auto): the batch at which spec §5's stationary attention noise at 4T,
    // ω* = η_A 4T K_2/(2 B μ_min K_P), is ρ̄/2: the noise floor is then of the order of the signal ρ̄
    // (SGD visibly fails from its variance) while ω* ≤ ρ̄/8 at T.
    const double batch_plain_auto =
        std::ceil(eta_A * 4.0 * T * probe_mc.K_2 / (probe.mu.minCoeff() * probe_mc.K_P * probe_mc.rho_bar));
    if (batch_plain_auto > batch_max) {
      throw ParamError("B_no_l1", fmt::format("no batch in the range of parameter 'B_no_l1' [1, 1e6] works for this "
                                              "instance: spec §5's stationary noise at 4T must be <= rho_bar/2, which "
                                              "needs B_no_l1 >= {:.3g}; use a smaller T or eta_A_K_P",
                                              batch_plain_auto));
    }
    if (batch_plain_param > 0 && static_cast<double>(batch_plain_param) < batch_plain_auto) {
      throw ParamError("B_no_l1", fmt::format("parameter 'B_no_l1' must be 0 (auto) or an integer in [{}, 1e6] for this "
                                              "instance: the noise-corrected model is claimed while spec §5's "
                                              "stationary attention noise at 4T, omega* = eta_A 4T K_2/(2 B mu_min "
                                              "K_P), is at most rho_bar/2 (beyond it the second-order fluctuations "
                                              "the model drops are of the order of the signal)",
                                              static_cast<long long>(batch_plain_auto)));
    }
    const long long batch_plain = batch_plain_param > 0 ? batch_plain_param : static_cast<long long>(batch_plain_auto);
    // Cost of the SGD runs: S seeds x steps at B and B_no_l1, at T and 4T, each sample O(T) tokens.
    // Measured: the default point (48 x 20 x (39944 + 447) x 5 x 50 = 9.7e9) takes ~20 s at ci.
    {
      const double work_per_seed = static_cast<double>(steps) * static_cast<double>(batch + batch_plain) * 5.0 * T;
      const double work_max = context.budget.pick<double>(5e8, 6e10, 1e12);
      // At ci, instances whose batch makes 48 seeds unaffordable run with 24 (the count before
      // issue #10; e.g. seed 4's default instance, B = 452893: 5.5e10 units).
      if (context.budget.level == BudgetLevel::ci && static_cast<double>(seeds) * work_per_seed > work_max) seeds = 24;
      const double work = static_cast<double>(seeds) * work_per_seed;
      if (work > work_max) {
        throw ParamError("B", fmt::format("the SGD runs need seeds x steps x (B + B_no_l1) x 5T = {} x {} x ({} + {}) x "
                                          "{} = {:.3g} sample-token units, more than the {} budget's limit {:.3g}; use a "
                                          "smaller T, Q, N or steps, or a larger lambda_fraction (B grows like "
                                          "1/lambda_fraction^2)",
                                          seeds, steps, batch, batch_plain, 5 * T, work,
                                          to_string(context.budget.level), work_max));
      }
    }
    struct Side {
      sim::scb::Instance instance;
      MeasurementConstants mc;
      ReferenceVector model;  // stage_two_model (columns: ModelColumn)
      sim::scb::LinearModel start;
      double alpha1 = 0;
    };
    auto prepare = [&](int T_side) {
      Side s;
      s.instance = draw_instance(context, {.N = N, .T = T_side, .Q = Q}, "instance");
      s.mc = measurement_constants(s.instance);
      s.model = reference_vector([&]<class S>() {
        return stage_two_model(to_theory<S>(s.instance), steps, S(eta), S(eta_A_K_P), S(batch), S(batch_plain));
      });
      const auto t1 = static_cast<long long>(std::llround(s.model.value[escape_steps]));
      s.start = sim::scb::initial_model(s.instance);
      for (long long t = 0; t < t1; ++t) {
        sim::scb::population_stage1_step(s.start, s.instance, eta, eta_A_K_P / s.mc.K_P);
      }
      s.alpha1 = observe(s.instance, s.mc, s.start).alpha;
      return s;
    };
    const Side small = prepare(T), large = prepare(4 * T);

    // ---- Population: stage 2 at λ and λ/10 from the population stage-1 state (α ≥ ½) of an
    // instance with Q_pop ≥ 2 (for Q = 1 the normalised V is exactly P and the ratio is void).
    const int Q_pop = static_cast<int>(p.get_int("Q_pop"));
    require_sparsity(Q_pop, T);
    const sim::scb::Instance pop_instance = draw_instance(context, {.N = N, .T = T, .Q = Q_pop}, "population");
    const MeasurementConstants pop_mc = measurement_constants(pop_instance);
    const double pop_eta_A = eta_A_K_P / pop_mc.K_P;
    sim::scb::LinearModel pop_start = sim::scb::initial_model(pop_instance);
    for (long long t = 0; observe(pop_instance, pop_mc, pop_start).alpha < 0.5; ++t) {
      if (t > 100000) throw std::runtime_error("population escape not reached in 1e5 steps");
      sim::scb::population_stage1_step(pop_start, pop_instance, eta, pop_eta_A);
    }
    // lambda_pop = kappa_pop K_P mu_min / (2 Q_pop), like the SGD lambda: the per-step shrinkage
    // eta_A lambda/mu_k is then at most kappa_pop x the on-support signal step at alpha = 1/2 for every
    // column (an absolute lambda kills every entry of a column whose mu_k is small).
    const double lambda_pop = lambda_pop_fraction * pop_mc.K_P * pop_instance.mu.minCoeff() / (2.0 * Q_pop);
    // Steps: every off-support entry must reach 0 at lambda/10 too. Off-support entries only
    // decrease (the projected gradient moves mass onto the support, and the threshold removes at
    // least eta_A (lambda/10)/mu_max per step), so ceil(max_off mu_max / (eta_A lambda/10)) steps
    // suffice; pop_steps more let V and the on-support entries settle at the fixed point.
    double start_off_support = 0;
    {
      const Eigen::MatrixXd q_start = sim::scb::dense_q(pop_instance);
      for (int k = 0; k < N; ++k) {
        for (int t = 0; t < T; ++t) {
          if (q_start(t, k) == 0) start_off_support = std::max(start_off_support, std::abs(pop_start.A(t, k)));
        }
      }
    }
    const double zeroing_steps =
        std::ceil(start_off_support * pop_instance.mu.maxCoeff() / (pop_eta_A * lambda_pop / 10));
    // Cost: two population runs of O(T N^2) per step; measured ~7 ms per step at T = 50, N = 3.
    const double pop_work = 2 * (zeroing_steps + static_cast<double>(pop_steps_min)) * T * N * N;
    const double pop_work_max = context.budget.pick<double>(1e6, 5e6, 1e9);
    if (pop_work > pop_work_max) {
      throw ParamError("lambda_pop_fraction",
                       fmt::format("the population check needs {:.3g} + {} steps at T = {}, N = {} (2 runs x steps x T "
                                   "x N^2 = {:.3g}, more than the {} budget's limit {:.3g}): the off-support entries "
                                   "take that long to reach 0 at lambda/10 for this instance; use a larger "
                                   "lambda_pop_fraction or eta_A_K_P, or a smaller pop_steps, T or N",
                                   zeroing_steps, pop_steps_min, T, N, pop_work, to_string(context.budget.level),
                                   pop_work_max));
    }
    const long long pop_steps = static_cast<long long>(zeroing_steps) + pop_steps_min;
    auto population_stage_two = [&](double lam) {
      sim::scb::LinearModel m = pop_start;
      for (long long t = 0; t < pop_steps; ++t) sim::scb::population_stage2_step(m, pop_instance, eta, pop_eta_A, lam);
      return m;
    };
    const sim::scb::LinearModel pop = population_stage_two(lambda_pop);
    const sim::scb::LinearModel pop_tenth = population_stage_two(lambda_pop / 10);
    const Eigen::MatrixXd q = sim::scb::dense_q(pop_instance);
    double off_support = 0;
    for (int k = 0; k < N; ++k) {
      for (int t = 0; t < T; ++t) {
        if (q(t, k) == 0) off_support = std::max(off_support, std::abs(pop.A(t, k)));
      }
    }
    sim::scb::LinearModel pop_normalised = pop;
    sim::scb::normalise(pop_normalised);
    const double attention_gap = (pop_normalised.A - q).cwiseAbs().maxCoeff();
    const double value_error = stage_two_error(pop_instance, pop).value;
    const double value_error_tenth = stage_two_error(pop_instance, pop_tenth).value;
    verdict.comparisons.push_back(compare(
        fmt::format("population: max off-support |a_k,t| after {} stage-2 steps (lambda = {:.4g})", pop_steps, lambda_pop),
        {0, 0, "exact: the soft threshold sets entries to 0"}, {off_support, 0, "deterministic population GD"},
        {0, "none: exact zeros are claimed"}, {0.1 / T, "a tenth of the uniform attention 1/T"}));
    verdict.comparisons.push_back(compare(
        "population: max |a_k/1'a_k - q_k| (q uniform on its support)", {0, 0, "exact"},
        {attention_gap, 0, "deterministic population GD",
         1e-12, "round-off: on-support entries follow the same recurrence and differ only by rounding"},
        {0, "none"}, {1e-6, "an O(lambda) error (lambda >= 1e-6) must show"}));
    const double ratio_theory = context.mutant_is("error_quadratic_in_lambda") ? 100.0 : 10.0;
    verdict.comparisons.push_back(compare(
        fmt::format("population: |V/colsum - P|_F at lambda / at lambda/10 (lambda = {:.4g})", lambda_pop),
        {ratio_theory, 0, "exact exponent 1"},
        {value_error / value_error_tenth, 0, "deterministic population GD",
         1e-9 / value_error_tenth, "round-off of the smaller error"},
        {2.0, "20% (spec §8 claim 13): O(lambda^2) terms and the slow drift along the valley V -> cP, a -> a/c"},
        {5.0, "an error exponent off by 0.2 or more (ratio 10^1.2 = 15.8) must show"}));

    // ---- SGD: stage 2 with and without ℓ1 at T and 4T.
    const double noise_std_max =
        eta_A * std::sqrt(small.mc.K_2 / (static_cast<double>(batch) * small.instance.mu.minCoeff()));
    const double threshold_min = eta_A * lambda / small.instance.mu.maxCoeff();
    auto run_sgd = [&](const Side& side, double lam, long long B, const std::string& name) {
      const sim::scb::Sampler sampler(side.instance);
      return sim::run_replicates(replicate_options(context, name, seeds), [&](std::size_t, sim::Rng& rng) {
        sim::scb::LinearModel m = side.start;
        sim::scb::SgdWorkspace workspace(side.instance.N(), side.instance.T);
        for (long long t = 0; t < steps; ++t) {
          sim::scb::stage2_prox_sgd_step(m, side.instance, sampler, B, eta, eta_A, lam, rng, workspace);
        }
        return stage_two_error(side.instance, m);
      });
    };
    auto summarise = [](const std::vector<StageTwoError>& runs, double StageTwoError::*field) {
      std::vector<double> values;
      for (const auto& r : runs) {
        require_finite(r.*field, "stage-2 error");
        values.push_back(r.*field);
      }
      return stats::summarize(values);
    };
    const auto l1_small = run_sgd(small, lambda, batch, fmt::format("l1/T={}", T));
    const auto l1_large = run_sgd(large, lambda, batch, fmt::format("l1/T={}", 4 * T));
    const auto plain_small = run_sgd(small, 0.0, batch_plain, fmt::format("no_l1/T={}", T));
    const auto plain_large = run_sgd(large, 0.0, batch_plain, fmt::format("no_l1/T={}", 4 * T));
    const stats::Summary s_l1_small = summarise(l1_small, &StageTwoError::attention_sq);
    const stats::Summary s_l1_large = summarise(l1_large, &StageTwoError::attention_sq);
    const stats::Summary s_plain_small = summarise(plain_small, &StageTwoError::attention_sq);
    const stats::Summary s_plain_large = summarise(plain_large, &StageTwoError::attention_sq);
    auto difference_half_width = [&](const stats::Summary& a, const stats::Summary& b) {
      const stats::HalfWidth ha = stats::student_t_half_width(a, delta / 2);
      const stats::HalfWidth hb = stats::student_t_half_width(b, delta / 2);
      return std::pair{ha.value + hb.value,
                       fmt::format("sum of Student-t half-widths of both means at delta/2 each (n = {}, {:.3g} + {:.3g})",
                                   a.n, ha.value, hb.value)};
    };

    const double model_growth = large.model.value[noisy_at_B] - small.model.value[noisy_at_B];
    const double model_growth_error = large.model.error[noisy_at_B] + small.model.error[noisy_at_B];

    {
      double min_mass = 1e300;
      for (const auto& r : l1_large) min_mass = std::min(min_mass, r.min_mass);
      for (const auto& r : l1_small) min_mass = std::min(min_mass, r.min_mass);
      // The valley V -> cV, a -> a/c lets α̂ exceed 1 while ℓ1 shrinks the attention mass; the
      // a-noise std scales with α̂, so use the largest final α̂ of all seeds (at least 1).
      double alpha_max = 1;
      for (const auto& r : l1_large) alpha_max = std::max(alpha_max, r.alpha);
      for (const auto& r : l1_small) alpha_max = std::max(alpha_max, r.alpha);
      const double sigma = alpha_max * noise_std_max;
      const double z = threshold_min / sigma;
      const double leak = 3.0 * T * N * truncated_square_excess(z) * sigma * sigma * static_cast<double>(steps) /
                          (min_mass * min_mass);
      const auto [h, reason] = difference_half_width(s_l1_small, s_l1_large);
      const double theory = context.mutant_is("l1_keeps_noise_floor")              ? model_growth
                            : context.mutant_is("l1_keeps_5_percent_of_noise_floor") ? 0.05 * model_growth
                                                                                     : 0.0;
      verdict.comparisons.push_back(compare(
          fmt::format("SGD with l1: E e_A^2(4T) - E e_A^2(T), T = {}, B = {}, {} steps", T, batch, steps),
          {theory, context.mutant_is("l1_keeps_noise_floor") ? model_growth_error : 0.05 * model_growth_error,
           "exact (no T dependence claimed)"},
          {s_l1_large.mean - s_l1_small.mean, h, reason},
          {leak, fmt::format("leaks through the threshold (z = {:.2f} noise std at alpha_max = {:.3g}): 3 T N steps "
                             "E[(|Z| - z)_+^2] sigma^2 / s_min^2, s_min = {:.3g} the smallest attention mass before "
                             "normalising",
                             z, alpha_max, min_mass)},
          {0.5 * std::abs(model_growth), "half the model's growth without l1"}));
    }
    // SGD without ℓ1: the noise part of the error, E e_A² − e_A²(noiseless population), at T and at
    // 4T against the noise-corrected model with the residual covariance of the state.
    {
      auto noise_part = [](const ReferenceVector& model, ModelColumn column) {
        return std::pair{model.value[column] - model.value[noiseless], model.error[column] + model.error[noiseless]};
      };
      const auto [model_small, model_small_error] = noise_part(small.model, noisy_plain);
      const auto [model_large, model_large_error] = noise_part(large.model, noisy_plain);
      const auto [spec_small, spec_small_error] = noise_part(small.model, spec_noise_plain);
      const auto [spec_large, spec_large_error] = noise_part(large.model, spec_noise_plain);
      const bool spec_noise = context.mutant_is("stage_one_attention_noise");
      const bool flat = context.mutant_is("noise_floor_flat_in_T");
      auto compare_noise = [&](const Side& side, int T_side, const stats::Summary& measured, double model,
                               double model_error, double spec, double spec_error, Resolution resolution) {
        const stats::HalfWidth h = stats::student_t_half_width(measured, delta);
        verdict.comparisons.push_back(compare(
            fmt::format("SGD without l1: noise part E e_A^2 - e_A^2(noiseless), T = {}, B = {}, {} steps", T_side,
                        batch_plain, steps),
            {spec_noise ? spec : model, spec_noise ? spec_error : model_error,
             "noise-corrected reduced model (attention noise from the state's residual covariance) minus the "
             "noiseless recurrence, 50/100 digits"},
            {measured.mean - side.model.value[noiseless], h.value + side.model.error[noiseless],
             fmt::format("Student-t half-width at delta (n = {}) + error of the noiseless value", measured.n)},
            {0.1 * std::abs(model),
             "10% of the predicted noise correction (spec §8 claim 11's allowance for the model: second-order "
             "fluctuations, x_t treated as independent of r, V_perp dropped from the attention noise)"},
            std::move(resolution)));
      };
      compare_noise(small, T, s_plain_small, model_small, model_small_error, spec_small, spec_small_error,
                    {0.5 * std::abs(model_small), "half the predicted noise part (noiseless SGD must show)"});
      compare_noise(large, 4 * T, s_plain_large, flat ? model_small : model_large,
                    flat ? model_small_error : model_large_error, spec_large, spec_large_error,
                    {0.5 * std::abs(model_large - model_small), "half the model's growth of the noise part T -> 4T"});
    }

    // Plot: stage-2 attention error against T, with and without l1, and the model without l1.
    Plot plot{"stage_two_error", "stage-2 squared attention error after normalisation", "T", "E e_A^2", true, false, {}};
    auto band = [&](const std::string& label, const stats::Summary& a, const stats::Summary& b) {
      Curve c{label, Curve::Style::band, {}, {}, {}, {}};
      for (const auto& [Tx, s] : {std::pair{double(T), a}, std::pair{4.0 * T, b}}) {
        const double h = s.variance > 0 ? stats::student_t_half_width(s, delta / 2).value : 0.0;
        c.x.push_back(Tx);
        c.y.push_back(s.mean);
        c.lower.push_back(s.mean - h);
        c.upper.push_back(s.mean + h);
      }
      return c;
    };
    plot.curves.push_back(band("SGD with l1", s_l1_small, s_l1_large));
    plot.curves.push_back(band("SGD without l1", s_plain_small, s_plain_large));
    plot.curves.push_back({"model without l1 (state noise)", Curve::Style::line, {double(T), 4.0 * T},
                           {small.model.value[noisy_plain], large.model.value[noisy_plain]}, {}, {}});
    plot.curves.push_back({"noiseless population", Curve::Style::line, {double(T), 4.0 * T},
                           {small.model.value[noiseless], large.model.value[noiseless]}, {}, {}});
    verdict.plots.push_back(std::move(plot));

    const stats::Summary v_l1_small = summarise(l1_small, &StageTwoError::value);
    const stats::Summary v_l1_large = summarise(l1_large, &StageTwoError::value);
    const stats::Summary v_plain_small = summarise(plain_small, &StageTwoError::value);
    const stats::Summary v_plain_large = summarise(plain_large, &StageTwoError::value);
    verdict.notes.push_back(fmt::format(
        "[reconstructed] stage-2 rule of spec §3 (prox without re-projection, final normalisation). Instance: N = {}, "
        "Q = {}, K_P = {:.4g}, K_2 = {:.4g}, mu_min = {:.3g}; stage 2 starts at the population stage-1 state with "
        "alpha = {:.3f} (T) / {:.3f} (4T); lambda = {:.4g} (kappa = {}), threshold/noise std >= {:.2f}; {} seeds.",
        N, Q, small.mc.K_P, small.mc.K_2, small.instance.mu.minCoeff(), small.alpha1, large.alpha1, lambda, kappa,
        threshold_min / noise_std_max, seeds));
    verdict.notes.push_back(fmt::format(
        "Means: E e_A^2 with l1 {:.4g} -> {:.4g} (B = {}), without {:.4g} -> {:.4g} (B = {}; model {:.4g} -> {:.4g}); |V - P|_F with "
        "l1 {:.4g} -> {:.4g}, without {:.4g} -> {:.4g}. Without l1: noiseless population {:.4g} -> {:.4g}; model with "
        "spec §5's stage-1 attention noise {:.4g} -> {:.4g}. Population (Q_pop = {}) |V/colsum - P|_F: {:.4g} "
        "(lambda), {:.4g} (lambda/10).",
        s_l1_small.mean, s_l1_large.mean, batch, s_plain_small.mean, s_plain_large.mean, batch_plain,
        small.model.value[noisy_plain], large.model.value[noisy_plain], v_l1_small.mean, v_l1_large.mean, v_plain_small.mean, v_plain_large.mean,
        small.model.value[noiseless], large.model.value[noiseless], small.model.value[spec_noise_plain],
        large.model.value[spec_noise_plain], Q_pop, value_error,
        value_error_tenth));
    verdict.notes.push_back(
        "[derived] attention noise of the model without l1: the residual covariance of the current state, "
        "E[rr^T | k] = Sigma + (mu - m)(mu - m)^T - (2 alpha <q_k,a_k> - alpha^2 |a_k|^2) P Sigma P^T, instead of "
        "spec §5's stage-1 Sigma; the latter over-predicts the stage-2 noise floor once the attention has "
        "concentrated (see 'stage-1 noise model' above and the mutant stage_one_attention_noise).");
    verdict.notes.push_back(fmt::format("Largest per-seed e_A^2 with l1: {:.4g} (T), {:.4g} (4T); smallest attention mass "
                                        "before normalising: {:.4g} (T), {:.4g} (4T).",
                                        s_l1_small.max, s_l1_large.max, min_over(l1_small), min_over(l1_large)));
    return verdict;
  }

 private:
  static double min_over(const std::vector<StageTwoError>& runs) {
    double m = 1e300;
    for (const auto& r : runs) m = std::min(m, r.min_mass);
    return m;
  }

  ClaimInfo info_{
      .id = "scb.stage_two_l1_error_flat_in_T",
      .family = "scb",
      .paper = "Ren, Wang, Lee (NeurIPS 2024), sparse contextual bigrams",
      .source = "specs/scb.md §3 (stage 2), §5, §8 claim 13; [paper] stage 2 needs poly(N,Q) samples, SGD without "
                "l1 fails from its variance",
      .tag = Provenance::reconstructed,
      .statement = "Under the reconstructed stage-2 rule, population descent zeroes off-support attention exactly, "
                   "recovers q after normalisation and has a V error linear in lambda; with l1 the SGD attention "
                   "error does not grow from T to 4T; without l1 its noise part grows with T/B as the "
                   "noise-corrected reduced model predicts, with the attention noise of the current state.",
      .latex = R"(\mathbb E\,e_A^2(4T) - \mathbb E\,e_A^2(T) = 0 \text{ (with } \ell_1);\quad \tfrac{\|V_\lambda - P\|}{\|V_{\lambda/10}-P\|} = 10;\quad \mathbb E\,e_A^2 - e_A^2\big|_{\text{noiseless}} = \sum_k \omega_k^{\text{noise}}\ (\lambda = 0))",
      .simulation = "Population stage-1 GD to alpha >= 1/2, then (a) population stage-2 steps at lambda and "
                    "lambda/10, (b) S seeds of stage-2 proximal SGD with and without l1 at T and 4T (same P, "
                    "supports per T); errors after the final normalisation.",
      .params =
          {
              {"N", 3, 2, 20, true, false, "vocabulary size"},
              {"T", 50, 8, 1250, true, false, "context length (also run at 4T)"},
              {"Q", 1, 1, 312, true, false, "support size of every q^(k), at most T/4"},
              {"eta", 0.5, 0, 0.5, false, true, "V step size"},
              {"eta_A_K_P", 0.25, 0.1, 1, false, true,
               "attention step size times K_P; >= 0.1: stage 2 runs a fixed number of SGD steps, and at slower "
               "attention rates the threshold has not removed the off-support mass within them"},
              {"B", 0, 0, 1e6, true, false, "stage-2 batch size; 0: four times the smallest allowed (threshold >= 6 noise std at alpha = 1), at most 1e6"},
              {"B_no_l1", 0, 0, 1e6, true, false,
               "batch size of the runs without l1; 0: the batch where spec §5's stationary noise at 4T is rho_bar/2"},
              {"steps", 20, 1, 5000, true, false, "stage-2 SGD steps (early stopping: l1 drifts along the valley V -> cV)"},
              {"lambda_fraction", 0.25, 0, 1, false, true,
               "kappa: lambda = kappa K_P mu_min / (2 Q) (shrinkage per step / on-support signal per step at alpha = 1/2)"},
              {"Q_pop", 3, 2, 312, true, false, "support size for the population lambda check, at most T/4"},
              {"lambda_pop_fraction", 0.02, 1e-3, 0.1, false, true,
               "kappa_pop: population lambda = kappa_pop K_P mu_min / (2 Q_pop) (and lambda/10)"},
              {"pop_steps", 100, 10, 100000, true, false,
               "population stage-2 steps after the off-support entries are zero at lambda/10 (their count is derived)"},
          },
      .mutants =
          {
              {"error_quadratic_in_lambda", "V error quadratic in lambda (ratio 100)"},
              {"l1_keeps_noise_floor", "with l1 the error grows from T to 4T as without"},
              {"l1_keeps_5_percent_of_noise_floor",
               "with l1 the error grows from T to 4T by 5% of the model's growth at B (the small mutant)"},
              {"noise_floor_flat_in_T", "without l1 the noise part of the error does not grow from T to 4T"},
              {"stage_one_attention_noise",
               "spec §5's attention noise alpha^2 K_2 per position (stage-1 residual covariance) in stage 2"},
          },
  };
};

}  // namespace

std::unique_ptr<Claim> make_stage_two_l1_error_flat_in_T() { return std::make_unique<StageTwoL1ErrorFlatInT>(); }

}  // namespace dyncheck::checks::scb
