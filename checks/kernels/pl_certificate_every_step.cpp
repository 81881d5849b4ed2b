// Claim kernels.pl_certificate_every_step  [derived] certificate (specs/kernels.md A.4 D3, A.5 E-A2), for the
//   [paper] statement A-T2 ("if all three matrices can be updated, GD can achieve global optimality, with either
//   Gaussian or softmax attention kernels") whose conditions are [reconstructed].
//
// With f = 1/2|r|^2 and g = J'r (J = d vec(T)/d theta), every step accepted by Armijo with c = 1/2,
// f(theta - eta g) <= f - (eta/2)|g|^2, satisfies, since |g|^2 = r'JJ'r >= lambda_min(JJ') |r|^2 = 2 lambda_min f,
//   \f[ f_{t+1} \le (1 - \eta_t\,\lambda_{\min}(J_tJ_t^\top))\, f_t \f]
// exactly. The condition it evaluates is A-T2's PL constant lambda_min(J_t J_t') along the trajectory: bounded
// away from 0 is the linear-rate regime; it can be > 0 only when the trained parameters outnumber N n d_out.
// Theory: J_t from theory/kernels (forward-mode directional derivatives, independent of the simulator's
//   backpropagation), its lambda_min by a double eigensolver; the residual r_t from the theory's own forward map.
// Simulated: Armijo GD (eta_0 = 1, halve until accepted, then eta *= 1.5) training W^Q, W^K, W^V, R runs for
//   each of the two kernels (softmax, and the Gaussian variant chosen by `gauss_rownorm`); every accepted step
//   until f <= 1e-14 f_0 (below, the losses near their rounding floor cannot resolve 1e-3 f_t).
// Comparisons (deterministic, no statistics):
//  1. at every accepted step of every run: f_{t+1} <= (1 - eta_t lambda_min) f_t (the worst step shown). Numerical
//     term: the rounding of the two simulated losses, |R| e_R + gamma f with e_R = |3 gamma_K A + u|R||_F
//     (A = sum_h |S_h||X||V_h||O_h|, Higham 3.5, first order), plus eta f times the eigenvalue's rounding bound
//     4 gamma_{p + Nn d_out} |J|_F^2 (first order: J's entries err by <= gamma_K relative to |J| entrywise, the
//     product JJ' and the symmetric eigensolver add backward errors of that size; Weyl's inequality).
//     Resolution: 1e-3 f_t.
//  2. the simulated gradient equals J'r: max over steps of |g_sim - J'r| / |g_sim|; numerical term
//     (4 gamma_{Nn d_out + 4(d + n)} |J|_F |r| + 2 |J|_F e_R) / |g| (first order: both sides' products, and both
//     sides' residuals r = T - Y, each off by up to e_R, the rounding of T, mapped by J'; near convergence |r| << |T|
//     and e_R dominates). Resolution 1e-6.
// Mutants: lambda_max (the PL inequality with lambda_max: gross), no_normalisation_term (the Jacobian's
//   dS = S o dZ without - S o rowsum(S o dZ): gross), kernel_scale_off_1e-4 (c = d^{0.5001} in the
//   theory's kernel: small, seen by comparison 2).

#include <fmt/format.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>

#include "claims.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/sim/kernels/attention.hpp"
#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/theory/kernels/attention.hpp"
#include "dyncheck/theory/kernels/conditions.hpp"
#include "instance.hpp"

