// Claim multihead.gd_success_fraction  [derived] invariants; the fraction is an exploratory measurement
//   (specs/multihead.md B.5 E-B3: "Exploratory, not a test of the paper": the paper claims no GD guarantee)
//
// E-B3: a full multi-head student F_s(X) = Σ_i softmax(XΘ_iXᵀ)XW_i (m heads, random start) trained by gradient
// descent on the population loss L = ½E‖F_s(X) − F_t(X)‖²_F, X uniform on {±1}^{k×d} (every one of the 2^{kd}
// inputs, no sampling), against a random teacher F_t with as many heads. REPORTED, NOT CHECKED: the fraction of
// runs reaching L <= 1e-8 within T steps, with its Clopper-Pearson 95% interval, and the steps taken.
// What the claim checks (it can fail) is that this fraction is measured on the right quantity:
//   (a) the gradient the runs descend is the gradient of L: at the start of run 0, every entry of the
//       simulator's backpropagated population gradient equals the central finite difference of the theory's own
//       enumeration of L (theory/multihead layer_loss: another layer, another summation);
//   (b) the loss the runs record (on which "reached 1e-8" is decided) is L: at every checkpoint of every run the
//       simulator's loss equals the theory's enumeration of L at the same parameters;
//   (c) the step rule's invariant: L (the theory's) is non-increasing along every run's checkpoints.
// Step rule (sim/multihead/student.hpp): Armijo backtracking, trial η = 2 η_previous (η_0 = 1), accepted when
// L(p − ηg) <= L(p) − 1e-4 η‖g‖², else halved (at most 80 times; a failed search stops the run and is reported);
// stop at L <= 1e-8 or after T steps. Checkpoints: steps 1, 2, 4, 8, ... and the last.
// Instances (one per run, from the stream "<id>/run", replicate r: teacher Θ_1, W_1, ..., Θ_m, W_m, then the
// student's, column-major): teacher Θ_i = theta_scale N(0,1), W_i = w_scale N(0,1); student entries
// init_scale N(0,1). Defaults k = 3, d = 2, m = 2 (inside the spec's E-B1 ranges k 2..6, d 2..4, m 1..3; 2^6
// inputs, so that thousands of GD steps per run fit the budget); runs R and steps T by budget: smoke 2 x 200,
// ci 16 x 3000, full 64 x 30000 (T lowered, to at least 100, where a larger cube would not fit the budget).
// Tolerances (deterministic: no statistical term; first-order rounding bounds, doubled). Notation: eps = 2^-53,
//   N = 2^{kd}, B = Σ_i max_b Σ_c |W_i(c,b)| (|F| <= B entrywise: softmax rows are probability vectors, |X| = 1),
//   ‖Θ‖_1 = Σ|Θ_ce|. Per entry |F̂ − F| <= e_F = 2 Σ_i ‖W_i‖_col (4(d²+2) eps ‖Θ_i‖_1 + (2k+d+m+4) eps)
//   (logits: d² terms; the shift and exp: relative error of the softmax 2(d²+1) eps ‖Θ‖_1 + (k+4) eps; XW: d terms;
//   SV: k terms; m heads). R = F_s − F_t: δR = e_F(s) + e_F(t) + eps(B_s + B_t). Loss per input: ½‖R‖², so
//   e_L <= δR E|R|_1 + kd δR²/2 + (kd + 2) eps L + summation: the simulator's recursive sum (N − 1) eps L, the
//   theory's blocked-pairwise sum (cube_summation_error) L; E|R|_1 from the theory's enumeration (+ kd δR for the
//   simulator's).
//   (a) theory: D_R = (4D(h) − D(2h))/3, D(h) = (L(p + h e_j) − L(p − h e_j))/2h, h = 1e-4 (parameters are O(1):
//       init_scale <= 2); its rounding (3/2) e_L / h, e_L at the perturbed points from the theory's E|R|_1 and L at p
//       grown by the largest move of F, Δ = 2h max(1, 2 max_i‖W_i‖_col): E|R|_1 + kd Δ, (√L + √(kd/2) Δ)².
//       Bias: the truncation |D(h) − D(2h)|/3 (an estimate of D(h)'s error, rung 1; D_R's own is O(h⁴), smaller). Simulator: per-input gradient entries are
//       bounded by G = k R_max max(1, 2d max_i‖W_i‖_col) (R_max = B_s + B_t; |∂/∂W| <= k R_max, |∂/∂Θ| <=
//       2kd R_max ‖W‖_col), rounding (N + 2(2k + d² + d + m + 6)) eps G + k δR max(1, 2d max‖W‖_col).
//       Resolution 1e-5 of the largest gradient entry (the 3% logit mutant moves the worst entry by 0.087, 3% of the
//       largest, at the ci defaults: measured).
//   (b) numerical: e_L(simulator) + e_L(theory); no bias. Resolution 1e-6 max(L, 1e-8) (the success threshold is
//       decided on L: a loss wrong by a part in 1e6 of L or of the threshold would not move it).
//   (c) at_most 0: L_theory(checkpoint j+1) − L_theory(checkpoint j) <= e_L(j) + e_L(j+1), reported for the pair
//       closest to an increase. Resolution 1e-6 max(L(j), 1e-8).
// Measured (defaults, master seed 20261122, session 11): ci 3/16 runs reach 1e-8 within T = 3000 (Clopper-Pearson
//   95% [0.040, 0.456]); full 36/64 within T = 30000 ([0.433, 0.686]; steps of those that reach it 379 to 28119, median
//   6578; no failed line search; 80 s of CPU).
// Range: d >= 2 (at d = 1 the 1/√d mutant is the theory itself); k·d <= 16 (the tabulated cube); cost refused
//   up front from a measured per-step model (see step_seconds).
// Mutants (theory edits): logits_3_percent (the theory's layer computes softmax(1.03 XΘXᵀ): small),
//   inverse_sqrt_d_scaling (softmax(XΘXᵀ/√d), the issue's example: gross), loss_without_half (‖·‖² instead of
//   ½‖·‖²: gross).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "claims.hpp"
#include "common.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/stats/binomial.hpp"
#include "dyncheck/sim/multihead/student.hpp"
#include "dyncheck/theory/multihead/identities.hpp"

