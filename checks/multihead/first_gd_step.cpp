// Claim multihead.first_gd_step  [derived]  (specs/multihead.md B.4 D3, D6; B.5 E-B2)
//
// A single student head softmax(XΘXᵀ) X W_s with loss L(Θ) = ½E‖softmax(XΘXᵀ)XW_s − F(X)‖² has at Θ = 0
//   \f[ \nabla_\Theta L(0) = \tfrac1k\,\mathbb E\bigl[X^\top R\,W_s^\top X^\top P X\bigr],\qquad
//       R = \tfrac Jk X W_s - F(X), \f]
// so one GD step from Θ = 0 is Θ_1 = −η∇L(0); a minibatch step is unbiased for it, and (D6) the
// variance of each entry of a batch-B gradient is Var_X(entry)/B.
// Measured (simulator, sim/multihead: backpropagation through the full softmax Jacobian, its own
//   Kahan-summed enumeration of the cube): (a) one GD step on the population loss; (b, c) R independent
//   minibatch gradients at Θ = 0 (batch B): their mean and their sample variance per entry.
// Theory: (a, b) −η (1/k)E[XᵀR W_sᵀ XᵀPX] by the theory's enumeration (double); (c) Var_X/B per entry,
//   with the fourth central moment for the half-width, by enumeration.
// Tolerances. T = k d (B_s + B) r_s bounds every per-input gradient entry (B, B_s the column-sum bounds of
//   Σ|W_i| and W_s, r_s the row-sum bound of W_s: |R| <= B_s + B, |XᵀR| <= k(B_s + B), |A| <= k).
//   (a) numerical: theory (L + kd) eps η T + (2k + 2d + 8) eps η T per-input rounding; simulator Kahan
//       (2 + 2^{kd} eps) eps η T + (4k + 4d + 8) eps η T per input; no bias.
//   (b) statistical: Student-t over R replicates (each a mean of B iid bounded terms), Bonferroni over the
//       2 d² compared entries (mean and variance); no bias (the minibatch gradient is unbiased).
//   (c) statistical: normal CLT half-width of the sample variance s², Var(s²) = μ4_B/R − σ_B⁴(R−3)/(R(R−1)),
//       μ4_B = μ4/B³ + 3(B−1)σ⁴/B³ from the enumerated central moments; same Bonferroni share.
//   Resolution: (a) 1e-12 η T; (b) 5% of the largest gradient entry; (c) 20% of each variance.
// Mutants: uniform_term_3_percent (R = 1.03 (J/k)XW_s − F: small), inverse_sqrt_d_scaling (a 1/√d
//   logit scale, so the gradient is ÷√d: gross) and variance_without_batch (Var_X instead of Var_X/B).

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>

#include "claims.hpp"
#include "common.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/replicate_summary.hpp"
#include "dyncheck/checks/stats.hpp"
#include "dyncheck/theory/multihead/identities.hpp"

namespace dyncheck::checks::multihead {
namespace {

using theory::Matrix;
namespace th = theory::multihead;

struct Params : ParamSet {
  Shape shape{this, 3, closed(2, 6), 3, closed(2, 4), 2, closed(1, 3)};
  Real theta_scale{this, "theta_scale", 0.5, closed(0, 2), "teacher Theta_i entries are theta_scale N(0, 1)"};
  Real w_scale{this, "w_scale", 1.0, closed(0.1, 10), "W_i entries are w_scale N(0, 1)", Scale::log};
  Real eta{this, "eta", 1.0, open_closed(0, 10), "GD / SGD step size", Scale::log};
  Int batch{this, "batch", 8, closed(2, 64), "minibatch size B"};

