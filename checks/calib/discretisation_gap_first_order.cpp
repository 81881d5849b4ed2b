// Claim calib.discretisation_gap_first_order  [derived]  (calibration family, issue #2 (b))
//
// At fixed physical time t = kη the gap between the SGD mean and gradient flow is first order in
// η, with the coefficient of the expansion k log(1 − ηλ) = −tλ − tλ²η/2 + O(η²):
//   \f[ \frac{\mathbb{E} w_k - w(t)}{\eta} = c_1(t) + O(\eta),\qquad
//       c_1(t) = -\tfrac{t}{2} H^2 e^{-tH}(w_0 - w_*), \f]
// so the gap halves when η halves. Checked at η_0, η_0/2, η_0/4 with k = t/η steps.
// Theory: c_1(t) and the flow w(t) in 50 and 100 digits.
// Simulated: R independent SGD runs per step size; the measured quantity is (mean − w(t))/η.
// Tolerance = numerical (precision doubling of c_1 and of w(t)/η) + bias (the O(η) remainder,
//   bounded per eigen-direction by e^{−kx}/η [k²x⁴/(8(1−x)²) + kx³/(3(1−x))], x = ηλ)
//   + statistical (Student-t half-width of the mean, divided by η; Bonferroni over the 3 step sizes).
// Compared along e = c_1/|c_1|, where every mutant shows: one number per step size.
// Mutants (edits of Settings): second_order_gap (a gap ∝ η², which quarters when η halves),
//   missing_half (c_1 without the ½ of the expansion) and coefficient_30_percent_low (0.7 c_1).
// Resolution: at ci (R = 4096) the tolerance at η_0 is about 19% of |c_1| (statistical 10%, the
//   O(η) remainder bound 9%), so a coefficient off by less than ~20-25% cannot FAIL; the smallest
//   mutant is 30%. More replicates shrink only the statistical part: the remainder bound at η_0 is
//   the floor, and a 5% error would need a smaller η_0 and ~50x the replicates.
// Parameters: the linear-regression set shared with calib.sgd_mean_matches_gradient_flow
//   (linear_regression_instance.hpp), with this claim's defaults, plus t and resolution.

#include <fmt/format.h>

#include <cmath>

#include "claims.hpp"
#include "dyncheck/portable/math.hpp"
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

constexpr int step_sizes = 3;  // η_0, η_0/2, η_0/4

struct Params : LinearRegressionParams {
  Params() : LinearRegressionParams({2, 0.5, 1, 0.1, 0.1, 64, "largest step size eta_0"}) {}
  Real t{this, "t", 2, open_closed(0, 20), "physical time (rounded to a whole number of eta_0 steps, at least one)",
         Scale::log};
  Real resolution{this, "resolution", 0.5, open_closed(0, 1), "detectable discrepancy, as a fraction of |c_1|",
                  Scale::log};

  static std::size_t replicates(const Budget& budget) { return budget.pick<std::size_t>(64, 4096, 32768); }
  /// Steps of eta_0 to time t, in double (check() refuses counts a long long could not hold long before).
  double base_steps() const { return std::max(1.0, std::round(t / eta)); }

  void check(const Budget& budget) const override {
    check_instance();
    // η_0, η_0/2, η_0/4 run k, 2k and 4k steps: 7k in all.
    check_sgd_cost(static_cast<double>(replicates(budget)), 7 * base_steps(), budget, "7 t / eta", "t");
  }
};

/// The theory's knobs; the default is the claim's theory.
struct Settings {
  double coefficient = 1;  ///< the predicted gap / eta is coefficient x |c_1| ...
  double gap_order = 1;    ///< ... x (eta / eta_0)^(gap_order - 1)
};

struct Measured {
  LinearRegressionInstance instance;
  long long base_steps = 0;
  double t = 0;  ///< exactly k eta_0
  std::size_t replicates = 0;
  ReferenceVector coefficient;  ///< c_1(t) of the claim's theory: it sets the projection direction
  Eigen::VectorXd direction;    ///< e = c_1 / |c_1|
  std::vector<stats::Summary> projected;  ///< e'w_k over the replicates, per step size
};

