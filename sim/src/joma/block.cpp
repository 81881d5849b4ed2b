#include "dyncheck/sim/joma/block.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

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
    case Activation::silu: return u / (1.0 + std::exp(-u));
    case Activation::tanh: return std::tanh(u);
  }
  return u;
}

double activation_derivative(Activation activation, double slope, double u) {
  switch (activation) {
    case Activation::identity: return 1.0;
    case Activation::relu: return u > 0 ? 1.0 : 0.0;
    case Activation::leaky_relu: return u > 0 ? 1.0 : slope;
    case Activation::silu: {
      const double s = 1.0 / (1.0 + std::exp(-u));
      return s + u * s * (1.0 - s);
    }
    case Activation::tanh: {
      const double t = std::tanh(u);
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
    case AttentionKernel::exp: b = x.array().colwise() * (z.array() / spec_.temperature).exp(); break;
    case AttentionKernel::softmax: {
      // e^{z/T - max} ∘ x / sum: the shift cancels in the ratio and keeps exp finite.
      const Eigen::ArrayXd weights = (z.array() / spec_.temperature - z.maxCoeff() / spec_.temperature).exp();
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

  BlockGradient g;
  g.b = attention(parameters.z, batch.x);
  g.delta.resize(hidden_, n);
  g.z = Eigen::VectorXd::Zero(m);
  g.W = Eigen::MatrixXd::Zero(d, hidden_);
  Eigen::VectorXd f(d), pre(hidden_), h(hidden_), o(outputs), grad_o(outputs), grad_h(hidden_), grad_b(m);
  for (Eigen::Index s = 0; s < n; ++s) {
    const int y = batch.labels[static_cast<std::size_t>(s)];
    if (y < 0 || (spec_.loss != Loss::linear && y >= outputs) || (spec_.loss == Loss::linear && y >= readout_.G.rows())) {
      invalid("label " + std::to_string(y) + " out of range");
    }
    const auto b = g.b.col(s);
    f.noalias() = embeddings_.contextual * b;
    f += embeddings_.query;
    pre.noalias() = parameters.W.transpose() * f;
    for (Eigen::Index k = 0; k < hidden_; ++k) h[k] = activation_value(spec_.activation, spec_.leaky_slope, pre[k]);
    if (has_readout) {
      o.noalias() = readout_.A * h;
    } else {
      o = h;
    }
    switch (spec_.loss) {
      case Loss::cross_entropy: {
        const double shift = o.maxCoeff();
        const Eigen::ArrayXd e = (o.array() - shift).exp();
        const double total = e.sum();
        g.loss += std::log(total) + shift - o[y];
        grad_o = e.matrix() / total;
        grad_o[y] -= 1.0;
        break;
      }
      case Loss::squared: {
        grad_o = o;
        grad_o[y] -= 1.0;
        g.loss += 0.5 * grad_o.squaredNorm();
        break;
      }
      case Loss::linear: {
        grad_o = -readout_.G.row(y).transpose();
        g.loss += grad_o.dot(o);
        break;
      }
    }
    if (has_readout) {
      grad_h.noalias() = readout_.A.transpose() * grad_o;
    } else {
      grad_h = grad_o;
    }
    for (Eigen::Index k = 0; k < hidden_; ++k) {
      g.delta(k, s) = activation_derivative(spec_.activation, spec_.leaky_slope, pre[k]) * grad_h[k];
    }
    g.W.noalias() += f * g.delta.col(s).transpose();
    // Back through f = U_C b + u_q for any U (orthonormal or not), then through b(z).
    grad_b.noalias() = embeddings_.contextual.transpose() * (parameters.W * g.delta.col(s));
    switch (spec_.kernel) {
      case AttentionKernel::linear: g.z += batch.x.col(s).cwiseProduct(grad_b); break;
      case AttentionKernel::exp: g.z += b.cwiseProduct(grad_b) / spec_.temperature; break;
      case AttentionKernel::softmax:
        g.z += (b.cwiseProduct(grad_b) - b * b.dot(grad_b)) / spec_.temperature;
        break;
    }
  }
  const double scale = 1.0 / static_cast<double>(n);
  g.loss *= scale;
  g.z *= scale;
  g.W *= scale;
  return g;
}

}  // namespace dyncheck::sim::joma
