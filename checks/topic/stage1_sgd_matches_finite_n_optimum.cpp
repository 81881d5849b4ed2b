// Two claims, one body: the key set is the claim's setting (KeySet::unselected = (C), KeySet::all = (P)). Both train
// W^V by the same SGD experiment (stage1_sgd.hpp) and compare block means and the structural within-block spread;
// what the key set changes is the theory ((C): the closed form with its transient bound; (P): the normal equations
// with the exact transient), the compared blocks and the plot. Each keeps its id, statement, parameters and mutants.
//
// Claim topic.stage1_sgd_matches_finite_n_optimum  [derived]  (specs/topic.md §5 "(C), finite N", §9 C2)
//
// Plain minibatch SGD on sampled, masked documents, training W^V of the one-layer model with uniform
// attention (W^K = W^Q = 0 frozen), one-hot embedding and identity decoder frozen, key set (C), squared loss
// and ridge lambda ||W^V||^2, converges (iterate average) to the finite-N stage-1 optimum:
//   c_s = c_diag = (g_1/T + (1 - 1/T) g_0)/v,  c_d = (g_1 - g_0)/(v T),  g_k = pi rho_k/(lambda + eta/V + (pi - eta) rho_k),
// eta = E_w[1/U; U >= 1] with U ~ Bin(N - 1, 1 - p_m) keys (not the N -> infinity values), and the averaged W has no
// within-block structure beyond run-to-run noise: the structural within-block spread (noise removed by the
// cross-run product of stage1_sgd.hpp) is below the spec's visibility bound, std < 0.1 (c_s - c_d) (spec §9 C2).
// Simulated: R independent runs (own streams) from W = 0, K steps of B documents (theta ~ Dir(alpha),
// N ~ U{N_min..N_max}, masking p_m, p_c, p_r), the minibatch loss normalised by B E[#selected per document]
// (so the stochastic gradient is unbiased for the population objective J = L + lambda ||W||^2 with documents
// weighted by their selected tokens); the iterates of steps K/2+1..K averaged; per run the block means of the
// average and its within-block standard deviation.
// Theory: the closed form (theory/topic/stage_one.hpp) in 50 and 100 digits.
// Tolerance per block mean:
//   numerical: |50 - 100 digits| + half an ulp, and the double arithmetic of SGD (K steps of sums of ~B N terms:
//     4 K B N_max eps x 2/v, far below the rest);
//   bias: the expected iterate is exactly gradient descent on J (the stochastic gradient is affine in W with
//     W-independent coefficients), E W_k - W* = -W* (I - 2 lr H)^k with H = S + lambda I; W* lives on the topic
//     directions, where H >= h_min = lambda + pi rho_0 (pi >= 1 - p_m^(N_min-1)), so once 2 lr (2/V + lambda) <= 1
//     (checked) every entry of the averaged transient is at most (2/v)(1 - 2 lr h_min)^(K/2);
//   statistical: Student-t half-width over the R runs at the claim's share split over the 4 comparisons (the runs
//     are independent; each block mean averages ~V^2 K/2 correlated entries, close to normal).
//   within-block structure (same-topic and other-topic classes): the mean over the R/2 disjoint run pairs of the
//     cross-run product c_k (unbiased for the structural variance D_k whatever the SGD noise: derivation in
//     stage1_sgd.hpp), compared D_k <= 0 with its Student-t half-width, at the resolution (0.1 (c_s - c_d))^2.
//     This replaces the raw within-block std of session 10, which also counted the SGD noise of the averaged W
//     (sd ~ lambda^(-1/2) at lr = 20, K = 300) and so FAILed below lambda ~ 5e-4 though the optimum is exactly
//     block-constant there too; the range now reaches the spec's sampled-test limit lambda >= 1e-4.
// Resolution: 0.3% of c_s for c_s (eta_dropped moves c_s by 0.7% at the defaults), 1% of c_s for c_diag (V entries
// only), 8% of c_d for c_d (eta_dropped moves it by 8%), and the spread bound itself.
// Mutants: c_d_wrong_sign and ridge_half_convention (lambda/2: 8% on c_s) are gross; eta_dropped (the N -> infinity
// closed form, 0.7% on c_s and 8% on c_d) is the small one, and it is the finite-N effect the claim is about.
// (C1's small mutant eta_all_other_positions moves c_s by 0.1% and c_d by 1.2%: below this claim's resolution at ci.)
// Report plot, not compared (issue #12: "c_s, c_d against lambda, theory curves, SGD points with bands"): besides the
// claim's lambda, R_sweep further runs (own streams "lambda_<k>") at each of the ridges 1e-4, 3e-4, 3e-3 that the
// step size allows (2 lr (2/V + lambda) <= 1 and 2 lr h_min K/2 >= 12, as check() requires of the claim's lambda);
// their block means c_s, c_d with Student-t bands (at the comparisons' share) against the finite-N closed form.
//
// Claim topic.stage1_all_keys_sgd_matches_finite_n_optimum  [derived]  (specs/topic.md §5 "(P), finite N", §9 C3)
//
// With the standard BERT key set (P) (every position is a key, the query's own position included), uniform
// attention, one-hot embedding, identity decoder, squared loss and ridge lambda ||W^V||^2, plain minibatch SGD on
// sampled masked documents learns the finite-N (P) optimum W* = C^T (S + lambda I)^{-1} of the normal equations of
// theory/topic/stage_one.hpp (all_keys_equations with the length statistics): block-constant with four values
// c_diag, c_s, c_d, c_M, and c_diag > c_s at finite N because the query's own token (kept with probability p_c:
// then it is the target word) is among its keys (spec §5: "the self term makes c_diag > c_s"). At the defaults
// (lambda = 1e-3) the spec's table gives c_diag = 0.0936498, c_s = 0.0861728, c_d = -0.0039808, c_M = 0.0397075.
// Simulated: R independent runs (own streams) from W = 0, K steps of B documents (theta ~ Dir(alpha),
// N ~ U{N_min..N_max}, masking p_m, p_c, p_r), the minibatch loss normalised by B E[#selected per document]
// (stage1_sgd.hpp: the stochastic gradient is unbiased for J and affine in W, so the expected iterate is exactly
// gradient descent on J); per run the average of the iterates of steps K/2+1..K.
// Theory: W* by a 50-digit LU solve of the D x D system (D = V + 1), block means of its first two topics' rows (the
// law is invariant under topic and within-topic word permutations); the expected iterate average after K steps is
// W* + Tr exactly, Tr = -W* Q diag(f(h)) Q^T with H = S + lambda I = Q diag(h) Q^T and
// f(h) = mean_{k=K/2+1..K} (1 - 2 lr h)^k (eigen-decomposition in double). Tr matters here: the self term lives on
// the within-block directions, where h is only lambda + O(1/(N V)), so c_diag - c_s converges slowly (measured at
// ci: Tr moves c_diag by -1.5e-6 at the defaults, by -9.6e-3 at lambda = 1e-4, where the claim still passes).
// Tolerance per block mean:
//   numerical: |double eigen route - 50-digit LU| for W* (bounds the double error of Tr too) + half an ulp, plus
//     the double arithmetic of SGD, 4 K B N_max eps (2/v);
//   bias: none (the expected iterate average is computed exactly, not bounded);
//   statistical: Student-t half-width over the R runs at the claim's share split over the 6 comparisons.
// Within-block structure (same-topic and other-topic classes): as topic.stage1_sgd_matches_finite_n_optimum,
// the cross-run products (stage1_sgd.hpp) estimate the structural variance D_k whatever the SGD noise; compared
// D_k <= 0 at the resolution (0.1 (c_s - c_d))^2.
// Resolution: c_s 0.5% of c_s; c_diag 2% of c_s (V entries only; the self term is 8% of c_s at the defaults);
// c_d 10% of |c_d|; c_M 2% of c_M.
// Mutants: key_set_C (the (C) finite-N optimum where (P) is meant: c_M = 0, c_d > 0; gross) and the small
// own_position_as_key (the self term missing: the query's own position drawn from the key law nu, independent of the
// target, so c_diag = c_s; moves c_diag by the self term, 7e-3 = 8% of c_s at the defaults).

