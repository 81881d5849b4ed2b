// Claim joma.block_gradient_matches_theory  [derived]  (specs/joma.md §1 "Joint gradient flow"; issue #10 §5)
//
// The simulator's hand-written backward pass of the JoMA block (sim/joma/block.cpp) agrees, for every
// attention kernel x activation x loss, with
//  (a) the theory's reduced gradients (theory/joma/joint_gradient.hpp), written from the spec's attention
//      Jacobians J_b: with orthonormal U,
//        \f[ \partial L/\partial z = \tfrac1N\sum_s \sum_k \delta_{k,s} J_{b,s}^T v_k,\qquad
//            U_C^T\,\partial L/\partial w_k = \tfrac1N\sum_s \delta_{k,s}\, b_s, \f]
//      J_b = diag(x), T^{-1}diag(b), T^{-1}(diag(b) - b b^T) for linear, exp, softmax. δ_{k,s} = ∂ℓ_s/∂(w_k^T f_s)
//      is the simulator's (the theory takes it as given); (b) covers it;
//  (b) central finite differences of the simulator's loss, D_h = (L(θ + h e_i) − L(θ − h e_i)) / 2h, for every
//      coordinate of z and W.
// Tolerance of (a), per entry: numerical only, 2 γ_n × (the same sums in absolute values), γ_n = n u/(1 − n u),
// n = 2(d + M_C + K + classes) + 8 (Higham §3.1, first-order worst case, charged to both computations).
// Tolerance of (b), per coordinate: truncation (h²/6)|L'''| + round-off ε_L / h, where ε_L = γ_m S_L bounds the
// round-off of one loss evaluation (S_L: the loss's terms in absolute value, m = n + 8) and |L'''| is estimated by
// the five-point third difference at step H = 100 h, charged ×10 (it is an estimate of the maximum over
// [θ − h, θ + h], not a bound). At a kink of ReLU / leaky ReLU the loss is not differentiable: a coordinate
// whose perturbations (up to ±2H) change the sign of any pre-activation is skipped (counted in the notes).
// No statistics: one random instance per combination, deterministic given the seed.
// Mutants: softmax_mean_term_dropped (J_b without −b bᵀ), temperature_3_percent (1.03/T in ∂L/∂z),
// v_gradient_3_percent (∂L/∂v_k × 1.03), linear_kernel_x_dropped (J_b = I for the linear kernel) edit the
// theory; backprop_z_3_percent (changes the experiment: the simulator's ∂L/∂z × 1.03, a planted backprop bug)
// must be caught by both (a) and (b). Resolution: an error of 1e-5 x max(largest gradient entry of a
// combination, 0.01) in any entry (the tolerances are ~1e-9 absolute at the defaults, margins ~0.02).
// Parameter limits: h in [1e-6, 1e-4] and init_scale <= temperature keep the tolerance below the resolution.

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "claims.hpp"
#include "dyncheck/checks/claim_shape.hpp"
#include "dyncheck/checks/experiment.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/sim/joma/block.hpp"
#include "dyncheck/sim/joma/data.hpp"
#include "dyncheck/sim/joma/embeddings.hpp"
#include "dyncheck/sim/random/fill_standard_normal.hpp"
#include "dyncheck/theory/joma/joint_gradient.hpp"

namespace dyncheck::checks::joma {
namespace {

using sim::joma::Activation;
using sim::joma::AttentionKernel;
using sim::joma::Loss;

constexpr int kernel_count = 3, activation_count = 5, loss_count = 3;
constexpr int combinations = kernel_count * activation_count * loss_count;
constexpr int classes = 5;

struct Params : ParamSet {
  Int M_C{this, "M_C", 6, closed(2, 16), "contextual tokens"};
  Int K{this, "K", 5, closed(1, 16), "hidden neurons"};
  Int extra_d{this, "extra_d", 3, closed(0, 16), "d - (M_C + 1)"};
  Int batch{this, "batch", 4, closed(1, 32), "samples in the batch"};
  Real temperature{this, "temperature", 0.7, closed(0.1, 10), "attention temperature T (exp, softmax)", Scale::log};
  Real init_scale{this, "init_scale", 0.5, closed(0.05, 1), "standard deviation of the z and W entries; at most temperature"};
  Real h{this, "h", 1e-5, closed(1e-6, 1e-4),
         "finite-difference step; outside [1e-6, 1e-4] the round-off (eps_L/h) or truncation (h^2 x third "
         "derivative) term exceeds the resolution",
         Scale::log};

