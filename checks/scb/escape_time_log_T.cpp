// Claim scb.escape_time_log_T  [derived]  (specs/scb.md §4.3 "Escape time", §8 claim 5)
//
// In population GD from zero correlation (V = μ1ᵀ, a = 1/T), the number of steps for α to reach c
// grows like ln T:
//   t_esc(c) = ln(2cT)/ln(1 + √(ηρ̄η_AK_P)) + O(1).
// So stage 1 lasts O(log T) steps in the population; its poly(T) cost is statistical (§5).
// Measured: the sim layer's full-matrix population GD (double) for T = 10^d, d = d_min..d_max (the
// same P for every T; q uniform on Q random positions, so ρ̄ = 1/Q − 1/T); t_esc = first t with α_t ≥ c.
// Theory: with r = √(ηρ̄η_AK_P), the growing mode of the linearised GD reaches c at
//   t_lin = ln(2cT r/η)/ln(1 + r)   (= ln(2cT)/ln(1+r) + ln(r/η)/ln(1+r), a T-independent shift),
// delayed by the nonlinear terms by δ: without the 1/T terms and on I_c = 0 GD keeps β = α/α*²,
// α* = (ηρ̄/(η_AK_P))^{1/4}, and α follows α⁺ = α(1 + r(1 − α²/α*²)); δ is that map's delay behind
// pure growth 1 + r (escape_delay_discrete, phases.hpp). The integer first passage is then
// t_lin + δ + U, U ∈ [0, 1).
// Comparisons, each with its bias:
//   1. t_esc(T) against t_lin + δ + ½: bias ½ (the rounding U − ½) + the phase error of δ (how the
//      delay moves with the start's position on the step grid, from the interpolation error at the
//      crossing) + Δ(T);
//   2. t_esc(10T) − t_esc(T) against t_lin(10T) − t_lin(T) (+ the change of δ): bias 1 (a difference
//      of two roundings) + Δ(T) + Δ(10T);
//   3. the least-squares slope of t_esc against ln T against that of t_lin + δ: bias = the largest
//      slope integer rounding can fake, max_{U ∈ [0,1)^n} slope(U) = Σ_{l_i > l̄}(l_i − l̄)/Σ(l_i − l̄)²,
//      plus Σ|l_i − l̄|Δ(T_i)/Σ(l_i − l̄)².
//   Δ(T) = 2η(1+r)/(rT ln(1+r)(1 − c²/α*²)): the dropped −ηα/T drift sums to ≤ ηc(1+r)/(rT) over
//   the geometric growth, and α grows by ≥ c ln(1+r)(1 − c²/α*²) per step at the crossing; the
//   factor 2 covers the drift's nonlinear modulation, of the same order.
// Numerical: the predictions are closed forms in double (1e-12 allowed); the measured step counts
// are integers (a crossing within rounding of c is possible but has probability ~1e-14).
// Mutants: eigenvalue_not_square_root (r = ηρ̄η_AK_P: slope 1/ln(1 + r²)); drift_half (drift 1/(2T):
// x halves, the escape comes ln 2/ln(1+r) steps later).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "claims.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/scb/population_gd.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/phases.hpp"
#include "theory_instance.hpp"

namespace dyncheck::checks::scb {
namespace {

namespace tscb = theory::scb;

double least_squares_slope(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(x.size());
  my /= static_cast<double>(x.size());
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  return sxy / sxx;
}

class EscapeTimeLogT final : public Claim {
 public:
  const ClaimInfo& info() const override { return info_; }

