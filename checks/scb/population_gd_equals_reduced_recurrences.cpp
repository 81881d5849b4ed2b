// Claim scb.population_gd_equals_reduced_recurrences  [derived]  (specs/scb.md §4.1-4.2, §8 claim 2)
//
// Stage-1 population gradient descent on the full matrices (V, A) is exactly the recurrence of
// the reduced state (m, α, ν, β_k, ω_k) (analogue of Lemmas C.5/C.6 [paper]):
//   m⁺ = m + η(μ − m),  α⁺ = α + η Σ_k μ_k [1/T + β_k ρ_k − α‖a_k‖²],  ν⁺ = (1 − η Σ_k μ_k‖a_k‖²)² ν,
//   β_k⁺ = β_k + η_A[α K_P − β_k K_VV],  ω_k⁺ = (1 − η_A K_VV)² ω_k,  K_VV = α²K_P + ν,
// and the excess loss is L − L* = ½ Σ_k μ_k[K_P((1−α)²/T + ρ_k(1−αβ_k)² + α²ω_k) + ν‖a_k‖²] + ½‖μ − m‖².
// Measured: the sim layer's full-matrix population GD (double, its own moment formulas) from a
// random start with 1ᵀa_k = 1, reduced with the theory's coordinates after every step; its loss
// minus its loss at the ground truth (P, q).
// Theory: the reduced recurrence from the reduced start, in 50 and 100 digits.
// Tolerance: numerical only (the reduction is exact, no bias, deterministic):
//   theory: |50-digit − 100-digit|;
//   measured: first-order propagation of the double rounding, e_{t+1} = |J_t| e_t + δ_t, with J_t
//   the Jacobian of the reduced map (central differences in double) taken entrywise in absolute
//   value (a componentwise bound for linearised error propagation) and δ_t = 8 ε (N + T)(1 + ‖x_t‖∞)
//   + 2‖Pμ − μ‖∞ (each reduced coordinate and each step is a sum of at most N + T terms of size
//   ≤ 1 + ‖x‖, Higham's γ_n ≈ nε, counted for the gradient, the step and the reduction; plus the
//   stationarity defect of the double μ, which the reduction assumes to be 0).
// Mutants: omega_factor_not_squared (ω_k⁺ = (1 − η_A K_VV) ω_k); drift_half (the 1/T drift of α
// halved: η(1 − α)/(2T)).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "claims.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/sim/scb/population_gd.hpp"
#include "dyncheck/theory/numeric/scalar.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/reduced_flow.hpp"
#include "dyncheck/theory/scb/reduced_recurrence.hpp"
#include "dyncheck/theory/scb/reduced_state.hpp"
#include "theory_instance.hpp"

namespace dyncheck::checks::scb {
namespace {

using theory::mp100;
using theory::mp50;
namespace tscb = theory::scb;

/// The reduced step of the theory, or of a mutant.
template <class S>
tscb::ReducedState<S> theory_step(const RunContext& context, const tscb::Instance<S>& inst, const tscb::Constants<S>& c,
                                  const tscb::ReducedState<S>& state, const S& eta, const S& eta_A) {
  tscb::ReducedState<S> next = tscb::reduced_gd_step(inst, c, state, eta, eta_A);
  if (context.mutant_is("omega_factor_not_squared")) {
    const S K_VV = state.alpha * state.alpha * c.K_P + state.nu;
    next.omega = (S(1) - eta_A * K_VV) * state.omega;
  }
  if (context.mutant_is("drift_half")) next.alpha -= eta * (S(1) - state.alpha) / (2 * S(c.T));
  return next;
}

/// |J| of the reduced map at x (central differences in double, step 1e-7 (1 + |x_i|)).
Eigen::MatrixXd absolute_jacobian(const tscb::Instance<double>& inst, const tscb::Constants<double>& c,
                                  const Eigen::VectorXd& x, double eta, double eta_A) {
  const Eigen::Index n = x.size();
  Eigen::MatrixXd J(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double h = 1e-7 * (1 + std::abs(x[i]));
    Eigen::VectorXd up = x, down = x;
    up[i] += h;
    down[i] -= h;
    J.col(i) = (tscb::pack(tscb::reduced_gd_step(inst, c, tscb::unpack(up), eta, eta_A)) -
                tscb::pack(tscb::reduced_gd_step(inst, c, tscb::unpack(down), eta, eta_A))) /
               (2 * h);
  }
  return J.cwiseAbs();
}

class PopulationGdEqualsReducedRecurrences final : public Claim {
 public:
  const ClaimInfo& info() const override { return info_; }

