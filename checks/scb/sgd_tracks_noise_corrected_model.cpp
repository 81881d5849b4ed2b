// Claim scb.sgd_tracks_noise_corrected_model  [derived]  (specs/scb.md §5, §8 claim 11)
//
// The mean trajectory of stage-1 minibatch SGD (batch B) follows the noise-corrected reduced
// model of §5: the exact population recurrence of §4.2 plus the expected noise energy per step
//   \f[ \omega_k^+ \mathrel{+}= \frac{\eta_A^2 (T-2)\alpha^2 K_2}{B\mu_k},\qquad
//       \nu^+ \mathrel{+}= \frac{\eta^2(N-1)\,\overline{\|a\|^2}\,R}{B}, \f]
// in α(t) and y(t) = Σ_k μ_k ρ_k β_k, while the stationary attention noise ω* = η_A T K_2/(2Bμ_k K_P)
// stays ≤ 0.1 ρ̄ (checked; otherwise ParamError on B). And the deviation from the noiseless
// population recurrence shrinks with the batch: at 4B it is ≈ 1/4 of that at B.
// The same points are also compared with the model whose attention noise is that of the current
// state, σ_k² = α²[K_2 − (2α⟨q_k,a_k⟩ − α²‖a_k‖²)K_4 + (μ−m)ᵀW(μ−m)] ([derived] for claim 13,
// theory::scb::attention_gradient_variance): it replaces the E[rrᵀ] ≈ Σ assumption, so its bias is
// only the spec's 10% allowance.
// Theory: theory::scb::noise_corrected_step (and reduced_gd_step) in 50 and 100 digits.
// Simulated: S seeds of stage-1 SGD (sim::scb::stage1_sgd_step) from the paper's init, α̂ and y
//   read off the model at every step; S more seeds at 4B.
// Tolerance per compared point (2 models × 8 times × {α, y}, and the ratio of deviations):
//   numerical = precision doubling of the model;
//   bias      = ε_max |model − noiseless|. The model injects noise with the residual covariance
//               E[rrᵀ] ≈ Σ of the initial state; along the trajectory (ν = 0)
//               E[rrᵀ] = Σ − (2α⟨a,q⟩ − α²‖a‖²) PΣPᵀ ⪰ Σ − (ρ̄ + 1/T) PΣPᵀ, so the true noise
//               energy is smaller by a fraction in [0, ε_max], ε_max = (ρ̄+1/T) tr((PΣPᵀ)²)/K_2,
//               and the first-order noise correction is over-estimated by at most that fraction.
//               Second-order effects (fluctuations of α, β_k about their means) are O(ω*²) and
//               not bounded separately.
//   bias (state model) = 0.1 |model − noiseless| (spec §8 claim 11's allowance).
//   statistical = Student-t half-width of the mean over S seeds, at δ_claim / 33 (Bonferroni).
// Resolution: half the model's noise correction max_t |model − noiseless| (a model without the
//   noise term, or with half of it, must be told apart); for the ratio, 1 − ratio (the check
//   must certify that the deviation decreases). The small mutant (eta_A x 1.05) is resolved where
//   the escape is steep: at the defaults it fails at y(t = 20) with margin 1.26, where the tolerance is
//   the Student-t half-width (1.2e-2) and the derived bias only 3e-5 (the eps_max and 10% terms scale
//   with |model - noiseless|, small before the escape); no derived term can sharpen it there. Only
//   more seeds would (64 instead of 32: half-width x 0.62, margin ~2, twice the simulation cost).
// Mutants (edits of Settings): no_attention_noise (the noiseless recurrence) and noise_doubled (noise
//   terms at B/2), applied to both models; attention_rate_5_percent (eta_A x 1.05 in every model: the
//   escape comes ~2.5% earlier, which the steep part of alpha(t) resolves).
// Instances (issue #10): drawn conditioned on K_2/K_P^2 <= noise_ratio_max and N mu_min >= N_mu_min
//   (params.hpp InstanceBounds, a deterministic rejection on P), so that b_min below, which follows
//   K_2/(K_P^2 mu_min) of the drawn P, is at most eta_A K_P T noise_ratio_max N/(N_mu_min 0.2 rho_bar)
//   for every seed (rho_bar = 1/Q - 1/T, q uniform on its support).
// Batch (B = 0): the spec's ω* = 0.05 ρ̄ batch where the budget affords it, else the largest
//   affordable batch down to the claim's own limit ω* = 0.1 ρ̄. A given B must be at least the
//   bound on b_min above (ParamError otherwise: valid for every instance the point draws).
// Cost: refused up front in check() (ParamError, before any draw) when 5 S steps B (T + N^2) at the
//   bound on b_min exceeds 1.5e10 at ci (about 150 s on 2 threads: the default point's instance is
//   8.2e8, ~8 s; the default's bound 1.1e10) or 1e9 at smoke: whether a point is refused depends on
//   its parameters only, never on the seed.
// Full budget only: the Gaussian-noise population simulation (sim::scb::noisy_population_step)
//   at N ∈ {100, 500}, T = 1e5 against the same model (constants in double: dense q is T×N).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "dyncheck/checks/experiment.hpp"
#include "claims.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/reference_value.hpp"
#include "dyncheck/checks/stats.hpp"
#include "dyncheck/sim/replicates.hpp"
#include "dyncheck/sim/scb/optimizers.hpp"
#include "dyncheck/sim/scb/population_gd.hpp"
#include "dyncheck/sim/scb/sampler.hpp"
#include "dyncheck/theory/scb/attention_noise.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/noise_corrected.hpp"
#include "dyncheck/theory/scb/reduced_recurrence.hpp"
#include "dyncheck/theory/scb/reduced_state.hpp"
#include "dyncheck/theory/scb/symmetric_2d.hpp"
#include "batch_bound.hpp"
#include "finite_sample_support.hpp"
#include "params.hpp"

