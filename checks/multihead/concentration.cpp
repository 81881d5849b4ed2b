// Claim multihead.concentration  [derived]  (specs/multihead.md B.4 D6)
//
// The empirical crude estimate Ĉ_n = (1/n) Σ_j g(X_j), g(X) = (1/k) XᵀJF(X), of C = C2 = E[g] satisfies
// exactly, for iid inputs,
//   \f[ \mathbb E\|\hat C_n - C\|_F^2 = v/n,\qquad v = \mathbb E\|g\|_F^2 - \|C\|_F^2 = \operatorname{tr}\Sigma, \f]
// so n·mean‖Ĉ_n − C‖² estimates v, and the RMS error has log–log slope −1/2 in n; the sample size that
// reaches Frobenius error ε is n ≈ v/ε².
// Measured (simulator, sim/multihead): (a) R_v independent estimates at n_v samples; (b) R_s independent
//   estimates at each n of a ladder (ci: 100, 1000; full: 10², ..., 10⁵ with R_s = 200 as the spec says).
// Theory (enumeration, double): C, v = tr Σ, tr Σ², E‖g − C‖⁴, hence
//   Var(n‖Ĉ_n − C‖²) = (E‖g − C‖⁴ − v² − 2 tr Σ²)/n + 2 tr Σ²  (exact for iid samples).
// Tolerances.
//   (a) statistical: z_{1−δ/2} sqrt(Var(n_v‖Ĉ − C‖²)/R_v), the variance from the enumerated fourth moment
//       (spec D6: "using the 4th moment from enumeration"; the mean of R_v iid values is close to normal);
//       numerical: the enumeration's summation bound on C, propagated: 4 n_v |Ĉ − C| (L + kd) eps k B.
//   (b) statistical: each mean square has relative half-width h_n = z sqrt(Var(n‖Ĉ_n − C‖²)/R_s)/v; the
//       slope of log RMS = ½ log MS between the first and last n moves by at most
//       ½(−log(1 − h_first) − log(1 − h_last))/log(n_last/n_first); bias: Jensen's E log MS − log E MS,
//       ½ Var_rel/R_s at each end, the same way.
//   Bonferroni: the claim's share split over three intervals: (a) and the two ends of (b).
//   Resolution: (a) 2.5% of v (half the small mutant's 5%); (b) 0.25 (a rate n^{-1/4} or n^{-3/4} is detected).
// Mutants: variance_without_mean_term (v = E‖g‖²: gross), variance_5_percent (1.05 v: small),
//   rate_n_minus_1 (slope −1: gross).

#include <fmt/format.h>

#include <dyncheck/portable/math.hpp>

#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "claims.hpp"
#include "common.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/stats.hpp"
#include "dyncheck/theory/multihead/identities.hpp"

namespace dyncheck::checks::multihead {
namespace {

using theory::Matrix;
namespace th = theory::multihead;

constexpr long long variance_samples = 20;

std::vector<long long> ladder(const Budget& budget) {
  return budget.pick<std::vector<long long>>({10, 100}, {100, 1000}, {100, 1000, 10000, 100000});
}
std::size_t variance_replicates(const Budget& budget) { return budget.pick<std::size_t>(1000, 40000, 200000); }
std::size_t slope_replicates(const Budget& budget) { return budget.pick<std::size_t>(100, 400, 200); }

struct Params : ParamSet {
  Shape shape{this, 3, closed(2, 5), 3, closed(1, 4), 2, closed(1, 3)};
  Real theta_scale{this, "theta_scale", 1.0, closed(0, 2), "Theta_i entries are theta_scale N(0, 1)"};
  Real w_scale{this, "w_scale", 1.0, closed(0.1, 10), "W_i entries are w_scale N(0, 1)", Scale::log};
  void check(const Budget& budget) const override {
    refuse_enumeration(budget, shape.k, shape.d, shape.m, 3, false);
    double samples = static_cast<double>(variance_replicates(budget)) * variance_samples;
    for (const long long n : ladder(budget)) samples += static_cast<double>(slope_replicates(budget) * n);
    // Sampling costs about what enumerating the same number of inputs does (same forward pass), x 1.5 for the draws.
    const double seconds =
        1.5 * samples * enumeration_seconds(shape.k, shape.d, shape.m, 1, false) / std::ldexp(1.0, shape.k * shape.d);
    if (seconds > enumeration_allowance(budget)) {
      throw ParamError("k", fmt::format("{:.3g} sampled inputs take about {:.3g} s, more than the {:g} s this budget "
                                        "allows; lower k, d or m",
                                        samples, seconds, enumeration_allowance(budget)));
    }
  }
};

struct Settings {
  bool subtract_mean = true;  ///< v = E‖g‖² − ‖C‖² (false: E‖g‖²)
  double variance_scale = 1;
  double slope = -0.5;
};

struct Measured {
  th::ConcentrationMoments<double> moments;  ///< the claim's theory of the half-widths
  double bound = 0;
  std::vector<Eigen::MatrixXd> variance_estimates;               ///< R_v estimates at n_v
  std::vector<long long> ns;
  std::vector<std::vector<Eigen::MatrixXd>> ladder_estimates;    ///< [n][replicate]
};

struct Predicted {
  Eigen::MatrixXd c;
  double v = 0;
  double slope = -0.5;
};

class Concentration final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  Concentration() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const auto k = p.shape.k.as_int(), d = p.shape.d.as_int();
    Measured m;
    const sim::multihead::Layer teacher = draw_teacher(context, d, p.shape.m, p.theta_scale, p.w_scale);
    for (const Eigen::MatrixXd& w : teacher.w) m.bound += w.cwiseAbs().colwise().sum().maxCoeff();
    const th::Heads<double> heads = to_heads<double>(teacher);
    m.moments = th::concentration_moments<double>(
        k, d, [&](const Matrix<double>& X) { return th::crude_c2_term(heads, X); }, context.threads);
    m.variance_estimates = sim::run_replicates(
        replicate_options(context, "variance", variance_replicates(context.budget)),
        [&](std::size_t, sim::Rng& rng) { return sim::multihead::empirical_crude_estimate(teacher, k, variance_samples, rng); });
    m.ns = ladder(context.budget);
    for (const long long n : m.ns) {
      m.ladder_estimates.push_back(sim::run_replicates(
          replicate_options(context, fmt::format("n={}", n), slope_replicates(context.budget)),
          [&](std::size_t, sim::Rng& rng) { return sim::multihead::empirical_crude_estimate(teacher, k, n, rng); }));
    }
    return m;
  }

