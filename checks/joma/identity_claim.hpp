#pragma once
// The common run of claims 1 and 2 (specs/joma.md §7): R random settings of plain minibatch SGD
// with the exact identity checked to its round-off bound, then the three negative controls.

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/claim.hpp"
#include "identity_experiment.hpp"

namespace dyncheck::checks::joma {

inline std::vector<ParamSpec> identity_params() {
  return {
      {"M_C", 20, 2, 64, true, false, "contextual tokens"},
      {"K", 20, 1, 32, true, false, "hidden neurons"},
      {"extra_d", 9, 0, 64, true, false, "d - (M_C + 1): embedding dimensions beyond the tokens"},
      {"temperature", 0.7, 0.05, 10, false, false, "attention temperature T (exp kernel)"},
      {"rate_ratio", 1.5, 0, 10, false, true, "eta_z / eta_w"},
      {"eta_w", 0.1, 0, 1, false, true, "learning rate of W"},
      {"batch", 4, 1, 256, true, false, "minibatch size"},
      {"init_scale", 0.1, 0, 2, false, false, "standard deviation of the initial z and W entries"},
      {"alpha", 1, 0.05, 100, false, false, "Dirichlet concentration of the token frequencies x"},
      {"activation", -1, -1, 4, true, false, "0 id, 1 ReLU, 2 leaky ReLU, 3 SiLU, 4 tanh; -1 cycles over settings"},
      {"loss", -1, -1, 2, true, false, "0 CE, 1 squared, 2 linear; -1 cycles over settings"},
  };
}

/// The model and optimiser parameters every identity experiment shares (M_C, K, extra_d,
/// temperature, rate_ratio, eta_w, batch, init_scale); the caller sets data, activation, loss, steps.
inline IdentitySetting model_setting_from(const Params& p, sim::joma::AttentionKernel kernel) {
  IdentitySetting s;
  s.kernel = kernel;
  s.tokens = p.get_int("M_C");
  s.hidden = p.get_int("K");
  s.extra_dimensions = p.get_int("extra_d");
  s.temperature = p.get("temperature");
  s.rate_ratio = p.get("rate_ratio");
  s.eta_w = p.get("eta_w");
  s.batch = p.get_int("batch");
  s.init_scale = p.get("init_scale");
  return s;
}

/// The setting of replicate `replicate` of claims 1 and 2: the shared parameters, alpha, and the
/// activation and loss of that replicate.
inline IdentitySetting identity_setting_from(const RunContext& context, sim::joma::AttentionKernel kernel,
                                             std::size_t replicate) {
  const Params& p = context.params;
  IdentitySetting s = model_setting_from(p, kernel);
  s.alpha = p.get("alpha");
  s.activation = activation_for(p.get_int("activation"), replicate);
  s.loss = loss_for(p.get_int("loss"), replicate);
  s.steps = context.budget.pick<long long>(200, 2000, 20000);
  return s;
}

/// Runs the R settings and the controls; `mutate` adjusts a setting for the active mutant.
template <class Mutate>
Verdict identity_verdict(const RunContext& context, sim::joma::AttentionKernel kernel, Mutate mutate,
                         const std::string& invariant_name) {
  const std::size_t settings = context.budget.pick<std::size_t>(2, 10, 20);
  const std::vector<IdentityRun> runs =
      sim::run_replicates(replicate_options(context, "plain_sgd", settings), [&](std::size_t r, sim::Rng& rng) {
        IdentitySetting s = identity_setting_from(context, kernel, r);
        mutate(s);
        return run_identity_experiment(s, rng, std::max<long long>(1, s.steps / 100));
      });
  const IdentitySetting base = identity_setting_from(context, kernel, 0);
  // The worst setting relative to its own round-off bound.
  std::size_t worst = 0;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    if (runs[r].worst_residual / runs[r].roundoff_bound > runs[worst].worst_residual / runs[worst].roundoff_bound) worst = r;
  }
  const IdentityRun& w = runs[worst];
  const double spec_threshold = 1e-10 * std::max(1.0, w.max_abs_z) * std::sqrt(static_cast<double>(base.steps));
  Verdict verdict;
  verdict.comparisons.push_back(compare(
      fmt::format("max_t |I_t - I_0 - sum of predicted changes|_inf, worst of {} settings ({}, {})", settings,
                  sim::joma::to_string(activation_for(context.params.get_int("activation"), worst)),
                  sim::joma::to_string(loss_for(context.params.get_int("loss"), worst))),
      {0.0, 0.0, "exact identity"},
      {w.worst_residual, 0.0, "deterministic given the seed", w.roundoff_bound,
       fmt::format("a-priori round-off bound gamma_n (S_0 + S_t + sum_s |step magnitudes|), gamma_n = {:.2e} "
                   "(n = 2(d + 2 M_C + K) + 8)",
                   roundoff_factor(base))},
      {0.0, "none: the identity is exact per step for plain SGD"},
      {spec_threshold, "spec §7: 1e-10 max(1, |z|) sqrt(steps) (round-off only)"}, Relation::at_most));