namespace dyncheck::checks::scb {
namespace {

constexpr int compared_times = 8;
constexpr int comparisons_sgd = 4 * compared_times + 1;  // {§5, state model} × {α, y} × times, and the ratio
constexpr int comparisons_gaussian = 8;                   // full budget: 2 N × 4 times
constexpr double omega_star_fraction = 0.1;  // spec §8 claim 11: ω* ≤ 0.1 ρ̄

struct Params : ParamSet {
  Vocabulary vocabulary{this};
  Int T{this, "T", 50, closed(8, 5000), "context length"};
  Support support{this, "support size of every q^(k), at most T/4"};
  StepSizes rates{this, 0.5, 0.5, 0.25};
  Int B{this, "B", 0, closed(0, 1e6),
        "batch size; omega* <= 0.1 rho_bar required; 0: omega* = 0.05 rho_bar (spec default), at most 1e6"};
  Int steps{this, "steps", 80, closed(8, 2000), "SGD steps"};
  InstanceBounds bounds{this, 0.4,
                        "with noise_ratio_max it bounds the batch b_min ~ T K_2/(K_P^2 mu_min) (at the defaults N_mu_min "
                        "= 0.4 and noise_ratio_max = 15 make the worst case affordable at ci)",
                        true};

  /// The largest b_min = eta_A T K_2/(2 (0.1 rho_bar) mu_min K_P) over the conditioned instances:
  /// K_2/(K_P^2 mu_min) <= noise_ratio_max N / N_mu_min, rho_bar = 1/Q - 1/T (q uniform on its support).
  double batch_min_bound() const {
    const double rho_bar = 1.0 / static_cast<double>(support.Q) - 1.0 / static_cast<double>(T);
    return rates.eta_A_K_P * static_cast<double>(T) * bounds.noise_over_mu_min(vocabulary.N.as_int()) /
           (2.0 * omega_star_fraction * rho_bar);
  }
  /// 5 S steps (T + N^2): the cost of one unit of batch (S seeds at B and at 4B).
  double work_per_sample(const Budget& budget) const {
    return 5.0 * static_cast<double>(budget.pick<std::size_t>(2, 32, 64)) * static_cast<double>(steps) *
           (static_cast<double>(T) + static_cast<double>(vocabulary.N * vocabulary.N));
  }
  static double work_max(const Budget& budget) {
    // smoke: 1e9 (2e8 before the bound; the default's bound at smoke is 6.9e8, ~4 s on one thread,
    // while the default seed's instance needs 5.1e7).
    return budget.pick<double>(1e9, 1.5e10, std::numeric_limits<double>::infinity());
  }

