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
// Instances (issue #10): drawn conditioned on K_2/K_P^2 <= noise_ratio_max and N mu_min >= N_mu_min
//   (params.hpp InstanceBounds, a deterministic rejection on P; the default seed's instances satisfy
//   both and are unchanged). b_min, the auto B_no_l1 and the population's zeroing steps follow the
//   drawn P through K_2 mu_max/(K_P^2 mu_min^2), K_2/(K_P^2 mu_min) and mu_max/mu_min; over the
//   conditioned instances they are bounded by the parameters (Params::batch_min_bound & co.), so
//   every refusal (exit 2) is decided in check() from the parameters alone: before, 4 of 32 seeds
//   were refused at the defaults (seeds 25, 26, 28, 33 of 3-34: b_min up to 4.9e6).
// Cost: refused up front (ParamError) when the SGD runs can exceed seeds x steps x (B + B_no_l1) x 5T =
//   6e10 at ci at the bound on b_min with 24 seeds (the default's bound: 24 x 20 x (3.6e5 + 5.7e3) x 250
//   = 4.3e10; the default seed's instance, 9.7e9 with 48 seeds, takes ~20 s) or the population runs
//   2 x steps x T x N^2 = 5e6.
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
// Mutants (edits of Settings): error_quadratic_in_lambda (ratio 100), l1_keeps_noise_floor (with ℓ1
//   the error grows as the model's error without ℓ1), l1_keeps_5_percent_of_noise_floor (the small mutant: 5% of it;
//   the ℓ1 comparison resolves a growth of (leak bias + half-widths), about 4% of the model's growth
//   at the defaults), noise_floor_flat_in_T (without ℓ1 the noise part at 4T equals that
//   at T), stage_one_attention_noise (§5's literal α²K_2 attention noise in stage 2).

// One measurement serves the claim and every mutant: measure runs the experiment and evaluates the
//   reduced model once (its population escape step is the experiment's start); predict picks the
//   compared model values the settings name.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

#include "claims.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/measured.hpp"
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
#include "batch_bound.hpp"
#include "finite_sample_support.hpp"
#include "params.hpp"

namespace dyncheck::checks::scb {
namespace {

constexpr int comparisons_total = 6;

struct Params : ParamSet {
  Vocabulary vocabulary{this};
  Int T{this, "T", 50, closed(8, 1250), "context length (also run at 4T)"};
  Support support{this, "support size of every q^(k), at most T/4", 1};
  StepSizes rates{this, 0.5, 0.5, 0.25, open_closed(0.1, 1),
                  "attention step size times K_P; > 0.1: stage 2 runs a fixed number of SGD steps, and at slower "
                  "attention rates the threshold has not removed the off-support mass within them"};
  Int B{this, "B", 0, closed(0, 1e6),
        "stage-2 batch size; 0: four times the smallest allowed (threshold >= 6 noise std at alpha = 1), at most 1e6"};
  Int B_no_l1{this, "B_no_l1", 0, closed(0, 1e6),
              "batch size of the runs without l1; 0: the batch where spec §5's stationary noise at 4T is rho_bar/2"};
  Int steps{this, "steps", 20, closed(1, 5000),
            "stage-2 SGD steps (early stopping: l1 drifts along the valley V -> cV)"};
  Real lambda_fraction{this, "lambda_fraction", 0.25, open_closed(0, 1),
                       "kappa: lambda = kappa K_P mu_min / (2 Q) (shrinkage per step / on-support signal per step at "
                       "alpha = 1/2)"};
  Int Q_pop{this, "Q_pop", 3, closed(2, 312), "support size for the population lambda check, at most T/4"};
  Real lambda_pop_fraction{this, "lambda_pop_fraction", 0.02, open_closed(1e-3, 0.1),
                           "kappa_pop: population lambda = kappa_pop K_P mu_min / (2 Q_pop) (and lambda/10)"};
  Int pop_steps{this, "pop_steps", 100, closed(10, 100000),
                "population stage-2 steps after the off-support entries are zero at lambda/10 (their count is derived)"};

  InstanceBounds bounds{this, 0.4,
                        "with noise_ratio_max it bounds the batches, b_min ~ Q^2 K_2 mu_max/(kappa^2 K_P^2 mu_min^2) and "
                        "B_no_l1 ~ T K_2/(K_P^2 mu_min) (at the defaults N_mu_min = 0.4 and noise_ratio_max = 15 make the "
                        "worst case affordable at ci)",
                        true};