  Verdict run(const RunContext& context) const override {
    const long long N = context.params.get_int("N"), T = context.params.get_int("T"), Q = context.params.get_int("Q");
    require_sparsity(Q, T);
    const double eta = context.params.get("eta"), eta_A_K_P = context.params.get("eta_A_K_P");
    const double v_scale = context.params.get("v_scale"), a_scale = context.params.get("a_scale");
    const long long steps = context.params.get_int("steps");
    const double resolution = context.params.get("resolution");
    const std::size_t instances = context.budget.pick<std::size_t>(1, 3, 12);
    const long long run_steps = context.budget.level == BudgetLevel::smoke ? std::min(steps, 40LL) : steps;
    constexpr double eps = std::numeric_limits<double>::epsilon();

    Verdict verdict;
    Plot errors{"alpha_error", "|alpha_sim - alpha_reduced| against its rounding bound (instance 0)", "step",
                "absolute difference", false, true, {}};
    Plot trajectory{"alpha", "alpha and E<a,q> - 1/T: full-matrix GD (points) and reduced recurrence (lines), instance 0",
                    "step", "value", false, false, {}};
    for (std::size_t i = 0; i < instances; ++i) {
      const sim::scb::Instance sim_inst = draw_instance(context, "population", i,
                                                        {static_cast<int>(N), static_cast<int>(T), static_cast<int>(Q)});
      const auto inst_d = to_theory<double>(sim_inst);
      const auto inst_50 = to_theory<mp50>(sim_inst);
      const auto inst_100 = to_theory<mp100>(sim_inst);
      const auto c_d = tscb::constants(inst_d);
      const auto c_50 = tscb::constants(inst_50);
      const auto c_100 = tscb::constants(inst_100);
      const double eta_A = eta_A_K_P / c_d.K_P;
      const mp50 eta_50(eta), eta_A_50 = mp50(eta_A_K_P) / c_50.K_P;
      const mp100 eta_100(eta), eta_A_100 = mp100(eta_A_K_P) / c_100.K_P;

      sim::scb::LinearModel model = random_positive_start(context, i, sim_inst, c_d.K_P, v_scale, a_scale);
      sim::scb::LinearModel truth{sim_inst.P, sim::scb::dense_q(sim_inst)};
      const double truth_loss = sim::scb::population_loss(sim_inst, truth);
      auto state_50 = reduce_model(inst_50, model);
      auto state_100 = reduce_model(inst_100, model);
      const Eigen::Index n = 3 * N + 2;
      Eigen::VectorXd rounding = Eigen::VectorXd::Zero(n);
      const double defect = stationarity_defect(sim_inst);
      // Rounding of the start's own reduction (the same sums as one step).
      rounding.array() += 8 * eps * static_cast<double>(N + T) * (1 + tscb::pack(reduce_model(inst_d, model)).cwiseAbs().maxCoeff());

      // Largest difference per group (m, alpha, nu, beta, omega, excess loss) and its allowed numerical error.
      std::vector<double> worst(6, 0.0), allowed(6, 0.0);
      auto group_of = [N](Eigen::Index j) { return j < N ? 0 : j == N ? 1 : j == N + 1 ? 2 : j < 2 * N + 2 ? 3 : 4; };
      for (long long t = 1; t <= run_steps; ++t) {
        const Eigen::VectorXd x_before = tscb::pack(tscb::ReducedState<double>{
            state_100.m.cast<double>(), theory::to_double(state_100.alpha), theory::to_double(state_100.nu),
            state_100.beta.cast<double>(), state_100.omega.cast<double>()});
        rounding = absolute_jacobian(inst_d, c_d, x_before, eta, eta_A) * rounding;
        sim::scb::population_stage1_step(model, sim_inst, eta, eta_A);
        state_50 = theory_step(context, inst_50, c_50, state_50, eta_50, eta_A_50);
        state_100 = theory_step(context, inst_100, c_100, state_100, eta_100, eta_A_100);
        const Eigen::VectorXd measured = tscb::pack(reduce_model(inst_d, model));
        const auto x100 = tscb::pack(state_100);
        const auto x50 = tscb::pack(state_50);
        Eigen::VectorXd theory_x(n);
        for (Eigen::Index j = 0; j < n; ++j) theory_x[j] = theory::to_double(x100[j]);
        rounding.array() += 8 * eps * static_cast<double>(N + T) * (1 + theory_x.cwiseAbs().maxCoeff()) + 2 * defect;
        for (Eigen::Index j = 0; j < n; ++j) {
          const double precision = theory::to_double(abs(mp100(x50[j]) - x100[j])) + std::abs(theory_x[j]) * eps;
          const int g = group_of(j);
          worst[static_cast<std::size_t>(g)] = std::max(worst[static_cast<std::size_t>(g)], std::abs(measured[j] - theory_x[j]));
          allowed[static_cast<std::size_t>(g)] = std::max(allowed[static_cast<std::size_t>(g)], precision + rounding[j]);
        }
        // Excess loss: sim loss minus its loss at the ground truth, against §4.2's formula.
        const double excess_theory = theory::to_double(tscb::excess_loss(inst_100, c_100, state_100));
        const double excess_measured = sim::scb::population_loss(sim_inst, model) - truth_loss;
        Eigen::VectorXd sensitivity(n);  // |d excess / d x_j|, central differences
        for (Eigen::Index j = 0; j < n; ++j) {
          const double h = 1e-7 * (1 + std::abs(theory_x[j]));
          Eigen::VectorXd up = theory_x, down = theory_x;
          up[j] += h;
          down[j] -= h;
          sensitivity[j] = std::abs(tscb::excess_loss(inst_d, c_d, tscb::unpack(up)) -
                                    tscb::excess_loss(inst_d, c_d, tscb::unpack(down))) / (2 * h);
        }
        worst[5] = std::max(worst[5], std::abs(excess_measured - excess_theory));
        allowed[5] = std::max(allowed[5], sensitivity.dot(rounding) +
                                              16 * eps * static_cast<double>(N * N + N + T) * (1 + std::abs(truth_loss) + std::abs(excess_theory)));
        if (i == 0) {
          const double alpha_error = std::abs(measured[N] - theory_x[N]);
          errors.curves.resize(2, Curve{"", Curve::Style::points, {}, {}, {}, {}});
          errors.curves[0].label = "|alpha_sim - alpha_reduced|";
          errors.curves[1].label = "rounding bound";
          errors.curves[1].style = Curve::Style::line;
          errors.curves[0].x.push_back(static_cast<double>(t));
          errors.curves[0].y.push_back(std::max(alpha_error, 1e-300));
          errors.curves[1].x.push_back(static_cast<double>(t));
          errors.curves[1].y.push_back(rounding[N] + theory::to_double(abs(mp100(x50[N]) - x100[N])));
          trajectory.curves.resize(4, Curve{"", Curve::Style::points, {}, {}, {}, {}});
          trajectory.curves[0].label = "alpha, full-matrix GD";
          trajectory.curves[1].label = "alpha, reduced recurrence";
          trajectory.curves[1].style = Curve::Style::line;
          trajectory.curves[2].label = "y = E<a,q> - 1/T, full-matrix GD";
          trajectory.curves[3].label = "y, reduced recurrence";
          trajectory.curves[3].style = Curve::Style::line;
          const double y_measured = tscb::correlation_y(inst_d, c_d, tscb::unpack(measured));
          const double y_theory = theory::to_double(tscb::correlation_y(inst_100, c_100, state_100));
          for (int p = 0; p < 4; ++p) trajectory.curves[static_cast<std::size_t>(p)].x.push_back(static_cast<double>(t));
          trajectory.curves[0].y.push_back(measured[N]);
          trajectory.curves[1].y.push_back(theory_x[N]);
          trajectory.curves[2].y.push_back(y_measured);
          trajectory.curves[3].y.push_back(y_theory);
        }
      }
      static const char* names[] = {"m", "alpha", "nu", "beta_k", "omega_k", "excess loss L - L*"};
      for (std::size_t g = 0; g < 6; ++g) {
        verdict.comparisons.push_back(compare(
            fmt::format("instance {}: max over {} steps of |{} (full GD) - {} (reduced)|", i, run_steps, names[g], names[g]),
            {0.0, 0.0, "the reduction is an identity: the difference is 0"},
            {worst[g], 0.0, "deterministic", allowed[g],
             g < 5 ? "|50-digit - 100-digit| of the recurrence + first-order propagation of double rounding, e_{t+1} = "
                     "|J_t| e_t + 8 eps (N + T)(1 + |x_t|) + 2 |P mu - mu|"
                   : "rounding of the two double losses, 16 eps (N^2 + N + T)(1 + L), + |d(L - L*)/dx| . e_t"},
            {0.0, "none: §4.2 is exact for stage-1 population GD with 1^T a_k = 1"},
            {resolution, fmt::format("{:g}: a wrong coefficient of the recurrence (e.g. a mutant) moves the state by "
                                     "O(eta / T) or more per step; the componentwise rounding bound stays below it "
                                     "for N + T up to a few hundred",
                                     resolution)}));
      }
    }
    verdict.plots.push_back(std::move(trajectory));
    verdict.plots.push_back(std::move(errors));
    verdict.notes.push_back(fmt::format(
        "{} random instance(s) (P columns ~ Dirichlet(1), mu stationary, q uniform on Q = {} random positions), "
        "random start V = mu 1^T + {:g} sqrt(K_P) U[-1,1], a_k = 1/T + ({:g}/T)(u - mean u), moved to the positive "
        "branch (alpha, beta_k >= 0); eta_A = {:g} / K_P.",
        instances, Q, v_scale, a_scale, eta_A_K_P));
    return verdict;
  }