struct Predicted {
  ReferenceVector flow;                 ///< w(t)
  std::vector<double> gap_over_eta;     ///< along e, per step size
  std::vector<double> remainder;        ///< the O(eta) remainder bound along e, per step size
  double coefficient_error = 0;
};

double step_size(const Params& p, int m) { return p.eta / static_cast<double>(1 << m); }

class DiscretisationGapFirstOrder final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  DiscretisationGapFirstOrder() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    Measured m;
    m.instance = make_linear_regression_instance(context, p.d, p.lambda_min, p.lambda_max);
    m.base_steps = static_cast<long long>(p.base_steps());
    m.t = p.eta * static_cast<double>(m.base_steps);
    m.replicates = Params::replicates(context.budget);
    const LinearRegressionInstance& instance = m.instance;
    m.coefficient = reference_vector([&]<class S>() {
      return theory::calib::LinearRegressionFlow<S>(instance.H.cast<S>(), instance.w_star.cast<S>(),
                                                    instance.w0.cast<S>())
          .first_order_gap_coefficient(S(m.t));
    });
    // Compared along the unit vector e = c_1 / |c_1|: one number per step size, on which every
    // mutant is visible (on coordinates where c_1 is small no theory could be told apart).
    const double c1_norm = m.coefficient.value.norm();
    if (!(c1_norm > 0)) {
      throw std::runtime_error(fmt::format("the first-order coefficient c_1(t = {:g}) rounds to 0 in double", m.t));
    }
    m.direction = m.coefficient.value / c1_norm;
    const sim::calib::NoisyLinearRegression problem(instance.H, instance.w_star, p.sigma);
    for (int k = 0; k < step_sizes; ++k) {
      const double eta = step_size(p, k);
      const long long steps = m.base_steps << k;
      const std::vector<Eigen::MatrixXd> runs = sim::run_replicates(
          replicate_options(context, fmt::format("sgd/eta0_over_{}", 1 << k), m.replicates),
          [&](std::size_t, sim::Rng& rng) -> Eigen::MatrixXd {
            return m.direction.transpose() * problem.sgd(instance.w0, eta, p.batch.size(), {steps}, rng);
          });
      m.projected.push_back(summarize_replicates(runs, "projected SGD iterate")[0][0]);
    }
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& s, const RunContext&) const override {
    const LinearRegressionInstance& instance = m.instance;
    Predicted predicted;
    predicted.flow = reference_vector([&]<class S>() {
      return theory::calib::LinearRegressionFlow<S>(instance.H.cast<S>(), instance.w_star.cast<S>(),
                                                    instance.w0.cast<S>())
          .gradient_flow_mean(S(m.t));
    });
    const theory::calib::LinearRegressionFlow<theory::mp50> bounds(
        instance.H.cast<theory::mp50>(), instance.w_star.cast<theory::mp50>(), instance.w0.cast<theory::mp50>());
    const double c1_norm = m.coefficient.value.norm();
    predicted.coefficient_error = s.coefficient * m.coefficient.error.norm();
    for (int k = 0; k < step_sizes; ++k) {
      const double eta = step_size(p, k);
      predicted.gap_over_eta.push_back(s.coefficient * c1_norm * portable::pow(eta / p.eta, s.gap_order - 1));
      const theory::Vector<theory::mp50> remainder =
          bounds.first_order_remainder_bound(theory::mp50(eta), m.base_steps << k);
      double projected = 0;
      for (Eigen::Index i = 0; i < remainder.size(); ++i) {
        projected += std::abs(m.direction[i]) * theory::to_double(remainder[i]);
      }
      predicted.remainder.push_back(projected);
    }
    return predicted;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext& context) const override {
    Verdict verdict;
    const double delta = context.false_failure_rate() / step_sizes;  // Bonferroni over the step sizes
    const double c1_norm = m.coefficient.value.norm();
    const double resolution = p.resolution * c1_norm;
    double projected_flow_error = 0;
    for (Eigen::Index i = 0; i < m.direction.size(); ++i) projected_flow_error += std::abs(m.direction[i]) * t.flow.error[i];
    Plot plot{"gap_over_eta", "Discretisation gap / eta along c_1, against |c_1|", "eta", "e'(E w_k - w(t)) / eta",
              false, false, {}};
    Curve theory_curve = Curve::line("first-order coefficient |c_1|");
    Curve measured_curve = Curve::points(fmt::format("SGD mean (R = {} per eta)", m.replicates));
    for (int k = 0; k < step_sizes; ++k) {
      const double eta = step_size(p, k);
      const stats::Summary& summary = m.projected[static_cast<std::size_t>(k)];
      stats::HalfWidth half_width = stats::student_t_half_width(summary, delta);
      half_width.value /= eta;
      half_width.reason += ", divided by eta";
      Measurement gap = measured((summary.mean - m.direction.dot(t.flow.value)) / eta, half_width,
                                 "the mean of R iid replicates is close to normal");
      gap.numerical_error = projected_flow_error / eta;
      gap.numerical_error_reason = "the flow value's error / eta";
      const double predicted = t.gap_over_eta[static_cast<std::size_t>(k)];
      verdict.comparisons.push_back(checks::compare(
          fmt::format("e'(E w_k - w(t)) / eta at eta = {:g}", eta),
          {predicted, t.coefficient_error, ReferenceVector::reason}, gap,
          {t.remainder[static_cast<std::size_t>(k)],
           "O(eta) remainder of the first-order expansion, bounded per eigen-direction by "
           "e^{-kx}/eta [k^2 x^4/(8(1-x)^2) + k x^3/(3(1-x))], x = eta lambda, projected with |e_i|"},
          {resolution, fmt::format("resolution {} x |c_1|: the mutants differ from |c_1| by |c_1| (missing 1/2), "
                                   "by 3/4 |c_1| at eta_0/4 (gap of order eta^2) and by 30% (coefficient_30_percent_low)",
                                   p.resolution.value())}));
      theory_curve.add(eta, predicted);
      measured_curve.add_mean(eta, gap.value, half_width.value);
    }
    plot.add(std::move(theory_curve)).add(std::move(measured_curve));
    verdict.plots.push_back(std::move(plot));
    verdict.notes.push_back(fmt::format(
        "t = {} (= {} steps of eta_0 = {}); R = {} replicates per step size, batch {}; instance as in "
        "calib.sgd_mean_matches_gradient_flow (d = {}, eigenvalues in [{}, {}]).",
        m.t, m.base_steps, p.eta.value(), m.replicates, p.batch.value(), p.d.value(), p.lambda_min.value(),
        p.lambda_max.value()));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "calib.discretisation_gap_first_order",
        .family = "calib",
        .paper = "calibration (known answer)",
        .source = "issue #2 (b); Euler discretisation of gradient flow",
        .tag = Provenance::derived,
        .statement = "At fixed physical time the gap between the SGD mean and gradient flow is eta c_1(t) + "
                     "O(eta^2) with c_1(t) = -(t/2) H^2 exp(-tH)(w0 - w*): it halves when eta halves.",
        .latex = R"(\frac{\mathbb{E}w_{t/\eta} - w(t)}{\eta} = -\tfrac{t}{2}H^2e^{-tH}(w_0-w_*) + O(\eta))",
        .simulation = "R independent minibatch SGD runs at each of eta_0, eta_0/2, eta_0/4 for t/eta steps.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"second_order_gap", "gap proportional to eta^2 (it would quarter when eta halves)",
         [](Settings& s) { s.gap_order = 2; }},
        {"missing_half", "first-order coefficient -t H^2 exp(-tH)(w0 - w*), without the 1/2",
         [](Settings& s) { s.coefficient = 2; }},
        {"coefficient_30_percent_low", "first-order coefficient 30% too small: 0.7 c_1",
         [](Settings& s) { s.coefficient = 0.7; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_discretisation_gap_first_order() { return std::make_unique<DiscretisationGapFirstOrder>(); }

}  // namespace dyncheck::checks::calib
