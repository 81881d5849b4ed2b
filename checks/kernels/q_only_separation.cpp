// Claim kernels.q_only_separation  [paper] statement (A-T3/A-T4: "if only the query matrix can be updated, GD
//   convergence is guaranteed only with the Gaussian kernel"; softmax "may sometimes lead to suboptimal local
//   solutions"), [derived] floor and realisability (specs/kernels.md A.4 D4, D5), [reconstructed] conditions;
//   experiment E-A3 of A.5.
//
// Instance (E-A3): scalar output u_ib = x_ib'w with W^V W^O collapsed into w ~ N(0, I/d) (W^V = I, W^O = w), W^K
// fixed ~ N(0, s_K^2/d), targets from a Gaussian (unnormalised) teacher W^Q* ~ N(0, s_teacher^2/d) with the same
// W^K and w, so the Gaussian student's global optimum is 0 (D5: realisable by construction). Student
// W^Q ~ N(0, s_student^2/d); only W^Q is trained, by Armijo GD, from the same initial W^Q for both kernels.
// D4: every softmax output row lies in [min_b u_ib, max_b u_ib] whatever W^Q is, so the softmax loss is never below
//   LB = 1/2 sum_{i,a} dist(t_ia, [min_b u_ib, max_b u_ib])^2.
// Success: f_T <= 1e-6 f_0 or f_T <= 1e-10.
// Certified instances: LB - e_r > max(1e-6 f_0, 1e-10), e_r the numerical term of comparison 1 for the run: there a
//   softmax success would need f_T < LB - e_r, which comparison 1 checks on every run, so on these instances the
//   softmax success probability is p_S = 0 exactly (D4, deterministic) and its measured count carries no sampling
//   error.
// Comparisons:
//  1. (deterministic, every run) the softmax final loss (the smallest of its monotone Armijo trajectory) >= LB;
//     the worst run relative to LB is shown. Numerical term: the rounding of f_T and of LB (4 gamma_{Nn} LB).
//     Bias (the check's power): the closest approach min_r (f_T - LB)/LB of any run to the claim's floor, times LB;
//     runs that stop far above their floors (few steps) make the comparison INCONCLUSIVE instead of passing a too-high
//     floor. Measured against the claim's floor for every variant (a mutant's raised floor would otherwise look
//     closer to the runs and claim a power the experiment does not have: fuzz seed 9141 at smoke, hull_shrunk_1e-3
//     PASSed where the claim was INCONCLUSIVE).
//     Resolution 1e-3 LB.
//  2. (statistical) among the n certified instances, the separation, decided: LCB(p_G - p_S) > 0 (spec E-A3 (ii)).
//     Since p_S = 0 there (above), p_G - p_S = p_G and the exact lower confidence bound of the difference is the
//     Clopper-Pearson lower bound of p_G, > 0 exactly when x >= 1 of the n Gaussian runs succeed. "LCB > 0" is not
//     itself a hypothesis with a false-failure rate: failing whenever LCB <= 0 fails a true claim with probability
//     (1 - p_G)^n, which only a lower bound on p_G controls. So for d >= Nn the comparison is the one-sided test of
//     the [reconstructed] calibrated level (the same `level` as comparison 3, here on the certified instances):
//     p_G - p_S >= level, failing when the Clopper-Pearson upper bound of p_G, one-sided at the comparison's share
//     delta, is below it (a true claim fails with probability <= delta, exact binomial). With x = 0 that bound is
//     1 - delta^(1/n), below the level exactly when n >= n_min = ceil(ln delta / ln(1 - level)) (level 0.8, delta =
//     5e-6: n_min = 8; 35 certified instances at ci); with fewer, x = 0 leaves a tolerance above the resolution
//     `level`, so INCONCLUSIVE. Hence a PASS implies x >= 1, i.e. LCB > 0: decided, at no extra runs.
//     Why not the union bound with p_S estimated (CP upper bound of p_S at half the share): failing when that LCB
//     <= 0 keeps the false-failure rate at delta only from n >= 51 certified instances at level 0.8 (x <= 26 of 51
//     gives LCB <= 0; exact binomial, scipy), ~60 runs instead of 40; D4 makes it unnecessary.
//     For d < Nn no level is calibrated (spec: 5/40 Gaussian successes at d = 4): only p_G - p_S >= 0 (what D4
//     implies), resolution 0.5, and the LCB is reported. Wilson 95% intervals and Newcombe's 95% interval for the
//     difference are reported too (spec A.5); Newcombe does not decide: it is approximate and for independent
//     samples (the runs are paired), and at the claim's share its actual one-sided error exceeds the nominal (1.7x
//     at n = 40 per arm, thousands of times at very unequal sizes: exact enumeration, tests/checks/stats_test.cpp).
//  3. (statistical, [reconstructed] calibrated level, d >= Nn only) the Gaussian success fraction >= 0.8 (spec
//     E-A3 (iii): 39/40 in the reference run), failing when the Clopper-Pearson upper bound is below 0.8.
//  The level of 2 and 3 is a calibration, not a theorem (A-T3 promises convergence, no rate): it holds on the
//  instance it was calibrated on, the spec's E-A3 scales s_K = s_teacher = 0.3, s_student = 0.7 with >= 2000 Armijo
//  steps (ci 2000, full 3000; seeds 1-12 at ci: 38-40 of 40; full: 99/100, 84/84 certified), for any N, n, d >= Nn
//  the budget affords. Elsewhere a success fraction after a fixed number of steps has no level: fuzz seed 9141 at ci
//  found 10/40 with steps = 70 (s_K = 0.083, s_student = 0.10), and at 2000 steps the corners of the scale box fail
//  it, e.g. (s_K, s_teacher, s_student) = (2, 2, 0.05): 11/40 (4/20 certified), (1, 1, 1), (0.05, 1, 0.05). There 3
//  is left out and 2 takes its d < Nn form (above); the fractions are reported.
//  4. (deterministic, every run) the stall factor: the mirror of D4 (theory/kernels/hull.hpp): each softmax output
//     y_ia lies in [min_b u_ib, max_b u_ib] and (y - t)^2 is convex in y, so it is largest at an endpoint, and for
//     every W^Q
//       f <= UB = 1/2 sum_{i,a} max((t_ia - min_b u_ib)^2, (t_ia - max_b u_ib)^2),
//     so a softmax run that stalls ends within the derived factor UB/LB of its floor: LB <= f_T <= UB. Checked on
//     every run, the run closest to its ceiling shown; numerical term as in comparison 1 (4 gamma_{Nn} UB for UB).
//     No bias: the inequality holds for every W^Q. Resolution: that run's distance UB - f_T (a ceiling too low by
//     more than that fails; at least 1e-3 UB). The factor is a bound, not a prediction: measured f_T/LB at the
//     defaults (100 instances, 1000 to 16000 Armijo steps): median 1.007, 1.004, 1.002, 1.001, 1.000 (the stalled
//     runs approach LB like ~1/T: saturating attention), max 3.60, 3.54, 3.51, 3.49, 3.48 (one instance stays
//     far above LB although for d >= Nn the infimum over W^Q is LB (generic inputs: the Nn queries are free and each
//     row's n keys affinely independent, so a row's output takes every value inside its hull): GD stalls on a plateau
//     of saturated attention,
//     which no step count cures; no T-independent factor below UB/LB can be derived).
// Shares: 2 and 3 take half of the claim's false-failure share each.
// Conditions: A.3's lambda_Q (A-T3) at each instance's start, for both kernels, from theory::kernels::
//   evaluate_conditions (the function behind dyncheck.theory.kernels.conditions), reported with d >= Nn.
// Mutants: softmax_better (the claim with the kernels swapped, p_S - p_G >= 0: gross), hull_drops_largest (LB
//   from the hull without the largest value: gross), hull_shrunk_1e-3 (each hull shrunk by 1e-3 of its width at
//   both ends: small), no_separation (p_G - p_S <= 0 on the certified instances, the null that "LCB > 0" rejects:
//   FAILs exactly when LCB > 0), stall_factor_1 (the ceiling LB: spec E-A3's "the softmax final loss sits at LB"
//   read as exact; gross). Not registered: the ceiling from the nearer hull endpoint (a min for a max) PASSes at ci,
//   since runs end near LB, below any ceiling above LB + the in-hull terms (ci: closest 3.34724 against 3.34737);
//   and a factor 1.25 (spec E-A3's reference range 1.00-1.23 in 9 of 10 runs taken as the bound) FAILs at ci (f_T/LB
//   up to 2.845) but PASSes wherever no run stalls that far (fuzz seeds 9141 and 31337 at ci: 3 points), so it is
//   not wrong everywhere. Comparison 4 has power only against ceilings below the largest f_T of a run.
//   level_for_every_d drops A-T3's hypothesis d >= Nn: comparisons 2 and 3 at the calibrated level for d < Nn too
//   (the theorem's conclusion read beyond its hypothesis, kept for the family's report sweep over d). Where d >= Nn,
//   the defaults included, it is the claim itself, so it declares the point where it must FAIL
//   (checks/mutant_points.hpp): N = n = d = 4, spec E-A3's reference point below Nn (5/40 Gaussian successes there).
//   Gaussian successes of 40 at ci (2000 Armijo steps, N = n = 4, master seed): d = 2: 31, 3: 14, 4: 5, 5: 27,
//   6: 35, 8: 39; seeds 1 and 2: d = 2: 30, 27; d = 3: 13, 18; d = 4: 5, 4; d = 5: 25, 30. The level fails near d^2 = Nn (W^Q's d^2
//   parameters against the Nn targets), not below d = Nn as such: d = 2 (4 parameters) and d >= 6 succeed at or
//   near the level, d = 8 < Nn at 39/40 (spec: 40/40, "d >= Nn is sufficient, not necessary"). Comparison 3 against
//   the level 0.8 (Clopper-Pearson upper bound one-sided at 2.5e-6, 40 runs): margin (0.8 - x/40)/(upper - x/40) =
//   1.9-2.0 at d = 4 (x = 4, 5), 1.03-1.31 at d = 3 (x = 18, 14, 13), 0.24-0.63 at d = 5, 0.13-0.49 at d = 2;
//   the mutant's margin (comparison 2 on the certified instances included) at d = 3: 1.29, 1.37, 1.06, at d = 4:
//   1.98, 1.91, 2.03 (master seed, seeds 1, 2; the family's report sweep). Its ctest at N = n = d = 4: FAIL, 2.3 s.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "claims.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/mutant_points.hpp"
#include "dyncheck/checks/stats/binomial.hpp"
#include "dyncheck/checks/stats/proportions.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/kernels/attention.hpp"
#include "dyncheck/theory/kernels/conditions.hpp"
#include "dyncheck/theory/kernels/hull.hpp"
#include "gaussian_teacher.hpp"
#include "instance.hpp"

