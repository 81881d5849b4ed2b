#include "dyncheck/sim/joma/block.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "dyncheck/portable/math.hpp"

namespace dyncheck::sim::joma {

std::string_view to_string(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::linear: return "linear";
    case AttentionKernel::exp: return "exp";
    case AttentionKernel::softmax: return "softmax";
  }
  return "?";
}

std::string_view to_string(Activation activation) {
  switch (activation) {
    case Activation::identity: return "identity";
    case Activation::relu: return "relu";
    case Activation::leaky_relu: return "leaky_relu";
    case Activation::silu: return "silu";
    case Activation::tanh: return "tanh";
  }
  return "?";
}

std::string_view to_string(Loss loss) {
  switch (loss) {
    case Loss::cross_entropy: return "cross_entropy";
    case Loss::squared: return "squared";
    case Loss::linear: return "linear";
  }
  return "?";
}

namespace {

[[noreturn]] void invalid(const std::string& message) { throw std::invalid_argument("JomaBlock: " + message); }

double activation_value(Activation activation, double slope, double u) {
  switch (activation) {
    case Activation::identity: return u;
    case Activation::relu: return u > 0 ? u : 0.0;
    case Activation::leaky_relu: return u > 0 ? u : slope * u;
    case Activation::silu: return u / (1.0 + portable::exp(-u));
    case Activation::tanh: return portable::tanh(u);
  }
  return u;
}

double activation_derivative(Activation activation, double slope, double u) {
  switch (activation) {
    case Activation::identity: return 1.0;
    case Activation::relu: return u > 0 ? 1.0 : 0.0;
    case Activation::leaky_relu: return u > 0 ? 1.0 : slope;
    case Activation::silu: {
      const double s = 1.0 / (1.0 + portable::exp(-u));
      return s + u * s * (1.0 - s);
    }
    case Activation::tanh: {
      const double t = portable::tanh(u);
      return 1.0 - t * t;
    }
  }
  return 1.0;
}

}  // namespace

JomaBlock::JomaBlock(Embeddings embeddings, BlockSpec spec, Readout readout, Eigen::Index hidden)
    : embeddings_(std::move(embeddings)), spec_(spec), readout_(std::move(readout)), hidden_(hidden) {
  if (embeddings_.contextual.cols() < 1 || embeddings_.query.size() != embeddings_.contextual.rows()) {
    invalid("U_C must be d x M_C with M_C >= 1 and u_q of length d");
  }
  if (hidden_ < 1) invalid("K (hidden neurons) must be >= 1");
  if (!(spec_.temperature > 0) || !std::isfinite(spec_.temperature)) invalid("temperature must be finite and > 0");
  if (readout_.A.size() != 0 && readout_.A.cols() != hidden_) invalid("readout A must have K columns");
  const Eigen::Index outputs = readout_.A.size() != 0 ? readout_.A.rows() : hidden_;
  if (spec_.loss == Loss::linear && readout_.G.cols() != outputs) invalid("the linear loss needs G with one column per output");
}

Eigen::MatrixXd JomaBlock::attention(const Eigen::VectorXd& z, const Eigen::MatrixXd& x) const {
  if (z.size() != contextual_tokens() || x.rows() != contextual_tokens()) invalid("z and x must have M_C rows");
  Eigen::MatrixXd b(x.rows(), x.cols());
  switch (spec_.kernel) {
    case AttentionKernel::linear: b = x.array().colwise() * z.array(); break;
    case AttentionKernel::exp: b = x.array().colwise() * (z.array() / spec_.temperature).unaryExpr(portable::exp_op{}); break;
    case AttentionKernel::softmax: {
      // e^{z/T - max} ∘ x / sum: the shift cancels in the ratio and keeps exp finite.
      const Eigen::ArrayXd weights = (z.array() / spec_.temperature - z.maxCoeff() / spec_.temperature).unaryExpr(portable::exp_op{});
      b = x.array().colwise() * weights;
      for (Eigen::Index s = 0; s < b.cols(); ++s) {
        const double total = b.col(s).sum();
        if (!(total > 0)) invalid("softmax attention needs every x column to have a positive entry");
        b.col(s) /= total;
      }
      break;
    }
  }
  return b;
}

