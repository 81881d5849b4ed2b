// Claim multihead.large_margin_frequency  [derived]  (specs/multihead.md B.2 slides 35-36, B.4 D7)
//
// For an attention direction Θ̃ and row a, the frequency of large-margin (nearly 1-sparse) rows
//   \f[ p_\delta(\lambda) = P_X\bigl[\max_b \operatorname{softmax}(\lambda\,x_a^\top\tilde\Theta X^\top)_b \ge 1-\delta\bigr] \f]
// is non-decreasing in λ >= 0 (per input, max_b softmax(λz)_b = 1/Σ_b e^{λ(z_b − z_max)} is), and for
// δ < 1/2 it reaches P[the argmax is unique] at λ* = ln((k − 1)(1 − δ)/δ)/g_min (g_min the smallest gap
// z_max − z_second over inputs with a unique argmax: then every such row has max softmax >= 1 − δ, and a
// tied row has max softmax <= 1/2). Boolean ties keep the limit below 1: all k tokens are equal with
// probability 2^{−d(k−1)}, so P[unique] <= 1 − 2^{−d(k−1)}.
// Measured: p_δ on λ ∈ λ* {0, 1/64, 1/32, ..., 1/2, 1.01, 2}, P[unique] and g_min by exact enumeration
//   (theory/multihead, double).
// Theory: successive values non-decreasing; p_δ(1.01 λ*) = P[unique]; P[unique] <= 1 − 2^{−d(k−1)}.
// Tolerance: numerical = the mass of inputs whose max softmax lies within 1e-12 of 1 − δ (the double
//   comparison may round either way there; the per-input value carries a relative error of a few (k + 2) eps,
//   far below 1e-12), at both compared λ; no bias, no statistical term.
//   Resolution: one input's mass 2^{−kd} (the frequencies are multiples of it).
// Mutants: limit_one_no_ties (the limit taken as 1: gross) and limit_3_percent (1.03 P[unique]: small).

#include <fmt/format.h>

#include <dyncheck/portable/math.hpp>

#include <cmath>
#include <string>

#include "claims.hpp"
#include "common.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/theory/multihead/identities.hpp"

namespace dyncheck::checks::multihead {
namespace {

namespace th = theory::multihead;

const std::vector<double> grid = {0, 1.0 / 64, 1.0 / 32, 1.0 / 16, 1.0 / 8, 0.25, 0.5, 1.01, 2.0};

struct Params : ParamSet {
  Int k{this, "k", 4, closed(2, 6), "tokens per input"};
  Int d{this, "d", 3, closed(1, 4), "token dimension"};
  Real theta_scale{this, "theta_scale", 1.0, closed(0.1, 10), "Theta~ entries are theta_scale N(0, 1)", Scale::log};
  Real delta{this, "delta", 0.1, closed(0.001, 0.45), "margin: max softmax >= 1 - delta", Scale::log};
  void check(const Budget& budget) const override {
    // Three delta values (the plot), each a pass with 9 lambda values (~ one head with 9 k exponentials per input).
    refuse_enumeration(budget, k, d, 1, 6, false);
  }
};

struct Settings {
  bool ties = true;           ///< false: the limit is 1
  double limit_scale = 1.0;   ///< the limit times this
};

struct Measured {
  double lambda_star = 0;
  std::vector<double> lambdas;
  th::LargeMargin main;
  std::vector<double> plot_deltas;
  std::vector<th::LargeMargin> curves;
};

struct Predicted {
  double limit = 0;
};

class LargeMarginFrequency final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  LargeMarginFrequency() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const auto k = p.k.as_int(), d = p.d.as_int();
    const sim::multihead::Layer direction = draw_teacher(context, d, 1, p.theta_scale, 1.0);
    const Eigen::MatrixXd& theta = direction.theta.front();
    Measured m;
    // g_min first (lambda-independent), then the grid.
    const th::LargeMargin probe = th::large_margin_frequency(theta, k, 0, {0.0}, p.delta, context.threads);
    if (!std::isfinite(probe.min_gap) || probe.min_gap <= 0) {
      throw std::runtime_error("no input with a unique argmax: the limit is not defined");
    }
    m.lambda_star = portable::log((k - 1) * (1 - p.delta) / p.delta) / probe.min_gap;
    for (const double f : grid) m.lambdas.push_back(f * m.lambda_star);
    m.main = th::large_margin_frequency(theta, k, 0, m.lambdas, p.delta, context.threads);
    m.plot_deltas = {p.delta / 4, std::min(0.45, 2 * p.delta)};
    for (const double delta : m.plot_deltas) {
      m.curves.push_back(th::large_margin_frequency(theta, k, 0, m.lambdas, delta, context.threads));
    }
    return m;
  }