  /// Bounds over the conditioned instances (InstanceBounds: K_2/K_P^2 <= s, mu_min >= N_mu_min/N,
  /// mu_max <= 1 - (N - 1) mu_min): b_min = 9 K_2 mu_max/lambda^2 with lambda = kappa K_P mu_min/(2Q),
  /// i.e. 36 Q^2 K_2 mu_max/(kappa^2 K_P^2 mu_min^2); the auto B_no_l1 = eta_A K_P 4T K_2/(K_P^2 mu_min
  /// rho_bar) with rho_bar = 1/Q - 1/T (q uniform on its support).
  double batch_min_bound() const {
    const double q = static_cast<double>(support.Q);
    return 36.0 * q * q * bounds.noise_mu_max_over_mu_min2(vocabulary.N.as_int()) /
           (lambda_fraction.value() * lambda_fraction.value());
  }
  double batch_plain_bound() const {
    const double rho_bar = 1.0 / static_cast<double>(support.Q) - 1.0 / static_cast<double>(T);
    return std::ceil(rates.eta_A_K_P * 4.0 * static_cast<double>(T) *
                     bounds.noise_over_mu_min(vocabulary.N.as_int()) / rho_bar);
  }
  /// Off-support entries at the population stage-1 state are (1 - beta_k)/T (the population path from
  /// a = 1/T keeps omega_k = 0, §4.2), bounded here by 3/T (beta_k <= 4; measure() checks it).
  double population_zeroing_steps_bound() const {
    const int N = vocabulary.N.as_int();
    return std::ceil((3.0 / static_cast<double>(T)) * bounds.mu_max(N) * 10.0 * 2.0 * static_cast<double>(Q_pop) /
                     (rates.eta_A_K_P * lambda_pop_fraction * bounds.mu_min(N)));
  }
  static double work_max(const Budget& budget) { return budget.pick<double>(5e8, 6e10, 1e12); }
  /// The bound on the zeroing steps (3/T off-support, mu_max/mu_min of the conditioning) is ~30x the default seed's
  /// 128 steps; the settling of the ratio (measure_population) runs until this work is spent: ~4e4-1e5 steps at
  /// T = 50, N = 3 at eta >= 0.1 (4e7-7e8 units, about 0.7 us a step and run), so 1e9 at ci is ~1.5 s at most; smoke
  /// 4e8 lets the defaults settle (2e5 steps) so that smoke compares too.
  static double population_work_max(const Budget& budget) { return budget.pick<double>(4e8, 1e9, 1e10); }
  long long steps_at(const Budget& budget) const {
    return budget.level == BudgetLevel::smoke ? std::min<long long>(2, steps) : steps.value();
  }