#include <fmt/format.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "claims.hpp"
#include "common.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/stats.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/topic/documents.hpp"
#include "dyncheck/sim/topic/model.hpp"
#include "dyncheck/theory/numeric/scalar.hpp"
#include "dyncheck/theory/topic/stage_one.hpp"
#include "stage1_sgd.hpp"

namespace dyncheck::checks::topic {
namespace {

using theory::mp100;
using theory::mp50;
namespace tt = theory::topic;
namespace st = sim::topic;
using Keys = st::KeySet;
constexpr double eps = std::numeric_limits<double>::epsilon();
constexpr int checkpoints = 30;

template <Keys K>
struct Settings;

template <Keys K>
struct Params : ParamSet {
  static constexpr bool all = K == Keys::all;

  Vocabulary vocabulary{this, 20, 20};
  Real alpha{this, "alpha", 0.1, closed(0.05, 2), "Dirichlet concentration of theta", Scale::log};
  // Lower end 1e-4 (spec §9 C2: below it the noise amplification cond ~ 1/lambda of sampled tests). Session 10's
  // measured limit 6e-4 came from comparing the raw within-block std, SGD noise included; the structural spread
  // (stage1_sgd.hpp) has no such limit: small ridges only widen its half-width.
  Real lambda{this, "lambda", 1e-3, closed(1e-4, 0.1), "ridge coefficient (>= 1e-4: spec §9 C2's limit for sampled tests)",
              Scale::log};
  Masking masking{this};
  Lengths lengths{this, 400};
  // (P): lr <= 40 (the top eigenvalue of S + lambda I includes the self term; check() refines it).
  Real lr{this, "lr", 20, open_closed(0, all ? 40 : 200), "SGD step size", Scale::log};
  Int batch{this, "batch", 40, closed(1, 200), "documents per step"};

