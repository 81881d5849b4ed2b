#pragma once
// The parameter sets, theory settings and the common three parts of the exact-invariant claims
// (specs/joma.md §7 claims 1-3 and the near-orthogonal control): R random settings of plain
// minibatch SGD, the identity predicted from the recorded trajectory, and four negative controls.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/measured.hpp"
#include "identity_experiment.hpp"

namespace dyncheck::checks::joma {

/// M_C, K and extra_d: the shape of the JoMA block, shared by the invariant claims.
struct BlockShapeParams {
  explicit BlockShapeParams(ParamSet* owner)
      : M_C{owner, "M_C", 20, closed(2, 64), "contextual tokens"},
        K{owner, "K", 20, closed(1, 32), "hidden neurons"},
        extra_d{owner, "extra_d", 9, closed(0, 64), "d - (M_C + 1): embedding dimensions beyond the tokens"} {}
  Int M_C, K, extra_d;
};

/// The block and its optimiser, shared by claims 1-3: shape, temperature, rate ratio, step, batch, init.
struct BlockTrainingParams {
  BlockTrainingParams(ParamSet* owner, long long batch_default, double init_default, const char* eta_description,
                      const char* init_description)
      : shape{owner},
        temperature{owner, "temperature", 0.7, closed(0.05, 10), "attention temperature T (exp kernel)"},
        rate_ratio{owner, "rate_ratio", 1.5, open_closed(0, 10), "eta_z / eta_w", Scale::log},
        eta_w{owner, "eta_w", 0.1, open_closed(0, 1), eta_description, Scale::log},
        batch{owner, "batch", batch_default, closed(1, 256), "minibatch size"},
        init_scale{owner, "init_scale", init_default, closed(0, 2), init_description} {}

  /// Exp attention: z ~ N(0, init_scale^2) makes e^{z/T} span about e^{6 init_scale/T} over the tokens; beyond
  /// init_scale = 4 T the first steps leave the range where e^{z/T} and its products stay finite.
  void check_exp_range() const {
    if (init_scale > 4 * temperature) {
      throw ParamError("init_scale", fmt::format("init_scale must be at most 4 x temperature with exp attention ({} > 4 x {}): "
                                                 "e^(z/T) would span more than e^24 over the tokens",
                                                 init_scale.value(), temperature.value()));
    }
  }
  BlockShapeParams shape;
  Real temperature, rate_ratio, eta_w;
  Int batch;
  Real init_scale;