  // Negative controls (§7 claim 1): each must break the identity far above the spec's round-off threshold.
  struct Control {
    const char* name;
    double momentum, weight_decay, perturbation;
    bool second_query;
  };
  const Control controls[] = {{"momentum 0.5", 0.5, 0, -1, false},
                              {"weight decay 0.05", 0, 0.05, -1, false},
                              {"non-orthogonal U (eps = 0.3)", 0, 0, 0.3, false},
                              {"a second query sharing W", 0, 0, -1, true}};
  for (std::size_t c = 0; c < 4; ++c) {
    const IdentityRun control = sim::run_replicates(
        replicate_options(context, fmt::format("control_{}", c), 1), [&](std::size_t, sim::Rng& rng) {
          IdentitySetting s = identity_setting_from(context, kernel, 2);  // leaky ReLU
          s.momentum = controls[c].momentum;
          s.weight_decay = controls[c].weight_decay;
          s.embedding_perturbation = controls[c].perturbation;
          s.second_query = controls[c].second_query;
          return run_identity_experiment(s, rng);
        })[0];
    const double threshold = 1e-10 * std::max(1.0, control.max_abs_z) * std::sqrt(static_cast<double>(base.steps));
    verdict.comparisons.push_back(compare(
        fmt::format("control, {}: identity residual (must exceed the round-off threshold)", controls[c].name),
        {threshold, 0.0, "spec §7 round-off threshold"}, {control.worst_residual, 0.0, "deterministic given the seed"},
        {0.0, "none"}, {0.0, "a control either breaks the identity or it does not"}, Relation::at_least));
  }

  Plot nc{"normalised_correlation", fmt::format("NC of z with the {} estimate over time", invariant_name),
          "t = eta_w x steps", "NC", false, false, {}};
  for (std::size_t r = 0; r < std::min<std::size_t>(runs.size(), 4); ++r) {
    nc.curves.push_back({fmt::format("setting {}", r), Curve::Style::line, runs[r].times, runs[r].correlation, {}, {}});
  }
  verdict.plots.push_back(std::move(nc));
  Plot scatter{"z_against_estimate", fmt::format("Final z against the {} estimate (setting 0)", invariant_name),
               kernel == sim::joma::AttentionKernel::linear ? "I_0 + rho sum_k v_k^2" : "I_0 + kappa/2 sum_k v_k^2",
               kernel == sim::joma::AttentionKernel::linear ? "z^2" : "z", false, false, {}};
  Curve points{"tokens", Curve::Style::points, {}, {}, {}, {}};
  for (Eigen::Index l = 0; l < runs[0].z_final.size(); ++l) {
    points.x.push_back(runs[0].z_hat_final[l]);
    points.y.push_back(kernel == sim::joma::AttentionKernel::linear ? runs[0].z_final[l] * runs[0].z_final[l]
                                                                     : runs[0].z_final[l]);
  }
  Curve diagonal{"identity line", Curve::Style::line, {}, {}, {}, {}};
  const auto [lo, hi] = std::minmax_element(points.x.begin(), points.x.end());
  diagonal.x = {*lo, *hi};
  diagonal.y = {*lo, *hi};
  scatter.curves = {diagonal, points};
  verdict.plots.push_back(std::move(scatter));
  verdict.notes.push_back(fmt::format(
      "{} settings of {} steps each (random orthonormal U from QR, fresh Dirichlet minibatches, fixed random readout "
      "of 5 classes); activation and loss cycle over the settings when their parameter is -1. Largest |z| in the worst "
      "setting: {:.3g}; its final continuous-time defect |I_T - I_0| = {:.3g} (O(eta), claim 3).",
      settings, base.steps, w.max_abs_z, w.final_defect));
  return verdict;
}

}  // namespace dyncheck::checks::joma