  /// Every refusal from the parameters alone (issue #10: it used to follow the drawn instance).
  void check(const Budget& budget) const override {
    require_sparsity(support.Q, T);
    require_sparsity(Q_pop, T);
    const double b_min = batch_min_bound(), b_plain = batch_plain_bound();
    refuse_if_no_batch(B, b_min,
                       fmt::format("the threshold eta_A lambda/mu_k must be >= 3 x the per-step attention noise std, "
                                   "which needs B >= 36 Q^2 noise_ratio_max mu_max/(kappa^2 mu_min^2) = {:.3g}; use a "
                                   "smaller Q, N or noise_ratio_max, or a larger lambda_fraction or N_mu_min",
                                   b_min));
    refuse_if_no_batch(B_no_l1, b_plain,
                       fmt::format("spec §5's stationary noise at 4T must be <= rho_bar/2, which needs B_no_l1 >= "
                                   "{:.3g}; use a smaller T, eta_A_K_P or noise_ratio_max, or a larger N_mu_min",
                                   b_plain));
    refuse_if_batch_below(B, b_min,
                          "the threshold eta_A lambda/mu_k must be >= 3 x the per-step attention noise std eta_A alpha "
                          "sqrt(K_2/(B mu_k)) at alpha <= 1 for every instance the point draws (spec §8 claim 13)");
    // b_plain is a whole number (batch_plain_bound rounds up), so the shown bound is b_plain itself.
    refuse_if_batch_below(B_no_l1, b_plain,
                          "the noise-corrected model is claimed while spec §5's stationary attention noise at 4T, "
                          "omega* = eta_A 4T K_2/(2 B mu_min K_P), is at most rho_bar/2 for every instance the point "
                          "draws");
    // The SGD runs: the auto B is at most max(b_min, affordable), the seeds drop from 48 to 24 at ci
    // where 48 are unaffordable; so the worst cost is the smallest seed count at the largest b_min.
    const double seeds_min = budget.pick<double>(2, 24, 64);
    const double batch = B > 0 ? static_cast<double>(B) : std::ceil(b_min);
    const double plain = B_no_l1 > 0 ? static_cast<double>(B_no_l1) : b_plain;
    const double work = seeds_min * static_cast<double>(steps_at(budget)) * 5.0 * static_cast<double>(T) * (batch + plain);
    if (work > work_max(budget)) {
      throw ParamError("B", fmt::format("the SGD runs need up to seeds x steps x (B + B_no_l1) x 5T = {} x {} x ({:.6g} + "
                                        "{:.6g}) x {} = {:.3g} sample-token units, more than the {} budget's limit {:.3g} "
                                        "({}); use a smaller T, Q, N, steps or noise_ratio_max, or a larger "
                                        "lambda_fraction or N_mu_min",
                                        seeds_min, steps_at(budget), batch, plain, 5 * T, work, to_string(budget.level),
                                        work_max(budget),
                                        B > 0 ? "at the given B" : "at the largest smallest-valid B of the instances this point draws"));
    }
    const double pop_work = 2.0 * (population_zeroing_steps_bound() + static_cast<double>(pop_steps)) *
                            static_cast<double>(T) * static_cast<double>(vocabulary.N * vocabulary.N);
    if (pop_work > population_work_max(budget)) {
      throw ParamError("lambda_pop_fraction",
                       fmt::format("the population check needs up to {:.3g} + {} steps at T = {}, N = {} (2 runs x steps "
                                   "x T x N^2 = {:.3g}, more than the {} budget's limit {:.3g}): the off-support entries "
                                   "take up to that long to reach 0 at lambda/10; use a larger lambda_pop_fraction, "
                                   "eta_A_K_P or N_mu_min, or a smaller pop_steps, T or N",
                                   population_zeroing_steps_bound(), pop_steps.value(), T.value(), vocabulary.N.value(),
                                   pop_work, to_string(budget.level), population_work_max(budget)));
    }
  }
};

/// The theory's knobs; the default is the claim's theory.
struct Settings {
  double V_error_exponent = 1;       ///< |V/colsum - P|_F ∝ lambda^exponent (ratio 10^exponent)
  double l1_growth_fraction = 0;     ///< with l1, E e_A^2 grows T -> 4T by this x the model's growth without l1
  bool noise_floor_flat_in_T = false;  ///< without l1, the noise part at 4T equals that at T
  bool stage_one_attention_noise = false;  ///< §5's stage-1 attention noise alpha^2 K_2 instead of the state's
};

/// E[(|Z| − z)₊²] for Z ~ N(0, 1): 2[(1 + z²)Φ̄(z) − zφ(z)].
double truncated_square_excess(double z) {
  const double phi = portable::exp(-z * z / 2) / std::sqrt(2 * M_PI);
  const double tail = 0.5 * portable::erfc(z / std::sqrt(2.0));
  return 2 * ((1 + z * z) * tail - z * phi);
}

/// Σ_k ‖a_k/1ᵀa_k − q_k‖² and ‖V diag(1ᵀV)⁻¹ − P‖_F of a model (normalised copy).
struct StageTwoError {
  double attention_sq = 0, value = 0, min_mass = 0, alpha = 0;
  auto exchange_fields() { return std::tie(attention_sq, value, min_mass, alpha); }  // sim::ReplicateExchange
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

/// One side (T or 4T) of the SGD experiment.
struct Side {
  sim::scb::Instance instance;
  MeasurementConstants mc;
  ReferenceVector model;  // stage_two_model (columns: ModelColumn), of the claim's theory
  sim::scb::LinearModel start;
  double alpha1 = 0;
  std::vector<StageTwoError> l1, plain;  // per seed, with l1 at B and without at B_no_l1
};

struct Measured {
  std::size_t seeds = 0;
  long long steps = 0, batch = 0, batch_plain = 0;
  double lambda = 0, noise_std_max = 0, threshold_min = 0;
  Side small, large;
  // Population check.
  long long pop_steps = 0;
  double lambda_pop = 0, off_support = 0, attention_gap = 0, value_error = 0, value_error_tenth = 0;
  double ratio_median = 0, ratio_median_before = 0;  ///< per-chunk ratio medians: second half, quarter before
  double settle_tau = 0;  ///< the settling time scale tau (steps) of measure_population
  std::string not_settled;  ///< non-empty: the ratio did not settle within the budget (the reason)
};

/// The compared theory values of the settings.
struct Predicted {
  double V_error_ratio = 10;
  double l1_growth = 0, l1_growth_error = 0;
  /// (value, error) of the noise parts at T and 4T, and the claim's own model value whose 10% is
  /// the bias (the T side's at 4T when the settings compare T's value there).
  std::pair<double, double> noise_small, noise_large;
  double allowance_small = 0, allowance_large = 0;
};

stats::Summary summarise(const std::vector<StageTwoError>& runs, double StageTwoError::*field) {
  std::vector<double> values;
  for (const auto& r : runs) {
    require_finite(r.*field, "stage-2 error");
    values.push_back(r.*field);
  }
  return stats::summarize(values);
}

double min_mass_over(const std::vector<StageTwoError>& runs) {
  double m = 1e300;
  for (const auto& r : runs) m = std::min(m, r.min_mass);
  return m;
}

/// (value, error) of the noise part E e_A² − e_A²(noiseless) of a model column.
std::pair<double, double> noise_part(const ReferenceVector& model, ModelColumn column) {
  return {model.value[column] - model.value[noiseless], model.error[column] + model.error[noiseless]};
}

class StageTwoL1ErrorFlatInT final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  StageTwoL1ErrorFlatInT() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const int N = p.vocabulary.N.as_int(), T = p.T.as_int(), Q = p.support.Q.as_int();
    const double eta = p.rates.eta, eta_A_K_P = p.rates.eta_A_K_P, kappa = p.lambda_fraction;
    const long long batch_param = p.B, batch_plain_param = p.B_no_l1;
    Measured m;
    // Smoke runs only the plumbing: at most 2 stage-2 steps (the verdict is then INCONCLUSIVE).
    m.steps = p.steps_at(context.budget);
    const long long steps = m.steps;
    m.seeds = context.budget.pick<std::size_t>(2, 48, 64);

