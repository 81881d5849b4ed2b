#pragma once
// The JoMA block (specs/joma.md §1): fixed embeddings U = [U_C, u_q], free attention logits z of
// one query, residual f = U_C b + u_q, an MLP layer of K neurons h_k = φ(w_k^T f), a fixed readout
// o = A h and a loss on o. Forward pass and hand-written backward pass in double + Eigen.

#include <Eigen/Core>
#include <string_view>
#include <vector>

namespace dyncheck::sim::joma {

enum class AttentionKernel { linear, exp, softmax };
enum class Activation { identity, relu, leaky_relu, silu, tanh };
enum class Loss { cross_entropy, squared, linear };

std::string_view to_string(AttentionKernel kernel);
std::string_view to_string(Activation activation);
std::string_view to_string(Loss loss);

/// Fixed token embeddings: U_C (d x M_C, one column per contextual token) and u_q (d).
struct Embeddings {
  Eigen::MatrixXd contextual;
  Eigen::VectorXd query;
};

struct BlockSpec {
  AttentionKernel kernel = AttentionKernel::softmax;
  Activation activation = Activation::identity;
  Loss loss = Loss::cross_entropy;
  /// b ∝ e^{z/T} ∘ x for exp and softmax; the linear kernel b = z ∘ x has none.
  double temperature = 1;
  double leaky_slope = 0.1;
};

/// Readout o = A h (A empty: o = h). The linear loss is ℓ = -G(y, :) o.
struct Readout {
  Eigen::MatrixXd A;
  Eigen::MatrixXd G;
};

/// Trainable parameters: logits z (M_C) and the MLP weights W (d x K, column k is w_k).
struct BlockParameters {
  Eigen::VectorXd z;
  Eigen::MatrixXd W;
};

/// A batch: one column of x (contextual-token frequencies, M_C) and one label per sample.
struct Batch {
  Eigen::MatrixXd x;
  std::vector<int> labels;
};

/// Mean-loss gradient of a batch, with the per-sample quantities the invariant checks need.
struct BlockGradient {
  double loss = 0;          ///< mean loss
  Eigen::VectorXd z;        ///< ∂L/∂z
  Eigen::MatrixXd W;        ///< ∂L/∂W
  Eigen::MatrixXd b;        ///< attention output of each sample, M_C x N
  Eigen::MatrixXd delta;    ///< ∂ℓ_s/∂(w_k^T f_s), K x N
};

class JomaBlock {
 public:
  /// Throws std::invalid_argument for inconsistent shapes or T <= 0.
  JomaBlock(Embeddings embeddings, BlockSpec spec, Readout readout, Eigen::Index hidden);

  Eigen::Index contextual_tokens() const { return embeddings_.contextual.cols(); }
  Eigen::Index dimension() const { return embeddings_.contextual.rows(); }
  Eigen::Index hidden() const { return hidden_; }
  const Embeddings& embeddings() const { return embeddings_; }
  const BlockSpec& spec() const { return spec_; }

  /// b = σ(z) ∘ x / A for every column of x (M_C x N).
  Eigen::MatrixXd attention(const Eigen::VectorXd& z, const Eigen::MatrixXd& x) const;
  /// Mean loss and its gradient with respect to z and W.
  BlockGradient gradient(const BlockParameters& parameters, const Batch& batch) const;

 private:
  Embeddings embeddings_;
  BlockSpec spec_;
  Readout readout_;
  Eigen::Index hidden_;
};

}  // namespace dyncheck::sim::joma