namespace dyncheck::checks::multihead {
namespace {

namespace th = theory::multihead;
using sim::multihead::Layer;

constexpr double target_loss = 1e-8;
constexpr double fd_step = 1e-4;
constexpr double unit = std::numeric_limits<double>::epsilon() / 2;  // 2^-53

struct Params : ParamSet {
  Shape shape{this, 3, closed(2, 5), 2, closed(2, 4), 2, closed(1, 3)};
  Real theta_scale{this, "theta_scale", 1.0, closed(0.1, 2), "teacher Theta_i entries are theta_scale N(0, 1)",
                   Scale::log};
  Real w_scale{this, "w_scale", 1.0, closed(0.1, 3), "teacher W_i entries are w_scale N(0, 1)", Scale::log};
  Real init_scale{this, "init_scale", 0.5, closed(0.05, 2), "student Theta_i, W_i entries start at init_scale N(0, 1)",
                  Scale::log};
  Int runs{this, "runs", 0, closed(0, 1000), "GD runs (teacher and start each); 0: the budget's (smoke 2, ci 16, full 64)"};
  Int steps{this, "steps", 0, closed(0, 200000), "GD steps at most per run; 0: the budget's (smoke 200, ci 3000, full 30000; fewer, >= 100, where the cube is large)"};

