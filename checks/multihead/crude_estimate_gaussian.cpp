// Claim multihead.crude_estimate_gaussian  [derived]  (specs/multihead.md B.1 "Gaussian inputs also handled",
// B.4 D2, B.5 "Boolean vs Gaussian input switch")
//
// With X having iid N(0, I_d) rows, the crude estimate C2 = (1/k)E[XᵀJF(X)] of Σ_i W_i is exact at Θ = 0
// (E[XᵀJX]/k = E[ssᵀ]/k = I, s = Xᵀ1 ~ N(0, kI)) and its first-order term in Θ_i = εΘ̃_i has a closed form:
//   \f[ \frac{C_2(\epsilon) - \sum_i W_i}{\epsilon} \to \frac1{k^2}\sum_i \mathbb E[ss^\top\tilde\Theta_i A]W_i
//       = \frac{k-1}{k}\sum_i \tilde\Theta_i W_i, \f]
// because s and A = XᵀPX are independent for Gaussian rows (Cochran), E[ssᵀ] = kI and E[A] = (k−1)I.
// (Checked once by numpy Monte Carlo with 4e5 samples at k = 3, d = 2: agreement to 1%.)
// Measured (simulator: Gaussian sampler and layer): R replicates, each the mean over n inputs of
//   g_0(X), r_ε(X) = (g_ε(X) − g_0(X))/ε and r_2ε(X) − r_ε(X), g_ε(X) = (1/k)XᵀJF_ε(X), with common inputs
//   (g_0 is a control variate: its mean is Σ W_i exactly).
// Theory: Σ W_i and ((k−1)/k) Σ_i Θ̃_i W_i.
// Tolerances: statistical: Student-t over the R replicate means (each a mean of n iid inputs), Bonferroni
//   over the 3 d² compared entries (the bias estimate's interval is one of them); bias: the O(ε) remainder
//   by Richardson, 2|mean(r_2ε − r_ε)| plus its own half-width (an estimate: rung 1); numerical: double
//   rounding of the means, negligible against the half-widths (1e-12 of the entry, stated).
//   Resolution: 5% of the largest entry of Σ W_i; 2.5% of the largest entry of the first-order term (half the
//   small mutant's 5%: a passing claim then leaves the mutant's shift outside its tolerance).
// Mutants: k_minus_1_over_k_dropped (Σ Θ̃_i W_i: gross for small k, >= 12% at k <= 8) and
//   coefficient_5_percent (1.05 (k−1)/k: small).

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "claims.hpp"
#include "common.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/replicate_summary.hpp"
#include "dyncheck/checks/stats.hpp"

