// Claim calib.sgd_mean_matches_gradient_flow  [derived]  (calibration family, issue #2 (a))
//
// The mean of minibatch SGD with step η on noisy linear regression tracks gradient flow:
//   \f[ \bigl|\mathbb{E} w_k - w_* - e^{-k\eta H}(w_0 - w_*)\bigr|_i
//       \le \sum_j |Q_{ij}|\,|c_j|\,\tfrac{k(\eta\lambda_j)^2}{2} e^{-(k-1)\eta\lambda_j} = O(\eta). \f]
// Why it is a known answer: the stochastic gradient is unbiased and affine in w, so E w_k follows
// gradient descent (I − ηH)^k exactly; the gap to e^{−tH} is pure discretisation, bounded above.
// Theory: e^{−tH}(w_0 − w_*) through a SelfAdjointEigenSolver in 50 and 100 digits.
// Simulated: R independent SGD runs (x ~ N(0, H), label noise σ, batch B), their mean at 8 times.
// Tolerance per coordinate and time = numerical (precision doubling) + bias (the bound above)
//   + statistical (Student-t half-width over the R replicates at δ_claim / (8 d), Bonferroni).
// Mutants (edits of Settings::rate): rate_doubled (e^{−2tH}, the gradient of Σ(xᵀw − y)² without
//   the ½) and rate_10_percent (e^{−1.1 tH}), which the check must still resolve.
//
// This file is the example of checks/README.md: parameters, settings, measure, predict, compare.

#include <fmt/format.h>

#include <cmath>
#include <type_traits>

#include "claims.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/reference_value.hpp"
#include "dyncheck/checks/replicate_summary.hpp"
#include "dyncheck/checks/stats.hpp"
#include "dyncheck/sim/calib/noisy_linear_regression.hpp"
#include "dyncheck/theory/calib/linear_regression_flow.hpp"
#include "linear_regression_instance.hpp"

namespace dyncheck::checks::calib {
namespace {

constexpr int compared_times = 8;
constexpr int plotted_times = 48;

struct Params : LinearRegressionParams {
  Params() : LinearRegressionParams({4, 0.5, 2, 0.02, 0.5, 8, "SGD step size"}) {}
  Real t_end{this, "t_end", 3, open_closed(0, 50), "physical time of the last compared point"};
  Real resolution{this, "resolution", 0.02, open_closed(0, 1),
                  "detectable discrepancy, as a fraction of |w0 - w*|_inf"};

  static std::size_t replicates(const Budget& budget) { return budget.pick<std::size_t>(24, 512, 8192); }
  /// The last recorded step, in double (check() refuses counts a long long could not hold long before).
  double steps() const { return std::max<double>(plotted_times, std::round(t_end / eta)); }