    // B = 0 (auto) is resolved from the instance at T (P and μ are the same at 4T).
    // One stream for T and 4T: random_instance draws P (hence μ) first, so both sides share P and μ
    // and differ only in their supports.
    sim::scb::Instance probe = draw_instance(context, p.bounds.apply({.N = N, .T = T, .Q = Q}), "instance");
    const MeasurementConstants probe_mc = measurement_constants(probe);
    const double eta_A = eta_A_K_P / probe_mc.K_P;  // P and μ are the same at T and 4T
    const double alpha_escape = 0.5;  // stage 2 starts at the first α ≥ ½; λ uses this lower bound
    m.lambda = kappa * alpha_escape * probe_mc.K_P * probe.mu.minCoeff() / Q;
    const double lambda = m.lambda;
    const double b_min = 9 * probe_mc.K_2 * probe.mu.maxCoeff() / (lambda * lambda);
    constexpr double batch_max = 1e6;  // the range of parameter 'B'
    // B_no_l1 = 0 (auto): the batch at which spec §5's stationary attention noise at 4T,
    // ω* = η_A 4T K_2/(2 B μ_min K_P), is ρ̄/2: the noise floor is then of the order of the signal ρ̄
    // (SGD visibly fails from its variance) while ω* ≤ ρ̄/8 at T.
    const double batch_plain_auto =
        std::ceil(eta_A * 4.0 * T * probe_mc.K_2 / (probe.mu.minCoeff() * probe_mc.K_P * probe_mc.rho_bar));
    // check() refused every point where some instance it can draw has no valid batch or an
    // unaffordable one (params' bounds); an instance beyond those bounds is a wrong bound, not a refusal.
    if (b_min > p.batch_min_bound() * (1 + 1e-9) || batch_plain_auto > p.batch_plain_bound() + 1) {
      throw std::logic_error(fmt::format("the drawn instance's b_min = {:.6g} or B_no_l1 = {:.6g} exceeds the bound of "
                                         "check() ({:.6g}, {:.6g})",
                                         b_min, batch_plain_auto, p.batch_min_bound(), p.batch_plain_bound()));
    }
    m.batch_plain = batch_plain_param > 0 ? batch_plain_param : static_cast<long long>(batch_plain_auto);
    const long long batch_plain = m.batch_plain;
    // Cost of the SGD runs: S seeds x steps at B and B_no_l1, at T and 4T, each sample O(T) tokens.
    // Measured: the default point (48 x 20 x (39944 + 447) x 5 x 50 = 9.7e9) takes ~20 s at ci.
    // B = 0 (auto): four times b_min where the budget affords it, else the largest affordable batch
    // down to b_min (threshold >= 3 noise std, the claim's own condition). b_min depends on the random
    // instance through Q^2 K_2 mu_max/(K_P^2 mu_min^2) (issue #10: seed 10's default instance asked for
    // B = 1e6, 1.21e11 units at ci, and was refused). The leak bias is derived from the threshold in
    // noise stds z at the batch used, so a smaller batch only widens it by its derived amount.
    const double work_per_sample = static_cast<double>(steps) * 5.0 * T;
    const double work_max = Params::work_max(context.budget);
    {
      const double batch_wanted = batch_param > 0 ? static_cast<double>(batch_param) : std::min(4 * b_min, batch_max);
      // At ci, instances whose batch makes 48 seeds unaffordable run with 24 (the count before
      // issue #10; e.g. seed 4's default instance, B = 452893: 5.5e10 units).
      if (context.budget.level == BudgetLevel::ci &&
          static_cast<double>(m.seeds) * work_per_sample * (batch_wanted + static_cast<double>(batch_plain)) > work_max) {
        m.seeds = 24;
      }
    }
    const double batch_affordable =
        std::floor(work_max / (static_cast<double>(m.seeds) * work_per_sample)) - static_cast<double>(batch_plain);
    m.batch = batch_param > 0 ? batch_param : static_cast<long long>(std::ceil(std::min({4 * b_min, batch_max, std::max(b_min, batch_affordable)})));
    const long long batch = m.batch;
    if (static_cast<double>(batch) < b_min ||
        static_cast<double>(m.seeds) * work_per_sample * static_cast<double>(batch + batch_plain) >
            work_max * (1 + 1e-9) + static_cast<double>(m.seeds) * work_per_sample) {
      throw std::logic_error(fmt::format("batch {} (b_min {:.6g}) with {} seeds escaped the bounds of check()", batch,
                                         b_min, m.seeds));
    }
    auto prepare = [&](int T_side) {
      Side s;
      s.instance = draw_instance(context, p.bounds.apply({.N = N, .T = T_side, .Q = Q}), "instance");
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
    m.small = prepare(T);
    m.large = prepare(4 * T);

    measure_population(p, context, m);

    // ---- SGD: stage 2 with and without ℓ1 at T and 4T.
    m.noise_std_max = eta_A * std::sqrt(m.small.mc.K_2 / (static_cast<double>(batch) * m.small.instance.mu.minCoeff()));
    m.threshold_min = eta_A * lambda / m.small.instance.mu.maxCoeff();
    auto run_sgd = [&](const Side& side, double lam, long long B, const std::string& name) {
      const sim::scb::Sampler sampler(side.instance);
      return sim::run_replicates(replicate_options(context, name, m.seeds), [&](std::size_t, sim::Rng& rng) {
        sim::scb::LinearModel model = side.start;
        sim::scb::SgdWorkspace workspace(side.instance.N(), side.instance.T);
        for (long long t = 0; t < steps; ++t) {
          sim::scb::stage2_prox_sgd_step(model, side.instance, sampler, B, eta, eta_A, lam, rng, workspace);
        }
        return stage_two_error(side.instance, model);
      });
    };
    m.small.l1 = run_sgd(m.small, lambda, batch, fmt::format("l1/T={}", T));
    m.large.l1 = run_sgd(m.large, lambda, batch, fmt::format("l1/T={}", 4 * T));
    m.small.plain = run_sgd(m.small, 0.0, batch_plain, fmt::format("no_l1/T={}", T));
    m.large.plain = run_sgd(m.large, 0.0, batch_plain, fmt::format("no_l1/T={}", 4 * T));
    return m;
  }