  /// (C): a lower bound on the eigenvalues of H = S + lambda I on the topic directions, where W* lives:
  /// (pi - eta) rho_0 + eta/V >= pi rho_0 (rho_0 <= 1/V), pi >= 1 - p_m^(N_min - 1), rho_0 = 1/(V (1 + T alpha)).
  double h_min() const {
    const double V = static_cast<double>(vocabulary.V()), T = static_cast<double>(vocabulary.T.value());
    double miss = 1;
    for (long long i = 1; i < lengths.N_min.value(); ++i) miss *= masking.p_m;
    return lambda + (1 - miss) / (V * (1 + T * alpha));
  }

  static std::size_t replicates(const Budget& budget) { return budget.pick<std::size_t>(4, 32, 64); }
  static long long steps(const Budget& budget) { return budget.pick<long long>(240, 300, 6000); }
  /// (C): runs per ridge of the report's lambda sweep (plot only), and the ridges it may use.
  static std::size_t sweep_replicates(const Budget& budget) { return all ? 0 : budget.pick<std::size_t>(2, 8, 16); }
  static constexpr std::array<double, 3> sweep_lambdas = {1e-4, 3e-4, 3e-3};
  /// The sweep's ridges the step size allows (the same two conditions check() imposes on lambda).
  std::vector<double> sweep(const Budget& budget) const {
    std::vector<double> out;
    if constexpr (!all) {
      const double V = static_cast<double>(vocabulary.V());
      for (const double l : sweep_lambdas) {
        if (std::abs(l / lambda - 1) < 1e-9) continue;
        const double h = h_min() - lambda + l;
        if (2 * lr * (2 / V + l) <= 1 && static_cast<double>(steps(budget)) / 2 * 2 * lr * h >= 12) out.push_back(l);
      }
    }
    return out;
  }