namespace dyncheck::checks::multihead {
namespace {

struct Params : ParamSet {
  Shape shape{this, 3, closed(2, 8), 3, closed(1, 6), 2, closed(1, 3)};
  Real epsilon{this, "epsilon", 0.003, closed(1e-4, 0.005), "attention scale: Theta_i = epsilon N(0, 1)", Scale::log};
  Real w_scale{this, "w_scale", 1.0, closed(0.1, 10), "W_i entries are w_scale N(0, 1)", Scale::log};
  static std::size_t replicates(const Budget& budget) { return budget.pick<std::size_t>(50, 400, 2000); }
  static long long samples(const Budget& budget) { return budget.pick<long long>(100, 1000, 5000); }
  void check(const Budget& budget) const override {
    const double forwards = 3.0 * static_cast<double>(replicates(budget)) * static_cast<double>(samples(budget));
    const double seconds =
        2.0 * forwards * enumeration_seconds(shape.k, shape.d, shape.m, 1, false) / std::ldexp(1.0, shape.k * shape.d);
    if (seconds > enumeration_allowance(budget)) {
      throw ParamError("k", fmt::format("{:.3g} forward passes take about {:.3g} s, more than the {:g} s this budget "
                                        "allows; lower k, d or m",
                                        forwards, seconds, enumeration_allowance(budget)));
    }
  }
};

struct Settings {
  bool k_factor = true;
  double coefficient = 1.0;
};

struct Measured {
  sim::multihead::Layer directions;
  std::size_t replicates = 0;
  long long samples = 0;
  std::vector<std::vector<stats::Summary>> summaries;  ///< [entry][0]: r_eps (d²), r_2eps − r_eps (d²), g_0 (d²)
};

struct Predicted {
  Eigen::MatrixXd w_sum, lambda;
};

class CrudeEstimateGaussian final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  CrudeEstimateGaussian() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const auto k = p.shape.k.as_int(), d = p.shape.d.as_int();
    Measured m;
    m.directions = draw_teacher(context, d, p.shape.m, 1.0, p.w_scale);
    const double eps = p.epsilon;
    auto scaled = [&](double e) {
      sim::multihead::Layer layer = m.directions;
      for (Eigen::MatrixXd& t : layer.theta) t *= e;
      return layer;
    };
    const sim::multihead::Layer zero = scaled(0), one = scaled(eps), two = scaled(2 * eps);
    m.replicates = Params::replicates(context.budget);
    m.samples = Params::samples(context.budget);
    const long long n = m.samples;
    const std::vector<Eigen::MatrixXd> runs = sim::run_replicates(
        replicate_options(context, "gaussian", m.replicates), [&](std::size_t, sim::Rng& rng) {
          Eigen::MatrixXd X, sum = Eigen::MatrixXd::Zero(3 * d * d, 1);
          auto g = [&](const sim::multihead::Layer& layer) {
            const Eigen::VectorXd sx = X.colwise().sum().transpose();
            const Eigen::VectorXd sf = sim::multihead::forward(layer, X).colwise().sum().transpose();
            const Eigen::MatrixXd out = sx * sf.transpose() / static_cast<double>(k);
            return Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(out.data(), out.size()));
          };
          for (long long j = 0; j < n; ++j) {
            sim::multihead::sample_gaussian(rng, k, d, X);
            const Eigen::VectorXd g0 = g(zero), g1 = g(one), g2 = g(two);
            const Eigen::VectorXd r1 = (g1 - g0) / eps, r2 = (g2 - g0) / (2 * eps);
            sum.col(0).head(d * d) += r1;
            sum.col(0).segment(d * d, d * d) += r2 - r1;
            sum.col(0).tail(d * d) += g0;
          }
          return Eigen::MatrixXd(sum / static_cast<double>(n));
        });
    m.summaries = summarize_replicates(runs, "Gaussian crude estimate");
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& s, const RunContext&) const override {
    const auto k = static_cast<double>(p.shape.k.value());
    const auto d = p.shape.d.as_int();
    Predicted t{Eigen::MatrixXd::Zero(d, d), Eigen::MatrixXd::Zero(d, d)};
    for (std::size_t i = 0; i < m.directions.theta.size(); ++i) {
      t.w_sum += m.directions.w[i];
      t.lambda += m.directions.theta[i] * m.directions.w[i];
    }
    t.lambda *= s.coefficient * (s.k_factor ? (k - 1) / k : 1.0);
    return t;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext& context) const override {
    Verdict verdict;
    const auto d = p.shape.d.as_int();
    const std::size_t block = static_cast<std::size_t>(d * d);
    const double delta = stats::bonferroni_share(context.false_failure_rate(), 3 * block);
    const std::string assumption = fmt::format(
        "each replicate is the mean of n = {} iid Gaussian inputs (polynomial moments), so close to normal; "
        "Bonferroni over 3 d^2 entries",
        m.samples);
    auto half = [&](std::size_t e) { return stats::student_t_half_width(m.summaries[e][0], delta); };
    // (i) the control variate: mean g_0 = sum W_i.
    {
      Eigen::MatrixXd mean(d, d), tol(d, d);
      for (std::size_t e = 0; e < block; ++e) {
        mean.data()[e] = m.summaries[2 * block + e][0].mean;
        tol.data()[e] = half(2 * block + e).value + 1e-12 * std::abs(t.w_sum.data()[e]);
      }
      const Eigen::Index w = worst_entry(t.w_sum, mean, tol);
      verdict.comparisons.push_back(checks::compare(
          fmt::format("Gaussian C2 at Theta = 0 = sum_i W_i (worst of {} entries: ({}, {}))", block, w % d, w / d),
          {t.w_sum.data()[w], 1e-12 * std::abs(t.w_sum.data()[w]), "exact sum, rounding < 1e-12"},
          measured(mean.data()[w], half(2 * block + static_cast<std::size_t>(w)), assumption),
          {0.0, "none: unbiased Monte Carlo"},
          {0.05 * t.w_sum.cwiseAbs().maxCoeff(), "5% of the largest entry of sum W_i"}));
    }
    // (ii) the first-order coefficient.
    {
      Eigen::MatrixXd mean(d, d), bias(d, d), tol(d, d);
      for (std::size_t e = 0; e < block; ++e) {
        mean.data()[e] = m.summaries[e][0].mean;
        bias.data()[e] = 2 * (std::abs(m.summaries[block + e][0].mean) + half(block + e).value);
        tol.data()[e] = half(e).value + bias.data()[e] + 1e-12 * std::abs(t.lambda.data()[e]);
      }
      const Eigen::Index w = worst_entry(t.lambda, mean, tol);
      // The bias term's interval is one of the 3 d² Bonferroni parts: record it on this comparison.
      Measurement measurement = measured(mean.data()[w], half(static_cast<std::size_t>(w)), assumption);
      measurement.false_failure_share += delta;
      verdict.comparisons.push_back(checks::compare(
          fmt::format("(C2(eps) - sum W)/eps at eps = {:.3g} = ((k-1)/k) sum_i Theta~_i W_i (worst of {} entries: ({}, {}))",
                      p.epsilon.value(), block, w % d, w / d),
          {t.lambda.data()[w], 1e-12 * std::abs(t.lambda.data()[w]), "closed form in double, rounding < 1e-12"},
          measurement,
          {bias.data()[w], "O(eps) remainder: Richardson 2 |mean(r_2eps - r_eps)| plus its Student-t half-width "
                           "(common inputs; an estimate, rung 1)"},
          {0.025 * t.lambda.cwiseAbs().maxCoeff(),
           "2.5% of the largest entry of ((k-1)/k) sum Theta~_i W_i: half the small mutant's 5%, so that a passing "
           "claim leaves the mutant's shift outside the tolerance"}));
    }
    verdict.notes.push_back(fmt::format(
        "Instance from the master seed: Theta~_i ~ N(0,1), W_i = {} N(0,1), k = {}, d = {}, m = {}; R = {} replicates of "
        "n = {} Gaussian inputs. The Boolean counterpart is multihead.crude_estimate (enumeration).",
        p.w_scale.value(), p.shape.k.value(), d, p.shape.m.value(), m.replicates, m.samples));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "multihead.crude_estimate_gaussian",
        .family = "multihead",
        .paper = "Chen, Li (STOC 2025), provably learning a multi-head attention layer",
        .source = "specs/multihead.md B.1 (Gaussian inputs), B.4 D2, B.5",
        .tag = Provenance::derived,
        .statement = "With N(0, I) inputs the crude estimate C2 is exact at Theta = 0 and its first-order term is "
                     "((k-1)/k) sum_i Theta~_i W_i (s = X'1 and X'PX are independent).",
        .latex = R"(\frac{C_2(\epsilon) - \sum_i W_i}{\epsilon} \to \frac{k-1}{k}\sum_i\tilde\Theta_i W_i)",
        .simulation = "R replicates of n Gaussian inputs through the simulator's layer at 0, eps and 2 eps (common "
                      "inputs).",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"k_minus_1_over_k_dropped", "first-order term sum_i Theta~_i W_i", [](Settings& s) { s.k_factor = false; }},
        {"coefficient_5_percent", "first-order term 1.05 ((k-1)/k) sum_i Theta~_i W_i",
         [](Settings& s) { s.coefficient = 1.05; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_crude_estimate_gaussian() { return std::make_unique<CrudeEstimateGaussian>(); }

}  // namespace dyncheck::checks::multihead
