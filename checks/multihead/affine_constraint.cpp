// Claim multihead.affine_constraint  [reconstructed]  (specs/multihead.md B.2, slides 28-30)
//
// The slides' affine constraints on the attention matrices, in the reading of the spec: if the first
// row of a head's attention pattern is s = softmax(x_1ᵀ Θ Xᵀ), then for all j, j'
//   \f[ x_1^\top\Theta x_j - x_1^\top\Theta x_{j'} = \ln(s_j/s_{j'}), \f]
// an affine constraint on Θ (exact for any softmax row, since the normaliser cancels). [reconstructed]:
// the transcript loses the symbols; this is the spec's reading, and the paper's certification only
// enforces it approximately (with an error set by the accuracy of the Σ W_i estimate), which is not
// checked here.
// Measured: R random Boolean inputs and m random heads (simulator: sim/multihead attention), the
//   attention row of token 1, ln(s_j/s_j') for every pair and the logit differences.
// Theory: ln(s_j/s_j') = c (logit difference) with c = 1 (Settings; mutants edit c).
// Tolerance (deterministic): numerical = the rounding of the two sides, per pair:
//   ln of a ratio of two softmax values, each within (k + 3) eps relative: 2(k + 3) eps + eps |ln ratio|;
//   each logit (two nested d-term inner products, |X| = 1) within 2 d³ eps max|Θ| of the exact one, so each
//   difference within 4 d³ eps max|Θ|, for the check's logits and for the
//   softmax's own (computed as (XΘ)Xᵀ); portable::log adds < 1 ulp. No bias, no statistical term (the identity holds for every input).
//   Resolution: 1e-12 (1 + max|logit difference|) (spec: identities to 1e-12).
// Mutants: inverse_sqrt_d_scaling (c = 1/√d: softmax with the 1/√d the paper does not use; gross for
//   d >= 2) and log_ratio_3_percent (c = 1.03: small).

#include <fmt/format.h>

#include <dyncheck/portable/math.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "claims.hpp"
#include "common.hpp"
#include "dyncheck/checks/claim_shape.hpp"

namespace dyncheck::checks::multihead {
namespace {

struct Params : ParamSet {
  Shape shape{this, 4, closed(2, 16), 3, closed(2, 16), 2, closed(1, 4)};
  Real theta_scale{this, "theta_scale", 0.5, closed(0.01, 1), "Theta_i entries are theta_scale N(0, 1)", Scale::log};
  static std::size_t inputs(const Budget& budget) { return budget.pick<std::size_t>(50, 2000, 20000); }
  void check(const Budget& budget) const override {
    // Logit differences up to 2 d^2 max|Theta|; with max|Theta| <= 6 theta_scale (each entry beyond 6 sd with
    // probability 2e-9) they stay below 700, far from exp underflow (745), when 12 d^2 theta_scale < 700.
    if (12.0 * static_cast<double>(shape.d * shape.d) * theta_scale > 700) {
      throw ParamError("d", "12 d^2 theta_scale must stay below 700 (softmax underflow of the smallest entry)");
    }
    const double seconds = static_cast<double>(inputs(budget) * shape.m) * 1e-7 *
                           static_cast<double>(shape.k * shape.k * (shape.d + shape.k));
    if (seconds > enumeration_allowance(budget)) throw ParamError("k", "k^2 (k + d) m too large for this budget");
  }
};

struct Settings {
  bool inverse_sqrt_d = false;
  double coefficient = 1.0;
};

struct Measured {
  Eigen::VectorXd log_ratio, logit_difference, tolerance;
  double theta_max = 0;
  double logit_rounding = 0;  ///< 4 d³ eps max|Θ|: one computed logit difference
};

struct Predicted {
  double coefficient = 1.0;
};

class AffineConstraint final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  AffineConstraint() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings&, const RunContext& context) const override {
    const auto k = p.shape.k.as_int(), d = p.shape.d.as_int();
    const sim::multihead::Layer heads = draw_teacher(context, d, p.shape.m, p.theta_scale, 1.0);
    const double eps = std::numeric_limits<double>::epsilon();
    Measured m;
    for (const Eigen::MatrixXd& t : heads.theta) m.theta_max = std::max(m.theta_max, t.cwiseAbs().maxCoeff());
    const std::size_t R = Params::inputs(context.budget);
    const auto pairs = static_cast<Eigen::Index>(k * (k - 1) / 2);
    const Eigen::Index total = static_cast<Eigen::Index>(R) * p.shape.m * pairs;
    m.log_ratio.resize(total);
    m.logit_difference.resize(total);
    m.tolerance.resize(total);
    sim::Rng rng = sim::derive_stream(context.seed, context.claim_id + "/inputs", 0);
    Eigen::MatrixXd X;
    Eigen::Index n = 0;
    const double logit_rounding = 4.0 * d * d * d * eps * m.theta_max;
    m.logit_rounding = logit_rounding;
    for (std::size_t r = 0; r < R; ++r) {
      sim::multihead::sample_boolean(rng, k, d, X);
      for (const Eigen::MatrixXd& theta : heads.theta) {
        const Eigen::MatrixXd S = sim::multihead::attention(theta, X);
        const Eigen::VectorXd z = X * (theta.transpose() * X.row(0).transpose());
        for (int j = 0; j < k; ++j) {
          for (int jp = j + 1; jp < k; ++jp) {
            m.log_ratio[n] = portable::log(S(0, j) / S(0, jp));
            m.logit_difference[n] = z[j] - z[jp];
            m.tolerance[n] = 2.0 * (k + 3) * eps + eps * std::abs(m.log_ratio[n]) + 2 * logit_rounding;
            ++n;
          }
        }
      }
    }
    return m;
  }