  void check(const Budget& budget) const override;
};

template <Keys K>
struct Settings {
  Keys keys = K;              ///< the theory's key set
  bool own_token_law = true;  ///< (P) false: the query's own position drawn from the key law (self term missing)
  bool eta = true;            ///< (C) false: the N -> infinity closed form
  double c_d_sign = 1;        ///< (C) the closed form's c_d is c_d_sign x c_d
  double ridge_factor = 1;    ///< (C) the closed form's lambda is ridge_factor x lambda
};

/// The normal equations (P or C) with the length statistics of finite documents.
template <class S, Keys K>
tt::NormalEquations<S> equations(const Params<K>& p, const Settings<K>& s) {
  const int T = p.vocabulary.T.as_int(), v = p.vocabulary.v.as_int();
  const auto m = tt::dirichlet_moments<S>(T, S(p.alpha.value()));
  const tt::LengthStatistics<S> length =
      tt::length_statistics<S>(p.lengths.N_min.as_int(), p.lengths.N_max.as_int(), S(p.masking.p_m.value()));
  if (s.keys != Keys::all) return tt::excluded_keys_equations<S>(T, v, m, &length);
  return tt::all_keys_equations<S>(T, v, m, S(p.masking.p_m.value()), S(p.masking.p_c.value()), S(p.masking.p_r.value()),
                                   &length, s.own_token_law);
}

/// The (C) closed form of the block values (finite N with eta unless `finite` is false).
template <class S>
tt::BlockValues<S> closed_form(const Params<Keys::unselected>& p, const Settings<Keys::unselected>& s, bool finite) {
  const int T = p.vocabulary.T.as_int(), v = p.vocabulary.v.as_int();
  const auto m = tt::dirichlet_moments<S>(T, S(p.alpha.value()));
  const tt::LengthStatistics<S> length =
      tt::length_statistics<S>(p.lengths.N_min.as_int(), p.lengths.N_max.as_int(), S(p.masking.p_m.value()));
  tt::BlockValues<S> b = tt::excluded_keys_closed_form<S>(T, v, tt::rho_topic(m, v), S(p.lambda.value()) * S(s.ridge_factor),
                                                          finite && s.eta ? &length : nullptr);
  b.diff *= S(s.c_d_sign);
  return b;
}

template <Keys K>
void Params<K>::check(const Budget& budget) const {
  masking.check();
  lengths.check();
  const double V = static_cast<double>(vocabulary.V());
  const double K_steps = static_cast<double>(steps(budget));
  if constexpr (all) {
    const double D = V + 1;
    // The 50-digit LU of the D x D system: D^3/3 multiprecision operations (~1e6 per second).
    const double theory_work = D * D * D / 3;
    require(theory_work <= budget.pick(1e6, 3e6, 3e7), "T",
            fmt::format("T v = {} words: the 50-digit solve takes about {:.3g} operations, above the budget's {:.3g}",
                        vocabulary.V(), theory_work, budget.pick(1e6, 3e6, 3e7)));
    // The mean dynamics must be stable: |1 - 2 lr h| < 1 for every eigenvalue h of H = S + lambda I, i.e.
    // 2 lr h_max < 2; required with a margin, 2 lr h_max <= 1.9 (h_max from the double equations: D <= 401).
    const auto eq = equations<double>(*this, Settings<K>{});
    const double h_max =
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(eq.S_matrix, Eigen::EigenvaluesOnly).eigenvalues().maxCoeff() + lambda;
    require(2 * lr * h_max <= 1.9, "lr",
            fmt::format("2 lr h_max must be < 2 (stable mean dynamics): with h_max = {:.4g} (the top eigenvalue of "
                        "S + lambda I), lr <= {:.4g}",
                        h_max, 1.9 / (2 * h_max)));
  } else {
    require(2 * lr * (2 / V + lambda) <= 1, "lr",
            fmt::format("2 lr (2/V + lambda) must be <= 1 (stable mean dynamics), i.e. lr <= {:.4g}", 1 / (2 * (2 / V + lambda))));
    // The transient bound (2/v)(1 - 2 lr h_min)^(K/2) must be far below the resolution (0.3% c_s ~ 3e-3 / v).
    require(K_steps / 2 * 2 * lr * h_min() >= 12, "lr",
            fmt::format("lr h_min = {:.3g} too small: K/2 = {:g} steps cannot forget the start (need 2 lr h_min K/2 >= 12)",
                        lr * h_min(), K_steps / 2));
  }
  // Cost: R K B documents of ~N_max tokens plus V (V+1) per step ((C): and the report's lambda sweep, 3 R_sweep runs).
  const double runs = static_cast<double>(replicates(budget) + 3 * sweep_replicates(budget));
  const double work = runs * K_steps *
                      (static_cast<double>(batch.value()) * (static_cast<double>(lengths.N_max.value()) * 40 + 30 * V) + 6 * V * V);
  // ~4e8 of these per second (measured); the limits scale with (R + 3 R_sweep) / R so that the sweep refuses no point.
  const double limit = budget.pick(5e8, 5e9, 2e11) * runs / static_cast<double>(replicates(budget));
  require(work <= limit, "batch", fmt::format("about {:.3g} operations, above the budget's {:.3g}", work, limit));
}

struct Measured {
  std::vector<Stage1SgdRun> runs;
  std::vector<double> sweep_lambda;                    ///< (C) the report's further ridges
  std::vector<std::vector<Stage1SgdRun>> sweep_runs;  ///< (C) their runs (plot only)
  std::vector<long long> record_steps;  ///< the checkpoints of Stage1SgdRun::checkpoint_means
  double bias = 0;                      ///< (C) the transient bound; (P) 0 (the transient is predicted exactly)
  double arithmetic = 0;
};

/// Per block class (diag, same, diff, mask): the expected block mean of the averaged iterate, its numerical error,
/// the optimum and the transient of the K-step average ((C): the transient is bounded as a bias instead, 0 here).
struct Predicted {
  std::array<double, 4> expected{}, error{}, optimum{}, transient{};
  double same_infinite = 0;  ///< (C) the N -> infinity c_s
};

double integer_power(double x, long long n) {
  double result = 1;
  while (n > 0) {
    if (n & 1) result *= x;
    x *= x;
    n >>= 1;
  }
  return result;
}

template <class S>
std::array<double, 4> means_of(const theory::Matrix<S>& W, int T, int v) {
  const auto b = tt::block_summary<S>(W, T, v).mean;
  std::array<double, 4> out{theory::to_double(b.diag), theory::to_double(b.same), theory::to_double(b.diff),
                            theory::to_double(b.mask)};
  if (v == 1) out[same_class] = out[diag_class];
  return out;
}

/// (C): the closed form in 50 and 100 digits; c_diag = c_s.
Predicted predict_closed_form(const Params<Keys::unselected>& p, const Settings<Keys::unselected>& s) {
  const auto low = closed_form<mp50>(p, s, true);
  const auto high = closed_form<mp100>(p, s, true);
  Predicted t;
  const double same = theory::to_double(high.same), diff = theory::to_double(high.diff);
  const double same_error = theory::to_double(abs(mp100(low.same) - high.same)) + std::abs(same) * eps / 2;
  const double diff_error = theory::to_double(abs(mp100(low.diff) - high.diff)) + std::abs(diff) * eps / 2;
  t.expected = t.optimum = {same, same, diff, 0};
  t.error = {same_error, same_error, diff_error, 0};
  t.same_infinite = theory::to_double(closed_form<mp100>(p, Settings<Keys::unselected>{}, false).same);
  return t;
}

/// (P): W* by a 50-digit LU and the exact transient of the expected K-step average (double eigen route).
Predicted predict_normal_equations(const Params<Keys::all>& p, const Settings<Keys::all>& s, const Budget& budget) {
  const int T = p.vocabulary.T.as_int(), v = p.vocabulary.v.as_int(), V = T * v;
  const Eigen::Index rows = std::min(2 * v, V);
  // W* in 50 digits (the rows of two topics).
  const auto eq50 = equations<mp50>(p, s);
  const std::array<double, 4> optimum = means_of<mp50>(tt::ridge_solution_rows(eq50, mp50(p.lambda.value()), rows), T, v);
  // The double eigen route: W* and the transient of the expected iterate average.
  const auto eq = equations<double>(p, s);
  const Eigen::Index D = eq.S_matrix.rows();
  const Eigen::MatrixXd H = eq.S_matrix + p.lambda.value() * Eigen::MatrixXd::Identity(D, D);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(H);
  const Eigen::VectorXd& h = eigen.eigenvalues();
  const Eigen::MatrixXd& Q = eigen.eigenvectors();
  const long long K = Params<Keys::all>::steps(budget), first = K / 2 + 1, n = K - K / 2;
  Eigen::VectorXd inverse(D), factor(D);
  for (Eigen::Index i = 0; i < D; ++i) {
    const double rho = 1 - 2 * p.lr.value() * h[i];
    // f(h) = (1/n) sum_{k=first}^{K} rho^k = rho^first (1 - rho^n) / (n (1 - rho)).
    factor[i] = integer_power(rho, first) * (1 - integer_power(rho, n)) / (static_cast<double>(n) * (1 - rho));
    inverse[i] = 1 / h[i];
  }
  const Eigen::MatrixXd Ct = eq.C_matrix.leftCols(rows).transpose();  // rows x D
  const Eigen::MatrixXd Wstar = (Ct * Q) * inverse.asDiagonal() * Q.transpose();
  const Eigen::MatrixXd transient = -(Wstar * Q) * factor.asDiagonal() * Q.transpose();
  const std::array<double, 4> optimum_double = means_of<double>(Wstar, T, v), shift = means_of<double>(transient, T, v);
  Predicted t;
  for (std::size_t k = 0; k < 4; ++k) {
    t.optimum[k] = optimum[k];
    t.transient[k] = shift[k];
    t.expected[k] = optimum[k] + shift[k];
    t.error[k] = std::abs(optimum_double[k] - optimum[k]) + std::abs(t.expected[k]) * eps / 2;
  }
  return t;
}

/// One compared block mean: its class, its name and its resolution.
struct Compared {
  BlockClass block;
  const char* name;
  Resolution resolution;
};

template <Keys K>
class Stage1SgdMatchesFiniteNOptimum final : public ClaimShape<Params<K>, Settings<K>, Measured, Predicted> {
  using Base = ClaimShape<Params<K>, Settings<K>, Measured, Predicted>;
  using P = Params<K>;
  static constexpr bool all = P::all;