  /// Cost refusal from the parameters alone (issue #10): the automatic batch never exceeds
  /// max(b_min, affordable) and b_min <= batch_min_bound() for every instance the point can draw.
  void check(const Budget& budget) const override {
    require_sparsity(support.Q, T);
    const double b_bound = batch_min_bound();
    refuse_if_no_batch(B, b_bound,
                       fmt::format("the model is claimed while omega* = eta_A T K_2/(2 B mu_min K_P) <= 0.1 rho_bar, "
                                   "which needs B >= {:.3g} at K_2/(K_P^2 mu_min) = noise_ratio_max N / N_mu_min; use a "
                                   "smaller T or eta_A_K_P, a smaller noise_ratio_max or a larger N_mu_min",
                                   b_bound));
    refuse_if_batch_below(B, b_bound,
                          "the noise-corrected model is claimed only while omega* <= 0.1 rho_bar for every instance "
                          "the point draws (spec §8 claim 11; the bound uses K_2/(K_P^2 mu_min) <= noise_ratio_max N / "
                          "N_mu_min)");
    const double batch = B > 0 ? static_cast<double>(B) : std::ceil(b_bound);
    const double work = work_per_sample(budget) * batch;
    if (work > work_max(budget) && (B > 0 || b_bound * work_per_sample(budget) > work_max(budget))) {
      throw ParamError("T", fmt::format("this point needs up to 5 x seeds x steps x B x (T + N^2) = {:.3g} sample-token "
                                        "units (B = {:.6g}{}), more than the {} budget's limit {:.3g}; use a smaller T, "
                                        "steps or eta_A_K_P, or a smaller noise_ratio_max or larger N_mu_min",
                                        work, batch, B > 0 ? "" : ", the largest smallest-valid batch of the instances "
                                        "this point draws", to_string(budget.level), work_max(budget)));
    }
  }
};

/// The theory's knobs; the default is the claim's theory (applied to both noise models).
struct Settings {
  bool attention_noise = true;   ///< false: the noiseless recurrence in place of the noise-corrected model
  double noise_batch_factor = 1;  ///< the models' noise terms evaluated at this x B
  double rate_scale = 1;          ///< the models' attention step eta_A x this
};

/// none: the noiseless population recurrence; spec: §5's attention noise α²K_2 (residual
/// covariance Σ); state: the attention noise of the current state (theory::scb::
/// attention_gradient_variance, derived for claim 13).
enum class NoiseModel { none, spec, state };

/// α_t and y_t, t = 0..steps, of the reduced model from the paper's init (m = μ, α = β = ν = ω = 0),
/// packed as [α_0..α_steps, y_0..y_steps].
template <class S>
theory::Vector<S> reduced_trajectory(const theory::scb::Instance<S>& instance, const theory::scb::Constants<S>& c,
                                     long long steps, const S& eta, const S& eta_A, const S& batch, NoiseModel noise) {
  const auto N = instance.mu.size();
  const theory::scb::AttentionNoiseConstants<S> attention_noise =
      noise == NoiseModel::state ? theory::scb::attention_noise_constants(instance)
                                 : theory::scb::AttentionNoiseConstants<S>{};
  theory::scb::ReducedState<S> state{instance.mu, S(0), S(0), theory::Vector<S>::Zero(N), theory::Vector<S>::Zero(N)};
  theory::Vector<S> out(2 * (steps + 1));
  for (long long t = 0; t <= steps; ++t) {
    out[t] = state.alpha;
    out[steps + 1 + t] = theory::scb::correlation_y(instance, c, state);
    if (t == steps) break;
    switch (noise) {
      case NoiseModel::none: state = theory::scb::reduced_gd_step(instance, c, state, eta, eta_A); break;
      case NoiseModel::spec: state = theory::scb::noise_corrected_step(instance, c, state, eta, eta_A, batch); break;
      case NoiseModel::state:
        state = theory::scb::noise_corrected_step(instance, c, attention_noise, state, eta, eta_A, batch);
        break;
    }
  }
  return out;
}

/// Per seed: [α_0..α_steps, y_0..y_steps] of stage-1 SGD from the paper's init.
Eigen::VectorXd sgd_trajectory(const sim::scb::Instance& instance, const sim::scb::Sampler& sampler,
                               const MeasurementConstants& mc, long long steps, long long batch, double eta,
                               double eta_A, sim::Rng& rng) {
  sim::scb::LinearModel model = sim::scb::initial_model(instance);
  sim::scb::SgdWorkspace workspace(instance.N(), instance.T);
  Eigen::VectorXd out(2 * (steps + 1));
  for (long long t = 0; t <= steps; ++t) {
    const Observables o = observe(instance, mc, model);
    out[t] = o.alpha;
    out[steps + 1 + t] = o.y;
    if (t < steps) sim::scb::stage1_sgd_step(model, instance, sampler, batch, eta, eta_A, rng, workspace);
  }
  return out;
}

std::vector<stats::Summary> summarize_columns(const std::vector<Eigen::VectorXd>& runs, const std::string& what) {
  std::vector<stats::Summary> summaries;
  std::vector<double> values(runs.size());
  for (Eigen::Index i = 0; i < runs.front().size(); ++i) {
    for (std::size_t r = 0; r < runs.size(); ++r) {
      values[r] = runs[r][i];
      require_finite(values[r], fmt::format("{} entry {} of seed {}", what, i, r));
    }
    summaries.push_back(stats::summarize(values));
  }
  return summaries;
}

/// Full budget: one Gaussian-noise population run set (spec §5, N ∈ {100, 500}, T = 1e5).
struct GaussianMeasured {
  int N = 0;
  sim::scb::Instance instance;
  MeasurementConstants mc;
  long long steps = 0;
  double batch = 0, eps_max = 0;
  std::vector<stats::Summary> summaries;
};

struct Measured {
  sim::scb::Instance instance;
  MeasurementConstants mc;
  long long batch = 0;
  std::size_t seeds = 0;
  double omega_star = 0, eps_max = 0;
  std::vector<stats::Summary> summaries, summaries_4B;
  std::vector<GaussianMeasured> gaussian;  // full budget only
};

struct GaussianPredicted {
  ReferenceVector model;                  // of the settings
  theory::Vector<double> noiseless, corrected;  // of the claim's theory, for the bias and the resolution
};

struct Predicted {
  ReferenceVector model, model_4B, state_model;  // of the settings
  ReferenceVector noiseless;                     // the noiseless recurrence at the true rate (bias, resolution)
  std::vector<GaussianPredicted> gaussian;
};

/// The constants of a Gaussian-noise instance in S from the double measurement constants (q is
/// never dense at T = 1e5).
template <class S>
std::pair<theory::scb::Instance<S>, theory::scb::Constants<S>> gaussian_theory(const GaussianMeasured& g) {
  const sim::scb::Instance& instance = g.instance;
  const int N = g.N, T = instance.T;
  theory::scb::Instance<S> ti;
  ti.P = instance.P.cast<S>();
  ti.mu = instance.mu.cast<S>();
  theory::scb::Constants<S> c;
  c.N = N;
  c.T = T;
  c.K_P = S(g.mc.K_P);
  c.K_2 = S(g.mc.K_2);
  c.rho = theory::Vector<S>(N);
  S q_energy = S(0);
  for (int k = 0; k < N; ++k) {
    const S norm2 = S(sim::scb::q_squared_norm(instance, k));
    c.rho[k] = norm2 - S(1) / S(T);
    q_energy += ti.mu[k] * norm2;
  }
  c.rho_bar = ti.mu.dot(c.rho);
  c.L_irr = S(1) - ti.mu.squaredNorm() - c.K_P * q_energy;
  return {ti, c};
}

/// ε_max = (ρ̄ + 1/T) tr((PΣPᵀ)²) / K_2: the largest fraction by which the residual covariance along
/// the trajectory falls below the Σ the model's noise energy assumes.
double noise_energy_excess(const sim::scb::Instance& instance, const MeasurementConstants& mc) {
  const Eigen::MatrixXd PSP = instance.P * mc.sigma * instance.P.transpose();
  return (mc.rho_bar + 1.0 / instance.T) * (PSP * PSP).trace() / mc.K_2;
}

class SgdTracksNoiseCorrectedModel final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  SgdTracksNoiseCorrectedModel() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const int N = p.vocabulary.N.as_int(), T = p.T.as_int(), Q = p.support.Q.as_int();
    const double eta = p.rates.eta, eta_A_K_P = p.rates.eta_A_K_P;
    const long long batch_param = p.B, steps = p.steps;
    Measured m;
    m.seeds = context.budget.pick<std::size_t>(2, 32, 64);
    const std::size_t seeds = m.seeds;