  Predicted predict(const Params&, const Measured& m, const Settings& s, const RunContext&) const override {
    return {s.limit_scale * (s.ties ? m.main.unique_argmax : 1.0)};
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext&) const override {
    Verdict verdict;
    const auto k = p.k.as_int(), d = p.d.as_int();
    const double one_input = std::ldexp(1.0, -k * d);
    const Resolution resolution{one_input, "one input's mass 2^-kd: the frequencies are multiples of it"};
    // Counts of up to 2^26 indicators divided by 2^kd are exact in double; a thousandth of one input's mass keeps
    // the ratio discrepancy / tolerance finite.
    const double exact_floor = 1e-3 * one_input;
    const std::string exact_reason = "exact in double (integer counts / 2^kd); 1e-3 2^-kd keeps the margin finite";
    const std::string border_reason =
        "mass of inputs whose max softmax lies within 1e-12 of 1 - delta (the double comparison may go either way)";
    // (a) monotone: report the smallest increment.
    std::size_t worst = 1;
    for (std::size_t j = 1; j < m.lambdas.size(); ++j) {
      if (m.main.probability[j] - m.main.probability[j - 1] < m.main.probability[worst] - m.main.probability[worst - 1]) {
        worst = j;
      }
    }
    verdict.comparisons.push_back(checks::compare(
        fmt::format("p_delta(lambda = {:.4g}) >= p_delta(lambda = {:.4g}) (smallest increment of {} steps)",
                    m.lambdas[worst], m.lambdas[worst - 1], m.lambdas.size() - 1),
        {m.main.probability[worst - 1], exact_floor, exact_reason},
        measured_exactly(m.main.probability[worst], m.main.borderline_mass[worst] + m.main.borderline_mass[worst - 1],
                         border_reason),
        {0.0, "none: monotone per input"}, resolution, Relation::at_least));
    // (b) the limit.
    const std::size_t at_star = 7;
    verdict.comparisons.push_back(checks::compare(
        fmt::format("p_delta(1.01 lambda*) = P[unique argmax], lambda* = ln((k-1)(1-delta)/delta)/g_min = {:.4g}",
                    m.lambda_star),
        {t.limit, exact_floor,
         "exact enumeration of the unique-argmax indicator (ties: |z_b - z_max| <= 1e-9 (1 + |z_max|)); " + exact_reason},
        measured_exactly(m.main.probability[at_star], m.main.borderline_mass[at_star], border_reason),
        {0.0, "none: exact at lambda >= lambda*"}, resolution));
    // (c) Boolean ties.
    const double tie_bound = 1 - std::ldexp(1.0, -d * (k - 1));
    verdict.comparisons.push_back(checks::compare(
        "P[unique argmax] <= 1 - 2^(-d(k-1)) (all tokens equal: a tie)", {tie_bound, exact_floor, exact_reason},
        measured_exactly(m.main.unique_argmax), {0.0, "none: exact"}, resolution, Relation::at_most));

    Plot plot{"p_delta", "Large-margin frequency p_delta(lambda) (row a = 1)", "lambda / lambda*", "p_delta", false,
              false, {}};
    auto curve = [&](double delta, const th::LargeMargin& lm) {
      Curve c = Curve::line(fmt::format("delta = {:.3g}", delta));
      for (std::size_t j = 0; j < m.lambdas.size(); ++j) c.add(grid[j], lm.probability[j]);
      return c;
    };
    plot.add(curve(p.delta, m.main));
    for (std::size_t q = 0; q < m.plot_deltas.size(); ++q) plot.add(curve(m.plot_deltas[q], m.curves[q]));
    Curve limit = Curve::line("P[unique argmax]");
    limit.add(grid.front(), m.main.unique_argmax).add(grid.back(), m.main.unique_argmax);
    plot.add(std::move(limit));
    verdict.plots.push_back(std::move(plot));
    verdict.notes.push_back(fmt::format(
        "Theta~ = {} N(0,1) from the master seed, k = {}, d = {}, row a = 1; g_min = {:.4g}; P[unique argmax] = {:.6g}. "
        "The curves for delta/4 and 2 delta are plotted, not compared.",
        p.theta_scale.value(), k, d, portable::log((k - 1) * (1 - p.delta) / p.delta) / m.lambda_star, m.main.unique_argmax));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "multihead.large_margin_frequency",
        .family = "multihead",
        .paper = "Chen, Li (STOC 2025), provably learning a multi-head attention layer",
        .source = "specs/multihead.md B.2 (slides 35-36), B.4 D7",
        .tag = Provenance::derived,
        .statement = "The frequency p_delta(lambda) of attention rows with max softmax >= 1 - delta is non-decreasing "
                     "in lambda and, for delta < 1/2, reaches the probability of a unique argmax, which Boolean ties "
                     "keep below 1.",
        .latex = R"(p_\delta(\lambda)\uparrow,\quad p_\delta(\lambda) = P[\text{unique argmax}] \le 1 - 2^{-d(k-1)}\ \text{for}\ \lambda \ge \lambda^*)",
        .simulation = "Exact enumeration of the cube at nine values of lambda.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"limit_one_no_ties", "the limit taken as 1 (no Boolean ties)", [](Settings& s) { s.ties = false; }},
        {"limit_3_percent", "the limit taken as 1.03 P[unique argmax]", [](Settings& s) { s.limit_scale = 1.03; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_large_margin_frequency() { return std::make_unique<LargeMarginFrequency>(); }

}  // namespace dyncheck::checks::multihead