BlockGradient JomaBlock::gradient(const BlockParameters& parameters, const Batch& batch) const {
  const Eigen::Index m = contextual_tokens(), d = dimension(), n = batch.x.cols();
  if (parameters.z.size() != m || parameters.W.rows() != d || parameters.W.cols() != hidden_) {
    invalid("parameters must be z (M_C) and W (d x K)");
  }
  if (n < 1 || static_cast<std::size_t>(n) != batch.labels.size()) invalid("a batch needs N >= 1 columns and N labels");
  const bool has_readout = readout_.A.size() != 0;
  const Eigen::Index outputs = has_readout ? readout_.A.rows() : hidden_;
  for (const int y : batch.labels) {
    if (y < 0 || (spec_.loss != Loss::linear && y >= outputs) || (spec_.loss == Loss::linear && y >= readout_.G.rows())) {
      invalid("label " + std::to_string(y) + " out of range");
    }
  }

  // The whole batch at once, one sample per column, so that the products are matrix-matrix.
  BlockGradient g;
  g.b = attention(parameters.z, batch.x);
  Eigen::MatrixXd F = embeddings_.contextual * g.b;  // d x N
  F.colwise() += embeddings_.query;
  const Eigen::MatrixXd pre = parameters.W.transpose() * F;  // K x N
  Eigen::MatrixXd h(hidden_, n);
  for (Eigen::Index i = 0; i < pre.size(); ++i) h.data()[i] = activation_value(spec_.activation, spec_.leaky_slope, pre.data()[i]);
  const Eigen::MatrixXd o = has_readout ? Eigen::MatrixXd(readout_.A * h) : h;  // outputs x N
  Eigen::MatrixXd grad_o(outputs, n);
  for (Eigen::Index s = 0; s < n; ++s) {
    const int y = batch.labels[static_cast<std::size_t>(s)];
    switch (spec_.loss) {
      case Loss::cross_entropy: {
        const double shift = o.col(s).maxCoeff();
        const Eigen::ArrayXd e = (o.col(s).array() - shift).unaryExpr(portable::exp_op{});
        const double total = e.sum();
        g.loss += portable::log(total) + shift - o(y, s);
        grad_o.col(s) = e.matrix() / total;
        grad_o(y, s) -= 1.0;
        break;
      }
      case Loss::squared: {
        grad_o.col(s) = o.col(s);
        grad_o(y, s) -= 1.0;
        g.loss += 0.5 * grad_o.col(s).squaredNorm();
        break;
      }
      case Loss::linear: {
        grad_o.col(s) = -readout_.G.row(y).transpose();
        g.loss += grad_o.col(s).dot(o.col(s));
        break;
      }
    }
  }
  g.delta = has_readout ? Eigen::MatrixXd(readout_.A.transpose() * grad_o) : grad_o;  // ∂ℓ/∂h, then ∘ φ'
  for (Eigen::Index i = 0; i < pre.size(); ++i) {
    g.delta.data()[i] *= activation_derivative(spec_.activation, spec_.leaky_slope, pre.data()[i]);
  }
  const double scale = 1.0 / static_cast<double>(n);
  g.W.noalias() = scale * (F * g.delta.transpose());
  // Back through f = U_C b + u_q for any U (orthonormal or not), then through b(z).
  const Eigen::MatrixXd grad_b = embeddings_.contextual.transpose() * (parameters.W * g.delta);  // M_C x N
  switch (spec_.kernel) {
    case AttentionKernel::linear: g.z = scale * (batch.x.cwiseProduct(grad_b)).rowwise().sum(); break;
    case AttentionKernel::exp: g.z = (scale / spec_.temperature) * (g.b.cwiseProduct(grad_b)).rowwise().sum(); break;
    case AttentionKernel::softmax: {
      const Eigen::RowVectorXd inner = g.b.cwiseProduct(grad_b).colwise().sum();  // bᵀ ∂ℓ/∂b per sample
      g.z = (scale / spec_.temperature) *
            (g.b.cwiseProduct(grad_b) - g.b * inner.asDiagonal()).rowwise().sum();
      break;
    }
  }
  g.loss *= scale;
  return g;
}

}  // namespace dyncheck::sim::joma
