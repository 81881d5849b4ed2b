// Claim multihead.non_identifiability  [reconstructed]  (specs/multihead.md B.5 E-B4; exploratory)
//
// With m = 2 heads of equal attention, Θ_1 = Θ_2 = Θ,
//   \f[ F(X) = \operatorname{softmax}(X\Theta X^\top)\,X\,(W_1 + W_2), \f]
// so F depends on (W_1, W_2) only through W_1 + W_2: the parameters (W_1 + Δ, W_2 − Δ) give the same function
// for every Δ (parameter recovery is impossible), while a single head (Θ, W_1 + W_2) recovers F exactly
// (function recovery is possible). [reconstructed]: the spec's E-B4 is an exploratory experiment, not a
// statement of the paper; this claim checks the identity it rests on, over the whole cube.
// Measured (simulator, every input of {±1}^{k×d}): max|F_{W_1,W_2}(X) − F_{W_1+Δ,W_2−Δ}(X)| and
//   max|F(X) − F_single(X)|, with Δ = w_scale N(0, 1) from the seed (‖Δ‖_F reported).
// Theory: both are 0.
// Tolerance (deterministic): two evaluations of F, each within 2(2k + m + 2) eps B' of the exact value
//   (symmetries.cpp; B' the column-sum bound of |W_1| + |W_2| + 2|Δ|); no bias, no statistical term.
//   Resolution: 1e-12 B' (spec: identities to 1e-12).
// Mutants (controls that change the experiment): theta_2_perturbed_3_percent (Θ_2 = Θ_1 + 0.03 max|Θ_1| N(0, 1):
//   the heads are no longer equal, so F sees W_1 and W_2 separately: small) and theta_2_negated (Θ_2 = −Θ_1: gross).

#include <fmt/format.h>

#include <limits>
#include <string>

#include "claims.hpp"
#include "common.hpp"
#include "dyncheck/checks/claim_shape.hpp"

namespace dyncheck::checks::multihead {
namespace {

struct Params : ParamSet {
  Int k{this, "k", 3, closed(2, 6), "tokens per input"};
  Int d{this, "d", 3, closed(1, 4), "token dimension"};
  Real theta_scale{this, "theta_scale", 1.0, closed(0.1, 3), "Theta entries are theta_scale N(0, 1)"};
  Real w_scale{this, "w_scale", 1.0, closed(0.1, 10), "W_i and Delta entries are w_scale N(0, 1)", Scale::log};
  void check(const Budget& budget) const override { refuse_enumeration(budget, k, d, 2, 6, false); }
};

struct Settings {
  double perturbation = 0;  ///< Θ_2 = Θ_1 + perturbation max|Θ_1| N(0, 1)
  bool negate = false;      ///< Θ_2 = −Θ_1
};

struct Measured {
  double bound = 0, delta_norm = 0;
  double reparametrised = 0;  ///< max|F − F_{W_1+Δ, W_2−Δ}|
  double single_head = 0;     ///< max|F − F_single|
};

struct Predicted {};

class NonIdentifiability final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  NonIdentifiability() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings& s, const RunContext& context) const override {
    const auto k = p.k.as_int(), d = p.d.as_int();
    sim::multihead::Layer teacher = draw_teacher(context, d, 2, p.theta_scale, p.w_scale);
    sim::Rng rng = sim::derive_stream(context.seed, context.claim_id + "/delta", 0);
    Eigen::MatrixXd delta(d, d), noise(d, d);
    for (Eigen::Index i = 0; i < delta.size(); ++i) delta.data()[i] = p.w_scale * sim::standard_normal(rng);
    for (Eigen::Index i = 0; i < noise.size(); ++i) noise.data()[i] = sim::standard_normal(rng);
    teacher.theta[1] = s.negate ? Eigen::MatrixXd(-teacher.theta[0])
                                : Eigen::MatrixXd(teacher.theta[0] + s.perturbation * teacher.theta[0].cwiseAbs().maxCoeff() * noise);
    sim::multihead::Layer moved = teacher;
    moved.w[0] += delta;
    moved.w[1] -= delta;
    sim::multihead::Layer single;
    single.theta = {teacher.theta[0]};
    single.w = {teacher.w[0] + teacher.w[1]};
    Measured m;
    m.bound = (teacher.w[0].cwiseAbs() + teacher.w[1].cwiseAbs() + 2 * delta.cwiseAbs()).colwise().sum().maxCoeff();
    m.delta_norm = delta.norm();
    const std::uint64_t inputs = std::uint64_t{1} << static_cast<unsigned>(k * d);
    Eigen::MatrixXd X;
    for (std::uint64_t i = 0; i < inputs; ++i) {
      sim::multihead::cube_point(i, k, d, X);
      const Eigen::MatrixXd F = sim::multihead::forward(teacher, X);
      m.reparametrised = std::max(m.reparametrised, (F - sim::multihead::forward(moved, X)).cwiseAbs().maxCoeff());
      m.single_head = std::max(m.single_head, (F - sim::multihead::forward(single, X)).cwiseAbs().maxCoeff());
    }
    return m;
  }

