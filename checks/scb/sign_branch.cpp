// Claim scb.sign_branch  [derived]  (specs/scb.md §4.3 "Sign branch", §8 claim 8)
//
// With the normalised rate η_A = η/(ρ̄K_P), the linearised unstable coordinate u = x + y (x = α,
// y = ρ̄β) obeys u_t + 1/T = (1+η)^t (u_0 + 1/T): the final branch is sign(u_0 + 1/T). A negative
// sign lands on αβ ≈ 1 with α < 0 and β < 0; a start with u_0 ∈ (−1/T, 0) still ends on the positive
// branch, pulled over by the drift.
// Measured: the sim layer's full-matrix population GD (double) from V = μ1ᵀ + α_0(P − μ1ᵀ) (so α = α_0,
// ν = 0), a = 1/T (β = 0), for u_0 = α_0 = f/T with several f; the sign of α at the landing (first
// step with αβ ≥ 0.9).
// Theory: predicted_sign_branch(u_0, T).
// Tolerance: numerical 0 (a sign); bias 0 when the a-posteriori certificate holds, else 2 (then the
//   comparison cannot pass: INCONCLUSIVE). Certificate: w_t = u_t + 1/T obeys exactly
//   w_{t+1} = (1+η)w_t − n_t, n_t = η(α/T + yαβ) + ηα²β (the dropped terms), so
//   w_t (1+η)^{−t} = w_0 − Σ_{s<t} n_s (1+η)^{−(s+1)}; if Σ|n_s|(1+η)^{−(s+1)} < |w_0|/2 up to the first
//   step with |w| ≥ 0.1, the sign of w is the predicted one there, and beyond that the state is in the
//   predicted quadrant's basin (the separatrix through the origin is w = O(α²), far below 0.1).
// Mutant: sign_of_u0: sign(u_0) instead of sign(u_0 + 1/T) (fails for f ∈ (−1, 0)).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "claims.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/sim/scb/population_gd.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/phases.hpp"
#include "theory_instance.hpp"

namespace dyncheck::checks::scb {
namespace {

namespace tscb = theory::scb;

class SignBranch final : public Claim {
 public:
  const ClaimInfo& info() const override { return info_; }