    m.instance = draw_instance(context, p.bounds.apply({.N = N, .T = T, .Q = Q}));
    const sim::scb::Instance& instance = m.instance;
    m.mc = measurement_constants(instance);
    const MeasurementConstants& mc = m.mc;
    const double eta_A = eta_A_K_P / mc.K_P;
    // omega* = eta_A T K_2/(2 B mu_min K_P) (spec §5's stationary attention noise at mu_min); the
    // claim holds while omega* <= 0.1 rho_bar, i.e. B >= b_min; the spec's default is omega* =
    // 0.05 rho_bar, B = b_spec = 2 b_min.
    const double b_min = eta_A * T * mc.K_2 / (2.0 * omega_star_fraction * mc.rho_bar * instance.mu.minCoeff() * mc.K_P);
    const double b_spec = 2 * b_min;
    constexpr double batch_max = 1e6;  // the range of 'B'
    // Cost: S seeds at B and at 4B draw 5 S steps B samples of T tokens each (plus O(N^2) per
    // sample for the gradient). Measured: the default point (5 x 32 x 80 x 1084 x (50 + 9) = 8.2e8
    // units) takes ~9 s at ci on 2 threads. check() has refused every point whose worst instance
    // (b_min <= p.batch_min_bound(), the conditioning of InstanceBounds) is unaffordable, so the
    // errors below would be a wrong bound, not a refusal.
    const double work_per_sample = p.work_per_sample(context.budget);
    const double work_max = Params::work_max(context.budget);
    const double batch_affordable = std::floor(work_max / work_per_sample);
    if (b_min > p.batch_min_bound() * (1 + 1e-9)) {
      throw std::logic_error(fmt::format("b_min = {:.6g} of the drawn instance exceeds the bound {:.6g} of check()",
                                         b_min, p.batch_min_bound()));
    }
    // B = 0 (auto): the spec's default b_spec (omega* = 0.05 rho_bar at mu_min, §8 claim 11) where the
    // budget affords it; else the largest affordable batch, but not below b_min (omega* <= 0.1 rho_bar,
    // the claim's own condition). The batch follows the instance through K_2/(K_P^2 mu_min), bounded by
    // the conditioning (issue #10, seed 4: b_spec = 23570, 1.78e10 units at ci, was refused at the
    // defaults before it); within [b_min, b_spec] the claim and its tolerances are unchanged (the bias
    // terms scale with the model's noise correction |model - noiseless|, computed at the batch used).
    m.batch = batch_param > 0 ? batch_param
                              : static_cast<long long>(std::ceil(std::min({batch_max, b_spec, std::max(b_min, batch_affordable)})));
    const long long batch = m.batch;
    m.omega_star = omega_star_fraction * mc.rho_bar * b_min / static_cast<double>(batch);
    if (static_cast<double>(batch) < b_min || work_per_sample * static_cast<double>(batch) > work_max * (1 + 1e-9) + work_per_sample) {
      throw std::logic_error(fmt::format("batch {} of the drawn instance (b_min {:.6g}) escaped the bounds of check()",
                                         batch, b_min));
    }
    m.eps_max = noise_energy_excess(instance, mc);