  std::size_t resolved_runs(const Budget& budget) const {
    return runs.value() != 0 ? static_cast<std::size_t>(runs.value()) : budget.pick<std::size_t>(2, 16, 64);
  }
  /// The steps T: as given, or the budget's (smoke 200, ci 3000, full 30000), lowered to what 80% of the budget's
  /// allowance affords for larger cubes (at least 100; below that the run is refused).
  long long resolved_steps(const Budget& budget) const {
    if (steps.value() != 0) return steps.value();
    const long long base = budget.pick<long long>(200, 3000, 30000);
    const double affordable =
        std::floor(0.8 * allowance(budget) / (static_cast<double>(resolved_runs(budget)) * step_seconds()));
    return static_cast<long long>(std::max(100.0, std::min(static_cast<double>(base), affordable)));
  }
  static double allowance(const Budget& budget) { return budget.pick(2.0, 15.0, 1800.0); }  // ci: < 1 min loaded
  /// Seconds of one GD step (a population gradient pass and the line search's loss passes): measured per input
  /// (user CPU, one thread, ci build) 1.3 µs at k = 3, d = 2, m = 2; 1.8 µs at (2, 4, 3); 1.1 µs at (4, 3, 1); 3.3 µs at
  /// (5, 2, 3): at most 5.9 ns per operation of enumeration_seconds' count; modelled at 7.5 ns per operation.
  double step_seconds() const { return 7.5 / 4.0 * enumeration_seconds(shape.k, shape.d, shape.m, 1, false); }
  void check(const Budget& budget) const override {
    const long long k = shape.k, d = shape.d, m = shape.m;
    if (k * d > 16) {
      throw ParamError("k", fmt::format("k*d = {} > 16: GD on the enumerated population loss of 2^(k*d) inputs is "
                                        "refused (the tabulated cube alone would hold 2^{} inputs)",
                                        k * d, k * d));
    }
    const double gd = static_cast<double>(resolved_runs(budget)) * static_cast<double>(resolved_steps(budget)) *
                      step_seconds();
    const double fd = 4.0 * static_cast<double>(2 * m * d * d) * enumeration_seconds(k, d, m, 2, false);
    if (gd + fd > allowance(budget)) {
      throw ParamError(runs.value() != 0 || steps.value() != 0 ? "steps" : "k",
                       fmt::format("{} runs x {} GD steps on 2^{} inputs (m = {}) take up to about {:.3g} s, more than "
                                   "the {:g} s this budget allows; lower runs, steps, k, d or m",
                                   resolved_runs(budget), resolved_steps(budget), k * d, m, gd + fd, allowance(budget)));
    }
  }
};

struct Settings {
  double logit_scale = 1.0;     ///< the theory's layer computes softmax(logit_scale X Θ Xᵀ)
  bool inverse_sqrt_d = false;  ///< and divides the logits by √d
  double loss_factor = 0.5;  ///< L = loss_factor E‖R‖²
};

struct Run {
  Layer teacher;
  sim::multihead::GdRun gd;
};

struct Measured {
  int k = 0, d = 0, m = 0;
  long long steps = 0;
  std::vector<Run> runs;
  sim::multihead::LayerGradient start_gradient;  ///< run 0, at its start
};

struct Predicted {
  std::vector<double> fd_gradient, fd_bias;  ///< D_R and |D(h) − D(2h)|/3 per parameter (Θ_1, W_1, Θ_2, ...)
  double fd_rounding = 0;
  std::vector<std::vector<double>> loss, residual_l1;  ///< [run][checkpoint], the theory's enumeration
};

/// Σ_i ‖W_i‖_col (max column sum of |W_i|).
double column_bound(const Layer& layer) {
  double b = 0;
  for (const Eigen::MatrixXd& w : layer.w) b += w.cwiseAbs().colwise().sum().maxCoeff();
  return b;
}

/// e_F of the header, with every ‖W_i‖_col and ‖Θ_i‖_1 grown by `grow` entrywise (d·grow and d²·grow).
double f_error(const Layer& layer, int k, int d, double grow = 0) {
  const auto m = static_cast<double>(layer.theta.size());
  double e = 0;
  for (std::size_t i = 0; i < layer.theta.size(); ++i) {
    const double w_col = layer.w[i].cwiseAbs().colwise().sum().maxCoeff() + d * grow;
    const double theta_1 = layer.theta[i].cwiseAbs().sum() + d * d * grow;
    e += w_col * (4.0 * (d * d + 2) * unit * theta_1 + (2.0 * k + d + m + 4) * unit);
  }
  return 2 * e;
}

double max_w_col(const Layer& layer) {
  double b = 0;
  for (const Eigen::MatrixXd& w : layer.w) b = std::max(b, w.cwiseAbs().colwise().sum().maxCoeff());
  return b;
}

/// The flat parameter vector (Θ_1, W_1, Θ_2, W_2, ..., column-major) and back.
std::vector<double*> parameters(Layer& layer) {
  std::vector<double*> p;
  for (std::size_t i = 0; i < layer.theta.size(); ++i) {
    for (Eigen::Index j = 0; j < layer.theta[i].size(); ++j) p.push_back(layer.theta[i].data() + j);
    for (Eigen::Index j = 0; j < layer.w[i].size(); ++j) p.push_back(layer.w[i].data() + j);
  }
  return p;
}

std::vector<double> flatten(const sim::multihead::LayerGradient& g) {
  std::vector<double> out;
  for (std::size_t i = 0; i < g.theta.size(); ++i) {
    out.insert(out.end(), g.theta[i].data(), g.theta[i].data() + g.theta[i].size());
    out.insert(out.end(), g.w[i].data(), g.w[i].data() + g.w[i].size());
  }
  return out;
}

th::Heads<double> theory_heads(const Layer& layer, double logit_scale) {
  th::Heads<double> heads = to_heads<double>(layer);
  for (auto& t : heads.theta) t *= logit_scale;
  return heads;
}

class GdSuccessFraction final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  GdSuccessFraction() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    Measured m;
    m.k = p.shape.k.as_int();
    m.d = p.shape.d.as_int();
    m.m = p.shape.m.as_int();
    m.steps = p.resolved_steps(context.budget);
    sim::multihead::GdOptions options;
    options.max_steps = m.steps;
    options.target_loss = target_loss;
    for (long long s = 1; s < m.steps; s *= 2) options.checkpoints.push_back(s);
    const std::size_t R = p.resolved_runs(context.budget);
    m.runs = sim::run_replicates(replicate_options(context, "run", R), [&](std::size_t, sim::Rng& rng) {
      auto draw = [&](double theta_scale, double w_scale) {
        Layer layer;
        for (int i = 0; i < m.m; ++i) {
          Eigen::MatrixXd theta(m.d, m.d), w(m.d, m.d);
          for (Eigen::Index j = 0; j < theta.size(); ++j) theta.data()[j] = theta_scale * sim::standard_normal(rng);
          for (Eigen::Index j = 0; j < w.size(); ++j) w.data()[j] = w_scale * sim::standard_normal(rng);
          layer.theta.push_back(theta);
          layer.w.push_back(w);
        }
        return layer;
      };
      Run run;
      run.teacher = draw(p.theta_scale, p.w_scale);
      const Layer start = draw(p.init_scale, p.init_scale);
      const sim::multihead::Population population = sim::multihead::tabulate_population(run.teacher, m.k);
      run.gd = sim::multihead::gradient_descent(start, population, options);
      return run;
    });
    const sim::multihead::Population population = sim::multihead::tabulate_population(m.runs.front().teacher, m.k);
    m.start_gradient = sim::multihead::population_layer_gradient(m.runs.front().gd.checkpoints.front().student, population);
    return m;
  }