  Predicted predict(const Params& p, const Measured&, const Settings& s, const RunContext&) const override {
    return {s.coefficient * (s.inverse_sqrt_d ? 1.0 / std::sqrt(static_cast<double>(p.shape.d.value())) : 1.0)};
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext& context) const override {
    Verdict verdict;
    const Eigen::VectorXd predicted = t.coefficient * m.logit_difference;
    const Eigen::Index w = worst_entry(predicted, m.log_ratio, m.tolerance);
    const double largest = m.logit_difference.cwiseAbs().maxCoeff();
    verdict.comparisons.push_back(checks::compare(
        fmt::format("ln(s_j / s_j') = x_1'Theta x_j - x_1'Theta x_j' (worst of {} pairs over {} inputs and {} heads)",
                    m.log_ratio.size(), Params::inputs(context.budget), p.shape.m.value()),
        {predicted[w], m.logit_rounding, "rounding of the computed logit difference: 4 d^3 eps max|Theta| (two d-term inner products per logit, |X| = 1)"},
        measured_exactly(m.log_ratio[w], m.tolerance[w] - m.logit_rounding,
                         "the softmax's own logits (the same bound) and ln of a ratio of two softmax values, each within "
                         "(k + 3) eps: 2 (k + 3) eps + eps |ln ratio|"),
        {0.0, "none: exact for every softmax row"},
        {1e-12 * (1 + largest), "1e-12 (1 + max|logit difference|) (spec: identities to 1e-12)"}));
    verdict.notes.push_back(
        "[reconstructed]: the slides' symbols are lost in the transcript; this is the spec's reading of the affine "
        "constraint. The paper certifies it only approximately (error set by the accuracy of the sum W_i estimate); "
        "that approximate version is not checked.");
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "multihead.affine_constraint",
        .family = "multihead",
        .paper = "Chen, Li (STOC 2025), provably learning a multi-head attention layer",
        .source = "specs/multihead.md B.2 (talk slides 28-30)",
        .tag = Provenance::reconstructed,
        .statement = "A softmax attention row s of token 1 fixes every logit difference: x_1'Theta x_j - x_1'Theta x_j' "
                     "= ln(s_j / s_j'), an affine constraint on Theta.",
        .latex = R"(x_1^\top\Theta x_j - x_1^\top\Theta x_{j'} = \ln(s_j/s_{j'}))",
        .simulation = "Random Boolean inputs and heads through the simulator's attention.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"inverse_sqrt_d_scaling", "ln(s_j/s_j') = (logit difference)/sqrt(d) (a 1/sqrt(d) the paper does not use)",
         [](Settings& s) { s.inverse_sqrt_d = true; }},
        {"log_ratio_3_percent", "ln(s_j/s_j') = 1.03 (logit difference)", [](Settings& s) { s.coefficient = 1.03; }},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_affine_constraint() { return std::make_unique<AffineConstraint>(); }

}  // namespace dyncheck::checks::multihead