 public:
  Stage1SgdMatchesFiniteNOptimum(ClaimInfo info, std::vector<typename Base::MutantSpec> mutants)
      : Base(std::move(info), std::move(mutants)) {}

 protected:
  Measured measure(const P& p, const Settings<K>&, const RunContext& context) const override {
    const int v = p.vocabulary.v.as_int();
    const Stage1SgdSetup setup =
        stage1_sgd_setup(p, p.lengths.N_min.as_int(), p.lengths.N_max.as_int(), K, context.budget, checkpoints);
    Measured m;
    m.runs = run_stage1_sgd(setup, context, "sgd");
    if constexpr (!all) {
      for (const double l : p.sweep(context.budget)) {
        Stage1SgdSetup other = setup;
        other.lambda = l;
        other.replicates = P::sweep_replicates(context.budget);
        m.sweep_lambda.push_back(l);
        m.sweep_runs.push_back(run_stage1_sgd(other, context, fmt::format("lambda_{:g}", l)));
      }
    }
    const long long steps = setup.steps, B = p.batch;
    for (int c = 1; c < checkpoints; ++c) m.record_steps.push_back(steps * c / checkpoints);
    if constexpr (!all) {
      const double lr = p.lr;
      m.bias = 2.0 / v * portable::exp(static_cast<double>(steps / 2) * portable::log1p(-2 * lr * p.h_min()));
    }
    m.arithmetic = 4 * static_cast<double>(steps * B * p.lengths.N_max.value()) * eps * 2.0 / v;
    return m;
  }

  Predicted predict(const P& p, const Measured&, const Settings<K>& s, const RunContext& context) const override {
    if constexpr (all) {
      return predict_normal_equations(p, s, context.budget);
    } else {
      return predict_closed_form(p, s);
    }
  }