  Verdict run(const RunContext& context) const override {
    const long long N = context.params.get_int("N"), Q = context.params.get_int("Q");
    const double eta = context.params.get("eta"), eta_A_K_P = context.params.get("eta_A_K_P");
    const double c = context.params.get("c");
    const long long d_min = context.params.get_int("log10_T_min");
    const long long d_max_param = context.params.get_int("log10_T_max");
    require(d_max_param >= d_min + 2, "log10_T_max", "must be >= log10_T_min + 2 (at least three T values)");
    const long long d_max = context.budget.level == BudgetLevel::smoke ? std::min(d_max_param, d_min + 2) : d_max_param;
    require_sparsity(Q, 100);

    struct Point {
      double T, log_T, escape, linear, delay, r, landing, slack, phase;
    };
    std::vector<Point> points;
    for (long long d = d_min; d <= d_max; ++d) {
      const long long T = std::llround(portable::pow(10.0, static_cast<double>(d)));
      require_sparsity(Q, T);
      // Index 0 for every T: the same P (drawn first from the stream), new supports.
      const sim::scb::Instance sim_inst = draw_instance(context, "escape", 0,
                                                        {static_cast<int>(N), static_cast<int>(T), static_cast<int>(Q)});
      const auto c_d = tscb::constants(to_theory<double>(sim_inst));
      const double Td = static_cast<double>(T);
      const double landing = tscb::landing_alpha(eta, c_d.rho_bar, eta_A_K_P);
      require(c < landing, "c",
              fmt::format("must be below the landing point alpha* = (eta rho_bar/(eta_A K_P))^(1/4) = {:.4g} at T = {} "
                          "(the trajectory may never reach c otherwise)",
                          landing, T));
      const double eta_A = eta_A_K_P / c_d.K_P;
      const auto inst_d = to_theory<double>(sim_inst);
      sim::scb::LinearModel model = sim::scb::initial_model(sim_inst);
      long long t = 0;
      const long long max_steps = 100000;
      while (reduce_model(inst_d, model).alpha < c) {
        if (++t > max_steps) throw std::runtime_error("scb.escape_time_log_T: no escape within 1e5 steps");
        sim::scb::population_stage1_step(model, sim_inst, eta, eta_A);
      }
      double r = tscb::growth_rate(eta, c_d.rho_bar, eta_A_K_P);
      double T_eff = Td;
      if (context.mutant_is("eigenvalue_not_square_root")) r = eta * c_d.rho_bar * eta_A_K_P;
      if (context.mutant_is("drift_half")) T_eff = 2 * Td;
      const double linear = portable::log(2 * c * T_eff * r / eta) / portable::log1p(r);
      const auto discrete = tscb::escape_delay_discrete(c, eta, c_d.rho_bar, eta_A_K_P);
      const double delay = discrete.delay;
      const double r_true = tscb::growth_rate(eta, c_d.rho_bar, eta_A_K_P);
      const double slack = 2 * eta * (1 + r_true) / (r_true * Td * portable::log1p(r_true) * (1 - c * c / (landing * landing)));
      points.push_back({Td, portable::log(Td), static_cast<double>(t), linear, delay, r_true, landing, slack, discrete.phase_error});
    }

    Verdict verdict;
    for (const Point& p : points) {
      verdict.comparisons.push_back(compare(
          fmt::format("t_esc(T = {:g})", p.T),
          {p.linear + p.delay + 0.5, 1e-12, "closed form in double"},
          {p.escape, 0.0, "deterministic (an integer step count)"},
          {0.5 + p.phase + p.slack,
           fmt::format("1/2 (integer first passage: t_lin + delta + U, U in [0,1)) + {:.3g} (phase error of the "
                       "discrete delay delta) + Delta(T) = {:.2g} (dropped -alpha/T drift)",
                       p.phase, p.slack)},
          {2.0, "2 steps: halving the drift delays the escape by ln 2/ln(1+r) >= 2 steps for r <= 0.41"}));
    }
    for (std::size_t j = 0; j + 1 < points.size(); ++j) {
      const Point &a = points[j], &b = points[j + 1];
      const double predicted = (b.linear + b.delay) - (a.linear + a.delay);
      verdict.comparisons.push_back(compare(
          fmt::format("t_esc({:g}) - t_esc({:g})", b.T, a.T), {predicted, 1e-12, "closed form in double"},
          {b.escape - a.escape, 0.0, "deterministic (integer step counts)"},
          {1 + a.slack + b.slack + a.phase + b.phase,
           "1 (difference of two integer roundings) + Delta(T) + Delta(10T) (dropped -alpha/T drift) + the phase "
           "errors of both delays"},
          {0.3 * predicted, "0.3 x the predicted steps per decade: a wrong growth rate changes them by far more"}));
    }
    std::vector<double> log_T, escape, predicted;
    for (const Point& p : points) {
      log_T.push_back(p.log_T);
      escape.push_back(p.escape);
      predicted.push_back(p.linear + p.delay);
    }
    const double mean_log = [&] {
      double s = 0;
      for (double l : log_T) s += l;
      return s / static_cast<double>(log_T.size());
    }();
    double sxx = 0, positive = 0, weighted_slack = 0;
    for (std::size_t j = 0; j < points.size(); ++j) {
      const double dev = log_T[j] - mean_log;
      sxx += dev * dev;
      if (dev > 0) positive += dev;
      weighted_slack += std::abs(dev) * (points[j].slack + points[j].phase);
    }
    const double slope_theory = least_squares_slope(log_T, predicted);
    verdict.comparisons.push_back(compare(
        "least-squares slope of t_esc against ln T", {slope_theory, 1e-12, "closed form in double"},
        {least_squares_slope(log_T, escape), 0.0, "deterministic"},
        {(positive + weighted_slack) / sxx,
         "largest slope integer rounding can fake, sum_{l_i > mean}(l_i - mean)/sum (l_i - mean)^2, plus the "
         "Delta(T) and phase-error terms weighted alike"},
        {0.25 * slope_theory, "0.25 x the predicted slope: the wrong-eigenvalue slope 1/ln(1 + r^2) differs by far more"}));

    Plot plot{"escape_time", "Escape time against ln T", "ln T", "steps to alpha >= c", false, false, {}};
    Curve theory_line{"t_lin + delta + 1/2 (theory)", Curve::Style::line, {}, {}, {}, {}};
    Curve spec_line{"ln(2cT)/ln(1 + sqrt(eta rho_bar eta_A K_P)) (statement)", Curve::Style::line, {}, {}, {}, {}};
    Curve measured{"full-matrix population GD", Curve::Style::points, {}, {}, {}, {}};
    for (const Point& p : points) {
      theory_line.x.push_back(p.log_T);
      theory_line.y.push_back(p.linear + p.delay + 0.5);
      spec_line.x.push_back(p.log_T);
      spec_line.y.push_back(portable::log(2 * c * p.T) / portable::log1p(p.r));
      measured.x.push_back(p.log_T);
      measured.y.push_back(p.escape);
    }
    plot.curves = {theory_line, spec_line, measured};
    verdict.plots.push_back(std::move(plot));
    verdict.notes.push_back(fmt::format(
        "r = {:.4g}, alpha* = {:.4g}, nonlinear delay delta = {:.3g} steps at T = {:g}; predicted slope 1/ln(1+r) = {:.4g}.",
        points.front().r, points.front().landing, points.front().delay, points.front().T, 1 / portable::log1p(points.back().r)));
    return verdict;
  }