    // Simulation.
    const sim::scb::Sampler sampler(instance);
    auto run_at = [&](long long b, const std::string& name) {
      return sim::run_replicates(replicate_options(context, name, seeds), [&](std::size_t, sim::Rng& rng) {
        return sgd_trajectory(instance, sampler, mc, steps, b, eta, eta_A, rng);
      });
    };
    m.summaries = summarize_columns(run_at(batch, fmt::format("sgd/B={}", batch)), "SGD trajectory");
    m.summaries_4B = summarize_columns(run_at(4 * batch, fmt::format("sgd/B={}", 4 * batch)), "SGD trajectory at 4B");
    if (context.budget.level == BudgetLevel::full) measure_gaussian(context, eta, eta_A_K_P, m);
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& s, const RunContext&) const override {
    const double eta = p.rates.eta, eta_A_K_P = p.rates.eta_A_K_P;
    const long long steps = p.steps;
    const double noise_batch = s.noise_batch_factor * static_cast<double>(m.batch);
    auto noisy = [&](NoiseModel which) { return s.attention_noise ? which : NoiseModel::none; };
    auto model_at = [&](double b, NoiseModel which, double rate_scale) {
      return reference_vector([&]<class S>() {
        const theory::scb::Instance<S> ti = to_theory<S>(m.instance);
        const theory::scb::Constants<S> c = theory::scb::constants(ti);
        return reduced_trajectory(ti, c, steps, S(eta), S(rate_scale) * S(eta_A_K_P) / c.K_P, S(b), which);
      });
    };
    Predicted t;
    t.model = model_at(noise_batch, noisy(NoiseModel::spec), s.rate_scale);
    t.model_4B = model_at(4.0 * noise_batch, noisy(NoiseModel::spec), s.rate_scale);
    t.state_model = model_at(noise_batch, noisy(NoiseModel::state), s.rate_scale);
    t.noiseless = model_at(1.0, NoiseModel::none, s.rate_scale);
    for (const GaussianMeasured& g : m.gaussian) {
      auto model_in = [&]<class S>(double b, bool with_noise) {
        const auto [ti, c] = gaussian_theory<S>(g);
        return reduced_trajectory(ti, c, g.steps, S(eta), S(eta_A_K_P) / c.K_P, S(b),
                                  with_noise ? NoiseModel::spec : NoiseModel::none);
      };
      GaussianPredicted gp;
      gp.model = reference_vector([&]<class S>() {
        return model_in.template operator()<S>(s.noise_batch_factor * g.batch, s.attention_noise);
      });
      gp.noiseless = model_in.template operator()<double>(1.0, false);
      gp.corrected = model_in.template operator()<double>(g.batch, true);
      t.gaussian.push_back(std::move(gp));
    }
    return t;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext& context) const override {
    const double eta = p.rates.eta, eta_A_K_P = p.rates.eta_A_K_P;
    const long long steps = p.steps;
    const long long batch = m.batch;
    const double eps_max = m.eps_max;
    const ReferenceVector& model = t.model;
    const ReferenceVector& model_4B = t.model_4B;
    const ReferenceVector& noiseless = t.noiseless;
    Verdict verdict;
    // The share of each comparison: Bonferroni over the SGD comparisons (and, at full, the Gaussian ones).
    const double delta =
        context.false_failure_rate() / (comparisons_sgd + (m.gaussian.empty() ? 0 : comparisons_gaussian));
    const auto len = static_cast<Eigen::Index>(steps + 1);
    // Per model: its values, the quantity suffix, the bias fraction of its noise correction and why.
    // §5's model has the eps_max bias (its noise energy assumes E[rr^T] = Sigma); the model whose
    // attention noise is that of the current state has an exact residual covariance for the reduced
    // state, so only the spec's allowance of 10% of the noise correction for what every reduced
    // model neglects.
    struct ComparedModel {
      const ReferenceVector& values;
      std::string suffix;
      double bias_fraction;
      std::string bias_reason;
    };
    const ComparedModel compared_models[2] = {
        {model, "", eps_max,
         fmt::format("eps_max = {:.3g}: the model's noise energy uses E[rr^T] = Sigma, the trajectory's residual "
                     "covariance is smaller by at most (rho_bar + 1/T) tr((P Sigma P^T)^2)/K_2",
                     eps_max)},
        {t.state_model, ", state attention noise", 0.1,
         "spec §8 claim 11's allowance: fluctuations of alpha and beta about their means, x_t treated as independent "
         "of r, V-perp dropped from the attention noise"}};
    const char* names[2] = {"alpha", "y"};
    for (const ComparedModel& cm : compared_models) {
      for (int q = 0; q < 2; ++q) {
        double largest_correction = 0;
        for (Eigen::Index i = q * len; i < (q + 1) * len; ++i) {
          largest_correction = std::max(largest_correction, std::abs(cm.values.value[i] - noiseless.value[i]));
        }
        for (int c = 1; c <= compared_times; ++c) {
          const Eigen::Index i = q * len + steps * c / compared_times;
          const stats::Summary& s = m.summaries[static_cast<std::size_t>(i)];
          const double correction = std::abs(cm.values.value[i] - noiseless.value[i]);
          verdict.comparisons.push_back(checks::compare(
              fmt::format("mean {}(t = {}), B = {}{}", names[q], i - q * len, batch, cm.suffix),
              {cm.values.value[i], cm.values.error[i], ReferenceVector::reason},
              measured(s.mean, stats::student_t_half_width(s, delta),
                       "seeds are iid and the mean of S bounded trajectories is close to normal"),
              {cm.bias_fraction * correction,
               fmt::format("{:.3g} |model - noiseless| = {:.3g} x {:.3g}; {}", cm.bias_fraction, cm.bias_fraction,
                           correction, cm.bias_reason)},
              {0.5 * largest_correction,
               "half the model's largest noise correction max_t |model - noiseless|: a model without the noise "
               "term (or with half of it) differs by more"}));
        }
      }
    }

    // Deviation from the noiseless recurrence at the last step, at B and 4B: ratio ≈ model ratio.
    {
      const auto i = static_cast<std::size_t>(len - 1);  // α at t = steps
      const stats::HalfWidth h1 = stats::student_t_half_width(m.summaries[i], delta / 2);
      const stats::HalfWidth h4 = stats::student_t_half_width(m.summaries_4B[i], delta / 2);
      const double d1 = std::abs(m.summaries[i].mean - noiseless.value[len - 1]);
      const double d4 = std::abs(m.summaries_4B[i].mean - noiseless.value[len - 1]);
      const double ratio = d4 / d1;
      const double ratio_upper = d1 > h1.value ? (d4 + h4.value) / (d1 - h1.value) : 1e9;  // d1 within its half-width: the ratio is unbounded
      const double ratio_lower = std::max(0.0, d4 - h4.value) / (d1 + h1.value);
      const stats::HalfWidth half{
          std::max(ratio_upper - ratio, ratio - ratio_lower), stats::HalfWidthMethod::student_t, h1.delta + h4.delta,
          fmt::format("interval [(d4 - h4)/(d1 + h1), (d4 + h4)/(d1 - h1)] from Student-t half-widths of both means "
                      "at delta/2 each (d1 = {:.4g} +- {:.2g}, d4 = {:.4g} +- {:.2g})",
                      d1, h1.value, d4, h4.value)};
      const Eigen::Index last = len - 1;
      const double c1 = std::abs(model.value[last] - noiseless.value[last]);
      const double c4 = std::abs(model_4B.value[last] - noiseless.value[last]);
      const double model_ratio = c1 > 0 ? c4 / c1 : 0.0;
      const double model_ratio_error =
          c1 > 0 ? (model.error[last] + model_4B.error[last] + noiseless.error[last]) * 2 / c1 : 0.0;
      verdict.comparisons.push_back(checks::compare(
          fmt::format("|SGD - noiseless| at 4B / at B (alpha, t = {})", steps),
          {model_ratio, model_ratio_error, "precision doubling of the three model values, propagated to the ratio"},
          measured(ratio, half),
          {model_ratio * eps_max / (1 - eps_max),
           "each deviation is its model correction times a factor in [1 - eps_max, 1], so their ratio is within a "
           "factor 1/(1 - eps_max) of the model's"},
          {1 - model_ratio, "1 - model ratio: the check must certify that the deviation decreases with B"}));
    }

    // Plot: α and y, model and noiseless against the SGD mean and band.
    Plot plot{"trajectory", fmt::format("stage-1 SGD (B = {}, {} seeds) vs noise-corrected model", batch, m.seeds),
              "step t", "alpha, y", false, false, {}};
    for (int q = 0; q < 2; ++q) {
      Curve theory_curve = Curve::line(fmt::format("model {}", names[q]));
      Curve state_curve = Curve::line(fmt::format("state-noise model {}", names[q]));
      Curve pop_curve = Curve::line(fmt::format("noiseless {}", names[q]));
      Curve sim_curve = Curve::band(fmt::format("SGD mean {}", names[q]));
      for (Eigen::Index x = 0; x < len; ++x) {
        const Eigen::Index i = q * len + x;
        const auto& s = m.summaries[static_cast<std::size_t>(i)];
        const double h = s.variance > 0 ? stats::student_t_half_width(s, delta).value : 0.0;
        const auto tx = static_cast<double>(x);
        theory_curve.add(tx, model.value[i]);
        state_curve.add(tx, t.state_model.value[i]);
        pop_curve.add(tx, noiseless.value[i]);
        sim_curve.add_mean(tx, s.mean, h);
      }
      plot.add(std::move(theory_curve)).add(std::move(state_curve)).add(std::move(pop_curve)).add(std::move(sim_curve));
    }
    verdict.plots.push_back(std::move(plot));

    verdict.notes.push_back(fmt::format(
        "Instance: N = {}, T = {}, Q = {}, P columns ~ Dirichlet(1), q uniform on random supports; K_P = {:.4g}, "
        "K_2 = {:.4g}, rho_bar = {:.4g}, mu_min = {:.4g}; eta = {}, eta_A = {:.4g} (eta_A K_P = {}); omega*/rho_bar "
        "= {:.3g} (<= 0.1); eps_max = {:.3g}; {}.",
        m.instance.N(), m.instance.T, p.support.Q.value(), m.mc.K_P, m.mc.K_2, m.mc.rho_bar, m.instance.mu.minCoeff(),
        eta, eta_A_K_P / m.mc.K_P, eta_A_K_P, m.omega_star / m.mc.rho_bar, eps_max, p.bounds.describe(m.instance)));
    verdict.notes.push_back(
        "[derived] The noise-corrected model is approximate (spec §5): its noise energy uses Sigma for the residual "
        "covariance; the bias term bounds the resulting over-estimate, second-order fluctuation effects are not "
        "bounded separately.");
    verdict.notes.push_back(
        "[derived] Second model: the attention noise of the current state (residual covariance of the reduced state, "
        "derived for claim 13) instead of alpha^2 K_2; checked with the spec's 10% allowance only.");
    compare_gaussian(m, t, delta, verdict);
    return verdict;
  }