  Predicted predict(const Params&, const Measured& m, const Settings& s, const RunContext&) const override {
    Predicted t;
    const double logit_scale = s.logit_scale * (s.inverse_sqrt_d ? 1 / std::sqrt(static_cast<double>(m.d)) : 1.0);
    auto loss = [&](const Layer& teacher, const Layer& student) {
      const auto value =
          th::layer_loss<double>(theory_heads(teacher, logit_scale), theory_heads(student, logit_scale), m.k, 1);
      return std::pair{2 * s.loss_factor * value.loss, value.residual_l1};
    };
    // (a) central differences at the start of run 0.
    const Run& first = m.runs.front();
    Layer point = first.gd.checkpoints.front().student;
    std::vector<double*> params = parameters(point);
    for (double* entry : params) {
      const double original = *entry;
      auto difference = [&](double h) {
        *entry = original + h;
        const double up = loss(first.teacher, point).first;
        *entry = original - h;
        const double down = loss(first.teacher, point).first;
        *entry = original;
        return (up - down) / (2 * h);
      };
      const double d1 = difference(fd_step), d2 = difference(2 * fd_step);
      t.fd_gradient.push_back((4 * d1 - d2) / 3);
      t.fd_bias.push_back(std::abs(d1 - d2) / 3);
    }
    {
      // Rounding of L at the perturbed points p ± h e_j, |h| <= 2 fd_step: each entry of F moves by at most
      // Δ = 2 fd_step max(1, 2 max_i |W_i|_col) (|∂F/∂W_i(c,e)| <= 1, |∂F/∂Θ_i(c,e)| <= 2|W_i|_col), so
      // E|R|_1 <= E|R|_1(p) + kd Δ and L <= (√L(p) + √(kd/2) Δ)².
      const Layer& student = first.gd.checkpoints.front().student;
      const auto [L0, l1_0] = loss(first.teacher, student);
      const double kd = static_cast<double>(m.k * m.d);
      const double delta = 2 * fd_step * std::max(1.0, 2 * (max_w_col(student) + m.d * 2 * fd_step));
      const double grown_l1 = l1_0 + kd * delta;
      const double grown_L = std::pow(std::sqrt(L0) + std::sqrt(kd / 2) * delta, 2);
      const double bs = column_bound(student) + static_cast<double>(m.m * m.d) * 2 * fd_step;
      const double bt = column_bound(first.teacher);
      const double dR = f_error(student, m.k, m.d, 2 * fd_step) + f_error(first.teacher, m.k, m.d) + unit * (bs + bt);
      const double e_L = dR * grown_l1 + kd * dR * dR / 2 + (kd + 2) * unit * grown_L +
                         th::cube_summation_error<double>(m.k, m.d) * grown_L;
      t.fd_rounding = 1.5 * e_L / fd_step;
    }
    // (b, c) the theory's loss at every checkpoint.
    t.loss.resize(m.runs.size());
    t.residual_l1.resize(m.runs.size());
    for (std::size_t r = 0; r < m.runs.size(); ++r) {
      for (const auto& c : m.runs[r].gd.checkpoints) {
        const auto [L, l1] = loss(m.runs[r].teacher, c.student);
        t.loss[r].push_back(L);
        t.residual_l1[r].push_back(l1);
      }
    }
    return t;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext&) const override {
    Verdict verdict;
    const double kd = static_cast<double>(m.k * m.d);
    const double N = std::ldexp(1.0, m.k * m.d);
    // Rounding of L at a checkpoint, for the theory (simulator = false) or the simulator.
    auto loss_error = [&](const Layer& teacher, const Layer& student, double L, double l1, bool simulator) {
      const double dR = f_error(student, m.k, m.d) + f_error(teacher, m.k, m.d) +
                        unit * (column_bound(student) + column_bound(teacher));
      const double residual = simulator ? l1 + kd * dR : l1;
      const double sum = simulator ? (N - 1) * unit : th::cube_summation_error<double>(m.k, m.d);
      return dR * residual + kd * dR * dR / 2 + (kd + 2) * unit * L + sum * L;
    };

    // (a) the gradient at the start of run 0.
    {
      const Run& first = m.runs.front();
      const Layer& student = first.gd.checkpoints.front().student;
      const std::vector<double> measured = flatten(m.start_gradient);
      const double bs = column_bound(student), bt = column_bound(first.teacher);
      const double w_factor = std::max(1.0, 2 * m.d * max_w_col(student));
      const double G = m.k * (bs + bt) * w_factor;
      const double dR = f_error(student, m.k, m.d) + f_error(first.teacher, m.k, m.d) + unit * (bs + bt);
      const double e_g =
          (N + 2.0 * (2 * m.k + m.d * m.d + m.d + m.m + 6)) * unit * G + m.k * dR * w_factor;
      double largest = 0;
      for (const double v : t.fd_gradient) largest = std::max(largest, std::abs(v));
      std::size_t worst = 0;
      double worst_ratio = -1;
      for (std::size_t j = 0; j < measured.size(); ++j) {
        const double ratio = std::abs(measured[j] - t.fd_gradient[j]) / (t.fd_rounding + e_g + t.fd_bias[j]);
        if (!(ratio <= worst_ratio)) {
          worst_ratio = ratio;
          worst = j;
          if (std::isnan(ratio)) break;
        }
      }
      const std::size_t per_head = 2 * static_cast<std::size_t>(m.d * m.d);
      const std::size_t head = worst / per_head, within = worst % per_head;
      const std::size_t dd = static_cast<std::size_t>(m.d * m.d);
      const std::string which = fmt::format("{}_{}({}, {})", within < dd ? "Theta" : "W", head + 1,
                                            (within % dd) % static_cast<std::size_t>(m.d),
                                            (within % dd) / static_cast<std::size_t>(m.d));
      verdict.comparisons.push_back(checks::compare(
          fmt::format("run 0 at its start: backpropagated population gradient = finite differences of the theory's L "
                      "(worst of {} entries: dL/d{})",
                      measured.size(), which),
          {t.fd_gradient[worst], t.fd_rounding,
           fmt::format("Richardson (4D(h) - D(2h))/3, h = {:g}: rounding (3/2) e_L / h with the hard bounds at the "
                       "perturbed points",
                       fd_step)},
          measured_exactly(measured[worst], e_g,
                           "simulator rounding: (N + 2(2k + d^2 + d + m + 6)) eps G + k dR max(1, 2d max|W|_col)"),
          {t.fd_bias[worst], "central-difference truncation |D(h) - D(2h)|/3 (estimate of D(h)'s error; rung 1)"},
          {1e-5 * largest, "1e-5 of the largest gradient entry (the 3% logit mutant moves it by ~3e-2 of it)"}));
    }

    // (b) the recorded loss = the theory's L, at every checkpoint; (c) L non-increasing along each run.
    {
      Comparison worst_b, worst_c;
      double ratio_b = -1, ratio_c = -std::numeric_limits<double>::infinity();
      std::size_t checkpoints = 0, pairs = 0;
      for (std::size_t r = 0; r < m.runs.size(); ++r) {
        const Run& run = m.runs[r];
        double previous_error = 0;
        for (std::size_t c = 0; c < run.gd.checkpoints.size(); ++c) {
          const auto& point = run.gd.checkpoints[c];
          const double L = t.loss[r][c], l1 = t.residual_l1[r][c];
          const double e_th = loss_error(run.teacher, point.student, L, l1, false);
          const double e_sim = loss_error(run.teacher, point.student, L, l1, true);
          ++checkpoints;
          Comparison b = checks::compare(
              fmt::format("the run's recorded loss = the theory's L (worst of {{}} checkpoints: run {}, step {})", r,
                          point.step),
              {L, e_th, "theory rounding e_L (blocked-pairwise enumeration)"},
              measured_exactly(point.loss, e_sim, "simulator rounding e_L (recursive sum in index order)"),
              {0.0, "none: the same population loss"},
              {1e-6 * std::max(L, target_loss),
               "1e-6 max(L, 1e-8): the success threshold 1e-8 is decided on it"});
          if (!(b.margin() <= ratio_b)) {
            ratio_b = b.margin();
            worst_b = b;
          }
          if (c > 0) {
            ++pairs;
            const double previous = t.loss[r][c - 1];
            Comparison cc = checks::compare(
                fmt::format("theory's L non-increasing along the run (worst of {{}} checkpoint pairs: run {}, steps {} "
                            "to {}; measured L(later) - L(earlier))",
                            r, run.gd.checkpoints[c - 1].step, point.step),
                {0.0, previous_error + e_th, "the two losses' rounding e_L"}, measured_exactly(L - previous),
                {0.0, "none: the Armijo rule accepts only decreasing steps"},
                {1e-6 * std::max(previous, target_loss), "1e-6 max(L(earlier), 1e-8)"}, Relation::at_most);
            // The pair closest to an increase: the largest signed (L(later) − L(earlier)) / tolerance.
            const double signed_ratio = (L - previous) / cc.tolerance.total();
            if (!(signed_ratio <= ratio_c)) {
              ratio_c = signed_ratio;
              worst_c = cc;
            }
          }
          previous_error = e_th;
        }
      }
      worst_b.quantity = fmt::format(fmt::runtime(worst_b.quantity), checkpoints);
      verdict.comparisons.push_back(worst_b);
      if (pairs > 0) {
        worst_c.quantity = fmt::format(fmt::runtime(worst_c.quantity), pairs);
        verdict.comparisons.push_back(worst_c);
      }
    }

    // Reported, not checked: the success fraction.
    std::size_t reached = 0, failed_searches = 0;
    std::vector<long long> steps_to_reach;
    std::vector<double> final_losses;
    for (const Run& run : m.runs) {
      if (run.gd.reached) {
        ++reached;
        steps_to_reach.push_back(run.gd.steps);
      }
      failed_searches += run.gd.search_failed ? 1 : 0;
      final_losses.push_back(run.gd.checkpoints.back().loss);
    }
    std::sort(steps_to_reach.begin(), steps_to_reach.end());
    std::sort(final_losses.begin(), final_losses.end());
    const stats::Interval ci = stats::clopper_pearson(reached, m.runs.size(), 0.95);
    verdict.notes.push_back(fmt::format(
        "Reported, not checked (E-B3, exploratory: the paper claims no GD guarantee): {}/{} runs reach L <= {:g} within "
        "T = {} steps, fraction {:.3f}, Clopper-Pearson 95% interval [{:.3f}, {:.3f}]. Steps of the runs that reach it: "
        "{}. Final L of all runs: min {:.3g}, median {:.3g}, max {:.3g}. Line searches that failed (stopping a run): {}.",
        reached, m.runs.size(), target_loss, m.steps, static_cast<double>(reached) / static_cast<double>(m.runs.size()),
        ci.lower, ci.upper,
        steps_to_reach.empty()
            ? std::string("none")
            : fmt::format("min {}, median {}, max {}", steps_to_reach.front(), steps_to_reach[steps_to_reach.size() / 2],
                          steps_to_reach.back()),
        final_losses.front(), final_losses[final_losses.size() / 2], final_losses.back(), failed_searches));
    verdict.notes.push_back(fmt::format(
        "Instances: k = {}, d = {}, m = {} (student and teacher), teacher Theta_i = {} N(0,1), W_i = {} N(0,1), student "
        "start {} N(0,1), a new teacher and start per run; loss by enumeration of all 2^{} = {} inputs; Armijo GD "
        "(c = 1e-4, step doubled before each search, halved on rejection). The fraction depends on T: it is a lower "
        "bound for 'GD ever reaches 1e-8'.",
        m.k, m.d, m.m, p.theta_scale.value(), p.w_scale.value(), p.init_scale.value(), m.k * m.d,
        static_cast<long long>(N)));

    Plot curves{"loss_curves", "Population loss along GD (checkpoints), per run", "step + 1", "L", true, true, {}};
    const std::size_t shown = std::min<std::size_t>(m.runs.size(), 16);
    for (std::size_t r = 0; r < shown; ++r) {
      Curve curve = Curve::line(fmt::format("run {}", r));
      for (const auto& c : m.runs[r].gd.checkpoints) curve.add(static_cast<double>(c.step + 1), c.loss);
      curves.add(std::move(curve));
    }
    Curve threshold = Curve::line("L = 1e-8");
    threshold.add(1, target_loss).add(static_cast<double>(m.steps + 1), target_loss);
    curves.add(std::move(threshold));
    verdict.plots.push_back(std::move(curves));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "multihead.gd_success_fraction",
        .family = "multihead",
        .paper = "Chen, Li (STOC 2025), provably learning a multi-head attention layer",
        .source = "specs/multihead.md B.5 E-B3 (exploratory)",
        .tag = Provenance::derived,
        .statement = "Exploratory E-B3: the fraction of multi-head students (random start) that GD on the enumerated "
                     "population loss brings to L <= 1e-8 is reported with its Clopper-Pearson interval; checked: the "
                     "runs descend the true gradient of L, record L itself, and never increase it.",
        .latex = R"(\nabla_{\rm backprop} L = \nabla_{\rm FD} L_{\rm theory},\quad L_{\rm run} = L_{\rm theory},\quad L(p_{t'}) \le L(p_t)\ (t' > t))",
        .simulation = "R runs (teacher and start from the seed), Armijo GD on the loss over all 2^(kd) inputs, up to T "
                      "steps or L <= 1e-8; checkpoints at steps 1, 2, 4, ...",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"logits_3_percent", "the theory's softmax(1.03 X Theta X')", [](Settings& s) { s.logit_scale = 1.03; }},
        {"inverse_sqrt_d_scaling", "the theory's softmax(X Theta X' / sqrt d)", [](Settings& s) { s.inverse_sqrt_d = true; }},
        {"loss_without_half", "the theory's L = E|F_s - F_t|^2 (no 1/2)", [](Settings& s) { s.loss_factor = 1.0; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_gd_success_fraction() { return std::make_unique<GdSuccessFraction>(); }

}  // namespace dyncheck::checks::multihead