namespace dyncheck::checks::kernels {
namespace {

struct Params : ParamSet {
  Int N{this, "N", 2, closed(1, 4), "samples"};
  Int n{this, "n", 3, closed(2, 6), "tokens per sample"};
  Int d{this, "d", 6, closed(2, 8), "embedding dimension"};
  Int H{this, "H", 1, closed(1, 2), "heads"};
  Int vector_output{this, "vector_output", 0, closed(0, 1), "1: W^O = I_d / sqrt(H); 0: W^O = w ~ N(0, I/d) (scalar)"};
  Int gauss_rownorm{this, "gauss_rownorm", 0, closed(0, 1), "the Gaussian runs: 0 unnormalised, 1 row-normalised"};
  Int target{this, "target", 0, closed(0, 2), "targets: 0 random N(0,1), 1 teacher of the same kernel, 2 of the other kernel"};
  Real s_QK{this, "s_QK", 0.7, closed(0.05, 3), "W^Q, W^K ~ N(0, s^2/d) (student and teacher)", Scale::log};
  Real s_V{this, "s_V", 1.0, closed(0.05, 3), "W^V ~ N(0, s^2/d)", Scale::log};
  Int steps{this, "steps", 150, closed(1, 2000), "Armijo steps per run", Scale::log};

  std::size_t runs(const Budget& budget) const { return budget.pick<std::size_t>(1, 10, 40); }
  void check(const Budget& budget) const override {
    const double d_out = vector_output.value() != 0 ? static_cast<double>(d.value()) : 1.0;
    const double p = 3.0 * static_cast<double>(H.value() * d.value() * d.value());
    const double rows = static_cast<double>(N.value() * n.value()) * d_out;
    // one Jacobian: p columns, each N H (4 n d^2 + n^2 d + n d d_out) multiply-adds (X dW^Q, X dW^K, dL, X dW^V W^O),
    // then JJ' and the eigensolver (rows^2 (p + 10 rows)); predict runs once per variant (the claim and its 3
    // mutants). Measured: the ci defaults (4 x 2 x 10 runs x 150 steps: 1.4e9 units) take ~1.4 s on one thread.
    const double nn = static_cast<double>(n.value()), dd = static_cast<double>(d.value());
    const double per_step = p * static_cast<double>(N.value() * H.value()) * (4 * nn * dd * dd + nn * nn * dd + nn * dd * d_out) +
                            rows * rows * (p + 10 * rows);
    const double work = 4.0 * 2.0 * static_cast<double>(runs(budget)) * static_cast<double>(steps.value()) * per_step;
    const double limit = budget.pick(2e8, 4e9, 4e11);
    if (work > limit) {
      throw ParamError("steps", fmt::format("the {} budget cannot afford {} steps x {} runs x 2 kernels with a "
                                            "{:g} x {:g} Jacobian per step ({:.3g} units, limit {:.3g}); lower steps, d, "
                                            "H or N n", to_string(budget.level), steps.value(), runs(budget), rows, p,
                                            work, limit));
    }
  }
};

struct Settings {
  bool use_lambda_max = false;
  bool drop_normalisation_term = false;
  double scale_power = 0.5;
};

struct Step {
  sim::kernels::Weights w;  ///< the iterate the step starts from
  Eigen::VectorXd g;        ///< the simulator's gradient, flattened in the Jacobian's column order
  double f_before = 0, f_after = 0, eta = 0, f_rounding_after = 0;
  double residual_rounding = 0;  ///< e_R at w: the rounding of the simulated residual (and of the theory's)
};

struct Run {
  int kernel = 0;  ///< 0 softmax, 1 or 2 Gaussian
  sim::kernels::Data data;
  std::vector<Step> steps;
};

struct Measured {
  std::vector<Run> runs;
};

struct StepTheory {
  double lambda_min = 0, lambda_max = 0, bound = 0, bound_error = 0, grad_discrepancy = 0, grad_tolerance = 0;
};

struct Predicted {
  std::vector<std::vector<StepTheory>> steps;  ///< [run][step]
};

struct ResidualRounding {
  double e = 0;  ///< |3 gamma_K A + u|R||_F: the residual's rounding, entrywise (Higham 3.5, first order)
  double f = 0;  ///< the loss
};

ResidualRounding residual_rounding(const sim::kernels::ModelSpec& spec, const sim::kernels::Data& data,
                                   const sim::kernels::Weights& w) {
  const double u = std::numeric_limits<double>::epsilon() / 2;
  const auto n = data.X[0].rows(), d = data.X[0].cols(), d_out = w.O[0].cols();
  const double K = static_cast<double>(std::max({n, d, d_out})) + 2;
  double e2 = 0, f = 0;
  for (std::size_t i = 0; i < data.X.size(); ++i) {
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(n, d_out);
    for (int h = 0; h < w.heads(); ++h) {
      const auto hh = static_cast<std::size_t>(h);
      A += sim::kernels::attention(spec, data.X[i], w.Q[hh], w.K[hh]).cwiseAbs() *
           (data.X[i].cwiseAbs() * (w.V[hh].cwiseAbs() * w.O[hh].cwiseAbs()));
    }
    const Eigen::MatrixXd R = sim::kernels::output(spec, data.X[i], w) - data.Y[i];
    e2 += (3 * gamma(K + static_cast<double>(w.heads())) * A + u * R.cwiseAbs()).squaredNorm();
    f += 0.5 * R.squaredNorm();
  }
  return {std::sqrt(e2), f};
}

double loss_rounding(const sim::kernels::ModelSpec& spec, const sim::kernels::Data& data, const sim::kernels::Weights& w) {
  const ResidualRounding r = residual_rounding(spec, data, w);
  return std::sqrt(2 * r.f) * r.e + r.e * r.e / 2 + gamma(static_cast<double>(data.X.size() * data.X[0].rows() * w.O[0].cols())) * r.f;
}

class PlCertificate final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  PlCertificate() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const int N = p.N.as_int(), n = p.n.as_int(), d = p.d.as_int(), H = p.H.as_int();
    const int d_out = p.vector_output.value() != 0 ? d : 1;
    const std::size_t R = p.runs(context.budget);
    Measured m;
    m.runs = sim::run_replicates(replicate_options(context, "runs", 2 * R), [&](std::size_t k, sim::Rng& rng) {
      Run run;
      run.kernel = k % 2 == 0 ? 0 : 1 + p.gauss_rownorm.as_int();
      const sim::kernels::ModelSpec spec{run.kernel == 0 ? sim::kernels::Kernel::softmax : sim::kernels::Kernel::gaussian,
                                         run.kernel == 2};
      std::vector<Eigen::MatrixXd> O;
      for (int h = 0; h < H; ++h) {
        O.push_back(d_out == d ? Eigen::MatrixXd(Eigen::MatrixXd::Identity(d, d) / std::sqrt(static_cast<double>(H)))
                               : sim::kernels::gaussian_matrix(rng, d, 1, 1.0 / std::sqrt(static_cast<double>(d))));
      }
      run.data.X = sim::kernels::gaussian_inputs(rng, N, n, d);
      if (p.target.value() == 0) {
        run.data.Y = sim::kernels::random_targets(rng, N, n, d_out, 1.0);
      } else {
        const sim::kernels::Weights teacher = sim::kernels::gaussian_weights(rng, H, d, p.s_QK, p.s_QK, p.s_V, O);
        sim::kernels::ModelSpec teacher_spec = spec;
        if (p.target.value() == 2) {
          teacher_spec.kernel = spec.kernel == sim::kernels::Kernel::softmax ? sim::kernels::Kernel::gaussian
                                                                             : sim::kernels::Kernel::softmax;
        }
        run.data.Y = sim::kernels::teacher_targets(teacher_spec, run.data.X, teacher);
      }
      const sim::kernels::Weights w0 = sim::kernels::gaussian_weights(rng, H, d, p.s_QK, p.s_QK, p.s_V, O);
      sim::kernels::GdOptions options;
      options.steps = p.steps.value();
      // stop once f <= 1e-14 f_0: below that the losses approach their rounding floor (|R| e_R with e_R ~ u |T|),
      // where 1e-3 f_t can no longer be resolved
      options.stop_loss = 1e-14 * sim::kernels::loss(spec, run.data, w0);
      const sim::kernels::Trained trained{true, true, true};
      sim::kernels::gradient_descent(spec, run.data, w0, trained, options,
                                     [&](long long, const sim::kernels::Weights& w, const sim::kernels::Gradient& g,
                                         const sim::kernels::GdStep& step) {
                                       Step s;
                                       s.w = w;
                                       s.g = flatten(g, trained);
                                       s.f_before = step.f_before;
                                       s.f_after = step.f_after;
                                       s.eta = step.eta;
                                       s.f_rounding_after = loss_rounding(spec, run.data, sim::kernels::step(w, g, step.eta));
                                       s.residual_rounding = residual_rounding(spec, run.data, w).e;
                                       run.steps.push_back(std::move(s));
                                     });
      return run;
    });
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& s, const RunContext&) const override {
    Predicted t;
    const theory::kernels::TrainedBlocks trained{true, true, true};
    for (const Run& run : m.runs) {
      theory::kernels::KernelSpec spec{run.kernel == 0 ? theory::kernels::Kernel::softmax : theory::kernels::Kernel::gaussian,
                                       run.kernel == 2, s.scale_power, !s.drop_normalisation_term};
      std::vector<Eigen::MatrixXd> X = run.data.X, Y = run.data.Y;
      std::vector<StepTheory> steps;
      for (const Step& step : run.steps) {
        const auto heads = to_heads<double>(step.w);
        const Eigen::MatrixXd J = theory::kernels::jacobian<double>(spec, X, heads, trained);
        const Eigen::VectorXd r = theory::kernels::residual<double>(spec, X, Y, heads);
        const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(J * J.transpose(), Eigen::EigenvaluesOnly);
        StepTheory st;
        st.lambda_min = std::max(0.0, eig.eigenvalues()(0));
        st.lambda_max = eig.eigenvalues().maxCoeff();
        const double lambda = s.use_lambda_max ? st.lambda_max : st.lambda_min;
        st.bound = (1 - step.eta * lambda) * step.f_before;
        const double p_count = static_cast<double>(J.cols()), rows = static_cast<double>(J.rows());
        st.bound_error = step.eta * step.f_before * 4 * gamma(p_count + rows) * J.squaredNorm();
        const Eigen::VectorXd jr = J.transpose() * r;
        const double g_norm = step.g.norm();
        st.grad_discrepancy = (step.g - jr).norm() / g_norm;
        // the products' rounding, and the residual's: each side computes r = T - Y from its own rounding of T, which
        // errs by up to e_R (entrywise |3 gamma_K A + u|R||, any summation order), and J' maps it with norm <= |J|_F
        st.grad_tolerance = (4 * gamma(rows + 4.0 * static_cast<double>(p.d.value() + p.n.value())) * J.norm() * r.norm() +
                             2 * J.norm() * step.residual_rounding) / g_norm;
        steps.push_back(st);
      }
      t.steps.push_back(std::move(steps));
    }
    return t;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext&) const override {
    Verdict verdict;
    // 1. the certificate at the worst step
    double worst = -1, worst_g = -1;
    std::size_t wr = 0, ws = 0, gr = 0, gs = 0, total = 0;
    for (std::size_t r = 0; r < m.runs.size(); ++r) {
      for (std::size_t k = 0; k < m.runs[r].steps.size(); ++k, ++total) {
        const Step& step = m.runs[r].steps[k];
        const StepTheory& st = t.steps[r][k];
        const double tol = st.bound_error + step.f_rounding_after + 1e-300;
        const double ratio = (step.f_after - st.bound) / tol;
        if (!(ratio <= worst)) {
          worst = ratio;
          wr = r;
          ws = k;
        }
        const double gratio = st.grad_discrepancy / (st.grad_tolerance + 1e-300);
        if (!(gratio <= worst_g)) {
          worst_g = gratio;
          gr = r;
          gs = k;
        }
      }
    }
    if (total == 0) throw std::runtime_error("no accepted step in any run (every run started at a stationary point)");
    const Step& step = m.runs[wr].steps[ws];
    const StepTheory& st = t.steps[wr][ws];
    verdict.comparisons.push_back(checks::compare(
        fmt::format("f_(t+1) <= (1 - eta_t lambda_min(J_t J_t')) f_t at step {} of run {} ({}), the worst of {} accepted "
                    "steps", ws, wr, m.runs[wr].kernel == 0 ? "softmax" : "Gaussian", total),
        {st.bound, st.bound_error,
         "eta f 4 gamma_{p + Nn d_out} |J|_F^2: rounding of lambda_min (J's entries, JJ', the eigensolver; Weyl)"},
        measured_exactly(step.f_after, step.f_rounding_after,
                         "rounding of the simulated loss: |R| e_R + e_R^2/2 + gamma f, e_R = |3 gamma_K A + u|R||_F"),
        {0.0, "none: the certificate is exact for every step Armijo accepts with c = 1/2"},
        {1e-3 * step.f_before, "1e-3 f_t"}, Relation::at_most));
    const StepTheory& gt = t.steps[gr][gs];
    verdict.comparisons.push_back(checks::compare(
        fmt::format("|g_sim - J'r| / |g_sim| at step {} of run {}, the worst of {} steps", gs, gr, total),
        {0.0, 0.0, "J'r is the gradient of 1/2|r|^2 exactly"},
        measured_exactly(gt.grad_discrepancy, gt.grad_tolerance,
                         "(4 gamma_{Nn d_out + 4(d + n)} |J|_F |r| + 2 |J|_F e_R) / |g|: both computations' products and residuals, first order"),
        {0.0, "none"}, {1e-6, "1e-6 relative: a kernel scale off by 1e-4 in its exponent moves J by ~2e-4 relative"}));

    Plot plot{"lambda_min", "PL constant lambda_min(J_t J_t') along the runs", "step", "lambda_min", false, true, {}};
    for (std::size_t r = 0; r < std::min<std::size_t>(m.runs.size(), 4); ++r) {
      Curve c = Curve::points(fmt::format("run {} ({})", r, m.runs[r].kernel == 0 ? "softmax" : "Gaussian"));
      for (std::size_t k = 0; k < t.steps[r].size(); ++k) c.add(static_cast<double>(k), std::max(t.steps[r][k].lambda_min, 1e-300));
      plot.add(std::move(c));
    }
    verdict.plots.push_back(std::move(plot));
    double min_lambda[2] = {1e300, 1e300}, final_ratio[2] = {0, 0};
    int counted[2] = {0, 0};
    for (std::size_t r = 0; r < m.runs.size(); ++r) {
      const int k = m.runs[r].kernel == 0 ? 0 : 1;
      for (const StepTheory& entry : t.steps[r]) min_lambda[k] = std::min(min_lambda[k], entry.lambda_min);
      if (!m.runs[r].steps.empty()) {
        final_ratio[k] += m.runs[r].steps.back().f_after / m.runs[r].steps.front().f_before;
        ++counted[k];
      }
    }
    const double d_out = p.vector_output.value() != 0 ? static_cast<double>(p.d.value()) : 1.0;
    verdict.notes.push_back(fmt::format(
        "Condition evaluated [reconstructed, A-T2]: the PL constant lambda_min(J_t J_t') > 0 along the trajectory (it needs "
        "3 H d^2 = {} trained parameters >= N n d_out = {:g}). Smallest over all steps: softmax {:.3g}, Gaussian {:.3g}; "
        "mean f_T/f_0: softmax {:.3g}, Gaussian {:.3g}.",
        3 * p.H.value() * p.d.value() * p.d.value(), static_cast<double>(p.N.value() * p.n.value()) * d_out,
        min_lambda[0], min_lambda[1], counted[0] ? final_ratio[0] / counted[0] : 0.0,
        counted[1] ? final_ratio[1] / counted[1] : 0.0));
    // A.3's conditions at the start of the first run of each kernel (evaluate_conditions, as in Python)
    std::string at_start;
    for (std::size_t r = 0; r < std::min<std::size_t>(2, m.runs.size()); ++r) {
      const Run& run = m.runs[r];
      if (run.steps.empty()) continue;
      const theory::kernels::KernelSpec spec{run.kernel == 0 ? theory::kernels::Kernel::softmax : theory::kernels::Kernel::gaussian,
                                             run.kernel == 2};
      const theory::kernels::Conditions c = theory::kernels::evaluate_conditions(spec, run.data.X, to_heads<double>(run.steps.front().w));
      auto shown = [](double lambda, double rounding, bool by_shape) {
        if (by_shape) return std::string("0 (more Jacobian rows than columns)");
        return lambda > rounding ? fmt::format("{:.3g}", lambda) : fmt::format("{:.2g} (not resolved from 0: rounding {:.2g})", lambda, rounding);
      };
      at_start += fmt::format("{}{} (run {}): lambda_V = {}, lambda_Q = {}, W^V-only step bound 1/lambda_V,max = {:.3g}",
                              at_start.empty() ? "" : "; ", run.kernel == 0 ? "softmax" : "Gaussian", r,
                              shown(c.lambda_V, c.rounding_V, c.zero_V_by_shape), shown(c.lambda_Q, c.rounding_Q, c.zero_Q_by_shape),
                              c.eta_max_value_only);
    }
    if (!at_start.empty()) {
      verdict.notes.push_back(fmt::format(
          "A.3's conditions at the start (theory::kernels::evaluate_conditions = dyncheck.theory.kernels.conditions; A-T2's "
          "alpha_0^2 is about lambda_V): d >= Nn {} (d = {}, Nn = {}); {}.",
          p.d.value() >= p.N.value() * p.n.value() ? "holds" : "fails", p.d.value(), p.N.value() * p.n.value(), at_start));
    }
    verdict.notes.push_back(fmt::format(
        "Instance per run: N = {}, n = {}, d = {}, H = {}, {} output, targets {}, W ~ N(0, s^2/d) with s_QK = {}, s_V = {}; "
        "Armijo (eta_0 = 1, halve, then x1.5), {} steps; {} runs of each kernel (Gaussian {}). Deterministic: no share of "
        "the false-failure rate is used.",
        p.N.value(), p.n.value(), p.d.value(), p.H.value(), p.vector_output.value() != 0 ? "vector" : "scalar",
        p.target.value() == 0 ? "random" : p.target.value() == 1 ? "from a same-kernel teacher" : "from an other-kernel teacher",
        p.s_QK.value(), p.s_V.value(), p.steps.value(), m.runs.size() / 2, p.gauss_rownorm.value() != 0 ? "row-normalised" : "unnormalised"));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "kernels.pl_certificate_every_step",
        .family = "kernels",
        .paper = "Song, Han, Zhang, Ding, Hong (NeurIPS 2024), Gaussian vs softmax attention",
        .source = "specs/kernels.md A.3 A-T2, A.4 D3, A.5 E-A2",
        .tag = Provenance::derived,
        .statement = "Every Armijo-accepted GD step (all of W^Q, W^K, W^V trained, either kernel) satisfies "
                     "f_{t+1} <= (1 - eta_t lambda_min(J_t J_t')) f_t, and the simulated gradient equals J'r.",
        .latex = R"(f_{t+1}\le\bigl(1-\eta_t\lambda_{\min}(J_tJ_t^\top)\bigr)f_t,\qquad \nabla f = J^\top r)",
        .simulation = "Armijo GD on all weights (sim/kernels), R runs per kernel; the Jacobian at every accepted step "
                      "from theory/kernels",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"lambda_max", "the PL inequality with lambda_max(JJ') instead of lambda_min", [](Settings& s) { s.use_lambda_max = true; }},
        {"no_normalisation_term", "the Jacobian of softmax (and row-normalised) kernels without -S o rowsum(S o dZ)",
         [](Settings& s) { s.drop_normalisation_term = true; }},
        {"kernel_scale_off_1e-4", "the theory's kernel scale d^0.5001 instead of sqrt(d) (small)",
         [](Settings& s) { s.scale_power = 0.5001; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_pl_certificate_every_step() { return std::make_unique<PlCertificate>(); }

}  // namespace dyncheck::checks::kernels