 private:
  /// Full budget (spec §5, [paper] N ∈ {100, 500}, T = 1e5): the Gaussian-noise population
  /// simulation against the noise-corrected model. Constants in double (q is never dense here);
  /// the model itself in 50 and 100 digits (reference_vector, precision doubling) from those
  /// constants. It ran in double and long double until 8b0c5ca; x87 long double is not bit-identical
  /// across CPUs (issue #10), and the software types cost little here: the recurrence is O(N) per
  /// step, ~110 steps, plus one O(N^2) conversion of P.
  static void measure_gaussian(const RunContext& context, double eta, double eta_A_K_P, Measured& m) {
    constexpr int T = 100000, Q = 4;
    // Replicates: 24 at N = 100, whose mid-escape spread of alpha (sd ~0.019 at t = 53, measured with 8)
    // needs n >= 16 for the Student-t half-width at delta to fall below the resolution; 8 at N = 500
    // (sd ~0.006; each replicate costs ~100x more there, O(N^3) per step).
    for (const auto& [N, seeds] : {std::pair<int, std::size_t>{100, 24}, std::pair<int, std::size_t>{500, 8}}) {
      GaussianMeasured g;
      g.N = N;
      g.instance = draw_instance(context, {.N = N, .T = T, .Q = Q}, fmt::format("gaussian/N={}", N));
      g.mc = measurement_constants(g.instance);
      const sim::scb::Instance& instance = g.instance;
      const MeasurementConstants& mc = g.mc;
      const double eta_A = eta_A_K_P / mc.K_P;
      // Past the population escape (≈ ln(2cT)/ln(1+r) ≈ 70 steps at T = 1e5), where the noise acts.
      g.steps =
          40 + *theory::scb::population_escape_steps(0.5, double(T), eta, mc.rho_bar, eta_A_K_P, 0.0, 0.0, 100000);
      // B so that ω* = 0.05 ρ̄ at μ_min.
      g.batch = std::ceil(eta_A * T * mc.K_2 / (2.0 * 0.05 * mc.rho_bar * instance.mu.minCoeff() * mc.K_P));
      g.eps_max = noise_energy_excess(instance, mc);
      const long long steps = g.steps;
      const double batch = g.batch;
      const auto runs = sim::run_replicates(
          replicate_options(context, fmt::format("gaussian/N={}", N), seeds), [&](std::size_t, sim::Rng& rng) {
            sim::scb::LinearModel model = sim::scb::initial_model(instance);
            Eigen::VectorXd out(steps + 1);
            for (long long t = 0; t <= steps; ++t) {
              out[t] = observe(instance, mc, model).alpha;
              if (t < steps) sim::scb::noisy_population_step(model, instance, eta, eta_A, batch, rng);
            }
            return out;
          });
      g.summaries = summarize_columns(runs, "Gaussian-noise population trajectory");
      m.gaussian.push_back(std::move(g));
    }
  }

