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
//   Decaying mode: t_lin keeps only the growing mode of x_t = (η/r)((1+r)^t − (1−r)^t)/(2T); the other
//   moves the crossing later by at most −ln(1 − q²)/ln(1+r), q = η/(2cTr), added to each bias
//   (c must make it ≤ 0.1 step at T_min: checked up front, exit 2 naming c).
// Numerical: the predictions are closed forms in double (1e-12 allowed); the measured step counts
// are integers (a crossing within rounding of c is possible but has probability ~1e-14).
// Valid region (checked up front, exit 2): log10_T_max ≥ log10_T_min + 2 (three T at least; so
// log10_T_min ≤ 5), Q ≤ 10^log10_T_min / 4, c below the landing point α* of the smallest T (ρ̄ =
// 1/Q − 1/T is known before any draw: q is uniform on its support), and the escape's work within
// the budget.
// Mutants (edits of Settings): eigenvalue_not_square_root (r = ηρ̄η_AK_P: slope 1/ln(1 + r²));
// drift_half (drift 1/(2T): x halves, the escape comes ln 2/ln(1+r) steps later); and the small
// growth_rate_5_percent (r → 1.05 r in t_lin: about 5% fewer steps, 2 steps at T = 10^6 by default).
// Resolution: 2 steps on each t_esc(T) (so a relative error of the growth rate of about
// 2 ln(1+r)/ln(2cT) ≈ 4% at T = 10^6 and the defaults).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "claims.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/sim/scb/population_gd.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/phases.hpp"
#include "escape_prediction.hpp"
#include "params.hpp"
#include "theory_instance.hpp"

namespace dyncheck::checks::scb {
namespace {

namespace tscb = theory::scb;

constexpr long long max_steps = 100000;

struct Params : ParamSet {
  Vocabulary vocabulary{this};
  Support support{this, "support size of q^(k), <= T/4 for every T (so <= 10^log10_T_min / 4)"};
  Real eta{this, "eta", 0.5, open_closed(0, 0.6), "V step size", Scale::log};
  Real eta_A_K_P{this, "eta_A_K_P", 0.5, open_closed(0, 1), "attention step size times K_P", Scale::log};
  Real c{this, "c", 0.5, open_closed(0, 1), "escape level of alpha, below the landing point alpha* of the smallest T",
         Scale::log};
  Int log10_T_min{this, "log10_T_min", 2, closed(1, 5), "smallest T = 10^log10_T_min; at most log10_T_max - 2"};
  Int log10_T_max{this, "log10_T_max", 6, closed(3, 7),
                  "largest T; at least log10_T_min + 2 (at the smoke budget at most 100 T_min)"};

  long long run_max(const Budget& budget) const {
    return budget.level == BudgetLevel::smoke ? std::min(log10_T_max.value(), log10_T_min + 2) : log10_T_max.value();
  }

  static double rho_bar(long long Q, double T) { return 1.0 / static_cast<double>(Q) - 1.0 / T; }