  Predicted predict(const Params&, const Measured& m, const Settings& s, const RunContext&) const override {
    const double v = s.subtract_mean ? m.moments.trace_sigma : m.moments.second;
    return {m.moments.mean, s.variance_scale * v, s.slope};
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext& context) const override {
    Verdict verdict;
    const auto k = p.shape.k.as_int(), d = p.shape.d.as_int();
    // Three intervals: (a), and the two ends of (b).
    const double delta = stats::bonferroni_share(context.false_failure_rate(), 3);
    const double z = stats::normal_half_width(stats::Summary{100, 0, 100, 0, 0}, delta).value;  // z_{1-delta/2}
    const double c_error = th::cube_summation_error<double>(k, d) * k * m.bound;
    // (a) n_v mean ||C_n - C||^2 = v.
    const auto Rv = static_cast<double>(m.variance_estimates.size());
    double sum = 0, max_dev = 0;
    for (const Eigen::MatrixXd& estimate : m.variance_estimates) {
      sum += variance_samples * (estimate - t.c).squaredNorm();
      max_dev = std::max(max_dev, (estimate - t.c).cwiseAbs().maxCoeff());
    }
    const double statistic = sum / Rv;
    const double var_stat = m.moments.variance_scaled_error(static_cast<double>(variance_samples));
    stats::HalfWidth hw;
    hw.value = z * std::sqrt(var_stat / Rv);
    hw.method = stats::HalfWidthMethod::normal;
    hw.delta = delta;
    hw.reason = fmt::format(
        "z_(1-delta/2) sqrt(Var/R), Var(n |C_n - C|^2) = {:.4g} from the enumerated fourth moment, R = {}, delta = {:.3g}",
        var_stat, m.variance_estimates.size(), delta);
    Measurement stat_measured = measured(statistic, hw, "the mean of R iid values is close to normal (CLT)");
    stat_measured.numerical_error = 4 * variance_samples * d * d * max_dev * c_error;
    stat_measured.numerical_error_reason = "C's enumeration rounding propagated: 4 n d^2 max|C_n - C| (L + kd) eps k B";
    verdict.comparisons.push_back(checks::compare(
        fmt::format("n mean |C_n - C|^2 at n = {} = E|g|^2 - |C|^2", variance_samples),
        {t.v, 1e-12 * t.v, "enumeration, relative rounding < 1e-12"}, stat_measured,
        {0.0, "none: the identity is exact for iid samples at every n"}, {0.025 * t.v, "2.5% of v (half the small mutant's 5%)"}));

    // (b) slope of the RMS error.
    const double v_true = m.moments.trace_sigma;
    Plot plot{"rms_error", "Empirical crude estimate: RMS error against n", "n", "RMS |C_n - C|_F", true, true, {}};
    Curve theory_line = Curve::line("sqrt(v / n) (slope -1/2)");
    Curve sim_points = Curve::points(fmt::format("simulator, R = {} per n", m.ladder_estimates.front().size()));
    std::vector<double> log_rms, h_rel, jensen;
    for (std::size_t j = 0; j < m.ns.size(); ++j) {
      const auto n = static_cast<double>(m.ns[j]);
      const auto R = static_cast<double>(m.ladder_estimates[j].size());
      double ms = 0;
      for (const Eigen::MatrixXd& estimate : m.ladder_estimates[j]) ms += (estimate - t.c).squaredNorm();
      ms /= R;
      const double var_rel = m.moments.variance_scaled_error(n) / (v_true * v_true);
      const double h = z * std::sqrt(var_rel / R);
      log_rms.push_back(0.5 * portable::log(ms));
      h_rel.push_back(h);
      jensen.push_back(0.5 * var_rel / R);
      const double rms = std::sqrt(ms);
      sim_points.add(n, rms, rms * std::sqrt(std::max(0.0, 1 - h)), rms * std::sqrt(1 + h));
      theory_line.add(n, std::sqrt(v_true / n));
    }
    const std::size_t last = m.ns.size() - 1;
    const double span = portable::log(static_cast<double>(m.ns[last]) / static_cast<double>(m.ns.front()));
    const double slope = (log_rms[last] - log_rms.front()) / span;
    const bool resolvable = h_rel.front() < 1 && h_rel[last] < 1;
    stats::HalfWidth slope_hw;
    slope_hw.value = resolvable ? 0.5 * (-portable::log(1 - h_rel.front()) - portable::log(1 - h_rel[last])) / span
                                : std::numeric_limits<double>::infinity();
    slope_hw.method = stats::HalfWidthMethod::normal;
    slope_hw.delta = 2 * delta;
    slope_hw.reason = fmt::format(
        "each mean square within relative z sqrt(Var_rel/R) ({:.3g} and {:.3g}) of its expectation, Var_rel from the "
        "enumerated fourth moment, delta = {:.3g} split over the two ends; propagated to the slope of log RMS",
        h_rel.front(), h_rel[last], delta);
    verdict.comparisons.push_back(checks::compare(
        fmt::format("log-log slope of the RMS error over n in [{}, {}]", m.ns.front(), m.ns[last]),
        {t.slope, 0.0, "exact exponent"}, measured(slope, slope_hw, "the mean of R iid squared errors is close to normal"),
        {0.5 * (jensen.front() + jensen[last]) / span,
         "Jensen: E log MS - log E MS ~ -Var_rel/(2R) at each end, propagated to the slope"},
        {0.25, "a rate n^(-1/4) or n^(-3/4) is detected"}));
    plot.add(std::move(theory_line)).add(std::move(sim_points));
    verdict.plots.push_back(std::move(plot));
    verdict.notes.push_back(fmt::format(
        "Instance from the master seed: k = {}, d = {}, m = {}, Theta_i = {} N(0,1), W_i = {} N(0,1). v = {:.4g}, "
        "|C|^2 = {:.4g}; the sample size for Frobenius error eps is n ~ v/eps^2 (e.g. {:.3g} for eps = 0.01 |C|).",
        k, d, p.shape.m.value(), p.theta_scale.value(), p.w_scale.value(), v_true, m.moments.mean.squaredNorm(),
        v_true / (1e-4 * m.moments.mean.squaredNorm())));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "multihead.concentration",
        .family = "multihead",
        .paper = "Chen, Li (STOC 2025), provably learning a multi-head attention layer",
        .source = "specs/multihead.md B.4 D6",
        .tag = Provenance::derived,
        .statement = "The empirical crude estimate from n iid Boolean inputs has E|C_n - C|^2 = (E|g|^2 - |C|^2)/n "
                     "exactly, so its RMS error falls as n^(-1/2).",
        .latex = R"(\mathbb E\|\hat C_n - C\|_F^2 = \frac{\mathbb E\|g\|_F^2 - \|C\|_F^2}{n},\quad g(X) = \tfrac1k X^\top J F(X))",
        .simulation = "R independent empirical crude estimates from the simulator's sampler and layer, at n = 20 and "
                      "on a ladder of n.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"variance_without_mean_term", "v = E|g|^2 (the |C|^2 term dropped)",
         [](Settings& s) { s.subtract_mean = false; }},
        {"variance_5_percent", "v times 1.05", [](Settings& s) { s.variance_scale = 1.05; }},
        {"rate_n_minus_1", "RMS error ~ 1/n (slope -1)", [](Settings& s) { s.slope = -1.0; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_concentration() { return std::make_unique<Concentration>(); }

}  // namespace dyncheck::checks::multihead