  static std::size_t replicates(const Budget& budget) { return budget.pick<std::size_t>(400, 40000, 200000); }
  void check(const Budget& budget) const override {
    // Theory: gradient + moments (~3 passes); simulator: one population gradient (~3 passes).
    refuse_enumeration(budget, shape.k, shape.d, shape.m, 6, false);
  }
};

struct Settings {
  double uniform_weight = 1.0;  ///< weight of (J/k) X W_s in R
  bool inverse_sqrt_d = false;  ///< logits scaled by 1/√d: the gradient at Θ = 0 scales by it
  bool variance_over_batch = true;
};

struct Measured {
  Eigen::MatrixXd w_student;
  sim::multihead::Layer teacher;
  double term_bound = 0;  ///< T
  Eigen::MatrixXd gd_step;
  std::size_t replicates = 0;
  std::vector<std::vector<stats::Summary>> summaries;  ///< [entry][0] of Θ_1 = −η g_batch
  Eigen::MatrixXd variance, fourth;                    ///< per-input central moments of η × gradient entries
};

struct Predicted {
  Eigen::MatrixXd step;
  Eigen::MatrixXd batch_variance;  ///< per entry
  Eigen::MatrixXd batch_fourth;
};

class FirstGdStep final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  FirstGdStep() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const auto k = p.shape.k.as_int(), d = p.shape.d.as_int();
    Measured m;
    m.teacher = draw_teacher(context, d, p.shape.m, p.theta_scale, p.w_scale);
    sim::Rng rng = sim::derive_stream(context.seed, context.claim_id + "/student", 0);
    m.w_student = Eigen::MatrixXd::Zero(d, d);
    for (const Eigen::MatrixXd& w : m.teacher.w) m.w_student += w;
    for (Eigen::Index i = 0; i < m.w_student.size(); ++i) m.w_student.data()[i] += p.w_scale * sim::standard_normal(rng);
    double B = 0;
    for (const Eigen::MatrixXd& w : m.teacher.w) B += w.cwiseAbs().colwise().sum().maxCoeff();
    const double Bs = m.w_student.cwiseAbs().colwise().sum().maxCoeff();
    const double rs = m.w_student.cwiseAbs().rowwise().sum().maxCoeff();
    m.term_bound = k * d * (Bs + B) * rs;
    const Eigen::MatrixXd zero = Eigen::MatrixXd::Zero(d, d);
    m.gd_step = -p.eta * sim::multihead::population_head_gradient(zero, m.w_student, m.teacher, k).theta;
    m.replicates = Params::replicates(context.budget);
    const int batch = p.batch.as_int();
    const double eta = p.eta;
    const std::vector<Eigen::MatrixXd> runs = sim::run_replicates(
        replicate_options(context, "sgd", m.replicates), [&](std::size_t, sim::Rng& r) {
          const Eigen::MatrixXd step =
              -eta * sim::multihead::minibatch_head_gradient(zero, m.w_student, m.teacher, k, batch, r).theta;
          return Eigen::MatrixXd(Eigen::Map<const Eigen::VectorXd>(step.data(), step.size()));
        });
    m.summaries = summarize_replicates(runs, "minibatch step");
    // Central moments of the per-input step −η g(X) by the theory's enumeration (independent of the sim).
    const th::Heads<double> heads = to_heads<double>(m.teacher);
    const Matrix<double> mean = th::student_gradient_at_zero(heads, m.w_student, k, context.threads);
    const Matrix<double> moments = th::cube_expectation<double>(
        k, d,
        [&](const Matrix<double>& X) {
          const Matrix<double> c = eta * (th::student_gradient_term(heads, m.w_student, X) - mean);
          Matrix<double> out(d, 2 * d);
          out.leftCols(d) = c.cwiseProduct(c);
          out.rightCols(d) = c.cwiseProduct(c).cwiseProduct(c.cwiseProduct(c));
          return out;
        },
        context.threads);
    m.variance = moments.leftCols(d);
    m.fourth = moments.rightCols(d);
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& s, const RunContext& context) const override {
    const auto k = p.shape.k.as_int();
    const th::Heads<double> heads = to_heads<double>(m.teacher);
    Predicted t;
    const double logit_scale = s.inverse_sqrt_d ? 1.0 / std::sqrt(static_cast<double>(p.shape.d.value())) : 1.0;
    t.step = -p.eta * logit_scale *
             th::student_gradient_at_zero(heads, m.w_student, k, context.threads, s.uniform_weight);
    const double B = static_cast<double>(p.batch.value());
    const double divisor = s.variance_over_batch ? B : 1.0;
    t.batch_variance = m.variance / divisor;
    t.batch_fourth = (m.fourth / (B * B * B) + 3 * (B - 1) / (B * B * B) * m.variance.cwiseProduct(m.variance));
    return t;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext& context) const override {
    Verdict verdict;
    const auto k = p.shape.k.as_int(), d = p.shape.d.as_int();
    const double eps = std::numeric_limits<double>::epsilon();
    const double eta_T = p.eta * m.term_bound;
    const double theory_error = (th::cube_summation_error<double>(k, d) / eps + 2 * k + 2 * d + 8) * eps * eta_T;
    const double sim_error = (2 + std::ldexp(1.0, k * d) * eps + 4 * k + 4 * d + 8) * eps * eta_T;
    verdict.comparisons.push_back(compare_matrices(
        "one GD step from Theta = 0 (simulator, population) = -eta (1/k) E[X'R W_s' X'PX]", t.step, theory_error,
        "theory enumeration: summation (L + kd) eps eta T plus per-input rounding (2k + 2d + 8) eps eta T", m.gd_step,
        sim_error, "simulator: Kahan sum (2 + 2^kd eps) eps eta T plus backprop rounding (4k + 4d + 8) eps eta T",
        {0.0, "none: an exact identity"},
        {1e-12 * eta_T, fmt::format("1e-12 eta T, T = {:.3g} the per-input bound (spec: identities to 1e-12)",
                                    m.term_bound)}));

    const std::size_t entries = static_cast<std::size_t>(d * d);
    const double delta = stats::bonferroni_share(context.false_failure_rate(), 2 * entries);
    const double largest = t.step.cwiseAbs().maxCoeff();
    // (b) minibatch mean per entry, reported by the worst entry.
    {
      Eigen::MatrixXd mean(d, d), tol(d, d);
      std::vector<stats::HalfWidth> half;
      for (std::size_t e = 0; e < entries; ++e) {
        half.push_back(stats::student_t_half_width(m.summaries[e][0], delta));
        mean.data()[e] = m.summaries[e][0].mean;
        tol.data()[e] = half.back().value + theory_error;
      }
      const Eigen::Index w = worst_entry(t.step, mean, tol);
      verdict.comparisons.push_back(checks::compare(
          fmt::format("mean of R = {} minibatch steps (B = {}) = GD step (worst of {} entries: ({}, {}))", m.replicates,
                      p.batch.value(), entries, w % d, w / d),
          {t.step.data()[w], theory_error, "theory enumeration rounding, as above"},
          measured(mean.data()[w], half[static_cast<std::size_t>(w)],
                   "each replicate is the mean of B iid bounded per-input gradients; Bonferroni over 2 d^2 entries"),
          {0.0, "none: the minibatch gradient is unbiased"},
          {0.05 * largest, "5% of the largest entry of the GD step"}));
    }
    // (c) minibatch variance per entry (D6).
    {
      const double z = stats::normal_half_width(stats::Summary{100, 0, 100, 0, 0}, delta).value;  // z_{1-delta/2}
      const auto R = static_cast<double>(m.replicates);
      Eigen::MatrixXd sample(d, d), tol(d, d), half(d, d);
      for (std::size_t e = 0; e < entries; ++e) {
        const double v = t.batch_variance.data()[e];
        const double var_s2 = t.batch_fourth.data()[e] / R - v * v * (R - 3) / (R * (R - 1));
        half.data()[e] = z * std::sqrt(std::max(0.0, var_s2));
        sample.data()[e] = m.summaries[e][0].variance;
        tol.data()[e] = half.data()[e] + 1e-12 * v;
      }
      const Eigen::Index w = worst_entry(t.batch_variance, sample, tol);
      stats::HalfWidth hw;
      hw.value = half.data()[w];
      hw.method = stats::HalfWidthMethod::normal;
      hw.delta = delta;
      hw.reason = fmt::format(
          "normal CLT interval of the sample variance over R = {}: z_(1-delta/2) sqrt(mu4_B/R - sigma_B^4 (R-3)/(R(R-1))) "
          "with mu4_B = mu4/B^3 + 3(B-1)sigma^4/B^3 from the enumerated central moments, delta = {:.3g}",
          m.replicates, delta);
      const double v = t.batch_variance.data()[w];
      verdict.comparisons.push_back(checks::compare(
          fmt::format("sample variance of the minibatch step = Var_X / B (worst of {} entries: ({}, {}))", entries,
                      w % d, w / d),
          {v, 1e-12 * v, "enumerated central moment, relative rounding < 1e-12"},
          measured(sample.data()[w], hw, "the sample variance of R iid replicates is close to normal"),
          {0.0, "none: the sample variance is unbiased"}, {0.2 * v, "20% of the variance"}));
    }
    verdict.notes.push_back(fmt::format(
        "Teacher from the master seed: k = {}, d = {}, m = {}, Theta_i = {} N(0,1), W_i = {} N(0,1); student W_s = sum W_i "
        "+ {} N(0,1); eta = {}.",
        k, d, p.shape.m.value(), p.theta_scale.value(), p.w_scale.value(), p.w_scale.value(), p.eta.value()));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "multihead.first_gd_step",
        .family = "multihead",
        .paper = "Chen, Li (STOC 2025), provably learning a multi-head attention layer",
        .source = "specs/multihead.md B.4 D3, D6; B.5 E-B2",
        .tag = Provenance::derived,
        .statement = "One GD step from Theta = 0 of a single student head equals -eta (1/k) E[X'R W_s' X'PX] with "
                     "R = (J/k)XW_s - F(X); minibatch steps are unbiased for it, with per-entry variance Var_X / B.",
        .latex = R"(\nabla_\Theta L(0) = \tfrac1k\mathbb E[X^\top R W_s^\top X^\top P X],\ R = \tfrac Jk XW_s - F(X))",
        .simulation = "The simulator's student head (backprop through the softmax Jacobian): one GD step on its own "
                      "enumeration of the population loss, and R independent minibatch steps.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"uniform_term_3_percent", "R = 1.03 (J/k) X W_s - F(X)", [](Settings& s) { s.uniform_weight = 1.03; }},
        {"inverse_sqrt_d_scaling", "logits scaled by 1/sqrt(d), so the gradient at Theta = 0 is divided by sqrt(d)",
         [](Settings& s) { s.inverse_sqrt_d = true; }},
        {"variance_without_batch", "minibatch variance Var_X instead of Var_X / B",
         [](Settings& s) { s.variance_over_batch = false; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_first_gd_step() { return std::make_unique<FirstGdStep>(); }

}  // namespace dyncheck::checks::multihead