  Verdict compare(const P& p, const Measured& m, const Predicted& t, const RunContext& context) const override {
    Verdict verdict;
    const int T = p.vocabulary.T.as_int(), v = p.vocabulary.v.as_int();
    const double c_s = std::abs(t.expected[same_class]);
    std::vector<Compared> compared;
    if constexpr (all) {
      compared = {
          {diag_class, "c_diag (own word; > c_s at finite N)",
           {0.02 * c_s, "2% of c_s (V diagonal entries only; the self term c_diag - c_s is ~8% of c_s at the defaults)"}},
          {same_class, "c_s (same topic, other word)", {0.005 * c_s, "0.5% of c_s"}},
          {diff_class, "c_d (other topic)", {0.1 * std::abs(t.expected[diff_class]), "10% of |c_d|"}},
          {mask_class, "c_M ([MASK] column)", {0.02 * std::abs(t.expected[mask_class]), "2% of c_M"}}};
    } else {
      compared = {
          {same_class, "c_s (same topic, other word)", {3e-3 * c_s, "0.3% of c_s (eta_dropped moves c_s by ~0.7% at the defaults)"}},
          {diag_class, "c_diag (= c_s)", {1.5e-2 * c_s, "1.5% of c_s (only V diagonal entries: the noisiest block)"}},
          {diff_class, "c_d (other topic)",
           {0.08 * std::abs(t.expected[diff_class]), "8% of c_d (eta_dropped moves c_d by ~8% at the defaults)"}}};
    }
    // The claim's share split over the block means and the two structural comparisons.
    const double delta = context.false_failure_rate() / static_cast<double>(compared.size() + 2);
    const std::string assumption =
        "independent SGD runs; each block mean averages many weakly dependent entries over K/2 steps, close to normal";
    const std::string theory_reason = all ? "|double eigen route - 50-digit LU| of W* + half an ulp" : "|50 - 100 digit| + half an ulp";
    const Bias bias = all ? Bias{0, "none: the expected average of the K-step run (W* + its transient) is computed exactly"}
                          : Bias{m.bias, "transient of the expected iterate (exactly GD on J): (2/v)(1 - 2 lr h_min)^(K/2), "
                                         "h_min = lambda + pi rho_0"};
    const std::string arith = "double arithmetic of K steps of SGD sums, 4 K B N_max eps (2/v)";
    for (const Compared& c : compared) {
      const auto k = static_cast<std::size_t>(c.block);
      std::vector<double> values;
      for (const Stage1SgdRun& run : m.runs) values.push_back(block_means(run.average, T, v)[k]);
      const stats::Summary sm = stats::summarize(values);
      Measurement ms = measured(sm.mean, stats::student_t_half_width(sm, delta), assumption);
      ms.numerical_error = m.arithmetic;
      ms.numerical_error_reason = arith;
      verdict.comparisons.push_back(checks::compare(c.name, {t.expected[k], t.error[k], theory_reason}, ms, bias, c.resolution));
    }
    const double contrast = t.expected[same_class] - t.expected[diff_class];
    // The structural within-block variance D_k (stage1_sgd.hpp): the cross-run products of the R/2 disjoint pairs.
    std::array<std::vector<double>, 2> pairs;
    for (std::size_t r = 0; r + 1 < m.runs.size(); r += 2) {
      const auto c = cross_run_within_block(m.runs[r].average, m.runs[r + 1].average, T, v);
      pairs[0].push_back(c[same_class]);
      pairs[1].push_back(c[diff_class]);
    }
    const std::array<const char*, 2> classes = {"same-topic", "other-topic"};
    for (std::size_t k = 0; k < 2; ++k) {
      const stats::Summary d = stats::summarize(pairs[k]);
      verdict.comparisons.push_back(checks::compare(
          fmt::format("structural within-block variance D, {} class (noise removed{})", classes[k],
                      all ? "" : "; spec: std < 0.1 (c_s - c_d)"),
          {0, 0, "a block-constant optimum has none"},
          measured(d.mean, stats::student_t_half_width(d, delta),
                   "independent disjoint run pairs; each product averages many entries, close to normal"),
          {0, "none: the cross-run product is unbiased for D whatever the SGD noise"},
          {0.01 * contrast * contrast, "(0.1 (c_s - c_d))^2: the spec's visibility bound on the within-block std, squared"},
          Relation::at_most));
    }
    if constexpr (!all) {
      // For the reader: the raw within-block std of the averaged W (SGD noise included), not compared.
      std::vector<double> raw;
      for (const Stage1SgdRun& run : m.runs) {
        const auto c = cross_run_within_block(run.average, run.average, T, v);
        raw.push_back(std::sqrt(std::max(c[same_class], c[diff_class])));
      }
      verdict.notes.push_back(fmt::format(
          "Raw within-block std of the averaged W (SGD noise included, not compared): mean {:.3g} over the runs, "
          "against 0.1 (c_s - c_d) = {:.3g}.",
          stats::summarize(raw).mean, 0.1 * contrast));
    }
    verdict.plots.push_back(plot(m, t, delta));
    if constexpr (!all) verdict.plots.push_back(lambda_plot(p, m, delta));
    const long long steps = P::steps(context.budget);
    verdict.notes.push_back(fmt::format(
        "R = {} runs of K = {} steps, batch {} documents, lr = {:g}, lambda = {:g}; compared: the average of steps "
        "{}..{}{}",
        m.runs.size(), steps, p.batch.value(), p.lr.value(), p.lambda.value(), steps / 2 + 1, steps,
        all ? " against W* + the exact transient of the expected iterate average."
            : ". The plot shows the current iterate at 29 checkpoints (not compared)."));
    if constexpr (all) {
      verdict.notes.push_back(fmt::format(
          "Finite-N (P) optimum W*: c_diag = {:.7g}, c_s = {:.7g}, c_d = {:.7g}, c_M = {:.7g}; transient of the K-step "
          "average: {:.3g}, {:.3g}, {:.3g}, {:.3g}.",
          t.optimum[0], t.optimum[1], t.optimum[2], t.optimum[3], t.transient[0], t.transient[1], t.transient[2],
          t.transient[3]));
    } else {
      verdict.notes.push_back(fmt::format("N -> infinity would give c_s = {:.8g}; the finite-N value is {:.8g}.",
                                          t.same_infinite, t.expected[same_class]));
    }
    return verdict;
  }