  void check(const Budget& budget) const override {
    require(log10_T_max >= log10_T_min + 2, "log10_T_max",
            fmt::format("must be >= log10_T_min + 2 = {} (at least three T values)", log10_T_min + 2));
    const double T_min = portable::pow(10.0, static_cast<double>(log10_T_min.value()));
    require_sparsity(support.Q, std::llround(T_min));
    const double landing = tscb::landing_alpha(eta.value(), rho_bar(support.Q, T_min), eta_A_K_P.value());
    require(c < landing, "c",
            fmt::format("must be below the landing point alpha* = (eta rho_bar/(eta_A K_P))^(1/4) = {:.4g} at T = {:g} "
                        "(rho_bar = 1/Q - 1/T; the trajectory may never reach c otherwise)",
                        landing, T_min));
    const double r_min = tscb::growth_rate(eta.value(), rho_bar(support.Q, T_min), eta_A_K_P.value());
    const double shift = decaying_mode_shift(c, T_min, eta, r_min);
    require(shift <= 0.1, "c",
            fmt::format("must make the linearised decaying mode negligible at T = {:g}: its shift of the crossing "
                        "-ln(1 - q^2)/ln(1+r), q = eta/(2 c T r), is {:.3g} steps (at most 0.1; raise c)",
                        T_min, shift));
    double work = 0;
    for (long long d = log10_T_min; d <= run_max(budget); ++d) {
      const double T = portable::pow(10.0, static_cast<double>(d));
      const double r = tscb::growth_rate(eta.value(), rho_bar(support.Q, T), eta_A_K_P.value());
      const double steps = 2 * portable::log(2 * T + 1) / portable::log1p(r) + 10;
      require(steps <= static_cast<double>(max_steps) / 2, "eta",
              fmt::format("times eta_A_K_P must make the escape at T = {:g}, about 2 ln(2T)/ln(1 + r) = {:.3g} steps, "
                          "at most {} (r = sqrt(eta rho_bar eta_A K_P) = {:.3g})",
                          T, steps, max_steps / 2, r));
      work += steps * static_cast<double>(vocabulary.N) * (T + static_cast<double>(vocabulary.N));
    }
    const double limit = budget.pick(1e8, 4e9, 4e10);
    require(work <= limit, "log10_T_max",
            fmt::format("with N = {}: the escapes need about {:.3g} operations, above the budget's {:.3g}",
                        vocabulary.N.value(), work, limit));
  }
};

struct Settings {
  bool square_root = true;   ///< r = sqrt(eta rho_bar eta_A K_P); false: eta rho_bar eta_A K_P
  double drift = 1.0;        ///< the drift is drift/T
  double growth_factor = 1;  ///< multiplies r in t_lin
};

struct Escape {
  double T = 0, rho_bar = 0, steps = 0;
};

struct Measured {
  std::vector<Escape> points;
};

using Point = EscapePoint;

struct Predicted {
  std::vector<Point> points;
};

class EscapeTimeLogT final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  EscapeTimeLogT() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const long long N = p.vocabulary.N, Q = p.support.Q;
    Measured m;
    for (long long d = p.log10_T_min; d <= p.run_max(context.budget); ++d) {
      const long long T = std::llround(portable::pow(10.0, static_cast<double>(d)));
      // Index 0 for every T: the same P (drawn first from the stream), new supports.
      const sim::scb::Instance sim_inst = draw_instance(context, "escape", 0,
                                                        {static_cast<int>(N), static_cast<int>(T), static_cast<int>(Q)});
      const auto inst_d = to_theory<double>(sim_inst);
      const auto c_d = tscb::constants(inst_d);
      const double eta_A = p.eta_A_K_P / c_d.K_P;
      sim::scb::LinearModel model = sim::scb::initial_model(sim_inst);
      long long t = 0;
      while (reduce_model(inst_d, model).alpha < p.c) {
        if (++t > max_steps) throw std::runtime_error("scb.escape_time_log_T: no escape within 1e5 steps");
        sim::scb::population_stage1_step(model, sim_inst, p.eta, eta_A);
      }
      m.points.push_back({static_cast<double>(T), c_d.rho_bar, static_cast<double>(t)});
    }
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& s, const RunContext&) const override {
    const double eta = p.eta, b = p.eta_A_K_P, c = p.c;
    Predicted predicted;
    for (const Escape& e : m.points) {
      const double r_true = tscb::growth_rate(eta, e.rho_bar, b);
      const double r = s.growth_factor * (s.square_root ? r_true : eta * e.rho_bar * b);
      predicted.points.push_back(escape_point(c, e.T, eta, e.rho_bar, b, r, s.drift));
    }
    return predicted;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext&) const override {
    Verdict verdict;
    const std::vector<Point>& points = t.points;
    for (std::size_t j = 0; j < points.size(); ++j) {
      const Point& q = points[j];
      verdict.comparisons.push_back(checks::compare(
          fmt::format("t_esc(T = {:g})", m.points[j].T), {q.linear + q.delay + 0.5, 1e-12, "closed form in double"},
          measured_exactly(m.points[j].steps, 0.0, "an integer step count"),
          {0.5 + q.phase + q.slack + q.decay,
           fmt::format("1/2 (integer first passage: t_lin + delta + U, U in [0,1)) + {:.3g} (phase error of the "
                       "discrete delay delta) + Delta(T) = {:.2g} (dropped -alpha/T drift) + {:.2g} (decaying mode "
                       "-ln(1 - q^2)/ln(1+r))",
                       q.phase, q.slack, q.decay)},
          {2.0, "2 steps: halving the drift delays the escape by ln 2/ln(1+r) >= 2 steps for r <= 0.41"}));
    }
    for (std::size_t j = 0; j + 1 < points.size(); ++j) {
      const Point &a = points[j], &b = points[j + 1];
      const double predicted = (b.linear + b.delay) - (a.linear + a.delay);
      verdict.comparisons.push_back(checks::compare(
          fmt::format("t_esc({:g}) - t_esc({:g})", m.points[j + 1].T, m.points[j].T),
          {predicted, 1e-12, "closed form in double"},
          measured_exactly(m.points[j + 1].steps - m.points[j].steps, 0.0, "integer step counts"),
          {1 + a.slack + b.slack + a.phase + b.phase + a.decay + b.decay,
           "1 (difference of two integer roundings) + Delta(T) + Delta(10T) (dropped -alpha/T drift) + the phase "
           "errors of both delays + the decaying-mode shifts of both"},
          {0.3 * predicted, "0.3 x the predicted steps per decade: a wrong growth rate changes them by far more"}));
    }
    std::vector<double> log_T, escape, predicted;
    for (std::size_t j = 0; j < points.size(); ++j) {
      log_T.push_back(portable::log(m.points[j].T));
      escape.push_back(m.points[j].steps);
      predicted.push_back(points[j].linear + points[j].delay);
    }
    const double slope_theory = least_squares_slope(log_T, predicted);
    verdict.comparisons.push_back(checks::compare(
        "least-squares slope of t_esc against ln T", {slope_theory, 1e-12, "closed form in double"},
        measured_exactly(least_squares_slope(log_T, escape)),
        {escape_slope_error(log_T, points),
         "largest slope integer rounding can fake, sum_{l_i > mean}(l_i - mean)/sum (l_i - mean)^2, plus the "
         "Delta(T), phase-error and decaying-mode terms weighted alike"},
        {0.25 * slope_theory, "0.25 x the predicted slope: the wrong-eigenvalue slope 1/ln(1 + r^2) differs by far more"}));

    Plot plot{"escape_time", "Escape time against ln T", "ln T", "steps to alpha >= c", false, false, {}};
    Curve theory_line = Curve::line("t_lin + delta + 1/2 (theory)");
    Curve spec_line = Curve::line("ln(2cT)/ln(1 + sqrt(eta rho_bar eta_A K_P)) (statement)");
    Curve measured = Curve::points("full-matrix population GD");
    for (std::size_t j = 0; j < points.size(); ++j) {
      theory_line.add(log_T[j], points[j].linear + points[j].delay + 0.5);
      spec_line.add(log_T[j], tscb::escape_time_prediction(p.c.value(), m.points[j].T, p.eta.value(),
                                                           m.points[j].rho_bar, p.eta_A_K_P.value()));
      measured.add(log_T[j], m.points[j].steps);
    }
    plot.add(std::move(theory_line)).add(std::move(spec_line)).add(std::move(measured));
    verdict.plots.push_back(std::move(plot));
    verdict.notes.push_back(fmt::format(
        "r = {:.4g}, alpha* = {:.4g}, nonlinear delay delta = {:.3g} steps at T = {:g} (the logistic-flow estimate "
        "escape_nonlinear_delay gives {:.3g}); predicted slope 1/ln(1+r) = {:.4g}.",
        points.front().r, points.front().landing, points.front().delay, m.points.front().T,
        tscb::escape_nonlinear_delay(p.c.value(), p.eta.value(), m.points.front().rho_bar, p.eta_A_K_P.value()),
        1 / portable::log1p(points.back().r)));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "scb.escape_time_log_T",
        .family = "scb",
        .paper = "Ren, Wang, Lee (NeurIPS 2024), sparse contextual bigrams",
        .source = "specs/scb.md §4.3 (Escape time), §8 claim 5",
        .tag = Provenance::derived,
        .statement = "From zero correlation, population GD needs ln(2cT)/ln(1 + sqrt(eta rho_bar eta_A K_P)) + O(1) "
                     "steps for alpha to reach c: stage 1 lasts O(log T) steps in the population.",
        .latex = R"(t_{esc}(c) = \frac{\ln(2cT)}{\ln\bigl(1+\sqrt{\eta\bar\rho\,\eta_AK_P}\bigr)} + O(1))",
        .simulation = "sim::scb full-matrix population GD in double from V = mu 1^T, a = 1/T, for T = 10^d.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"eigenvalue_not_square_root", "growth factor 1 + eta rho_bar eta_A K_P instead of 1 + sqrt(.)",
         [](Settings& s) { s.square_root = false; }},
        {"drift_half", "drift 1/(2T) instead of 1/T", [](Settings& s) { s.drift = 0.5; }},
        {"growth_rate_5_percent", "growth rate r 5% too large in the linear escape time",
         [](Settings& s) { s.growth_factor = 1.05; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_escape_time_log_T() { return std::make_unique<EscapeTimeLogT>(); }

}  // namespace dyncheck::checks::scb