namespace dyncheck::checks::kernels {
namespace {

struct Params : GaussianTeacherParams {
  Params() : GaussianTeacherParams("embedding dimension (the Gaussian level is checked for d >= Nn)", "") {}
  Int steps{this, "steps", 0, closed(0, 20000), "Armijo steps per run; 0: the budget's choice (smoke 200, ci 2000, full 3000)"};
  Real level{this, "level", 0.8, closed(0, 1),
             "calibrated Gaussian success level for d >= Nn at the spec's E-A3 scales (0.3, 0.3, 0.7) and >= 2000 steps "
             "([reconstructed])"};

  std::size_t runs(const Budget& budget) const { return budget.pick<std::size_t>(4, 40, 100); }
  long long resolved_steps(const Budget& budget) const {
    return steps.value() != 0 ? steps.value() : budget.pick<long long>(200, 2000, 3000);
  }
  /// Modelled CPU seconds of a run (one thread), an upper envelope fitted to measured user CPU time. Per GD step
  /// (2 runs per instance, softmax and Gaussian): 7.2e-10 s per N n d^2 (the products with W^Q, W^K, the gradient),
  /// 3.6e-9 more when n is not a multiple of 4 (the product kernels' row tails: at N = 2, d = 16, 1000 steps,
  /// n = 3 and 7 take 7.6 and 10.9 us a step against 3.1 and 5.4 at n = 4 and 8), 2.7e-8 per N n^2 (exp and the
  /// softmax rows), 6e-7 per step; per instance and kernel, lambda_Q(0) (d^2 Jacobian columns): 1.1e-9 per N d^4
  /// + 3.5e-10 per N n d^4; 1.4e-3 per instance. Fitted (linear program: the least mean ratio with model >=
  /// measurement) to 39 runs at ci, session 15 (`/usr/bin/time` user seconds, one thread, the machine shared at
  /// load 8-11; N 1-8, n 2-8, d 2-32, steps 1-20000; e.g. the defaults 0.92 s, modelled 0.95; N = 8, n = 8, d = 32,
  /// 100 steps 2.92 s, 4.9 modelled): the model is 1.0-2.3x the measurement, median 1.15. Until session 14 the
  /// model (3 passes of N (3 n d^2 + 4 n^2 d) multiply-adds against a limit of 8e9 at ci) overestimated the large
  /// shapes ~10x and underestimated small ones, left out lambda_Q(0) (most of the cost at d = 32), and refused
  /// about half of the fuzz's draws.
  double modelled_seconds(const Budget& budget) const {
    const double N_ = static_cast<double>(N.value()), n_ = static_cast<double>(n.value()), d_ = static_cast<double>(d.value());
    const double R = static_cast<double>(runs(budget));
    const double per_step = 7.2e-10 * N_ * n_ * d_ * d_ + (n.value() % 4 != 0 ? 3.6e-9 * N_ * n_ * d_ * d_ : 0.0) +
                            2.7e-8 * N_ * n_ * n_ + 6e-7;
    const double per_instance = 2 * N_ * d_ * d_ * d_ * d_ * (1.1e-9 + 3.5e-10 * n_) + 1.4e-3;
    return 2 * R * static_cast<double>(resolved_steps(budget)) * per_step + R * per_instance;
  }
  /// smoke 0.3 s, ci 4 s (the defaults: 0.95), full 1800 s (30 minutes on one thread)
  static double limit_seconds(const Budget& budget) { return budget.pick(0.3, 4.0, 1800.0); }
  void check(const Budget& budget) const override {
    const double seconds = modelled_seconds(budget), limit = limit_seconds(budget);
    if (seconds > limit) {
      throw ParamError("steps", fmt::format("the {} budget cannot afford {} runs x 2 kernels x {} Armijo steps at N = {}, "
                                            "n = {}, d = {} (~{:.3g} CPU seconds modelled, limit {:.3g}); lower steps, d "
                                            "or N n",
                                            to_string(budget.level), runs(budget), resolved_steps(budget), N.value(), n.value(),
                                            d.value(), seconds, limit));
    }
  }
};

struct Settings {
  bool softmax_better = false;
  bool drop_largest = false;
  double shrink = 0;  ///< each hull end moved inwards by shrink x width
  bool no_separation = false;
  double stall_factor = 0;  ///< > 0: the ceiling min(UB, stall_factor LB) (a mutant's undervalued factor)
  bool level_every_d = false;  ///< the calibrated level claimed for d < Nn too (A-T3's hypothesis dropped)
};

struct Run {
  std::vector<Eigen::VectorXd> u, t;  ///< values u_ib = x_ib'w and targets t_ia, per sample
  double f0_soft = 0, fT_soft = 0, f0_gauss = 0, fT_gauss = 0, rounding_soft = 0;
  std::vector<double> curve_soft, curve_gauss;  ///< f at 0, 1, 2, 4, ... steps
  /// A.3's lambda_Q = lambda_min(J_Q J_Q') at the student's start and its rounding bound, softmax and Gaussian
  double lambda_Q_soft = 0, lambda_Q_gauss = 0, rounding_Q_soft = 0, rounding_Q_gauss = 0;
  /// Every field, for sim::ReplicateExchange (an MPI group splits the runs; issue #16).
  auto exchange_fields() {
    return std::tie(u, t, f0_soft, fT_soft, f0_gauss, fT_gauss, rounding_soft, curve_soft, curve_gauss, lambda_Q_soft,
                    lambda_Q_gauss, rounding_Q_soft, rounding_Q_gauss);
  }
};

struct Measured {
  std::vector<Run> runs;
};

struct Predicted {
  std::vector<double> lb, ub;
  std::vector<double> lb_claim;  ///< the claim's own floor (default Settings), for the experiment's power
  bool softmax_better = false, no_separation = false, level_every_d = false;
};

bool success(double f0, double fT) { return fT <= 1e-6 * f0 || fT <= 1e-10; }

/// The instance the level was calibrated on (spec E-A3: s_K = s_teacher = 0.3, s_student = 0.7, 2000-3000 Armijo
/// steps); see the header for the points outside it where the level does not hold.
bool at_calibration(const Params& p, const Budget& budget) {
  return p.s_K.value() == 0.3 && p.s_teacher.value() == 0.3 && p.s_student.value() == 0.7 && p.resolved_steps(budget) >= 2000;
}

std::vector<double> log_sampled(const std::vector<double>& loss) {
  std::vector<double> out;
  for (std::size_t k = 0; k < loss.size(); k = k == 0 ? 1 : 2 * k) out.push_back(loss[k]);
  out.push_back(loss.back());
  return out;
}

class QOnlySeparation final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  QOnlySeparation() : ClaimShape(claim_info(), mutants()) {
    // level_for_every_d drops A-T3's hypothesis d >= Nn: the claim itself at the defaults (d = Nn = 16); it must FAIL
    // at d = 4 (spec E-A3's reference point below Nn: 5/40 Gaussian successes), where its ctest runs it
    declare_hypothesis_mutant(info().id, "level_for_every_d", {{"N", 4}, {"n", 4}, {"d", 4}});
  }

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const int N = p.N.as_int(), n = p.n.as_int(), d = p.d.as_int();
    Measured m;
    m.runs = sim::run_replicates(replicate_options(context, "instances", p.runs(context.budget)), [&](std::size_t, sim::Rng& rng) {
      const GaussianTeacherInstance instance(rng, N, n, d, p.s_K, p.s_teacher, p.s_student);
      const sim::kernels::Data& data = instance.data;
      Run run;
      run.u = instance.u;
      run.t = instance.t;
      const sim::kernels::Weights student = instance.student();
      {  // A.3's conditions at the student's start (lambda_Q is A-T3's; W^V is not trained here: no lambda_V)
        const std::vector<theory::kernels::Head<double>> heads{
            {instance.WQ, instance.WK, Eigen::MatrixXd::Identity(d, d), instance.w}};
        const theory::kernels::Conditions soft =
            theory::kernels::evaluate_conditions({theory::kernels::Kernel::softmax, false}, data.X, heads, false);
        const theory::kernels::Conditions gauss =
            theory::kernels::evaluate_conditions({theory::kernels::Kernel::gaussian, false}, data.X, heads, false);
        run.lambda_Q_soft = soft.lambda_Q;
        run.rounding_Q_soft = soft.rounding_Q;
        run.lambda_Q_gauss = gauss.lambda_Q;
        run.rounding_Q_gauss = gauss.rounding_Q;
      }
      sim::kernels::GdOptions options;
      options.steps = p.resolved_steps(context.budget);
      const sim::kernels::Trained q_only{true, false, false};
      for (const auto kernel : {sim::kernels::Kernel::softmax, sim::kernels::Kernel::gaussian}) {
        const sim::kernels::ModelSpec spec{kernel, false};
        options.stop_loss = 0;
        const sim::kernels::GdResult result = sim::kernels::gradient_descent(spec, data, student, q_only, options);
        if (kernel == sim::kernels::Kernel::softmax) {
          run.f0_soft = result.loss.front();
          run.fT_soft = *std::min_element(result.loss.begin(), result.loss.end());
          run.curve_soft = log_sampled(result.loss);
          run.rounding_soft = instance.softmax_loss_rounding(spec, result.final.Q[0], run.fT_soft);
        } else {
          run.f0_gauss = result.loss.front();
          run.fT_gauss = *std::min_element(result.loss.begin(), result.loss.end());
          run.curve_gauss = log_sampled(result.loss);
        }
      }
      return run;
    });
    return m;
  }