 private:
  /// (C) c_s and c_d against lambda: the finite-N closed form and the SGD block means (the claim's runs and the
  /// sweep's) with Student-t bands.
  static Plot lambda_plot(const P& p, const Measured& m, double delta) {
    const int T = p.vocabulary.T.as_int(), v = p.vocabulary.v.as_int();
    Plot plot{"block_values_vs_lambda", "c_s and c_d against the ridge: finite-N closed form and SGD ((C), uniform attention)",
              "lambda", "value", true, false, {}};
    Curve cs = Curve::line("c_s, finite-N closed form"), cd = Curve::line("c_d, finite-N closed form");
    const auto length = tt::length_statistics<double>(p.lengths.N_min.as_int(), p.lengths.N_max.as_int(), p.masking.p_m.value());
    const auto rho = tt::rho_topic(tt::dirichlet_moments<double>(T, p.alpha.value()), v);
    for (int k = 0; k <= 24; ++k) {
      const double l = 5e-5 * portable::pow(10.0, k * 2.5 / 24);
      const auto b = tt::excluded_keys_closed_form<double>(T, v, rho, l, &length);
      cs.add(l, b.same);
      cd.add(l, b.diff);
    }
    Curve cs_sgd = Curve::band("c_s, SGD"), cd_sgd = Curve::band("c_d, SGD");
    auto add = [&](double l, const std::vector<Stage1SgdRun>& runs) {
      if (runs.size() < 2) return;
      for (const auto k : {same_class, diff_class}) {
        std::vector<double> values;
        for (const Stage1SgdRun& run : runs) values.push_back(block_means(run.average, T, v)[static_cast<std::size_t>(k)]);
        const stats::Summary sm = stats::summarize(values);
        (k == same_class ? cs_sgd : cd_sgd).add_mean(l, sm.mean, stats::student_t_half_width(sm, delta).value);
      }
    };
    std::vector<std::pair<double, const std::vector<Stage1SgdRun>*>> points = {{p.lambda.value(), &m.runs}};
    for (std::size_t i = 0; i < m.sweep_lambda.size(); ++i) points.emplace_back(m.sweep_lambda[i], &m.sweep_runs[i]);
    std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [l, runs] : points) add(l, *runs);
    plot.add(std::move(cs)).add(std::move(cs_sgd)).add(std::move(cd)).add(std::move(cd_sgd));
    return plot;
  }

  /// The block means of the current iterate at the checkpoints against the theory's lines.
  static Plot plot(const Measured& m, const Predicted& t, double delta) {
    auto band_point = [&](Curve& band, std::size_t c, std::size_t k) {
      std::vector<double> values;
      for (const Stage1SgdRun& run : m.runs) values.push_back(run.checkpoint_means[c][k]);
      const stats::Summary sm = stats::summarize(values);
      band.add_mean(static_cast<double>(m.record_steps[c]), sm.mean, stats::student_t_half_width(sm, delta).value);
    };
    if constexpr (all) {
      Plot plot{"block_means", "SGD block means against the finite-N (P) optimum (uniform attention, all positions keys)",
                "step", "value", false, false, {}};
      std::array<Curve, 4> theory_lines = {Curve::line("c_diag, finite-N optimum"), Curve::line("c_s, finite-N optimum"),
                                           Curve::line("c_d, finite-N optimum"), Curve::line("c_M, finite-N optimum")};
      std::array<Curve, 4> bands = {Curve::band("c_diag, SGD"), Curve::band("c_s, SGD"), Curve::band("c_d, SGD"),
                                    Curve::band("c_M, SGD")};
      for (std::size_t c = 0; c < m.record_steps.size(); ++c) {
        for (std::size_t k = 0; k < 4; ++k) {
          band_point(bands[k], c, k);
          theory_lines[k].add(static_cast<double>(m.record_steps[c]), t.optimum[k]);
        }
      }
      for (std::size_t k = 0; k < 4; ++k) plot.add(std::move(theory_lines[k])).add(std::move(bands[k]));
      return plot;
    } else {
      Plot plot{"block_means", "SGD block means against the finite-N optimum ((C), uniform attention)", "step",
                "value", false, false, {}};
      Curve cs_theory = Curve::line("c_s, finite-N closed form"), cd_theory = Curve::line("c_d, finite-N closed form");
      Curve cs_inf = Curve::line("c_s, N -> inf");
      Curve cs_sgd = Curve::band(fmt::format("c_s, SGD (mean of R = {})", m.runs.size()));
      Curve cd_sgd = Curve::band("c_d, SGD");
      for (std::size_t c = 0; c < m.record_steps.size(); ++c) {
        const auto x = static_cast<double>(m.record_steps[c]);
        band_point(cs_sgd, c, same_class);
        band_point(cd_sgd, c, diff_class);
        cs_theory.add(x, t.expected[same_class]);
        cd_theory.add(x, t.expected[diff_class]);
        cs_inf.add(x, t.same_infinite);
      }
      plot.add(std::move(cs_theory)).add(std::move(cs_inf)).add(std::move(cs_sgd)).add(std::move(cd_theory)).add(std::move(cd_sgd));
      return plot;
    }
  }
};

}  // namespace