  void check(const Budget&) const override {
    if (init_scale > temperature) {
      throw ParamError("init_scale", fmt::format("init_scale must be at most temperature ({} > {}): e^(z/T) then spans more than "
                                                 "e^6 over the tokens and the a-priori round-off bound of the finite "
                                                 "differences exceeds the resolution",
                                                 init_scale.value(), temperature.value()));
    }
  }
};

struct Settings {
  bool softmax_mean_term = true;  ///< J_b of softmax keeps -b b^T
  double temperature_factor = 1;  ///< multiplies 1/T in dL/dz
  double v_factor = 1;            ///< multiplies dL/dv_k
  bool linear_kernel_x = true;    ///< J_b = diag(x) for the linear kernel (false: identity)
  double backprop_z_factor = 1;   ///< experiment: the simulator's dL/dz is scaled (a planted bug)
};

/// One combination: the instance, the simulator's gradient, and the finite differences.
struct Combination {
  AttentionKernel kernel;
  Activation activation;
  Loss loss;
  sim::joma::Embeddings U;
  sim::joma::BlockParameters p;
  sim::joma::Batch batch;
  sim::joma::BlockGradient g;
  Eigen::VectorXd fd_z, fd_z_tol;
  Eigen::MatrixXd fd_W, fd_W_tol;
  Eigen::MatrixXd skipped_W;  ///< 1 where a kink is within reach
  Eigen::VectorXd skipped_z;
  double gamma = 0;
};

struct Measured {
  std::vector<Combination> combinations;
};

struct TheoryGradient {
  Eigen::VectorXd z, z_tol;
  Eigen::MatrixXd V, V_tol;  ///< dL/dv_k (M_C x K) and its round-off tolerance
};

struct Predicted {
  std::vector<TheoryGradient> gradients;
};

double gamma_of(double n) {
  const double u = std::numeric_limits<double>::epsilon() / 2;
  return n * u / (1 - n * u);
}

/// The loss's terms in absolute value (the size its round-off scales with), averaged over the batch.
double loss_magnitude(const sim::joma::JomaBlock& block, const sim::joma::Readout& readout,
                      const sim::joma::BlockParameters& p, const sim::joma::Batch& batch) {
  const Eigen::MatrixXd b = block.attention(p.z, batch.x);
  Eigen::MatrixXd F = block.embeddings().contextual * b;
  F.colwise() += block.embeddings().query;
  const Eigen::MatrixXd pre = p.W.transpose() * F;
  const Eigen::MatrixXd o_abs = readout.A.cwiseAbs() * pre.cwiseAbs();  // |phi(u)| <= |u| for every activation
  double total = 0;
  for (Eigen::Index s = 0; s < o_abs.cols(); ++s) total += o_abs.col(s).sum() + 0.5 * o_abs.col(s).squaredNorm() + 1;
  return total / static_cast<double>(o_abs.cols());
}

Eigen::MatrixXd pre_activations(const sim::joma::JomaBlock& block, const sim::joma::BlockParameters& p,
                                const sim::joma::Batch& batch) {
  Eigen::MatrixXd F = block.embeddings().contextual * block.attention(p.z, batch.x);
  F.colwise() += block.embeddings().query;
  return p.W.transpose() * F;
}

Combination measure_combination(const Params& params, int index, const Settings& settings, sim::Rng& rng) {
  Combination c;
  c.kernel = static_cast<AttentionKernel>(index / (activation_count * loss_count));
  c.activation = static_cast<Activation>((index / loss_count) % activation_count);
  c.loss = static_cast<Loss>(index % loss_count);
  const Eigen::Index m = params.M_C.value(), k = params.K.value();
  const Eigen::Index d = m + 1 + params.extra_d.value();
  c.U = sim::joma::random_orthonormal_embeddings(d, m, rng);
  Eigen::VectorXd readout_entries(classes * k), loss_entries(classes * classes);
  sim::fill_standard_normal(rng, readout_entries);
  sim::fill_standard_normal(rng, loss_entries);
  const sim::joma::Readout readout{
      Eigen::Map<Eigen::MatrixXd>(readout_entries.data(), classes, k) / std::sqrt(static_cast<double>(k)),
      Eigen::Map<Eigen::MatrixXd>(loss_entries.data(), classes, classes)};
  const double temperature = c.kernel == AttentionKernel::linear ? 1.0 : params.temperature.value();
  const sim::joma::JomaBlock block(c.U, {c.kernel, c.activation, c.loss, temperature, 0.1}, readout, k);
  c.p = sim::joma::gaussian_parameters(m, d, k, params.init_scale, params.init_scale, rng);
  c.batch = sim::joma::dirichlet_batch(m, params.batch.value(), 1.0, classes, rng);
  c.g = block.gradient(c.p, c.batch);
  c.g.z *= settings.backprop_z_factor;
  c.gamma = gamma_of(2.0 * static_cast<double>(d + m + k + classes) + 8);

  const double h = params.h, H = 100 * h;
  const double roundoff = gamma_of(2.0 * static_cast<double>(d + m + k + classes) + 16) *
                          loss_magnitude(block, readout, c.p, c.batch);
  const bool kinked = c.activation == Activation::relu || c.activation == Activation::leaky_relu;
  const Eigen::MatrixXd pre0 = pre_activations(block, c.p, c.batch);
  // dL/dθ_i by central differences, with the tolerance of the header; `coordinate` returns θ_i by reference.
  auto difference = [&](auto&& coordinate, double& value, double& tolerance, double& skipped) {
    sim::joma::BlockParameters q = c.p;
    double& theta = coordinate(q);
    const double theta0 = theta;
    auto loss_at = [&](double offset) {
      theta = theta0 + offset;
      return block.gradient(q, c.batch).loss;
    };
    skipped = 0;
    if (kinked) {
      for (double offset : {-2 * H, 2 * H}) {
        theta = theta0 + offset;
        const Eigen::MatrixXd pre = pre_activations(block, q, c.batch);
        if (((pre.array() > 0) != (pre0.array() > 0)).any()) skipped = 1;
      }
    }
    value = (loss_at(h) - loss_at(-h)) / (2 * h);
    const double third = (loss_at(2 * H) - 2 * loss_at(H) + 2 * loss_at(-H) - loss_at(-2 * H)) / (2 * H * H * H);
    const double third_roundoff = 6 * roundoff / (2 * H * H * H);
    tolerance = 10 * h * h / 6 * (std::abs(third) + third_roundoff) + roundoff / h;
  };
  c.fd_z.resize(m);
  c.fd_z_tol.resize(m);
  c.skipped_z.resize(m);
  for (Eigen::Index l = 0; l < m; ++l) {
    difference([l](sim::joma::BlockParameters& q) -> double& { return q.z[l]; }, c.fd_z[l], c.fd_z_tol[l],
               c.skipped_z[l]);
  }
  c.fd_W.resize(d, k);
  c.fd_W_tol.resize(d, k);
  c.skipped_W.resize(d, k);
  for (Eigen::Index j = 0; j < k; ++j) {
    for (Eigen::Index i = 0; i < d; ++i) {
      difference([i, j](sim::joma::BlockParameters& q) -> double& { return q.W(i, j); }, c.fd_W(i, j),
                 c.fd_W_tol(i, j), c.skipped_W(i, j));
    }
  }
  return c;
}

theory::joma::Kernel theory_kernel(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::linear: return theory::joma::Kernel::linear;
    case AttentionKernel::exp: return theory::joma::Kernel::exp;
    case AttentionKernel::softmax: return theory::joma::Kernel::softmax;
  }
  return theory::joma::Kernel::exp;
}

TheoryGradient predict_combination(const Params& params, const Combination& c, const Settings& s) {
  const Eigen::Index m = c.p.z.size(), k = c.p.W.cols(), n = c.batch.x.cols();
  const double temperature = c.kernel == AttentionKernel::linear ? 1.0 : params.temperature.value();
  const Eigen::MatrixXd V = c.U.contextual.transpose() * c.p.W;
  TheoryGradient t{Eigen::VectorXd::Zero(m), Eigen::VectorXd::Zero(m), Eigen::MatrixXd::Zero(m, k),
                   Eigen::MatrixXd::Zero(m, k)};
  const Eigen::MatrixXd U_abs = c.U.contextual.cwiseAbs();
  for (Eigen::Index sample = 0; sample < n; ++sample) {
    const Eigen::VectorXd x = c.batch.x.col(sample), delta = c.g.delta.col(sample);
    const theory::joma::Kernel kernel = theory_kernel(c.kernel);
    // The settings' edits of the theory: the softmax Jacobian without -b b^T is the exp one on the normalised b.
    theory::joma::ReducedGradient<double> g =
        theory::joma::reduced_gradient<double>(kernel, c.p.z, V, x, delta, temperature);
    const Eigen::VectorXd weighted = V * delta;
    if (!s.softmax_mean_term && c.kernel == AttentionKernel::softmax) g.z = g.b.cwiseProduct(weighted) / temperature;
    if (!s.linear_kernel_x && c.kernel == AttentionKernel::linear) g.z = weighted;
    if (c.kernel != AttentionKernel::linear) g.z *= s.temperature_factor;
    t.z += g.z / static_cast<double>(n);
    t.V += s.v_factor * g.V / static_cast<double>(n);
    // Round-off sizes: the same sums in absolute values, through U_C^T W (the simulator's path) as well as V.
    const Eigen::VectorXd b_abs = g.b.cwiseAbs();
    const Eigen::VectorXd through_w = U_abs.transpose() * (c.p.W.cwiseAbs() * delta.cwiseAbs());
    const Eigen::VectorXd weighted_abs = through_w.cwiseMax(V.cwiseAbs() * delta.cwiseAbs());
    Eigen::VectorXd z_size;
    switch (c.kernel) {
      case AttentionKernel::linear: z_size = x.cwiseAbs().cwiseProduct(weighted_abs); break;
      case AttentionKernel::exp: z_size = b_abs.cwiseProduct(weighted_abs) / temperature; break;
      case AttentionKernel::softmax:
        z_size = (b_abs.cwiseProduct(weighted_abs) + b_abs * b_abs.dot(weighted_abs)) / temperature;
        break;
    }
    t.z_tol += 2 * c.gamma * z_size / static_cast<double>(n);
    const Eigen::VectorXd f_abs = U_abs * b_abs + c.U.query.cwiseAbs();
    t.V_tol += 2 * c.gamma * (U_abs.transpose() * f_abs) * delta.cwiseAbs().transpose() / static_cast<double>(n);
  }
  return t;
}

/// The worst entry of |a - b| relative to its tolerance, over the entries not masked out.
struct Worst {
  double measured = 0, theory = 0, tolerance = 0, ratio = -1;
  std::string where;
  std::size_t skipped = 0, compared = 0;
};

void consider(Worst& worst, const std::string& where, double measured, double theory, double tolerance, bool skip) {
  if (skip) {
    ++worst.skipped;
    return;
  }
  ++worst.compared;
  const double gap = std::abs(measured - theory);
  const double ratio = tolerance > 0 ? gap / tolerance : (gap > 0 ? HUGE_VAL : 0.0);
  if (!(ratio <= worst.ratio)) worst = {measured, theory, tolerance, ratio, where, worst.skipped, worst.compared};
}

class BlockGradientMatchesTheory final : public ClaimShape<Params, Settings, Measured, Predicted> {
 public:
  BlockGradientMatchesTheory() : ClaimShape(claim_info(), mutants()) {}