  Predicted predict(const Params&, const Measured& m, const Settings& s, const RunContext&) const override {
    Predicted t;
    t.V_error_ratio = portable::pow(10.0, s.V_error_exponent);
    const double growth = m.large.model.value[noisy_at_B] - m.small.model.value[noisy_at_B];
    const double growth_error = m.large.model.error[noisy_at_B] + m.small.model.error[noisy_at_B];
    t.l1_growth = s.l1_growth_fraction * growth;
    t.l1_growth_error = s.l1_growth_fraction * growth_error;
    const ModelColumn column = s.stage_one_attention_noise ? spec_noise_plain : noisy_plain;
    t.noise_small = noise_part(m.small.model, column);
    const Side& side_4T = s.noise_floor_flat_in_T ? m.small : m.large;
    t.noise_large = noise_part(side_4T.model, column);
    t.allowance_small = noise_part(m.small.model, noisy_plain).first;
    t.allowance_large = noise_part(side_4T.model, noisy_plain).first;
    return t;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext& context) const override {
    const int N = p.vocabulary.N.as_int(), T = p.T.as_int();
    const long long steps = m.steps, batch = m.batch, batch_plain = m.batch_plain;
    const Side& small = m.small;
    const Side& large = m.large;
    const double delta = context.false_failure_rate() / comparisons_total;
    Verdict verdict;

    // ---- Population (deterministic: no statistical term).
    auto population_gd = [](double value, double rounding = 0, std::string rounding_reason = {}) {
      Measurement measurement = measured_exactly(value, rounding, std::move(rounding_reason));
      measurement.half_width_reason = "deterministic population GD";
      return measurement;
    };
    verdict.comparisons.push_back(checks::compare(
        fmt::format("population: max off-support |a_k,t| after {} stage-2 steps (lambda = {:.4g})", m.pop_steps,
                    m.lambda_pop),
        {0, 0, "exact: the soft threshold sets entries to 0"}, population_gd(m.off_support),
        {0, "none: exact zeros are claimed"}, {0.1 / T, "a tenth of the uniform attention 1/T"}));
    verdict.comparisons.push_back(checks::compare(
        "population: max |a_k/1'a_k - q_k| (q uniform on its support)", {0, 0, "exact"},
        population_gd(m.attention_gap, 1e-12,
                         "round-off: on-support entries follow the same recurrence and differ only by rounding"),
        {0, "none"}, {1e-6, "an O(lambda) error (lambda >= 1e-6) must show"}));
    verdict.comparisons.push_back(checks::compare(
        fmt::format("population: |V/colsum - P|_F at lambda / at lambda/10 (lambda = {:.4g})", m.lambda_pop),
        {t.V_error_ratio, 0, "exact exponent 1"},
        population_gd(m.ratio_median, 1e-9 / m.value_error_tenth,
                      "median over the second half of the run of the per-chunk ratios; round-off of the smaller error"),
        m.not_settled.empty()
            ? Bias{2.0 + std::abs(m.ratio_median - m.ratio_median_before),
                   fmt::format("20% (spec §8 claim 13): O(lambda^2) terms and the slow drift along the valley V -> cP, "
                               "a -> a/c; plus |{:.4g} - {:.4g}|, the change of the median from the quarter before "
                               "(after {} steps; tau = {:.3g})",
                               m.ratio_median, m.ratio_median_before, m.pop_steps, m.settle_tau)}
            : Bias{1e3, m.not_settled},
        {5.0, "an error exponent off by 0.2 or more (ratio 10^1.2 = 15.8) must show"}));

    // ---- SGD.
    const stats::Summary s_l1_small = summarise(small.l1, &StageTwoError::attention_sq);
    const stats::Summary s_l1_large = summarise(large.l1, &StageTwoError::attention_sq);
    const stats::Summary s_plain_small = summarise(small.plain, &StageTwoError::attention_sq);
    const stats::Summary s_plain_large = summarise(large.plain, &StageTwoError::attention_sq);
    const double model_growth = large.model.value[noisy_at_B] - small.model.value[noisy_at_B];
    {
      const double min_mass = std::min(min_mass_over(large.l1), min_mass_over(small.l1));
      // The valley V -> cV, a -> a/c lets α̂ exceed 1 while ℓ1 shrinks the attention mass; the
      // a-noise std scales with α̂, so use the largest final α̂ of all seeds (at least 1).
      double alpha_max = 1;
      for (const auto& r : large.l1) alpha_max = std::max(alpha_max, r.alpha);
      for (const auto& r : small.l1) alpha_max = std::max(alpha_max, r.alpha);
      const double sigma = alpha_max * m.noise_std_max;
      const double z = m.threshold_min / sigma;
      const double leak = 3.0 * T * N * truncated_square_excess(z) * sigma * sigma * static_cast<double>(steps) /
                          (min_mass * min_mass);
      const stats::HalfWidth ha = stats::student_t_half_width(s_l1_small, delta / 2);
      const stats::HalfWidth hb = stats::student_t_half_width(s_l1_large, delta / 2);
      const stats::HalfWidth h{ha.value + hb.value, stats::HalfWidthMethod::student_t, ha.delta + hb.delta,
                               fmt::format("sum of Student-t half-widths of both means at delta/2 each (n = {}, {:.3g} + "
                                           "{:.3g})",
                                           s_l1_small.n, ha.value, hb.value)};
      verdict.comparisons.push_back(checks::compare(
          fmt::format("SGD with l1: E e_A^2(4T) - E e_A^2(T), T = {}, B = {}, {} steps", T, batch, steps),
          {t.l1_growth, t.l1_growth_error, "exact (no T dependence claimed)"},
          measured(s_l1_large.mean - s_l1_small.mean, h),
          {leak, fmt::format("leaks through the threshold (z = {:.2f} noise std at alpha_max = {:.3g}): 3 T N steps "
                             "E[(|Z| - z)_+^2] sigma^2 / s_min^2, s_min = {:.3g} the smallest attention mass before "
                             "normalising",
                             z, alpha_max, min_mass)},
          {0.5 * std::abs(model_growth), "half the model's growth without l1"}));
    }
    // SGD without ℓ1: the noise part of the error, E e_A² − e_A²(noiseless population), at T and at
    // 4T against the noise-corrected model with the residual covariance of the state. The bias is
    // 10% of the claim's own model's noise part (of the T side when the settings compare T's at 4T).
    {
      const double model_small = noise_part(small.model, noisy_plain).first;
      const double model_large = noise_part(large.model, noisy_plain).first;
      auto compare_noise = [&](const Side& side, int T_side, const stats::Summary& s, std::pair<double, double> theory,
                               double bias_model, Resolution resolution) {
        verdict.comparisons.push_back(checks::compare(
            fmt::format("SGD without l1: noise part E e_A^2 - e_A^2(noiseless), T = {}, B = {}, {} steps", T_side,
                        batch_plain, steps),
            {theory.first, theory.second,
             "noise-corrected reduced model (attention noise from the state's residual covariance) minus the "
             "noiseless recurrence, 50/100 digits"},
            [&] {
              Measurement measurement =
                  measured(s.mean - side.model.value[noiseless], stats::student_t_half_width(s, delta),
                           fmt::format("n = {}", s.n));
              measurement.numerical_error = side.model.error[noiseless];
              measurement.numerical_error_reason = "error of the noiseless value subtracted";
              return measurement;
            }(),
            {0.1 * std::abs(bias_model),
             "10% of the predicted noise correction (spec §8 claim 11's allowance for the model: second-order "
             "fluctuations, x_t treated as independent of r, V_perp dropped from the attention noise)"},
            std::move(resolution)));
      };
      compare_noise(small, T, s_plain_small, t.noise_small, t.allowance_small,
                    {0.5 * std::abs(model_small), "half the predicted noise part (noiseless SGD must show)"});
      compare_noise(large, 4 * T, s_plain_large, t.noise_large, t.allowance_large,
                    {0.5 * std::abs(model_large - model_small), "half the model's growth of the noise part T -> 4T"});
    }

    // Plot: stage-2 attention error against T, with and without l1, and the model without l1.
    Plot plot{"stage_two_error", "stage-2 squared attention error after normalisation", "T", "E e_A^2", true, false, {}};
    auto band = [&](const std::string& label, const stats::Summary& a, const stats::Summary& b) {
      Curve c = Curve::band(label);
      for (const auto& [Tx, s] : {std::pair{double(T), a}, std::pair{4.0 * T, b}}) {
        c.add_mean(Tx, s.mean, s.variance > 0 ? stats::student_t_half_width(s, delta / 2).value : 0.0);
      }
      return c;
    };
    auto line = [&](const std::string& label, ModelColumn column) {
      Curve c = Curve::line(label);
      c.add(T, small.model.value[column]).add(4.0 * T, large.model.value[column]);
      return c;
    };
    plot.add(band("SGD with l1", s_l1_small, s_l1_large))
        .add(band("SGD without l1", s_plain_small, s_plain_large))
        .add(line("model without l1 (state noise)", noisy_plain))
        .add(line("noiseless population", noiseless));
    verdict.plots.push_back(std::move(plot));

    const stats::Summary v_l1_small = summarise(small.l1, &StageTwoError::value);
    const stats::Summary v_l1_large = summarise(large.l1, &StageTwoError::value);
    const stats::Summary v_plain_small = summarise(small.plain, &StageTwoError::value);
    const stats::Summary v_plain_large = summarise(large.plain, &StageTwoError::value);
    verdict.notes.push_back(fmt::format(
        "[reconstructed] stage-2 rule of spec §3 (prox without re-projection, final normalisation). Instance: N = {}, "
        "Q = {}, K_P = {:.4g}, K_2 = {:.4g}, mu_min = {:.3g}; stage 2 starts at the population stage-1 state with "
        "alpha = {:.3f} (T) / {:.3f} (4T); lambda = {:.4g} (kappa = {}), threshold/noise std >= {:.2f}; {} seeds; {}.",
        N, p.support.Q.value(), small.mc.K_P, small.mc.K_2, small.instance.mu.minCoeff(), small.alpha1, large.alpha1,
        m.lambda, p.lambda_fraction.value(), m.threshold_min / m.noise_std_max, m.seeds, p.bounds.describe(small.instance)));
    verdict.notes.push_back(fmt::format(
        "Means: E e_A^2 with l1 {:.4g} -> {:.4g} (B = {}), without {:.4g} -> {:.4g} (B = {}; model {:.4g} -> {:.4g}); |V - P|_F with "
        "l1 {:.4g} -> {:.4g}, without {:.4g} -> {:.4g}. Without l1: noiseless population {:.4g} -> {:.4g}; model with "
        "spec §5's stage-1 attention noise {:.4g} -> {:.4g}. Population (Q_pop = {}) |V/colsum - P|_F: {:.4g} "
        "(lambda), {:.4g} (lambda/10).",
        s_l1_small.mean, s_l1_large.mean, batch, s_plain_small.mean, s_plain_large.mean, batch_plain,
        small.model.value[noisy_plain], large.model.value[noisy_plain], v_l1_small.mean, v_l1_large.mean,
        v_plain_small.mean, v_plain_large.mean, small.model.value[noiseless], large.model.value[noiseless],
        small.model.value[spec_noise_plain], large.model.value[spec_noise_plain], p.Q_pop.value(), m.value_error,
        m.value_error_tenth));
    verdict.notes.push_back(
        "[derived] attention noise of the model without l1: the residual covariance of the current state, "
        "E[rr^T | k] = Sigma + (mu - m)(mu - m)^T - (2 alpha <q_k,a_k> - alpha^2 |a_k|^2) P Sigma P^T, instead of "
        "spec §5's stage-1 Sigma; the latter over-predicts the stage-2 noise floor once the attention has "
        "concentrated (see 'stage-1 noise model' above and the mutant stage_one_attention_noise).");
    verdict.notes.push_back(fmt::format("Largest per-seed e_A^2 with l1: {:.4g} (T), {:.4g} (4T); smallest attention mass "
                                        "before normalising: {:.4g} (T), {:.4g} (4T).",
                                        s_l1_small.max, s_l1_large.max, min_mass_over(small.l1),
                                        min_mass_over(large.l1)));
    return verdict;
  }