  Predicted predict(const Params&, const Measured& m, const Settings& s, const RunContext&) const override {
    Predicted t;
    t.softmax_better = s.softmax_better;
    t.no_separation = s.no_separation;
    t.level_every_d = s.level_every_d;
    for (const Run& run : m.runs) {
      double ub = 0;
      for (std::size_t i = 0; i < run.u.size(); ++i) {
        const theory::kernels::Interval hull = theory::kernels::softmax_hull(run.u[i]);
        for (Eigen::Index a = 0; a < run.t[i].size(); ++a) ub += theory::kernels::squared_farthest(run.t[i](a), hull);
      }
      t.ub.push_back(ub / 2);
      double lb = 0;
      for (std::size_t i = 0; i < run.u.size(); ++i) {
        theory::kernels::Interval hull = theory::kernels::softmax_hull(run.u[i], s.drop_largest);
        const double width = hull.upper - hull.lower;
        hull.lower += s.shrink * width;
        hull.upper -= s.shrink * width;
        for (Eigen::Index a = 0; a < run.t[i].size(); ++a) lb += theory::kernels::squared_distance(run.t[i](a), hull);
      }
      t.lb.push_back(lb / 2);
      t.lb_claim.push_back(theory::kernels::softmax_loss_floor(run.u, run.t));
      if (s.stall_factor > 0) t.ub.back() = std::min(t.ub.back(), s.stall_factor * t.lb.back());
    }
    return t;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext& context) const override {
    Verdict verdict;
    const double share = context.false_failure_rate();
    // 1. softmax >= LB, worst run
    std::size_t worst = 0;
    double worst_ratio = -std::numeric_limits<double>::infinity();
    for (std::size_t r = 0; r < m.runs.size(); ++r) {
      if (!(t.lb[r] > 0)) continue;  // LB = 0: nothing to check (f >= 0 always)
      const double tol = m.runs[r].rounding_soft + 4 * gamma(static_cast<double>(p.N.value() * p.n.value())) * t.lb[r] + 1e-300;
      const double ratio = (t.lb[r] - m.runs[r].fT_soft) / tol;
      if (ratio > worst_ratio) {
        worst_ratio = ratio;
        worst = r;
      }
    }
    // the check's power: a floor too high by less than the closest approach of any run cannot show
    double closest = std::numeric_limits<double>::infinity();
    for (std::size_t r = 0; r < m.runs.size(); ++r) {
      if (t.lb_claim[r] > 0) closest = std::min(closest, std::max(0.0, (m.runs[r].fT_soft - t.lb_claim[r]) / t.lb_claim[r]));
    }
    if (!std::isfinite(closest)) closest = 0;
    if (worst_ratio == -std::numeric_limits<double>::infinity()) {
      verdict.notes.push_back("No instance has LB > 0: comparison 1 has nothing to check.");
    }
    const Run& wr = m.runs[worst];
    verdict.comparisons.push_back(checks::compare(
        fmt::format("softmax f_T >= LB (convex-hull floor), run {} of {}: the run closest to (or below) its floor", worst,
                    m.runs.size()),
        {t.lb[worst], 4 * gamma(static_cast<double>(p.N.value() * p.n.value())) * t.lb[worst],
         "rounding of the sum of N n squared distances, 4 gamma_{Nn} LB"},
        measured_exactly(wr.fT_soft, wr.rounding_soft,
                         "the smallest loss of the monotone Armijo run; rounding |R| e + e^2/2 + gamma f, e = |3 gamma_K "
                         "|S||X||w| + u|R||_F (Higham 3.5, first order)"),
        {closest * t.lb[worst],
         fmt::format("the closest any softmax run came to the claim's floor, (f_T - LB)/LB = {:.3g}, times LB: a floor too "
                     "high by less than that cannot show (the check's power, not a slack of the inequality, which holds for "
                     "every W^Q; measured against the claim's floor for every variant, as in cross_kernel_softmax_floor)",
                     closest)},
        {1e-3 * t.lb[worst], "1e-3 LB"}, Relation::at_least));

    // 2. separation among the certified instances (LB - e_r above the success threshold: p_S = 0 by D4)
    const double gN = gamma(static_cast<double>(p.N.value() * p.n.value()));
    auto certified = [&](std::size_t r) {
      const Run& run = m.runs[r];
      return t.lb[r] - (run.rounding_soft + 4 * gN * t.lb[r]) > std::max(1e-6 * run.f0_soft, 1e-10);
    };
    std::size_t trials = 0, gauss_wins = 0, soft_wins = 0, all_gauss = 0;
    for (std::size_t r = 0; r < m.runs.size(); ++r) {
      const Run& run = m.runs[r];
      all_gauss += success(run.f0_gauss, run.fT_gauss) ? 1 : 0;
      if (!certified(r)) continue;
      ++trials;
      gauss_wins += success(run.f0_gauss, run.fT_gauss) ? 1 : 0;
      soft_wins += success(run.f0_soft, run.fT_soft) ? 1 : 0;
    }
    const double delta2 = share / 2;
    const bool hypothesis = p.d.value() >= p.N.value() * p.n.value();  // A-T3's d >= Nn
    const bool calibrated = (hypothesis || t.level_every_d) && at_calibration(p, context.budget);
    const std::string d_vs_Nn = fmt::format("d = {} {} Nn = {}{}", p.d.value(), hypothesis ? ">=" : "<",
                                            p.N.value() * p.n.value(),
                                            hypothesis ? "" : " (A-T3's hypothesis d >= Nn dropped: the mutant)");
    const double level = p.level.value();
    if (trials > 0) {
      const double tn = static_cast<double>(trials);
      const double pG = static_cast<double>(gauss_wins) / tn, pS = static_cast<double>(soft_wins) / tn;
      // one-sided bounds of p_G at delta2 each (a two-sided interval at confidence 1 - 2 delta2); p_S exact (D4)
      const stats::Interval G = stats::clopper_pearson(gauss_wins, trials, 1 - 2 * delta2);
      const double lcb = G.lower - pS, ucb = G.upper - pS;
      const double n_min = level >= 1 ? 1.0 : level <= 0 ? std::numeric_limits<double>::infinity()
                                                          : std::ceil(portable::log(delta2) / portable::log(1 - level));
      const double theory_value = calibrated ? level : 0.0;
      const Resolution resolution =
          calibrated ? Resolution{level, fmt::format("the calibrated level {:.3g}: no separation (p_G - p_S = 0) must be "
                                                     "told from the claimed one; with x = 0 successes the tolerance is "
                                                     "1 - delta^(1/n), above it when n < n_min = {:g} (then INCONCLUSIVE), "
                                                     "so a PASS implies x >= 1, i.e. LCB > 0", level, n_min)}
                     : Resolution{0.5, "0.5: the check must tell the kernels apart by half the range of a proportion (no "
                                       "calibrated level here)"};
      const std::string counts = fmt::format("among the {} certified instances (LB - e > success threshold; {}/{} Gaussian, "
                                             "{}/{} softmax successes)", trials, gauss_wins, trials, soft_wins, trials);
      const std::string exact = fmt::format(
          "p_softmax = {:.3f} exactly on these instances (D4: a softmax success would put f_T below LB - e, which "
          "comparison 1 checks on every run); Clopper-Pearson bound of p_Gaussian, one-sided at {:.3g}, exact binomial, "
          "valid for the paired runs", pS, delta2);
      Measurement measurement;
      measurement.false_failure_share = delta2;
      Comparison comparison;
      if (t.no_separation) {
        measurement.value = pG - pS;
        measurement.half_width = measurement.value - lcb;
        measurement.half_width_reason = "lower confidence bound of the difference: " + exact;
        comparison = checks::compare("p_Gaussian - p_softmax <= 0 (no separation) " + counts,
                                     {0.0, 0.0, "the null hypothesis: the kernels do not differ"}, measurement,
                                     {0.0, "none"}, resolution, Relation::at_most);
      } else {
        measurement.value = t.softmax_better ? pS - pG : pG - pS;
        measurement.half_width = t.softmax_better ? pG - G.lower : ucb - measurement.value;
        measurement.half_width_reason = "upper confidence bound of the difference: " + exact;
        comparison = checks::compare(
            fmt::format("{} {}", t.softmax_better ? "p_softmax - p_Gaussian" : "p_Gaussian - p_softmax", counts),
            {theory_value, 0.0,
             calibrated ? fmt::format("[reconstructed] calibrated level of spec E-A3 (iii) on the certified instances, "
                                      "{} (A-T3/A-T4 [paper]: the Gaussian kernel succeeds, softmax cannot)", d_vs_Nn)
                        : std::string("no calibrated level here (d < Nn, or outside the calibrated instance): only "
                                      "p_G >= p_S (A-T3/A-T4 [paper], implied by D4)")},
            measurement, {0.0, "none"}, resolution, Relation::at_least);
      }
      verdict.comparisons.push_back(std::move(comparison));
      const stats::Interval newcombe = stats::newcombe_difference(gauss_wins, trials, soft_wins, trials, 0.95);
      const stats::Interval wg = stats::wilson(gauss_wins, trials, 0.95), ws = stats::wilson(soft_wins, trials, 0.95);
      verdict.notes.push_back(fmt::format(
          "Separation (spec E-A3 (ii)): among the {} certified instances, LCB(p_Gaussian - p_softmax) = {:.3f} at "
          "one-sided {:.3g} (exact); {}. Reported (spec A.5: Wilson 95% for proportions, Newcombe for the difference): "
          "p_Gaussian = {:.3f} [{:.3f}, {:.3f}], p_softmax = {:.3f} [{:.3f}, {:.3f}], p_Gaussian - p_softmax = {:.3f}, "
          "Newcombe hybrid score 95% [{:.3f}, {:.3f}] (it treats the arms as independent; the runs are paired on "
          "instances).",
          trials, lcb, delta2,
          calibrated ? fmt::format("decided by comparison 2 (its PASS implies LCB > 0; n_min = {:g} certified instances "
                                   "for level {:.3g}, here {})", n_min, level, trials)
                     : std::string("reported, not decided: no calibrated level gives the test power here (d < Nn, or "
                                   "not the calibrated instance: the spec's E-A3 scales s_K = s_teacher = 0.3, s_student = "
                                   "0.7 and >= 2000 Armijo steps)"),
          pG, wg.lower, wg.upper, pS, ws.lower, ws.upper, pG - pS, newcombe.lower, newcombe.upper));
    }
    // 3. the calibrated Gaussian level, d >= Nn (every d for the mutant level_for_every_d)
    if (calibrated) {
      const std::size_t R = m.runs.size();
      const double pG = static_cast<double>(all_gauss) / static_cast<double>(R);
      const stats::Interval G = stats::clopper_pearson(all_gauss, R, 1 - delta2);
      Measurement measurement;
      measurement.value = pG;
      measurement.half_width = G.upper - pG;
      measurement.false_failure_share = delta2 / 2;
      measurement.half_width_reason = fmt::format("Clopper-Pearson upper bound, one-sided at {:.3g}", delta2 / 2);
      verdict.comparisons.push_back(checks::compare(
          fmt::format("Gaussian success fraction ({}/{} runs), {}", all_gauss, R, d_vs_Nn),
          {p.level.value(), 0.0, "[reconstructed] calibrated level of spec E-A3 (iii)"}, measurement, {0.0, "none"},
          {0.5, "0.5"}, Relation::at_least));
    }

    // 4. the stall factor: f_T <= UB on every run (LB <= f <= UB for every W^Q), the run closest to its ceiling
    {
      std::size_t top = 0;
      double top_ratio = -std::numeric_limits<double>::infinity();
      for (std::size_t r = 0; r < m.runs.size(); ++r) {
        const double tol = m.runs[r].rounding_soft + 4 * gN * t.ub[r] + 1e-300;
        const double ratio = (m.runs[r].fT_soft - t.ub[r]) / tol;
        if (ratio > top_ratio) {
          top_ratio = ratio;
          top = r;
        }
      }
      const Run& tr = m.runs[top];
      verdict.comparisons.push_back(checks::compare(
          fmt::format("softmax f_T <= UB (the hull's farthest-endpoint ceiling; stall factor f_T/LB <= UB/LB), run {} of "
                      "{}: the run closest to (or above) its ceiling", top, m.runs.size()),
          {t.ub[top], 4 * gN * t.ub[top], "rounding of the sum of N n squared distances, 4 gamma_{Nn} UB"},
          measured_exactly(tr.fT_soft, tr.rounding_soft, "the smallest loss of the monotone Armijo run; rounding as in "
                                                         "comparison 1"),
          {0.0, "none: the ceiling holds for every W^Q"},
          {std::max(t.ub[top] - tr.fT_soft, 1e-3 * t.ub[top]),
           "the run's distance to its ceiling, UB - f_T (a ceiling too low by more than that fails), at least 1e-3 UB"},
          Relation::at_most));
    }

    Plot scatter{"final_vs_floor", "Softmax final loss against its convex-hull floor LB", "LB", "f_T (softmax)", true, true, {}};
    Curve line = Curve::line("f_T = LB");
    Curve soft = Curve::points("softmax runs");
    double lo = 1e300, hi = 0;
    for (std::size_t r = 0; r < m.runs.size(); ++r) {
      if (t.lb[r] > 0) {
        soft.add(t.lb[r], m.runs[r].fT_soft);
        lo = std::min(lo, t.lb[r]);
        hi = std::max(hi, t.lb[r]);
      }
    }
    if (hi > 0) line.add(lo, lo).add(hi, hi);
    scatter.add(std::move(line)).add(std::move(soft));
    verdict.plots.push_back(std::move(scatter));
    // one stalled instance: the loss curves of both kernels
    for (std::size_t r = 0; r < m.runs.size(); ++r) {
      if (t.lb[r] > 1e-6 * m.runs[r].f0_soft && success(m.runs[r].f0_gauss, m.runs[r].fT_gauss)) {
        Plot curves{"stalled_instance", fmt::format("Loss curves on instance {} (softmax stalls at LB)", r), "step", "f", true, true, {}};
        Curve g = Curve::points("Gaussian"), s = Curve::points("softmax"), floor = Curve::line("LB");
        std::size_t k = 0;
        for (std::size_t i = 0; i < m.runs[r].curve_gauss.size(); ++i, k = k == 0 ? 1 : 2 * k) g.add(static_cast<double>(std::max<std::size_t>(k, 1)), std::max(m.runs[r].curve_gauss[i], 1e-300));
        k = 0;
        for (std::size_t i = 0; i < m.runs[r].curve_soft.size(); ++i, k = k == 0 ? 1 : 2 * k) s.add(static_cast<double>(std::max<std::size_t>(k, 1)), m.runs[r].curve_soft[i]);
        floor.add(1, t.lb[r]).add(static_cast<double>(p.resolved_steps(context.budget)), t.lb[r]);
        curves.add(std::move(g)).add(std::move(s)).add(std::move(floor));
        verdict.plots.push_back(std::move(curves));
        break;
      }
    }
    std::vector<double> ratios, factors;
    double max_ratio = 0, factor_at_max = 0;
    for (std::size_t r = 0; r < m.runs.size(); ++r) {
      if (!certified(r)) continue;
      ratios.push_back(m.runs[r].fT_soft / t.lb[r]);
      factors.push_back(t.ub[r] / t.lb[r]);
      if (ratios.back() > max_ratio) {
        max_ratio = ratios.back();
        factor_at_max = factors.back();
      }
    }
    std::sort(ratios.begin(), ratios.end());
    std::sort(factors.begin(), factors.end());
    auto spread = [](const std::vector<double>& v) {
      return v.empty() ? std::string("none")
                       : fmt::format("min {:.4g}, median {:.4g}, max {:.4g}", v.front(), v[v.size() / 2], v.back());
    };
    std::size_t resolved_soft = 0, resolved_gauss = 0;
    std::vector<double> lq_soft, lq_gauss;
    for (const Run& run : m.runs) {
      resolved_soft += run.lambda_Q_soft > run.rounding_Q_soft ? 1 : 0;
      resolved_gauss += run.lambda_Q_gauss > run.rounding_Q_gauss ? 1 : 0;
      lq_soft.push_back(run.lambda_Q_soft);
      lq_gauss.push_back(run.lambda_Q_gauss);
    }
    std::sort(lq_soft.begin(), lq_soft.end());
    std::sort(lq_gauss.begin(), lq_gauss.end());
    verdict.notes.push_back(fmt::format(
        "Conditions evaluated [reconstructed] (A.3, theory::kernels::evaluate_conditions = dyncheck.theory.kernels."
        "conditions): A-T3 (Gaussian, W^Q only) is claimed for d >= Nn (here d = {}, Nn = {}: {}) and lambda_Q = "
        "lambda_min(J_Q J_Q') > 0 at the start: lambda_Q(0) above its rounding bound in {} of {} instances for the "
        "Gaussian student ({}) and {} of {} for softmax ({}). The target is realisable by the Gaussian model by "
        "construction (D5), and A-T4's softmax failure is certified by LB > 0 (D4) in {} of {} instances.",
        p.d.value(), p.N.value() * p.n.value(), p.d.value() >= p.N.value() * p.n.value() ? "holds" : "fails", resolved_gauss, m.runs.size(), spread(lq_gauss),
        resolved_soft, m.runs.size(), spread(lq_soft), trials, m.runs.size()));
    verdict.notes.push_back(fmt::format(
        "Stall factor (comparison 4): on the certified instances f_T/LB is {}; the derived factor UB/LB is {}; the run "
        "stalled farthest (f_T/LB = {:.4g}) has UB/LB = {:.4g}.",
        spread(ratios), spread(factors), max_ratio, factor_at_max));
    verdict.notes.push_back(fmt::format(
        "Instance (E-A3): N = {}, n = {}, d = {}, scalar output u = X w (w ~ N(0, I/d)), W^K ~ N(0, {}^2/d) fixed, Gaussian "
        "teacher W^Q* ~ N(0, {}^2/d), student W^Q ~ N(0, {}^2/d), {} Armijo steps; success f_T <= 1e-6 f_0 or <= 1e-10. "
        "Gaussian successes over all {} instances: {}.",
        p.N.value(), p.n.value(), p.d.value(), p.s_K.value(), p.s_teacher.value(), p.s_student.value(), p.resolved_steps(context.budget),
        m.runs.size(), all_gauss));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "kernels.q_only_separation",
        .family = "kernels",
        .paper = "Song, Han, Zhang, Ding, Hong (NeurIPS 2024), Gaussian vs softmax attention",
        .source = "specs/kernels.md A.3 A-T3/A-T4, A.4 D4/D5, A.5 E-A3",
        .tag = Provenance::reconstructed,
        .statement = "With only W^Q trained on a Gaussian-teacher target, the softmax loss never goes below its convex-hull "
                     "floor LB, and among instances with LB > 0 the Gaussian kernel succeeds at least as often as softmax "
                     "(for d >= Nn, at least at the calibrated level).",
        .latex = R"(f_{\mathrm{softmax}}(W^Q)\ \ge\ \tfrac12\sum_{i,a}\mathrm{dist}\bigl(t_{ia},[\min_b u_{ib},\max_b u_{ib}]\bigr)^2,\qquad p_G \ge p_S)",
        .simulation = "R instances from the seed; Armijo GD on W^Q only, softmax and Gaussian students from the same start",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"softmax_better", "the separation with the kernels swapped (p_S - p_G >= 0)", [](Settings& s) { s.softmax_better = true; }},
        {"hull_drops_largest", "the floor from the hull without the token of largest value", [](Settings& s) { s.drop_largest = true; }},
        {"hull_shrunk_1e-3", "each hull shrunk by 1e-3 of its width at both ends (small)", [](Settings& s) { s.shrink = 1e-3; }},
        {"no_separation", "no separation: p_G - p_S <= 0 on the certified instances (the null of LCB > 0)",
         [](Settings& s) { s.no_separation = true; }},
        {"stall_factor_1", "softmax runs end at their floor, f_T <= LB (the spec's 'the softmax final loss sits at LB' "
         "read as exact)", [](Settings& s) { s.stall_factor = 1; }},
        {"level_for_every_d",
         "A-T3's calibrated Gaussian level claimed for every d, its hypothesis d >= Nn dropped (comparisons 2 and 3 "
         "at the level for d < Nn too); the claim itself for d >= Nn, so it is declared to FAIL at d = 4 (N = n = 4)",
         [](Settings& s) { s.level_every_d = true; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_q_only_separation() { return std::make_unique<QOnlySeparation>(); }

}  // namespace dyncheck::checks::kernels