 private:
  ClaimInfo info_{
      .id = "scb.population_gd_equals_reduced_recurrences",
      .family = "scb",
      .paper = "Ren, Wang, Lee (NeurIPS 2024), sparse contextual bigrams",
      .source = "specs/scb.md §4.1-4.2 (analogue of Lemmas C.5/C.6), §8 claim 2",
      .tag = Provenance::derived,
      .statement = "Stage-1 preconditioned projected population gradient descent on (V, A) equals the recurrence of "
                   "the reduced state (m, alpha, nu, beta_k, omega_k), and the excess loss is the §4.2 function of "
                   "that state.",
      .latex = R"(\alpha^+ = \alpha + \eta\sum_k\mu_k[\tfrac1T + \beta_k\rho_k - \alpha\|a_k\|^2],\ \beta_k^+ = \beta_k + \eta_A[\alpha K_P - \beta_k K_{VV}],\ \omega_k^+ = (1-\eta_A K_{VV})^2\omega_k,\ \nu^+ = (1-\eta\,\mathbb E\|a\|^2)^2\nu)",
      .simulation = "sim::scb full-matrix population GD in double from a random start with 1^T a = 1, reduced after "
                    "every step; reduced recurrence in 50 and 100 digits.",
      .params =
          {
              {"N", 4, 2, 20, true, false, "vocabulary size"},
              {"T", 40, 5, 5000, true, false, "context length"},
              {"Q", 3, 1, 20, true, false, "support size of q^(k), <= T/4"},
              {"eta", 0.3, 0, 0.6, false, true, "V step size"},
              {"eta_A_K_P", 0.4, 0, 1, false, true, "attention step size times K_P"},
              {"v_scale", 0.3, 0, 1, false, false, "size of the random perturbation of V = mu 1^T, in units of sqrt(K_P)"},
              {"a_scale", 0.5, 0, 2, false, false, "size of the random perturbation of a = 1/T, in units of 1/T"},
              {"steps", 300, 1, 1000, true, false, "steps compared (at most 40 at the smoke budget)"},
              {"resolution", 1e-6, 1e-13, 1e-3, false, false, "detectable discrepancy of a wrong recurrence"},
          },
      .mutants = {{"omega_factor_not_squared", "omega_k^+ = (1 - eta_A K_VV) omega_k instead of its square"},
                  {"drift_half", "the drift of alpha halved: eta (1 - alpha)/(2T) instead of eta (1 - alpha)/T"}},
  };
};

}  // namespace

std::unique_ptr<Claim> make_population_gd_equals_reduced_recurrences() {
  return std::make_unique<PopulationGdEqualsReducedRecurrences>();
}

}  // namespace dyncheck::checks::scb