 private:
  /// Population: stage 2 at λ and λ/10 from the population stage-1 state (α ≥ ½) of an instance
  /// with Q_pop ≥ 2 (for Q = 1 the normalised V is exactly P and the ratio is void).
  static void measure_population(const Params& p, const RunContext& context, Measured& m) {
    const int N = p.vocabulary.N.as_int(), T = p.T.as_int();
    const double eta = p.rates.eta, eta_A_K_P = p.rates.eta_A_K_P;
    const int Q_pop = p.Q_pop.as_int();
    const long long pop_steps_min = p.pop_steps;
    const sim::scb::Instance pop_instance =
        draw_instance(context, p.bounds.apply({.N = N, .T = T, .Q = Q_pop}), "population");
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
    m.lambda_pop = p.lambda_pop_fraction * pop_mc.K_P * pop_instance.mu.minCoeff() / (2.0 * Q_pop);
    const double lambda_pop = m.lambda_pop;
    // Steps: every off-support entry must reach 0 at lambda/10 too. Off-support entries only
    // decrease (the projected gradient moves mass onto the support, and the threshold removes at
    // least eta_A (lambda/10)/mu_max per step), so ceil(max_off mu_max / (eta_A lambda/10)) steps
    // suffice; pop_steps more let V and the on-support entries settle at the fixed point.
    const Eigen::MatrixXd q = sim::scb::dense_q(pop_instance);
    auto max_off_support = [&](const sim::scb::LinearModel& model) {
      double largest = 0;
      for (int k = 0; k < N; ++k) {
        for (int t = 0; t < T; ++t) {
          if (q(t, k) == 0) largest = std::max(largest, std::abs(model.A(t, k)));
        }
      }
      return largest;
    };
    const double zeroing_steps =
        std::ceil(max_off_support(pop_start) * pop_instance.mu.maxCoeff() / (pop_eta_A * lambda_pop / 10));
    // Cost: two population runs of O(T N^2) per step; measured ~7 ms per step at T = 50, N = 3.
    // check() refused the point when the bound on the steps (off-support entries <= 3/T, mu within the
    // conditioning) is unaffordable; a larger count here is a wrong bound.
    if (max_off_support(pop_start) > 3.0 / T || zeroing_steps > p.population_zeroing_steps_bound()) {
      throw std::logic_error(fmt::format("population check: max off-support entry {:.6g} (bound 3/T = {:.6g}) or {} "
                                         "zeroing steps (bound {:.6g}) escaped the bounds of check()",
                                         max_off_support(pop_start), 3.0 / T, zeroing_steps,
                                         p.population_zeroing_steps_bound()));
    }
    // Settling (issue #10 fuzz, seed 14010). After the zeroing steps and pop_steps more, the two errors are not at
    // a fixed point: the lambda/10 run keeps decreasing for ~4e4 steps at the defaults, and both runs show
    // relaxation spikes (e(lambda) jumps 10-25x for one chunk about every 2000 steps, then decays back). A fixed
    // horizon compared a transient: ratio 10.3 at the defaults' ~230 steps, 7.5 at 2e3, 6.5 at 8e3, 10-11 from 4.5e4
    // on; at eta = 0.15-0.24 the old horizon gave 0.5-0.9 (false FAIL). So the ratio is now the median of the
    // per-chunk ratios over the second half of the run, and the run goes on in chunks of pop_steps, doubling, until
    // that median and the median over the quarter before it agree within 2% (quasi-stationary; the spikes are
    // single chunks, which a median ignores), or until the budget's population work (population_work_max /
    // (2 T N^2) steps) is spent: then the ratio is not compared (INCONCLUSIVE, the reason). The first check comes
    // only after 2 tau steps, tau = mu_max / (eta_A lambda/10) + 1/(eta mu_min): the steps the lambda/10 shrinkage
    // needs to move an entry of size 1, plus the V step's time scale (at the defaults tau ~ 5e4, where the measured
    // transient ends at ~4.5e4); earlier, the two medians can agree at the turning point of the transient (the
    // ratio passes 10.3 -> 6.5 -> 10.5) and settle on a value that is not the fixed point's. Not derived: that the
    // transient is over by 2 tau at every valid point; the 2% agreement is what is checked.
    sim::scb::LinearModel pop = pop_start, pop_tenth = pop_start;
    auto advance = [&](long long n) {
      for (long long t = 0; t < n; ++t) {
        sim::scb::population_stage2_step(pop, pop_instance, eta, pop_eta_A, lambda_pop);
        sim::scb::population_stage2_step(pop_tenth, pop_instance, eta, pop_eta_A, lambda_pop / 10);
      }
      m.pop_steps += n;
    };
    const double step_cost = 2.0 * static_cast<double>(T) * static_cast<double>(N) * static_cast<double>(N);
    const auto allowed = static_cast<long long>(Params::population_work_max(context.budget) / step_cost);
    advance(static_cast<long long>(zeroing_steps));
    std::vector<double> ratios;
    auto median = [&](std::size_t from, std::size_t to) {  // median of ratios[from, to)
      std::vector<double> part(ratios.begin() + static_cast<std::ptrdiff_t>(from),
                               ratios.begin() + static_cast<std::ptrdiff_t>(to));
      std::nth_element(part.begin(), part.begin() + static_cast<std::ptrdiff_t>(part.size() / 2), part.end());
      return part[part.size() / 2];
    };
    bool settled = false;
    const double tau = pop_instance.mu.maxCoeff() / (pop_eta_A * lambda_pop / 10) + 1 / (eta * pop_instance.mu.minCoeff());
    std::size_t next_check = 8;
    while (static_cast<double>(next_check * static_cast<std::size_t>(pop_steps_min)) < 2 * tau) next_check *= 2;
    while (!settled && m.pop_steps + pop_steps_min <= allowed) {
      advance(pop_steps_min);
      ratios.push_back(stage_two_error(pop_instance, pop).value / stage_two_error(pop_instance, pop_tenth).value);
      if (ratios.size() < next_check) continue;
      const std::size_t n = ratios.size();
      m.ratio_median = median(n / 2, n);
      m.ratio_median_before = median(n / 4, n / 2);
      m.settle_tau = tau;
      settled = std::abs(m.ratio_median - m.ratio_median_before) <= 0.02 * std::abs(m.ratio_median);
      next_check *= 2;
    }
    if (!settled) {
      m.not_settled = fmt::format("not compared: the per-chunk ratio had not settled after {} stage-2 steps (the "
                                  "budget's population work allows {}): medians {:.4g} (second half) and {:.4g} "
                                  "(quarter before)",
                                  m.pop_steps, allowed, m.ratio_median, m.ratio_median_before);
    }
    m.off_support = max_off_support(pop);
    sim::scb::LinearModel pop_normalised = pop;
    sim::scb::normalise(pop_normalised);
    m.attention_gap = (pop_normalised.A - q).cwiseAbs().maxCoeff();
    m.value_error = stage_two_error(pop_instance, pop).value;
    m.value_error_tenth = stage_two_error(pop_instance, pop_tenth).value;
  }

  static ClaimInfo claim_info() {
    return {
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
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"error_quadratic_in_lambda", "V error quadratic in lambda (ratio 100)",
         [](Settings& s) { s.V_error_exponent = 2; }},
        {"l1_keeps_noise_floor", "with l1 the error grows from T to 4T as without",
         [](Settings& s) { s.l1_growth_fraction = 1; }},
        {"l1_keeps_5_percent_of_noise_floor",
         "with l1 the error grows from T to 4T by 5% of the model's growth at B (the small mutant)",
         [](Settings& s) { s.l1_growth_fraction = 0.05; }},
        {"noise_floor_flat_in_T", "without l1 the noise part of the error does not grow from T to 4T",
         [](Settings& s) { s.noise_floor_flat_in_T = true; }},
        {"stage_one_attention_noise",
         "spec §5's attention noise alpha^2 K_2 per position (stage-1 residual covariance) in stage 2",
         [](Settings& s) { s.stage_one_attention_noise = true; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_stage_two_l1_error_flat_in_T() { return std::make_unique<StageTwoL1ErrorFlatInT>(); }

}  // namespace dyncheck::checks::scb
