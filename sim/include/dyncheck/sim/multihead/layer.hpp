#pragma once
// The multi-head attention layer of specs/multihead.md B.1 on the simulation side:
// F(X) = Σ_i softmax(X Θ_i Xᵀ) X W_i (no 1/√d), input samplers (Boolean, biased Boolean,
// Gaussian), a single-head student's loss and gradients by backpropagation through the full
// softmax Jacobian (any Θ, not only Θ = 0), its population gradient by its own enumeration of
// the cube (sequential sum in index order), and GD / minibatch SGD steps.
// Shares no code with theory/multihead: the checks compare the two.

#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "dyncheck/sim/random/rng.hpp"

namespace dyncheck::sim::multihead {

struct Layer {
  std::vector<Eigen::MatrixXd> theta;  ///< Θ_i, d × d
  std::vector<Eigen::MatrixXd> w;      ///< W_i, d × d
  /// Logits are multiplied by this (1: the paper's layer; 1/√d: the mutant "1/√d scaling added").
  double logit_scale = 1.0;
};

/// F(X) (k × d).
Eigen::MatrixXd forward(const Layer& layer, const Eigen::MatrixXd& X);

/// One head's attention pattern softmax(logit_scale · X Θ Xᵀ) (k × k).
Eigen::MatrixXd attention(const Eigen::MatrixXd& theta, const Eigen::MatrixXd& X, double logit_scale = 1.0);

/// X uniform on {±1}^{k×d}, or each entry +1 with probability p (p = 1/2: uniform).
void sample_boolean(Rng& rng, int k, int d, Eigen::MatrixXd& X, double p = 0.5);
/// X with iid N(0, 1) entries.
void sample_gaussian(Rng& rng, int k, int d, Eigen::MatrixXd& X);
/// The input with index i of the cube (bit a·d + b set: X(a, b) = −1), for the sim's enumeration.
void cube_point(std::uint64_t index, int k, int d, Eigen::MatrixXd& X);

/// A single student head softmax(XΘXᵀ) X W against targets: loss ½‖·− Y‖² and its gradients.
struct HeadGradient {
  double loss = 0;
  Eigen::MatrixXd theta;  ///< ∂loss/∂Θ
  Eigen::MatrixXd w;      ///< ∂loss/∂W
};
HeadGradient head_gradient(const Eigen::MatrixXd& theta, const Eigen::MatrixXd& w, const Eigen::MatrixXd& X,
                           const Eigen::MatrixXd& target);

/// The population gradient of the student against the teacher `layer` under X uniform on the
/// cube, by enumeration (Kahan-compensated sum over inputs in index order, then ÷ 2^{kd}:
/// entrywise error <= (2 eps + 2^{kd} eps²) times the mean of |per-input terms|).
HeadGradient population_head_gradient(const Eigen::MatrixXd& theta, const Eigen::MatrixXd& w, const Layer& teacher,
                                      int k);

/// The mean gradient over a minibatch of `batch` Boolean inputs drawn from rng.
HeadGradient minibatch_head_gradient(const Eigen::MatrixXd& theta, const Eigen::MatrixXd& w, const Layer& teacher,
                                     int k, int batch, Rng& rng);

/// The empirical crude estimate (1/n) Σ_j (1/k) X_jᵀ J F(X_j) over n inputs drawn from rng
/// (Boolean, or Gaussian when `gaussian`).
Eigen::MatrixXd empirical_crude_estimate(const Layer& teacher, int k, long long n, Rng& rng, bool gaussian = false);

}  // namespace dyncheck::sim::multihead
