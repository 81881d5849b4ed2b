// Claim scb.linearised_closed_form  [derived]  (specs/scb.md §4.3, §8 claim 4)
//
// From the paper's initialisation (V = μ1ᵀ, a = 1/T: α = β = 0) with the normalised attention rate
// η_A = η/(ρ̄K_P), population GD in x = α, y = ρ̄β = E_k⟨a_k,q_k⟩ − 1/T follows, while α is small,
// the linear system x⁺ = x + η(y + 1/T), y⁺ = y + ηx ("line 654-655" [paper]: matrix [[0,1],[1,0]],
// drift [1/T, 0]), whose solution is
//   x_t = ((1+η)^t − (1−η)^t)/(2T),   y_t = ((1+η)^t + (1−η)^t − 2)/(2T).
// Measured: the sim layer's full-matrix population GD (double) from its initial_model, reduced
// with the theory's coordinates, at every step while α < alpha_max (at most 2000 steps).
// Theory: the closed form (linearised_gd) in 50 and 100 digits.
// Tolerance:
//   bias: the dropped nonlinear terms, bounded a posteriori along the measured path
//     (linearisation_error_factor): 0 ≤ x_t − α_t ≤ E_t (x_t − x_{t−1}), same for y, with
//     E_t = Σ_{s<t} max((α_s/T + α_sβ_sy_s)/(1/T + y_s), α_sβ_s); the proof uses only that the dropped
//     terms are ≥ 0 and the linear map has nonnegative entries (see linearised.hpp), so it holds for
//     every instance;
//   numerical: |50 − 100 digits| of the closed form, plus double rounding of the simulation,
//     accumulated as Σ_s (1+η)^{t−s} δ_s (the linear map amplifies an error by at most 1 + η per
//     step) with δ_s = 8 ε (N + T)(|x_s| + 1/T) + 2‖Pμ − μ‖ + 8 ε N² max|V| max|PΣ| / K_P. The last
//     term is the rounding of V itself: α = ⟨V − μ1ᵀ, P⟩_Σ / K_P is read from entries of size |V| ≈ |μ|,
//     not |α|, so its absolute error is ≤ Σ_ij |δV_ij| |(PΣ)_ij| / K_P (the term the earlier version
//     missed: at seed 7, where K_P is small, α_1 = η/T was off by 3.5e-15 against an allowance of
//     2.9e-15);
//   resolution: `resolution` × x_t (the spec's relative accuracy scale).
//   At t = 2 the bias bound is attained with equality, on every instance: from α_0 = β_0 = y_0 = 0,
//   α_1 = x_1 = η/T and β_1 = y_1 = 0 exactly, so E_2 = α_1 and the one dropped term of step 2 is
//   exactly α_1 (x_2 − x_1) = η²/T². α_2's comparison therefore reports a margin of 1 − O(rounding /
//   bias) (0.99999 at the defaults) by construction: it PASSes because the rounding allowance above is
//   a bound, and it FAILs on any error of the closed form or of the simulation larger than that
//   allowance. The margin near 1 is not a sign of a loose fit.
// Valid region: alpha_max >= 3η/T (α_1 = η/T: at least two steps compared), checked up front.
// Cost: at most 2000 steps of O(N T) per instance; points whose work exceeds the budget are refused
// up front (exit 2 naming T).
// Mutants (edits of Settings): eigenvalue_not_square_root (per-step eigenvalues 1 ± ηρ̄η_AK_P = 1 ± η²
// instead of 1 ± √(ηρ̄η_AK_P)) and the small drift_2_percent (drift 1.02/T: every x_t, y_t 2% too
// large). Resolution: a relative error of the closed form above `resolution` (0.5%) is detected at
// the early steps, where the bias E_t is far below it.

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
#include "dyncheck/theory/numeric/scalar.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/linearised.hpp"
#include "dyncheck/theory/scb/reduced_state.hpp"
#include "params.hpp"
#include "theory_instance.hpp"