  Verdict run(const RunContext& context) const override {
    const long long N = context.params.get_int("N"), T = context.params.get_int("T"), Q = context.params.get_int("Q");
    require_sparsity(Q, T);
    const double eta = context.params.get("eta");
    const double Td = static_cast<double>(T);
    const std::vector<double> fractions = context.budget.level == BudgetLevel::smoke
                                              ? std::vector<double>{-2.0, -0.5, 1.0}
                                              : std::vector<double>{-3.0, -1.5, -0.9, -0.5, -0.2, 0.5, 2.0};
    const sim::scb::Instance sim_inst = draw_instance(context, "branch", 0,
                                                      {static_cast<int>(N), static_cast<int>(T), static_cast<int>(Q)});
    const auto inst_d = to_theory<double>(sim_inst);
    const auto c_d = tscb::constants(inst_d);
    const double eta_A = eta / (c_d.rho_bar * c_d.K_P);
    const Eigen::MatrixXd e = sim_inst.P - sim_inst.mu * Eigen::RowVectorXd::Ones(N);

    Verdict verdict;
    Plot plot{"branches", "Trajectories (alpha, y = rho_bar beta) from u_0 = f/T", "alpha", "y = rho_bar beta", false,
              false, {}};
    for (double f : fractions) {
      sim::scb::LinearModel model = sim::scb::initial_model(sim_inst);
      model.V += (f / Td) * e;
      const auto start = reduce_model(inst_d, model);
      const double u0 = start.alpha + tscb::correlation_y(inst_d, c_d, start);
      double alpha = start.alpha, beta = start.beta.mean(), y = c_d.rho_bar * beta;
      const double w0 = u0 + 1 / Td;
      double discounted = 0, discount = 1;
      bool certified = false, decided = false;
      Curve path{fmt::format("f = {:g}", f), Curve::Style::points, {}, {}, {}, {}};
      path.x.push_back(alpha);
      path.y.push_back(y);
      long long t = 0;
      while (alpha * beta < 0.9) {
        if (++t > 100000) throw std::runtime_error("scb.sign_branch: no landing within 1e5 steps");
        // The certificate's sum runs up to the deciding step only (the sum the verdict's text prints).
        if (!decided) {
          const double n = eta * (alpha / Td + y * alpha * beta) + eta * alpha * alpha * beta;
          discount /= 1 + eta;
          discounted += std::abs(n) * discount;
        }
        sim::scb::population_stage1_step(model, sim_inst, eta, eta_A);
        const auto state = reduce_model(inst_d, model);
        alpha = state.alpha;
        beta = state.beta.mean();
        y = tscb::correlation_y(inst_d, c_d, state);
        path.x.push_back(alpha);
        path.y.push_back(y);
        if (!decided && std::abs(alpha + y + 1 / Td) >= 0.1) {
          decided = true;
          certified = discounted < std::abs(w0) / 2;
        }
      }
      const int predicted = context.mutant_is("sign_of_u0") ? (u0 > 0 ? 1 : (u0 < 0 ? -1 : 0))
                                                            : tscb::predicted_sign_branch(u0, Td);
      const double measured = alpha > 0 ? 1.0 : -1.0;
      verdict.comparisons.push_back(compare(
          fmt::format("sign of alpha at landing (alpha = {:.3f}, beta = {:.3f}, step {}) from u_0 = {:g}/T", alpha, beta,
                      t, f),
          {static_cast<double>(predicted), 0.0, "a sign: exact"}, {measured, 0.0, "deterministic"},
          {certified ? 0.0 : 2.0,
           [&] {
             // Enough digits that the two printed numbers differ (rounding keeps their order).
             int digits = 2;
             while (digits < 17 && fmt::format("{:.{}g}", discounted, digits) ==
                                       fmt::format("{:.{}g}", std::abs(w0) / 2, digits)) {
               ++digits;
             }
             const std::string sum = fmt::format("{:.{}g}", discounted, digits);
             const std::string half = fmt::format("{:.{}g}", std::abs(w0) / 2, digits);
             return certified ? fmt::format("0: certified, the discounted dropped terms up to the first step with "
                                            "|u + 1/T| >= 0.1 sum to {}, below |u_0 + 1/T|/2 = {}",
                                            sum, half)
                              : decided ? fmt::format("2: not certified, the discounted dropped terms up to the first "
                                                      "step with |u + 1/T| >= 0.1 sum to {}, not below |u_0 + 1/T|/2 = "
                                                      "{} (they could move the start across the separatrix)",
                                                      sum, half)
                                        : std::string("2: not certified, |u + 1/T| never reached 0.1 before the landing");
           }()},
          {1.0, "1: a wrong branch is a sign flip (discrepancy 2)"}));
      plot.curves.push_back(std::move(path));
    }
    verdict.plots.push_back(std::move(plot));
    verdict.notes.push_back(fmt::format("T = {}, rho_bar = {:.4g}, K_P = {:.4g}, eta = {:g}, eta_A = eta/(rho_bar K_P) = "
                                        "{:.4g}.",
                                        T, c_d.rho_bar, c_d.K_P, eta, eta_A));
    return verdict;
  }

 private:
  ClaimInfo info_{
      .id = "scb.sign_branch",
      .family = "scb",
      .paper = "Ren, Wang, Lee (NeurIPS 2024), sparse contextual bigrams",
      .source = "specs/scb.md §4.3 (Sign branch), §8 claim 8",
      .tag = Provenance::derived,
      .statement = "With eta_A = eta/(rho_bar K_P), population GD lands on the branch sign(u_0 + 1/T), u = alpha + "
                   "rho_bar beta: a start with u_0 in (-1/T, 0) still ends with alpha, beta > 0.",
      .latex = R"(\operatorname{sign}\alpha_\infty = \operatorname{sign}(u_0 + 1/T),\quad u = \alpha + \bar\rho\beta)",
      .simulation = "sim::scb full-matrix population GD in double from V = mu 1^T + (f/T)(P - mu 1^T), a = 1/T, "
                    "until alpha beta >= 0.9.",
      .params =
          {
              {"N", 3, 2, 20, true, false, "vocabulary size"},
              {"T", 100, 8, 100000, true, false, "context length"},
              {"Q", 2, 1, 20, true, false, "support size of q^(k), <= T/4"},
              {"eta", 0.5, 0, 0.6, false, true, "V step size (eta_A = eta/(rho_bar K_P))"},
          },
      .mutants = {{"sign_of_u0", "branch sign(u_0) instead of sign(u_0 + 1/T)"}},
  };
};

}  // namespace

std::unique_ptr<Claim> make_sign_branch() { return std::make_unique<SignBranch>(); }

}  // namespace dyncheck::checks::scb