  static void compare_gaussian(const Measured& m, const Predicted& t, double delta, Verdict& verdict) {
    for (std::size_t n = 0; n < m.gaussian.size(); ++n) {
      const GaussianMeasured& g = m.gaussian[n];
      const GaussianPredicted& gp = t.gaussian[n];
      double max_correction = 0;
      for (long long x = 0; x <= g.steps; ++x) {
        max_correction = std::max(max_correction, std::abs(gp.corrected[x] - gp.noiseless[x]));
      }
      for (int c = 1; c <= 4; ++c) {
        const long long x = g.steps * c / 4;
        const auto& s = g.summaries[static_cast<std::size_t>(x)];
        verdict.comparisons.push_back(checks::compare(
            fmt::format("Gaussian-noise population mean alpha(t = {}), N = {}, T = 1e5, B = {}", x, g.N, g.batch),
            {gp.model.value[x], gp.model.error[x] + 1e-12,
             std::string(ReferenceVector::reason) + ", plus 1e-12 for the constants computed in double (K_P, K_2, "
             "rho, L_irr; an allowance kept from the previous version, not derived)"},
            measured(s.mean, stats::student_t_half_width(s, delta)),
            {g.eps_max * std::abs(gp.corrected[x] - gp.noiseless[x]),
             "eps_max |model - noiseless| (the surrogate's a-noise variance uses K_2 like the model; kept for "
             "symmetry with the SGD comparison)"},
            {0.5 * max_correction + 1e-3, "half the model's largest noise correction (+1e-3)"}));
      }
    }
  }