 protected:
  Measured measure(const Params& p, const Settings& s, const RunContext& context) const override {
    Measured m;
    m.combinations = sim::run_replicates(replicate_options(context, "instances", combinations),
                                         [&](std::size_t r, sim::Rng& rng) {
                                           return measure_combination(p, static_cast<int>(r), s, rng);
                                         });
    return m;
  }

  Predicted predict(const Params& p, const Measured& m, const Settings& s, const RunContext&) const override {
    Predicted t;
    for (const Combination& c : m.combinations) t.gradients.push_back(predict_combination(p, c, s));
    return t;
  }

  Verdict compare(const Params& p, const Measured& m, const Predicted& t, const RunContext&) const override {
    Verdict verdict;
    std::size_t skipped_total = 0, compared_total = 0;
    Plot plot{"gradient_agreement", "Worst |simulator - reference| / tolerance per kernel x activation x loss",
              "combination (kernel x 15 + activation x 3 + loss)", "worst gap / tolerance", false, true, {}};
    Curve theory_curve = Curve::points("simulator vs theory (joint_gradient.hpp)");
    Curve fd_curve = Curve::points("simulator vs central differences");
    for (std::size_t r = 0; r < m.combinations.size(); ++r) {
      const Combination& c = m.combinations[r];
      const TheoryGradient& g = t.gradients[r];
      const std::string name = fmt::format("{} kernel, {}, {} loss", sim::joma::to_string(c.kernel),
                                           sim::joma::to_string(c.activation), sim::joma::to_string(c.loss));
      const Eigen::MatrixXd sim_V = c.U.contextual.transpose() * c.g.W;
      const double scale = std::max(c.g.z.cwiseAbs().maxCoeff(), c.g.W.cwiseAbs().maxCoeff());
      Worst versus_theory;
      for (Eigen::Index l = 0; l < g.z.size(); ++l) {
        consider(versus_theory, fmt::format("dL/dz_{}", l + 1), c.g.z[l], g.z[l], g.z_tol[l], false);
      }
      for (Eigen::Index j = 0; j < g.V.cols(); ++j) {
        for (Eigen::Index l = 0; l < g.V.rows(); ++l) {
          // The simulator's U_C^T dL/dW adds the round-off of one more product over d.
          const double tolerance = g.V_tol(l, j) * 1.5;
          consider(versus_theory, fmt::format("(U_C^T dL/dW)_{},{}", l + 1, j + 1), sim_V(l, j), g.V(l, j), tolerance,
                   false);
        }
      }
      Worst versus_fd;
      for (Eigen::Index l = 0; l < c.fd_z.size(); ++l) {
        consider(versus_fd, fmt::format("dL/dz_{}", l + 1), c.g.z[l], c.fd_z[l], c.fd_z_tol[l] + c.gamma * std::abs(c.g.z[l]),
                 c.skipped_z[l] > 0);
      }
      for (Eigen::Index j = 0; j < c.fd_W.cols(); ++j) {
        for (Eigen::Index i = 0; i < c.fd_W.rows(); ++i) {
          consider(versus_fd, fmt::format("dL/dW_{},{}", i + 1, j + 1), c.g.W(i, j), c.fd_W(i, j),
                   c.fd_W_tol(i, j) + c.gamma * std::abs(c.g.W(i, j)), c.skipped_W(i, j) > 0);
        }
      }
      skipped_total += versus_fd.skipped;
      compared_total += versus_fd.compared;
      const double resolution = 1e-5 * std::max(scale, 0.01);
      verdict.comparisons.push_back(checks::compare(
          fmt::format("{}: backprop vs theory, worst entry {} (of {})", name, versus_theory.where, versus_theory.compared),
          {versus_theory.theory, 0.0, "theory/joma/joint_gradient.hpp reduced gradient with the simulator's delta"},
          measured_exactly(versus_theory.measured, versus_theory.tolerance,
                           fmt::format("2 gamma_n x the sums in absolute values, gamma_n = {:.2e}", c.gamma)),
          {0.0, "none: the reduced gradient is exact for orthonormal U"},
          {resolution, "1e-5 x max(the largest gradient entry of this combination, 0.01)"}));
      verdict.comparisons.push_back(checks::compare(
          fmt::format("{}: backprop vs central differences, worst coordinate {} (of {}, {} skipped at kinks)", name,
                      versus_fd.where, versus_fd.compared, versus_fd.skipped),
          {versus_fd.theory, 0.0, "central difference of the simulator's loss"},
          measured_exactly(versus_fd.measured, versus_fd.tolerance,
                           fmt::format("truncation 10 (h^2/6)|L'''| (five-point estimate at H = 100 h) + round-off "
                                       "eps_L/h of the loss, h = {:g}; + gamma_n |backprop|",
                                       p.h.value())),
          {0.0, "none: the truncation is in the numerical term"},
          {resolution, "1e-5 x max(the largest gradient entry of this combination, 0.01)"}));
      theory_curve.add(static_cast<double>(r), std::max(versus_theory.ratio, 1e-6));
      fd_curve.add(static_cast<double>(r), std::max(versus_fd.ratio, 1e-6));
    }
    plot.add(std::move(theory_curve)).add(std::move(fd_curve));
    verdict.plots.push_back(std::move(plot));
    verdict.notes.push_back(fmt::format(
        "One random instance per combination (random orthonormal U, d = {}, M_C = {}, K = {}, {} classes, a fixed "
        "random readout, z and W ~ N(0, {}^2), a Dirichlet(1) batch of {}); {} finite-difference coordinates compared, "
        "{} skipped because a ReLU / leaky ReLU kink lies within 2H = {:g} of them.",
        p.M_C + 1 + p.extra_d, p.M_C.value(), p.K.value(), classes, p.init_scale.value(), p.batch.value(),
        compared_total, skipped_total, 200 * p.h));
    verdict.notes.push_back(
        "The theory takes delta_k = dl/d(w_k^T f) from the simulator's forward pass: the comparison with the theory "
        "checks the backward pass through the attention and the MLP input, the comparison with central differences "
        "checks all of it (loss, readout, activation derivative, attention).");
    return verdict;
  }