std::unique_ptr<Claim> make_stage1_sgd_matches_finite_n_optimum() {
  using Shape = Stage1SgdMatchesFiniteNOptimum<Keys::unselected>;
  using S = Settings<Keys::unselected>;
  return std::make_unique<Shape>(
      ClaimInfo{
          .id = "topic.stage1_sgd_matches_finite_n_optimum",
          .family = "topic",
          .paper = "Li, Li, Risteski, How do transformers learn topic structure (ICML 2023)",
          .source = "specs/topic.md §5 and §9 C2 (Thm 2, stage 1, key set (C), finite documents)",
          .tag = Provenance::derived,
          .statement = "SGD on sampled masked documents with uniform attention learns a block-wise W^V whose block "
                       "means are the finite-N optimum (eta = E[1/U] correction), not the N -> infinity one, with no "
                       "within-block structure beyond run-to-run noise (structural spread below a tenth of the contrast).",
          .latex = R"(\bar W^{SGD}\to c_dJ+(c_s-c_d)\,\mathrm{blockones},\quad g_k=\frac{\pi\rho_k}{\lambda+\eta/V+(\pi-\eta)\rho_k})",
          .simulation = "R independent plain-SGD runs of the one-layer model (sim::topic, uniform attention, one-hot "
                        "embedding, identity decoder, key set (C), squared loss, ridge) on Dir(alpha) documents with MLM "
                        "masking; iterate average over the second half.",
      },
      std::vector<Shape::MutantSpec>{
          {"c_d_wrong_sign", "c_d = -(g_1 - g_0)/(v T)", [](S& s) { s.c_d_sign = -1; }},
          {"ridge_half_convention", "the closed form of J = L + (lambda/2) ||W||^2 (lambda halved)",
           [](S& s) { s.ridge_factor = 0.5; }},
          {"eta_dropped", "the N -> infinity closed form (eta = 0): the finite-N correction itself (small: 0.7% of c_s)",
           [](S& s) { s.eta = false; }},
      });
}

std::unique_ptr<Claim> make_stage1_all_keys_sgd_matches_finite_n_optimum() {
  using Shape = Stage1SgdMatchesFiniteNOptimum<Keys::all>;
  using S = Settings<Keys::all>;
  return std::make_unique<Shape>(
      ClaimInfo{
          .id = "topic.stage1_all_keys_sgd_matches_finite_n_optimum",
          .family = "topic",
          .paper = "Li, Li, Risteski, How do transformers learn topic structure (ICML 2023)",
          .source = "specs/topic.md §5 ((P), finite N) and §9 C3 (Thm 2, stage 1, standard BERT key set)",
          .tag = Provenance::derived,
          .statement = "With every position a key (the query's own included), SGD on sampled masked documents learns the "
                       "finite-N optimum: block-constant W^V with c_diag > c_s (the query's kept word is its own key), "
                       "c_d < 0 and a [MASK] column c_M, and no within-block structure beyond run-to-run noise.",
          .latex = R"(\mathbb E\,\bar W^{SGD}_{K}=W^*+\mathrm{Tr}_K,\quad W^*=C^\top(S+\lambda I)^{-1},\ c_{diag}>c_s)",
          .simulation = "R independent plain-SGD runs of the one-layer model (sim::topic, uniform attention over all "
                        "positions, one-hot embedding, identity decoder, squared loss, ridge) on Dir(alpha) documents "
                        "with MLM masking; iterate average over the second half.",
      },
      std::vector<Shape::MutantSpec>{
          {"key_set_C", "the (C) finite-N optimum (masked positions excluded as keys) where (P) is meant",
           [](S& s) { s.keys = Keys::unselected; }},
          {"own_position_as_key",
           "the self term missing: the query's own position drawn from the key law, independent of its target (small: "
           "c_diag = c_s, 8% of c_s at the defaults)",
           [](S& s) { s.own_token_law = false; }},
      });
}

}  // namespace dyncheck::checks::topic
