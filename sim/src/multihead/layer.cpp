#include "softmax_rows.hpp"
#include "dyncheck/sim/multihead/layer.hpp"

#include <dyncheck/portable/math.hpp>

#include <stdexcept>

#include "dyncheck/sim/random/standard_normal.hpp"
#include "dyncheck/sim/random/uniform01.hpp"

namespace dyncheck::sim::multihead {
namespace {

void check_layer(const Layer& layer) {
  if (layer.theta.empty() || layer.theta.size() != layer.w.size()) {
    throw std::invalid_argument("multihead::Layer: need m >= 1 pairs (Theta_i, W_i)");
  }
}

}  // namespace

Eigen::MatrixXd forward(const Layer& layer, const Eigen::MatrixXd& X) {
  check_layer(layer);
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(X.rows(), X.cols());
  for (std::size_t i = 0; i < layer.theta.size(); ++i) {
    Eigen::MatrixXd Z = layer.logit_scale * (X * layer.theta[i] * X.transpose());
    detail::softmax_rows(Z);
    out.noalias() += Z * (X * layer.w[i]);
  }
  return out;
}

Eigen::MatrixXd attention(const Eigen::MatrixXd& theta, const Eigen::MatrixXd& X, double logit_scale) {
  Eigen::MatrixXd Z = logit_scale * (X * theta * X.transpose());
  detail::softmax_rows(Z);
  return Z;
}

void sample_boolean(Rng& rng, int k, int d, Eigen::MatrixXd& X, double p) {
  X.resize(k, d);
  if (p == 0.5) {
    // 64 signs per engine word.
    std::uint64_t bits = 0;
    int left = 0;
    for (Eigen::Index i = 0; i < X.size(); ++i) {
      if (left == 0) {
        bits = rng();
        left = 64;
      }
      X.data()[i] = (bits & 1U) != 0 ? -1.0 : 1.0;
      bits >>= 1U;
      --left;
    }
    return;
  }
  for (Eigen::Index i = 0; i < X.size(); ++i) X.data()[i] = uniform01(rng) < p ? 1.0 : -1.0;
}

void sample_gaussian(Rng& rng, int k, int d, Eigen::MatrixXd& X) {
  X.resize(k, d);
  for (Eigen::Index i = 0; i < X.size(); ++i) X.data()[i] = standard_normal(rng);
}

void cube_point(std::uint64_t index, int k, int d, Eigen::MatrixXd& X) {
  X.resize(k, d);
  for (int a = 0; a < k; ++a) {
    for (int b = 0; b < d; ++b) X(a, b) = ((index >> static_cast<unsigned>(a * d + b)) & 1U) != 0 ? -1.0 : 1.0;
  }
}

HeadGradient head_gradient(const Eigen::MatrixXd& theta, const Eigen::MatrixXd& w, const Eigen::MatrixXd& X,
                           const Eigen::MatrixXd& target) {
  Eigen::MatrixXd S = X * theta * X.transpose();
  detail::softmax_rows(S);
  const Eigen::MatrixXd V = X * w;
  const Eigen::MatrixXd R = S * V - target;  // ∂loss/∂(output)
  HeadGradient g;
  g.loss = 0.5 * R.squaredNorm();
  g.w = (S * X).transpose() * R;
  const Eigen::MatrixXd dS = R * V.transpose();
  // Softmax Jacobian per row: dz = s ⊙ (ds − ⟨s, ds⟩).
  Eigen::MatrixXd dZ(S.rows(), S.cols());
  for (Eigen::Index a = 0; a < S.rows(); ++a) {
    const double inner = S.row(a).dot(dS.row(a));
    for (Eigen::Index b = 0; b < S.cols(); ++b) dZ(a, b) = S(a, b) * (dS(a, b) - inner);
  }
  g.theta = X.transpose() * dZ * X;
  return g;
}

namespace {

/// Kahan (compensated) summation of matrices, entrywise: |error| <= (2 eps + O(N eps²)) Σ|terms|
/// (Higham, Accuracy and Stability, §4.3), so the population average over 2^{kd} inputs carries
/// no error growing with the cube's size. Valid because this file is compiled without fast-math
/// and with -ffp-contract=off (sim/CMakeLists.txt).
struct KahanMatrix {
  Eigen::MatrixXd sum, compensation;
  KahanMatrix(Eigen::Index rows, Eigen::Index cols)
      : sum(Eigen::MatrixXd::Zero(rows, cols)), compensation(Eigen::MatrixXd::Zero(rows, cols)) {}
  void add(const Eigen::MatrixXd& term) {
    for (Eigen::Index i = 0; i < sum.size(); ++i) {
      const double y = term.data()[i] - compensation.data()[i];
      const double t = sum.data()[i] + y;
      compensation.data()[i] = (t - sum.data()[i]) - y;
      sum.data()[i] = t;
    }
  }
};

}  // namespace

HeadGradient population_head_gradient(const Eigen::MatrixXd& theta, const Eigen::MatrixXd& w, const Layer& teacher,
                                      int k) {
  const auto d = static_cast<int>(theta.rows());
  if (k < 1 || k * d > 26) throw std::invalid_argument("population_head_gradient: need 1 <= k and k*d <= 26");
  const std::uint64_t inputs = std::uint64_t{1} << static_cast<unsigned>(k * d);
  KahanMatrix loss(1, 1), grad_theta(d, d), grad_w(d, d);
  Eigen::MatrixXd X, loss_term(1, 1);
  for (std::uint64_t i = 0; i < inputs; ++i) {
    cube_point(i, k, d, X);
    const HeadGradient g = head_gradient(theta, w, X, forward(teacher, X));
    loss_term(0, 0) = g.loss;
    loss.add(loss_term);
    grad_theta.add(g.theta);
    grad_w.add(g.w);
  }
  // Division by 2^{kd}: exact.
  const double scale = 1.0 / static_cast<double>(inputs);
  return {loss.sum(0, 0) * scale, grad_theta.sum * scale, grad_w.sum * scale};
}

HeadGradient minibatch_head_gradient(const Eigen::MatrixXd& theta, const Eigen::MatrixXd& w, const Layer& teacher,
                                     int k, int batch, Rng& rng) {
  const auto d = static_cast<int>(theta.rows());
  HeadGradient total{0, Eigen::MatrixXd::Zero(d, d), Eigen::MatrixXd::Zero(d, d)};
  Eigen::MatrixXd X;
  for (int j = 0; j < batch; ++j) {
    sample_boolean(rng, k, d, X);
    const HeadGradient g = head_gradient(theta, w, X, forward(teacher, X));
    total.loss += g.loss;
    total.theta += g.theta;
    total.w += g.w;
  }
  const double scale = 1.0 / static_cast<double>(batch);
  total.loss *= scale;
  total.theta *= scale;
  total.w *= scale;
  return total;
}

Eigen::MatrixXd empirical_crude_estimate(const Layer& teacher, int k, long long n, Rng& rng, bool gaussian) {
  check_layer(teacher);
  const auto d = static_cast<int>(teacher.theta.front().rows());
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(d, d);
  Eigen::MatrixXd X;
  for (long long j = 0; j < n; ++j) {
    if (gaussian) {
      sample_gaussian(rng, k, d, X);
    } else {
      sample_boolean(rng, k, d, X);
    }
    const Eigen::VectorXd sx = X.colwise().sum().transpose();
    const Eigen::VectorXd sf = forward(teacher, X).colwise().sum().transpose();
    sum.noalias() += sx * sf.transpose();
  }
  return sum / (static_cast<double>(k) * static_cast<double>(n));
}

}  // namespace dyncheck::sim::multihead
