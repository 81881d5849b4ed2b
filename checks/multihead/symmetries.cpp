// Claim multihead.symmetries  [derived]  (specs/multihead.md B.4 D5)
//
// The logits X Θ Xᵀ are even in X, so
//   \f[ F(-X) = -F(X),\qquad \mathbb E[F] = 0,\qquad \mathbb E[F(X)\,x_{ab}x_{a'b'}] = 0, \f]
// tokens permute through: F(ΠX) = ΠF(X); and permuting the heads leaves F unchanged (parameters are
// identifiable at most up to a permutation of the heads).
// Measured: (i) over every input of the cube, with the simulator's layer (sim/multihead):
//   max|F(−X) + F(X)|, max|F(ΠX) − ΠF(X)| (Π the cyclic shift of the tokens), max|F_rev(X) − F(X)|
//   (heads in reverse order); (ii) by the theory's enumeration (theory/multihead/cube.hpp, double):
//   E[F] and E[F x_i x_j] for every pair i < j of the kd entries of X.
// Theory: every residual and expectation above is 0 (Settings: whether F is odd; a mutant says even).
// Tolerances (deterministic, no bias, no statistical term). B = Σ_i max_b Σ_c |W_i(c, b)| bounds |F|
//   (each softmax row is a probability vector and |X| = 1 entrywise).
//   - F(−X): the logits of −X are the same bits (negation is exact), so F(−X) = −F(X) exactly in
//     IEEE arithmetic; tolerance eps B only to keep the ratio finite.
//   - F(ΠX): the logits and X W_i permute exactly; the softmax normaliser and the k-term products sum
//     in another order: |ΔF| <= (2k + m + 2) eps B per entry, doubled for second-order terms.
//   - head order: m summands in another order: 2 m eps B.
//   - expectations: the enumeration's summation bound (L + kd) eps B plus the per-input error of F,
//     (2k + m + 2) eps B (cube.hpp).
//   Resolution: 1e-12 B (spec B.5: identities to 1e-12 for unit-scale quantities).
// Mutants: f_even (theory says F(−X) = F(X): gross) and biased_sampler_p_0_52 (a control that
//   changes the experiment: each entry of X is +1 with probability 0.52 instead of 0.5, so the input
//   law is not symmetric and E[F] is of order 0.04 B: small).

#include <fmt/format.h>

#include <limits>
#include <string>

#include "claims.hpp"
#include "common.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/theory/multihead/cube.hpp"

namespace dyncheck::checks::multihead {
namespace {

using theory::Matrix;

struct Params : ParamSet {
  Shape shape{this, 3, closed(2, 6), 3, closed(1, 5), 2, closed(2, 4)};
  Real theta_scale{this, "theta_scale", 1.0, closed(0, 3), "Theta_i entries are theta_scale N(0, 1)"};
  Real w_scale{this, "w_scale", 1.0, open_closed(0, 10), "W_i entries are w_scale N(0, 1)", Scale::log};
  void check(const Budget& budget) const override {
    // Sim: 4 forward passes per input; theory: one pass with the kd(kd-1)/2 monomials.
    const long long kd = shape.k * shape.d;
    refuse_enumeration(budget, shape.k, shape.d, shape.m, 5.0 + static_cast<double>(kd * kd) / 20.0, false);
  }
};

struct Settings {
  bool odd = true;           ///< F(−X) = −F(X) (false: the mutant's F(−X) = F(X))
  double input_bias = 0.5;   ///< P(x_ab = +1) in the experiment (a control mutant changes it)
};

struct Measured {
  double bound = 0;            ///< B
  double odd_residual = 0;     ///< max |F(−X) + F(X)|
  double even_residual = 0;    ///< max |F(−X) − F(X)|
  double token_residual = 0;   ///< max |F(ΠX) − ΠF(X)|
  double head_residual = 0;    ///< max |F_rev(X) − F(X)|
  Eigen::MatrixXd mean;        ///< E[F] (k × d)
  Eigen::MatrixXd monomials;   ///< E[F_ab x_i x_j], (kd) × (pairs)
  double input_bias = 0.5;
};

struct Predicted {
  bool odd = true;
};

class Symmetries final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  Symmetries() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings& s, const RunContext& context) const override {
    const auto k = p.shape.k.as_int(), d = p.shape.d.as_int();
    const sim::multihead::Layer teacher = draw_teacher(context, d, p.shape.m, p.theta_scale, p.w_scale);
    Measured m;
    m.input_bias = s.input_bias;
    for (const Eigen::MatrixXd& w : teacher.w) m.bound += w.cwiseAbs().colwise().sum().maxCoeff();
    sim::multihead::Layer reversed = teacher;
    std::reverse(reversed.theta.begin(), reversed.theta.end());
    std::reverse(reversed.w.begin(), reversed.w.end());
    Eigen::PermutationMatrix<Eigen::Dynamic> shift(k);
    for (int a = 0; a < k; ++a) shift.indices()[a] = (a + 1) % k;
    const std::uint64_t inputs = std::uint64_t{1} << static_cast<unsigned>(k * d);
    Eigen::MatrixXd X;
    for (std::uint64_t i = 0; i < inputs; ++i) {
      sim::multihead::cube_point(i, k, d, X);
      const Eigen::MatrixXd F = sim::multihead::forward(teacher, X);
      const Eigen::MatrixXd F_neg = sim::multihead::forward(teacher, -X);
      m.odd_residual = std::max(m.odd_residual, (F_neg + F).cwiseAbs().maxCoeff());
      m.even_residual = std::max(m.even_residual, (F_neg - F).cwiseAbs().maxCoeff());
      const Eigen::MatrixXd PX = shift * X;
      m.token_residual =
          std::max(m.token_residual, (sim::multihead::forward(teacher, PX) - shift * F).cwiseAbs().maxCoeff());
      m.head_residual = std::max(m.head_residual, (sim::multihead::forward(reversed, X) - F).cwiseAbs().maxCoeff());
    }
    // Expectations under the experiment's input law, by the theory's enumeration.
    const theory::multihead::Heads<double> heads = to_heads<double>(teacher);
    const int kd = k * d;
    const int pairs = kd * (kd - 1) / 2;
    auto g = [&](const Matrix<double>& Xc) {
      const Matrix<double> F = theory::multihead::layer(heads, Xc);
      Matrix<double> out(kd, 1 + pairs);
      const Eigen::Map<const Eigen::VectorXd> f(F.data(), kd), x(Xc.data(), kd);
      out.col(0) = f;
      int column = 1;
      for (int i = 0; i < kd; ++i) {
        for (int j = i + 1; j < kd; ++j) out.col(column++) = f * (x[i] * x[j]);
      }
      return out;
    };
    const Matrix<double> all = s.input_bias == 0.5
                                   ? theory::multihead::cube_expectation<double>(k, d, g, context.threads)
                                   : theory::multihead::cube_expectation_biased<double>(k, d, s.input_bias, g,
                                                                                        context.threads);
    m.mean = Eigen::Map<const Eigen::MatrixXd>(all.col(0).data(), k, d);
    m.monomials = all.rightCols(pairs);
    return m;
  }