  /// The model and optimiser part of an experiment setting; the caller sets data, activation, loss, steps.
  IdentitySetting setting(sim::joma::AttentionKernel kernel) const {
    IdentitySetting s;
    s.kernel = kernel;
    s.tokens = shape.M_C.value();
    s.hidden = shape.K.value();
    s.extra_dimensions = shape.extra_d.value();
    s.temperature = temperature;
    s.rate_ratio = rate_ratio;
    s.eta_w = eta_w;
    s.batch = batch.value();
    s.init_scale = init_scale;
    return s;
  }
};

/// The parameters of claims 1 and 2.
struct IdentityParams : ParamSet {
  BlockTrainingParams model{this, 4, 0.1, "learning rate of W",
                            "standard deviation of the initial z and W entries"};
  Real alpha{this, "alpha", 1, closed(0.05, 100), "Dirichlet concentration of the token frequencies x"};
  Int activation{this, "activation", -1, closed(-1, 4),
                 "0 id, 1 ReLU, 2 leaky ReLU, 3 SiLU, 4 tanh; -1 cycles over settings"};
  Int loss{this, "loss", -1, closed(-1, 2),
           "0 CE, 1 squared, 2 linear (unbounded: runs stop at its blow-up); -1 alternates CE and squared"};
};

/// Settings (R) and steps of claims 1 and 2 at a budget; four controls run besides the R settings.
inline std::size_t identity_setting_count(const Budget& budget) { return budget.pick<std::size_t>(2, 10, 20); }
inline long long identity_steps(const Budget& budget) { return budget.pick<long long>(200, 2000, 20000); }

/// Claims 1 and 2 differ in the kernel; the exp kernel limits init_scale / temperature. Both refuse points
/// whose work (multiply-adds of forward, backward and V = U_C^T W over all runs) exceeds the budget's limit
/// (2e10 at ci: about a minute on one core).
template <sim::joma::AttentionKernel kernel>
struct IdentityParamsFor : IdentityParams {
  void check(const Budget& budget) const override {
    if (kernel != sim::joma::AttentionKernel::linear) model.check_exp_range();
    const double m = static_cast<double>(model.shape.M_C), k = static_cast<double>(model.shape.K);
    const double d = m + 1 + static_cast<double>(model.shape.extra_d);
    const double runs = static_cast<double>(identity_setting_count(budget) + 4);
    const double work = runs * static_cast<double>(identity_steps(budget)) *
                        (static_cast<double>(model.batch) * d * (2 * k + 2 * m) + m * d * k);
    const double limit = budget.pick(1e9, 2e10, 4e11);
    if (work > limit) {
      throw ParamError("batch", fmt::format("batch: {} runs of {} steps with batch {}, d = {}, K = {}, M_C = {} cost "
                                            "{:.3g} multiply-adds, above this budget's limit {:.3g}: lower batch, K, "
                                            "M_C or extra_d",
                                            runs, identity_steps(budget), model.batch.value(), d, k, m, work, limit));
    }
  }
};

/// The theory of the exact invariant: its coefficient and the terms of its per-step change. The default
/// is Theorem 1 in its exact discrete form; mutants edit it.
struct InvariantTheory {
  /// Multiplies kappa_z/2 (exp) or rho (linear) in the invariant and in its predicted change.
  double coefficient = 1;
  /// Linear kernel: whether the predicted change keeps its (Delta z)^2 term.
  bool keep_dz_squared = true;
};

/// max over the recorded steps of |I_t - I_0 - P_t|_inf for the theory `theory`: I the invariant with
/// coefficient c (exp: z - c kappa/2 sum_k v_k^2; linear: z^2 - c rho sum_k v_k^2) and P_t the sum of its
/// predicted per-step changes (exp: -c kappa/2 S_t; linear: Z_t - c rho S_t, S_t and Z_t the recorded sums of
/// squared steps). The residual is cumulative: an error at any step persists at every later snapshot.
inline double predicted_residual(const IdentitySetting& s, const IdentityRun& run, const InvariantTheory& theory) {
  const bool linear = s.kernel == sim::joma::AttentionKernel::linear;
  const double kappa = theory.coefficient * invariant_kappa(s);
  auto invariant = [&](const IdentitySnapshot& snap) -> Eigen::VectorXd {
    return linear ? theory::joma::linear_invariant<double>(snap.z, snap.V, kappa)
                  : theory::joma::exp_invariant<double>(snap.z, snap.V, kappa);
  };
  auto predicted_change = [&](const IdentitySnapshot& snap) -> Eigen::VectorXd {
    if (linear) return (theory.keep_dz_squared ? 1.0 : 0.0) * snap.squared_z_steps - kappa * snap.squared_v_steps;
    return -kappa / 2 * snap.squared_v_steps;
  };
  const IdentitySnapshot& first = run.snapshots.front();
  const Eigen::VectorXd I0 = invariant(first);
  double worst = 0;
  for (const IdentitySnapshot& snap : run.snapshots) {
    worst = std::max(worst, (invariant(snap) - I0 - predicted_change(snap)).cwiseAbs().maxCoeff());
  }
  return worst;
}

/// |I_T - I_0|_inf under the theory's invariant: the continuous-time invariant's violation at the end.
inline double predicted_final_defect(const IdentitySetting& s, const IdentityRun& run, const InvariantTheory& theory) {
  const bool linear = s.kernel == sim::joma::AttentionKernel::linear;
  const double kappa = theory.coefficient * invariant_kappa(s);
  auto invariant = [&](const IdentitySnapshot& snap) -> Eigen::VectorXd {
    return linear ? theory::joma::linear_invariant<double>(snap.z, snap.V, kappa)
                  : theory::joma::exp_invariant<double>(snap.z, snap.V, kappa);
  };
  return (invariant(run.snapshots.back()) - invariant(run.snapshots.front())).cwiseAbs().maxCoeff();
}

/// The negative controls of §7 claim 1: each must break the identity far above the round-off threshold.
struct IdentityControl {
  const char* name;
  double momentum, weight_decay, perturbation;
  bool second_query;
};
inline constexpr IdentityControl identity_controls[] = {{"momentum 0.5", 0.5, 0, -1, false},
                                                        {"weight decay 0.05", 0, 0.05, -1, false},
                                                        {"non-orthogonal U (eps = 0.3)", 0, 0, 0.3, false},
                                                        {"a second query sharing W", 0, 0, -1, true}};

struct IdentityMeasured {
  std::vector<IdentitySetting> settings;
  std::vector<IdentityRun> runs;
  std::vector<IdentitySetting> control_settings;
  std::vector<IdentityRun> controls;
};

struct IdentityPredicted {
  std::vector<double> residuals;          ///< per setting
  std::vector<double> control_residuals;  ///< per control
};

/// The common claim of 1 and 2: measure R settings and the controls, predict every residual, compare.
template <sim::joma::AttentionKernel kernel>
class IdentityClaim
    : public ClaimShape<IdentityParamsFor<kernel>, InvariantTheory, IdentityMeasured, IdentityPredicted> {
  using Base = ClaimShape<IdentityParamsFor<kernel>, InvariantTheory, IdentityMeasured, IdentityPredicted>;
 public:
  IdentityClaim(ClaimInfo info, std::vector<typename Base::MutantSpec> mutants, std::string invariant_name)
      : Base(std::move(info), std::move(mutants)), invariant_name_(std::move(invariant_name)) {}
  using MutantSpec = typename Base::MutantSpec;

 protected:
  static constexpr bool linear = kernel == sim::joma::AttentionKernel::linear;

  static IdentitySetting setting_for(const IdentityParamsFor<kernel>& p, const RunContext& context, std::size_t replicate) {
    IdentitySetting s = p.model.setting(kernel);
    s.alpha = p.alpha;
    s.activation = activation_for(p.activation, replicate);
    s.loss = loss_for(p.loss, replicate);
    s.steps = identity_steps(context.budget);
    return s;
  }

  IdentityMeasured measure(const IdentityParamsFor<kernel>& p, const InvariantTheory&, const RunContext& context) const override {
    IdentityMeasured m;
    const std::size_t count = identity_setting_count(context.budget);
    for (std::size_t r = 0; r < count; ++r) m.settings.push_back(setting_for(p, context, r));
    m.runs = sim::run_replicates(replicate_options(context, "plain_sgd", count), [&](std::size_t r, sim::Rng& rng) {
      const IdentitySetting& s = m.settings[r];
      return run_identity_experiment(s, rng, std::max<long long>(1, s.steps / 100));
    });
    for (std::size_t c = 0; c < std::size(identity_controls); ++c) {
      IdentitySetting s = setting_for(p, context, 2);  // leaky ReLU when the activation cycles
      // A control must run its steps: the unbounded linear loss blows up (claim 5), so controls use CE then.
      if (s.loss == sim::joma::Loss::linear) s.loss = sim::joma::Loss::cross_entropy;
      s.momentum = identity_controls[c].momentum;
      s.weight_decay = identity_controls[c].weight_decay;
      s.embedding_perturbation = identity_controls[c].perturbation;
      s.second_query = identity_controls[c].second_query;
      m.control_settings.push_back(s);
      m.controls.push_back(sim::run_replicates(replicate_options(context, fmt::format("control_{}", c), 1),
                                               [&](std::size_t, sim::Rng& rng) {
                                                 return run_identity_experiment(s, rng, std::max<long long>(1, s.steps / 100));
                                               })[0]);
    }
    return m;
  }

  IdentityPredicted predict(const IdentityParamsFor<kernel>&, const IdentityMeasured& m, const InvariantTheory& theory,
                            const RunContext&) const override {
    IdentityPredicted t;
    for (std::size_t r = 0; r < m.runs.size(); ++r) t.residuals.push_back(predicted_residual(m.settings[r], m.runs[r], theory));
    for (std::size_t c = 0; c < m.controls.size(); ++c) {
      t.control_residuals.push_back(predicted_residual(m.control_settings[c], m.controls[c], theory));
    }
    return t;
  }

  Verdict compare(const IdentityParamsFor<kernel>&, const IdentityMeasured& m, const IdentityPredicted& t,
                  const RunContext&) const override {
    // The worst setting relative to its own round-off bound (0/0, a run that never moves, counts as 0).
    auto relative = [&](std::size_t r) {
      const double bound = m.runs[r].roundoff_bound;
      return bound > 0 ? t.residuals[r] / bound : (t.residuals[r] > 0 ? HUGE_VAL : 0.0);
    };
    std::size_t worst = 0;
    for (std::size_t r = 1; r < m.runs.size(); ++r) {
      if (relative(r) > relative(worst)) worst = r;
    }
    const IdentityRun& w = m.runs[worst];
    const IdentitySetting& ws = m.settings[worst];
    const double steps = static_cast<double>(ws.steps);
    const double spec_threshold = 1e-10 * std::max(1.0, w.max_abs_z) * std::sqrt(steps);
    Verdict verdict;
    verdict.comparisons.push_back(checks::compare(
        fmt::format("max_t |I_t - I_0 - sum of predicted changes|_inf, worst of {} settings ({}, {})", m.runs.size(),
                    sim::joma::to_string(ws.activation), sim::joma::to_string(ws.loss)),
        {0.0, 0.0, "exact identity"},
        measured_exactly(t.residuals[worst], w.roundoff_bound,
                         fmt::format("a-priori round-off bound gamma_n (S_0 + S_t + sum_s |step magnitudes|), gamma_n = "
                                     "{:.2e} (n = 2(d + 2 M_C + K) + 8)",
                                     roundoff_factor(ws))),
        {0.0, "none: the identity is exact per step for plain SGD"},
        {spec_threshold, "spec §7: 1e-10 max(1, |z|) sqrt(steps) (round-off only)"}, Relation::at_most));

    for (std::size_t c = 0; c < m.controls.size(); ++c) {
      const double threshold = 1e-10 * std::max(1.0, m.controls[c].max_abs_z) * std::sqrt(steps);
      verdict.comparisons.push_back(checks::compare(
          fmt::format("control, {}: identity residual (must exceed the round-off threshold)", identity_controls[c].name),
          {threshold, 0.0, "spec §7 round-off threshold"}, measured_exactly(t.control_residuals[c]), {0.0, "none"},
          {0.0, "a control either breaks the identity or it does not"}, Relation::at_least));
    }

    Plot nc{"normalised_correlation", fmt::format("NC of z with the {} estimate over time", invariant_name_),
            "t = eta_w x steps", "NC", false, false, {}};
    for (std::size_t r = 0; r < std::min<std::size_t>(m.runs.size(), 4); ++r) {
      Curve curve = Curve::line(fmt::format("setting {}", r));
      for (std::size_t i = 0; i < m.runs[r].times.size(); ++i) curve.add(m.runs[r].times[i], m.runs[r].correlation[i]);
      nc.add(std::move(curve));
    }
    verdict.plots.push_back(std::move(nc));
    Plot scatter{"z_against_estimate", fmt::format("Final z against the {} estimate (setting 0)", invariant_name_),
                 linear ? "I_0 + rho sum_k v_k^2" : "I_0 + kappa/2 sum_k v_k^2", linear ? "z^2" : "z", false, false, {}};
    Curve points = Curve::points("tokens");
    const IdentityRun& first = m.runs[0];
    for (Eigen::Index l = 0; l < first.z_final.size(); ++l) {
      points.add(first.z_hat_final[l], linear ? first.z_final[l] * first.z_final[l] : first.z_final[l]);
    }
    const auto [lo, hi] = std::minmax_element(first.z_hat_final.begin(), first.z_hat_final.end());
    scatter.add(Curve::line("identity line").add(*lo, *lo).add(*hi, *hi)).add(std::move(points));
    verdict.plots.push_back(std::move(scatter));
    std::string stopped;
    for (std::size_t r = 0; r < m.runs.size(); ++r) {
      if (m.runs[r].stopped_at >= 0) {
        stopped += fmt::format(" setting {} ({}, {}) at step {};", r, sim::joma::to_string(m.settings[r].activation),
                               sim::joma::to_string(m.settings[r].loss), m.runs[r].stopped_at);
      }
    }
    if (!stopped.empty()) {
      verdict.notes.push_back("Runs stopped where the state left the range in which one more step stays finite (max "
                              "z/T > 50 for exp attention, |z| or |W| > 1e8; the unbounded linear loss blows up, claim "
                              "5); the identity is checked up to there:" +
                              stopped);
    }
    verdict.notes.push_back(fmt::format(
        "{} settings of {} steps each (random orthonormal U from QR, fresh Dirichlet minibatches, fixed random readout "
        "of 5 classes); activation and loss cycle over the settings when their parameter is -1. The residual is "
        "evaluated at step 0, every steps/100 steps and the last step; it is cumulative, so an error at any step "
        "persists at the next snapshot. Largest |z| in the worst setting: {:.3g}; its final continuous-time defect "
        "|I_T - I_0| = {:.3g} (O(eta), claim 3).",
        m.runs.size(), ws.steps, w.max_abs_z, w.final_defect));
    return verdict;
  }

 private:
  std::string invariant_name_;
};

}  // namespace dyncheck::checks::joma