namespace dyncheck::checks::scb {
namespace {

using theory::mp100;
using theory::mp50;
namespace tscb = theory::scb;

constexpr std::size_t max_steps = 2000;

struct Params : ParamSet {
  Vocabulary vocabulary{this};
  Int T{this, "T", 10000, closed(100, 1000000), "context length", Scale::log};
  Support support{this};
  Real eta{this, "eta", 0.5, open_closed(0, 0.6), "V step size (eta_A = eta / (rho_bar K_P))", Scale::log};
  Real alpha_max{this, "alpha_max", 0.01, open_closed(0, 0.05), "compare while alpha < alpha_max", Scale::log};
  Real resolution{this, "resolution", 0.005, closed(1e-6, 0.1), "detectable relative deviation from the closed form"};

  std::size_t instances(const Budget& budget) const { return budget.pick<std::size_t>(1, 3, 10); }

  void check(const Budget& budget) const override {
    require_sparsity(support.Q, T);
    // alpha_1 = eta/T and alpha_2 < 2 eta/T exactly: alpha_max >= 3 eta/T leaves at least two compared steps.
    require(alpha_max >= 3 * eta / static_cast<double>(T.value()), "alpha_max",
            fmt::format("must be >= 3 eta / T = {:.3g} (alpha_1 = eta/T: below, no step would be compared)",
                        3 * eta / static_cast<double>(T.value())));
    // x_t >= ((1+eta)^t - 1)/(2T): alpha_max is reached within about ln(2 T alpha_max + 1)/ln(1+eta) steps.
    const double steps =
        std::min(static_cast<double>(max_steps),
                 2 * portable::log(2 * static_cast<double>(T.value()) * alpha_max + 1) / portable::log1p(eta) + 10);
    const double work =
        steps * static_cast<double>(instances(budget)) * static_cast<double>(vocabulary.N * (T + vocabulary.N));
    const double limit = budget.pick(1e8, 4e9, 4e10);
    require(work <= limit, "T",
            fmt::format("with N = {}, eta = {:g}, alpha_max = {:g}: about {:.3g} steps of O(N T), {:.3g} in all, above "
                        "the budget's {:.3g}",
                        vocabulary.N.value(), eta.value(), alpha_max.value(), steps, work, limit));
  }
};

struct Settings {
  bool square_root = true;  ///< eigenvalues 1 +- sqrt(eta coupling); false: 1 +- eta coupling (= eta^2)
  double drift = 1.0;       ///< the drift is drift/T
};

struct Path {
  double K_P = 0, rho_bar = 0, eta_A = 0;
  std::vector<double> alpha, beta, y, rounding, factor;
};

struct Measured {
  std::vector<Path> instances;
};

struct Closed {
  double x = 0, y = 0, x_error = 0, y_error = 0, x_step = 0, y_step = 0;
};

struct Predicted {
  std::vector<std::vector<Closed>> closed;  ///< [instance][t]
};

class LinearisedClosedForm final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  LinearisedClosedForm() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const long long N = p.vocabulary.N, T = p.T, Q = p.support.Q;
    const double eta = p.eta, alpha_max = p.alpha_max;
    constexpr double eps = std::numeric_limits<double>::epsilon();
    const double Td = static_cast<double>(T);
    Measured m;
    for (std::size_t i = 0; i < p.instances(context.budget); ++i) {
      // Instance 0 has q uniform on its support (rho_k = 1/Q - 1/T); the others Dirichlet(1) weights, so
      // that rho_bar, on which the symmetric dynamics depends, varies across instances.
      sim::scb::InstanceOptions options{static_cast<int>(N), static_cast<int>(T), static_cast<int>(Q)};
      options.q_uniform = i == 0;
      const sim::scb::Instance sim_inst = draw_instance(context, "linear", i, options);
      const auto inst_d = to_theory<double>(sim_inst);
      const auto c_d = tscb::constants(inst_d);
      Path path;
      path.K_P = c_d.K_P;
      path.rho_bar = c_d.rho_bar;
      path.eta_A = eta / (c_d.rho_bar * c_d.K_P);  // normalised: coupling rho_bar eta_A K_P = eta
      const Eigen::MatrixXd Sigma =
          Eigen::MatrixXd(sim_inst.mu.asDiagonal()) - sim_inst.mu * sim_inst.mu.transpose();
      const double P_Sigma = (sim_inst.P * Sigma).cwiseAbs().maxCoeff();
      sim::scb::LinearModel model = sim::scb::initial_model(sim_inst);
      path.alpha = {0.0};
      path.beta = {0.0};
      path.y = {0.0};
      path.rounding = {0.0};
      const double defect = stationarity_defect(sim_inst);
      while (path.alpha.back() < alpha_max && path.alpha.size() < max_steps) {
        sim::scb::population_stage1_step(model, sim_inst, eta, path.eta_A);
        const auto state = reduce_model(inst_d, model);
        // beta_1 = 0 and alpha_0 = 0 exactly in exact arithmetic; their double values may be -1e-18.
        // The bound needs alpha, beta >= 0: round-off-sized negatives count as 0 (they are covered by
        // the rounding term).
        auto clean = [](double v) { return v < 0 && v > -1e-12 ? 0.0 : v; };
        path.alpha.push_back(clean(state.alpha));
        path.beta.push_back(clean(state.beta.mean()));
        path.y.push_back(tscb::correlation_y(inst_d, c_d, state));
        const double v_rounding = 8 * eps * static_cast<double>(N * N) * model.V.cwiseAbs().maxCoeff() * P_Sigma / c_d.K_P;
        path.rounding.push_back((1 + eta) * path.rounding.back() +
                                8 * eps * static_cast<double>(N + T) * (std::abs(state.alpha) + 1 / Td) + 2 * defect +
                                v_rounding);
      }
      if (path.alpha.back() >= alpha_max) {  // compare only while alpha < alpha_max
        path.alpha.pop_back();
        path.beta.pop_back();
        path.y.pop_back();
      }
      // The bound's path variable is y_s = rho_bar beta_s of the symmetric 2-D system; beta_k are equal
      // here (symmetric start), so beta = mean beta_k and y = rho_bar beta.
      path.factor = tscb::linearisation_error_factor(path.alpha, path.beta, c_d.rho_bar, Td);
      m.instances.push_back(std::move(path));
    }
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& s, const RunContext&) const override {
    constexpr double eps = std::numeric_limits<double>::epsilon();
    const double Td = static_cast<double>(p.T.value());
    // The mutant's "coupling" eta^3 makes sqrt(eta coupling) = eta^2; the drift enters as T' = T / drift.
    auto closed = [&](long long t, auto scalar) {
      using S = decltype(scalar);
      const S e(p.eta.value());
      const S coupling = s.square_root ? e : e * e * e;
      return tscb::linearised_gd(t, e, coupling, S(Td) / S(s.drift));
    };
    Predicted predicted;
    for (const Path& path : m.instances) {
      std::vector<Closed> values(path.alpha.size());
      for (std::size_t t = 1; t < path.alpha.size(); ++t) {
        const auto tt = static_cast<long long>(t);
        const auto low = closed(tt, mp50(0));
        const auto high = closed(tt, mp100(0));
        const auto before = closed(tt - 1, mp100(0));
        Closed& c = values[t];
        c.x = theory::to_double(high.x);
        c.y = theory::to_double(high.y);
        c.x_error = theory::to_double(abs(mp100(low.x) - high.x)) + std::abs(c.x) * eps;
        c.y_error = theory::to_double(abs(mp100(low.y) - high.y)) + std::abs(c.y) * eps;
        c.x_step = theory::to_double(high.x - before.x);
        c.y_step = theory::to_double(high.y - before.y);
      }
      predicted.closed.push_back(std::move(values));
    }
    return predicted;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext&) const override {
    const double resolution = p.resolution;
    Verdict verdict;
    const std::string theory_reason = "|50-digit - 100-digit| of the closed form + rounding to double";
    const std::string rounding_reason =
        "double rounding of full-matrix GD (sums of N + T terms, the entries of V read through <., P>_Sigma / K_P, "
        "the stationarity defect), amplified by 1 + eta per step";
    for (std::size_t i = 0; i < m.instances.size(); ++i) {
      const Path& path = m.instances[i];
      Curve measured_x = Curve::points("alpha, full-matrix GD");
      Curve measured_y = Curve::points("y = E<a,q> - 1/T, full-matrix GD");
      Curve theory_x = Curve::line("x_t = ((1+eta)^t - (1-eta)^t)/(2T)");
      Curve theory_y = Curve::line("y_t = ((1+eta)^t + (1-eta)^t - 2)/(2T)");
      for (std::size_t s = 1; s < path.alpha.size(); ++s) {
        const Closed& c = t.closed[i][s];
        const std::string bias_reason = fmt::format(
            "dropped nonlinear terms, a-posteriori bound E_t (x_t - x_(t-1)) with E_t = {:.3g}", path.factor[s]);
        verdict.comparisons.push_back(checks::compare(
            fmt::format("instance {}: alpha_t, t = {}", i, s), {c.x, c.x_error, theory_reason},
            measured_exactly(path.alpha[s], path.rounding[s], rounding_reason), {path.factor[s] * c.x_step, bias_reason},
            {resolution * c.x, fmt::format("{:g} x x_t (relative accuracy of the closed form)", resolution)}));
        if (s >= 2) {  // y_1 = 0 exactly
          verdict.comparisons.push_back(checks::compare(
              fmt::format("instance {}: y_t = rho_bar beta_t, t = {}", i, s), {c.y, c.y_error, theory_reason},
              measured_exactly(path.y[s], path.rounding[s], rounding_reason), {path.factor[s] * c.y_step, bias_reason},
              {resolution * c.y, fmt::format("{:g} x y_t", resolution)}));
        }
        const auto step = static_cast<double>(s);
        measured_x.add(step, path.alpha[s]);
        measured_y.add(step, path.y[s]);
        theory_x.add(step, c.x);
        theory_y.add(step, c.y);
      }
      if (i == 0) {
        Plot plot{"linear_regime",
                  fmt::format("Linear regime from zero correlation (T = {}, eta = {:g}, normalised eta_A)", p.T.value(),
                              p.eta.value()),
                  "step t", "value", false, true, {}};
        plot.add(std::move(theory_x)).add(std::move(measured_x)).add(std::move(theory_y)).add(std::move(measured_y));
        verdict.plots.push_back(std::move(plot));
        verdict.notes.push_back(fmt::format("Instance 0: K_P = {:.4g}, rho_bar = {:.4g}, eta_A = eta/(rho_bar K_P) = {:.4g}; "
                                            "{} steps while alpha < {:g}.",
                                            path.K_P, path.rho_bar, path.eta_A, path.alpha.size() - 1,
                                            p.alpha_max.value()));
      }
    }
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "scb.linearised_closed_form",
        .family = "scb",
        .paper = "Ren, Wang, Lee (NeurIPS 2024), sparse contextual bigrams",
        .source = "specs/scb.md §4.3 (line 654-655 structure), §8 claim 4",
        .tag = Provenance::derived,
        .statement = "From alpha = beta = 0 with eta_A = eta/(rho_bar K_P), population GD follows the linear system "
                     "x+ = x + eta (y + 1/T), y+ = y + eta x in closed form while alpha is small.",
        .latex = R"(x_t = \frac{(1+\eta)^t - (1-\eta)^t}{2T},\qquad y_t = \frac{(1+\eta)^t + (1-\eta)^t - 2}{2T})",
        .simulation = "sim::scb full-matrix population GD in double from V = mu 1^T, a = 1/T, reduced after every step.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"eigenvalue_not_square_root",
         "eigenvalues 1 +- eta rho_bar eta_A K_P (= eta^2) instead of 1 +- sqrt(eta rho_bar eta_A K_P)",
         [](Settings& s) { s.square_root = false; }},
        {"drift_2_percent", "drift 1.02/T instead of 1/T (every x_t, y_t 2% too large)",
         [](Settings& s) { s.drift = 1.02; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_linearised_closed_form() { return std::make_unique<LinearisedClosedForm>(); }

}  // namespace dyncheck::checks::scb