 private:
  static ClaimInfo claim_info() {
    return {
        .id = "joma.block_gradient_matches_theory",
        .family = "joma",
        .paper = "Tian et al., JoMA (ICLR 2024)",
        .source = "specs/joma.md §1 (joint gradient flow, attention Jacobians); issue #10 §5",
        .tag = Provenance::derived,
        .statement = "The simulator's back-propagated gradients of the JoMA block equal the theory's reduced "
                     "gradients (attention Jacobians J_b) and the central finite differences of its loss, for every "
                     "attention kernel, activation and loss.",
        .latex = R"(\frac{\partial L}{\partial z} = \frac1N\sum_s\sum_k\delta_{k,s}J_{b,s}^T v_k,\quad U_C^T\frac{\partial L}{\partial w_k} = \frac1N\sum_s\delta_{k,s}b_s)",
        .simulation = "One random instance (orthonormal U, Gaussian z and W, Dirichlet batch, random readout) for each "
                      "of the 3 kernels x 5 activations x 3 losses; backprop, theory and central differences on it.",
    };
  }

  static std::vector<MutantSpec> mutants() {
    return {
        {"softmax_mean_term_dropped", "softmax Jacobian without its -b b^T term",
         [](Settings& s) { s.softmax_mean_term = false; }},
        {"temperature_3_percent", "dL/dz with 1.03/T instead of 1/T (exp, softmax)",
         [](Settings& s) { s.temperature_factor = 1.03; }},
        {"v_gradient_3_percent", "dL/dv_k = 1.03 delta_k b", [](Settings& s) { s.v_factor = 1.03; }},
        {"linear_kernel_x_dropped", "linear-kernel Jacobian I instead of diag(x)",
         [](Settings& s) { s.linear_kernel_x = false; }},
        {"backprop_z_3_percent", "a planted simulator bug: its dL/dz scaled by 1.03 (re-measured)",
         [](Settings& s) { s.backprop_z_factor = 1.03; }, true},
    };
  }
};

}  // namespace

std::unique_ptr<Claim> make_block_gradient_matches_theory() { return std::make_unique<BlockGradientMatchesTheory>(); }

}  // namespace dyncheck::checks::joma