  static ClaimInfo claim_info() {
    return {
        .id = "scb.sgd_tracks_noise_corrected_model",
        .family = "scb",
        .paper = "Ren, Wang, Lee (NeurIPS 2024), sparse contextual bigrams",
        .source = "specs/scb.md §5 (noise-corrected reduced model), §8 claim 11",
        .tag = Provenance::derived,
        .statement = "The mean stage-1 SGD trajectory (alpha(t), y(t)) over seeds follows the noise-corrected reduced "
                     "model (population recurrence plus the expected noise energy per step) while omega* <= 0.1 "
                     "rho_bar, and its deviation from the noiseless population recurrence shrinks like 1/B.",
        .latex = R"(\bigl|\overline{\alpha}_{SGD}(t) - \alpha_{model}(t)\bigr| \le h_S + \varepsilon_{\max}|\alpha_{model} - \alpha_{pop}|,\quad \omega_k^+ \mathrel{+}= \tfrac{\eta_A^2(T-2)\alpha^2K_2}{B\mu_k})",
        .simulation = "S seeds of stage-1 preconditioned projected SGD (batch B and 4B) on one random SCB instance; "
                      "alpha-hat and y read off the model at every step. Full budget: also the Gaussian-noise "
                      "population surrogate at N in {100, 500}, T = 1e5.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"no_attention_noise", "the noiseless population recurrence (noise terms dropped)",
         [](Settings& s) { s.attention_noise = false; }},
        {"noise_doubled", "noise energy doubled (noise terms evaluated at B/2)",
         [](Settings& s) { s.noise_batch_factor = 0.5; }},
        {"attention_rate_5_percent", "the models' attention step eta_A 5% too large (the small mutant)",
         [](Settings& s) { s.rate_scale = 1.05; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_sgd_tracks_noise_corrected_model() {
  return std::make_unique<SgdTracksNoiseCorrectedModel>();
}

}  // namespace dyncheck::checks::scb