 private:
  ClaimInfo info_{
      .id = "scb.escape_time_log_T",
      .family = "scb",
      .paper = "Ren, Wang, Lee (NeurIPS 2024), sparse contextual bigrams",
      .source = "specs/scb.md §4.3 (Escape time), §8 claim 5",
      .tag = Provenance::derived,
      .statement = "From zero correlation, population GD needs ln(2cT)/ln(1 + sqrt(eta rho_bar eta_A K_P)) + O(1) "
                   "steps for alpha to reach c: stage 1 lasts O(log T) steps in the population.",
      .latex = R"(t_{esc}(c) = \frac{\ln(2cT)}{\ln\bigl(1+\sqrt{\eta\bar\rho\,\eta_AK_P}\bigr)} + O(1))",
      .simulation = "sim::scb full-matrix population GD in double from V = mu 1^T, a = 1/T, for T = 10^d.",
      .params =
          {
              {"N", 3, 2, 20, true, false, "vocabulary size"},
              {"Q", 2, 1, 20, true, false, "support size of q^(k), <= T/4 for every T"},
              {"eta", 0.5, 0, 0.6, false, true, "V step size"},
              {"eta_A_K_P", 0.5, 0, 1, false, true, "attention step size times K_P"},
              {"c", 0.5, 0, 1, false, true, "escape level of alpha, below the landing point alpha*"},
              {"log10_T_min", 2, 1, 6, true, false, "smallest T = 10^log10_T_min"},
              {"log10_T_max", 6, 3, 7, true, false, "largest T (at the smoke budget at most 100 T_min)"},
          },
      .mutants = {{"eigenvalue_not_square_root", "growth factor 1 + eta rho_bar eta_A K_P instead of 1 + sqrt(.)"},
                  {"drift_half", "drift 1/(2T) instead of 1/T"}},
  };
};

}  // namespace

std::unique_ptr<Claim> make_escape_time_log_T() { return std::make_unique<EscapeTimeLogT>(); }

}  // namespace dyncheck::checks::scb