  Predicted predict(const Params&, const Measured&, const Settings& s, const RunContext&) const override {
    return {s.odd};
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext&) const override {
    Verdict verdict;
    const auto k = p.shape.k.as_int(), d = p.shape.d.as_int(), heads = p.shape.m.as_int();
    const double eps = std::numeric_limits<double>::epsilon();
    const double B = m.bound;
    const double per_input = 2.0 * (2 * k + heads + 2) * eps * B;
    const double summation = theory::multihead::cube_summation_error<double>(k, d) * B;
    const Bias exact{0.0, "none: an exact symmetry"};
    const Resolution resolution{1e-12 * B, fmt::format("spec B.5: 1e-12 for unit-scale quantities, times B = {:.3g}", B)};
    auto zero = [&](const std::string& name, double measured, double error, const std::string& reason) {
      verdict.comparisons.push_back(checks::compare(name, {0.0, 0.0, "exact symmetry"},
                                                    measured_exactly(measured, error, reason), exact, resolution));
    };
    zero(t.odd ? "max_X |F(-X) + F(X)| = 0 (F odd)" : "max_X |F(-X) - F(X)| = 0 (F even)",
         t.odd ? m.odd_residual : m.even_residual, eps * B,
         "negation is exact in IEEE arithmetic, so the logits of -X are the same bits; eps B keeps the ratio finite");
    zero("max_X |F(PX) - P F(X)| = 0 (token permutation, P cyclic shift)", m.token_residual, per_input,
         fmt::format("the softmax normaliser and the k-term products sum in another order: 2 (2k + m + 2) eps B = {:.2g}",
                     per_input));
    zero("max_X |F_heads reversed(X) - F(X)| = 0 (head permutation)", m.head_residual, 2.0 * heads * eps * B,
         "m head outputs summed in another order: 2 m eps B");
    const double expectation_error = summation + per_input;
    const std::string expectation_reason = fmt::format(
        "enumeration summation bound (L + kd) eps B = {:.2g} plus the per-input error of F, 2 (2k + m + 2) eps B",
        summation);
    verdict.comparisons.push_back(compare_matrices("E[F] = 0", Eigen::MatrixXd::Zero(k, d), 0.0, "exact symmetry", m.mean,
                                                   expectation_error, expectation_reason, exact, resolution));
    verdict.comparisons.push_back(compare_matrices(
        "E[F x_i x_j] = 0 for every pair of entries of X",
        Eigen::MatrixXd::Zero(m.monomials.rows(), m.monomials.cols()), 0.0, "exact symmetry", m.monomials,
        expectation_error, expectation_reason, exact, resolution));
    verdict.notes.push_back(fmt::format(
        "Teacher from the master seed: m = {} heads, Theta_i = {} N(0,1), W_i = {} N(0,1), d = {}; all 2^{} inputs "
        "enumerated; input law P(x = +1) = {}.",
        heads, p.theta_scale.value(), p.w_scale.value(), d, k * d, m.input_bias));
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "multihead.symmetries",
        .family = "multihead",
        .paper = "Chen, Li (STOC 2025), provably learning a multi-head attention layer",
        .source = "specs/multihead.md B.4 D5",
        .tag = Provenance::derived,
        .statement = "F is odd (F(-X) = -F(X), hence E[F] = 0 and F is uncorrelated with every degree-2 monomial of "
                     "X), equivariant under token permutations and invariant under head permutations.",
        .latex = R"(F(-X) = -F(X),\ F(\Pi X) = \Pi F(X),\ \mathbb E[F] = 0,\ \mathbb E[F\,x_i x_j] = 0)",
        .simulation = "Every input of the cube through the simulator's layer (residuals), and the theory's enumeration "
                      "of E[F] and E[F x_i x_j].",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"f_even", "F(-X) = F(X) (the logits' evenness carried to F)", [](Settings& s) { s.odd = false; }},
        {"biased_sampler_p_0_52", "control: inputs with P(x = +1) = 0.52 (a law that is not symmetric)",
         [](Settings& s) { s.input_bias = 0.52; }, true},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_symmetries() { return std::make_unique<Symmetries>(); }

}  // namespace dyncheck::checks::multihead