  void check(const Budget& budget) const override {
    check_instance();
    check_sgd_cost(static_cast<double>(replicates(budget)), steps(), budget, "t_end / eta", "t_end");
  }
};

/// The theory's knobs; the default is the claim's theory.
struct Settings {
  double rate = 1;  ///< the flow is exp(-rate t H)
};

struct Measured {
  LinearRegressionInstance instance;
  std::vector<long long> record_steps;
  std::size_t replicates = 0;
  std::vector<std::vector<stats::Summary>> summaries;  ///< [coordinate][recorded time]
};

struct Predicted {
  std::vector<ReferenceVector> flow;  ///< at every recorded step
  std::vector<Eigen::VectorXd> bias;  ///< discretisation bound at every recorded step
};

class SgdMeanMatchesGradientFlow final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  SgdMeanMatchesGradientFlow() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    Measured m;
    m.instance = make_linear_regression_instance(context, p.d, p.lambda_min, p.lambda_max);
    m.replicates = Params::replicates(context.budget);
    const auto last_step = static_cast<long long>(p.steps());
    for (int k = 0; k <= plotted_times; ++k) m.record_steps.push_back(last_step * k / plotted_times);
    const sim::calib::NoisyLinearRegression problem(m.instance.H, m.instance.w_star, p.sigma);
    const std::vector<Eigen::MatrixXd> runs =
        sim::run_replicates(replicate_options(context, "sgd", m.replicates), [&](std::size_t, sim::Rng& rng) {
          return problem.sgd(m.instance.w0, p.eta, p.batch.size(), m.record_steps, rng);
        });
    m.summaries = summarize_replicates(runs, "SGD iterate");
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& s, const RunContext&) const override {
    const LinearRegressionInstance& instance = m.instance;
    // The eigendecomposition of H, once per precision (not once per recorded step): the flow at
    // every step is evaluated from the same two objects, so the numbers are those of a fresh solve.
    const theory::calib::LinearRegressionFlow<theory::mp50> flow50(
        instance.H.cast<theory::mp50>(), instance.w_star.cast<theory::mp50>(), instance.w0.cast<theory::mp50>());
    const theory::calib::LinearRegressionFlow<theory::mp100> flow100(
        instance.H.cast<theory::mp100>(), instance.w_star.cast<theory::mp100>(), instance.w0.cast<theory::mp100>());
    const auto& bounds = flow50;
    Predicted predicted;
    for (const long long step : m.record_steps) {
      predicted.flow.push_back(reference_vector([&]<class S>() {
        const S t = S(s.rate) * S(p.eta.value()) * S(step);
        if constexpr (std::is_same_v<S, theory::mp50>) {
          return flow50.gradient_flow_mean(t);
        } else {
          static_assert(std::is_same_v<S, theory::mp100>, "reference_vector evaluates in mp50 and mp100");
          return flow100.gradient_flow_mean(t);
        }
      }));
      const theory::Vector<theory::mp50> bias = bounds.discretisation_bias_bound(theory::mp50(p.eta.value()), step);
      Eigen::VectorXd bias_double(bias.size());
      for (Eigen::Index i = 0; i < bias.size(); ++i) bias_double[i] = theory::to_double(bias[i]);
      predicted.bias.push_back(std::move(bias_double));
    }
    return predicted;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext& context) const override {
    Verdict verdict;
    const Eigen::Index d = p.d.value();
    // Bonferroni over the 8 d compared points; the plot's band uses the same half-width.
    const double delta = context.false_failure_rate() / static_cast<double>(compared_times * d);
    const double resolution = p.resolution * (m.instance.w0 - m.instance.w_star).lpNorm<Eigen::Infinity>();
    for (int c = 1; c <= compared_times; ++c) {
      const auto column = static_cast<std::size_t>(plotted_times * c / compared_times);
      const double time = p.eta * static_cast<double>(m.record_steps[column]);
      for (Eigen::Index i = 0; i < d; ++i) {
        const stats::Summary& summary = m.summaries[static_cast<std::size_t>(i)][column];
        verdict.comparisons.push_back(checks::compare(
            fmt::format("E w_{}(t = {:.4g})", i + 1, time),
            {t.flow[column].value[i], t.flow[column].error[i], ReferenceVector::reason},
            measured(summary.mean, stats::student_t_half_width(summary, delta),
                     "the mean of R iid replicates, each a smooth function of many independent Gaussian draws, is "
                     "close to normal"),
            {t.bias[column][i],
             "discretisation bound sum_j |Q_ij||c_j| k (eta lambda_j)^2/2 e^{-(k-1) eta lambda_j}: the SGD mean is "
             "exactly gradient descent, whose gap to the flow this bounds"},
            {resolution, fmt::format("resolution {} x |w0 - w*|_inf: a flow whose rate is off by 10% differs by up "
                                     "to 0.1 t lambda e^(-t lambda) |c| <= 3.7% of it",
                                     p.resolution.value())}));
      }
    }

    // Plot: the first coordinates, theory curve against the simulation mean and its band.
    Plot plot{"trajectory", "SGD mean against gradient flow", "t = k eta", "w_i", false, false, {}};
    for (Eigen::Index i = 0; i < std::min<Eigen::Index>(d, 3); ++i) {
      Curve flow = Curve::line(fmt::format("flow w_{}", i + 1));
      Curve sgd = Curve::band(fmt::format("SGD mean w_{} (R = {})", i + 1, m.replicates));
      for (std::size_t k = 0; k < m.record_steps.size(); ++k) {
        const double time = p.eta * static_cast<double>(m.record_steps[k]);
        const stats::Summary& summary = m.summaries[static_cast<std::size_t>(i)][k];
        flow.add(time, t.flow[k].value[i]);
        sgd.add_mean(time, summary.mean, stats::student_t_half_width(summary, delta).value);
      }
      plot.add(std::move(flow)).add(std::move(sgd));
    }
    verdict.plots.push_back(std::move(plot));
    verdict.notes.push_back(fmt::format(
        "Instance: d = {}, eigenvalues of H geometric in [{}, {}], random rotation and w* ~ N(0, I) from the "
        "master seed; w0 = 0; R = {} replicates of {} steps.",
        d, p.lambda_min.value(), p.lambda_max.value(), m.replicates, m.record_steps.back()));
    verdict.notes.push_back(
        "Band in the plot: the same Student-t half-width as the compared points (Bonferroni over 8 d comparisons).");
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "calib.sgd_mean_matches_gradient_flow",
        .family = "calib",
        .paper = "calibration (known answer)",
        .source = "issue #2 (a); gradient flow of linear regression",
        .tag = Provenance::derived,
        .statement = "The mean of minibatch SGD on noisy linear regression follows the gradient flow "
                     "w* + exp(-tH)(w0 - w*) up to an O(eta) discretisation gap.",
        .latex = R"(\left|\mathbb{E}w_k - w_* - e^{-k\eta H}(w_0-w_*)\right|_i \le \sum_j |Q_{ij}||c_j|\tfrac{k(\eta\lambda_j)^2}{2}e^{-(k-1)\eta\lambda_j})",
        .simulation = "R independent minibatch SGD runs with x ~ N(0, H), y = x'w* + sigma eps; mean over runs at 8 "
                      "times in (0, t_end].",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"rate_doubled", "gradient flow with rate 2H: exp(-2tH), as if the loss had no 1/2",
         [](Settings& s) { s.rate = 2.0; }},
        {"rate_10_percent", "gradient flow with rate 1.1 H", [](Settings& s) { s.rate = 1.1; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_sgd_mean_matches_gradient_flow() { return std::make_unique<SgdMeanMatchesGradientFlow>(); }

}  // namespace dyncheck::checks::calib