  Predicted predict(const Params&, const Measured&, const Settings&, const RunContext&) const override { return {}; }

  Verdict compare(const Params& p, const Measured& m, const Predicted&, const RunContext&) const override {
    Verdict verdict;
    const auto k = p.k.as_int();
    const double per_evaluation = 2.0 * (2 * k + 2 + 2) * std::numeric_limits<double>::epsilon() * m.bound;
    const std::string reason = fmt::format(
        "two evaluations of F, each within 2 (2k + m + 2) eps B' = {:.2g} (B' the column-sum bound of |W_1| + |W_2| + "
        "2|Delta|)",
        per_evaluation);
    const Resolution resolution{1e-12 * m.bound, "1e-12 B' (spec: identities to 1e-12)"};
    const Bias exact{0.0, "none: an exact identity when Theta_1 = Theta_2"};
    verdict.comparisons.push_back(checks::compare(
        fmt::format("max_X |F_(W1, W2) - F_(W1 + Delta, W2 - Delta)| = 0 (|Delta|_F = {:.3g}: parameters not identifiable)",
                    m.delta_norm),
        {0.0, 0.0, "exact"}, measured_exactly(m.reparametrised, 2 * per_evaluation, reason), exact, resolution));
    verdict.comparisons.push_back(checks::compare(
        "max_X |F - F_single head (Theta, W1 + W2)| = 0 (the function is recoverable)", {0.0, 0.0, "exact"},
        measured_exactly(m.single_head, 2 * per_evaluation, reason), exact, resolution));
    verdict.notes.push_back(
        "[reconstructed] exploratory experiment of spec B.5 E-B4 (not a statement of the paper): with Theta_1 = Theta_2, "
        "distinct parameters give the same function over the whole cube, and one head recovers it.");
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "multihead.non_identifiability",
        .family = "multihead",
        .paper = "Chen, Li (STOC 2025), provably learning a multi-head attention layer",
        .source = "specs/multihead.md B.5 E-B4 (exploratory)",
        .tag = Provenance::reconstructed,
        .statement = "With Theta_1 = Theta_2 the layer depends only on W_1 + W_2: (W_1 + Delta, W_2 - Delta) gives the "
                     "same function on every input, and one head (Theta, W_1 + W_2) recovers it.",
        .latex = R"(\Theta_1 = \Theta_2 \Rightarrow F_{W_1 + \Delta,\,W_2 - \Delta} = F_{W_1, W_2} = \operatorname{softmax}(X\Theta X^\top)X(W_1 + W_2))",
        .simulation = "Every input of the cube through the simulator's layer.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"theta_2_perturbed_3_percent", "control: Theta_2 = Theta_1 + 0.03 max|Theta_1| N(0, 1)",
         [](Settings& s) { s.perturbation = 0.03; }, true},
        {"theta_2_negated", "control: Theta_2 = -Theta_1", [](Settings& s) { s.negate = true; }, true},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_non_identifiability() { return std::make_unique<NonIdentifiability>(); }

}  // namespace dyncheck::checks::multihead
