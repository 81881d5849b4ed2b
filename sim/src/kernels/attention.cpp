// sim/kernels: the one-layer attention model and full-batch gradient descent (attention.hpp).

#include "dyncheck/sim/kernels/attention.hpp"

#include <cmath>
#include <string>

#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/detail/throw_invalid_argument.hpp"
#include "dyncheck/sim/random/fill_standard_normal.hpp"

namespace dyncheck::sim::kernels {
namespace {

void require_shapes(const Eigen::MatrixXd& X, const Eigen::MatrixXd& WQ, const Eigen::MatrixXd& WK) {
  if (WQ.rows() != X.cols() || WK.rows() != X.cols() || WQ.cols() != WK.cols()) {
    detail::throw_invalid_argument("sim::kernels::attention", "W^Q and W^K must have d = X.cols() rows and equal columns");
  }
}

/// Row-wise softmax of L in place (max subtracted first).
void softmax_rows(Eigen::MatrixXd& L) {
  for (Eigen::Index a = 0; a < L.rows(); ++a) {
    const double m = L.row(a).maxCoeff();
    double sum = 0;
    for (Eigen::Index b = 0; b < L.cols(); ++b) {
      L(a, b) = portable::exp(L(a, b) - m);
      sum += L(a, b);
    }
    L.row(a) /= sum;
  }
}

/// Per head and sample: the forward quantities reused by the backward pass. Filled in place (head_forward), so
/// that a buffer reused from sample to sample keeps its storage (the shapes are the same for every sample).
struct HeadForward {
  Eigen::MatrixXd Q, K, S, U;  ///< Q = X W^Q, K = X W^K, S the attention, U = X W^V W^O
  Eigen::MatrixXd XV;          ///< X W^V (the intermediate of U)
};

// Every product below is assigned with noalias() into a destination of the product's shape: Eigen then evaluates
// it with the same kernel (GEMM or the coefficient-based product, chosen by the sizes alone) as the plain
// assignment, which would evaluate into a fresh temporary and copy, so the results are the same bit for bit.
void head_forward(const ModelSpec& spec, const Eigen::MatrixXd& X, const Weights& w, int h, HeadForward& f) {
  f.Q.noalias() = X * w.Q[static_cast<std::size_t>(h)];
  f.K.noalias() = X * w.K[static_cast<std::size_t>(h)];
  const auto n = X.rows();
  const double d = static_cast<double>(X.cols());
  const double root_d = std::sqrt(d);
  Eigen::MatrixXd& L = f.S;
  L.resize(n, n);
  if (spec.kernel == Kernel::softmax) {
    L.noalias() = f.Q * f.K.transpose();
    L /= root_d;
    softmax_rows(L);
  } else {
    for (Eigen::Index a = 0; a < n; ++a) {
      for (Eigen::Index b = 0; b < n; ++b) {
        double squared = 0;
        for (Eigen::Index j = 0; j < f.Q.cols(); ++j) {
          const double diff = f.Q(a, j) - f.K(b, j);
          squared += diff * diff;
        }
        L(a, b) = -squared / (2 * root_d);
      }
    }
    if (spec.gauss_rownorm) {
      softmax_rows(L);
    } else {
      for (Eigen::Index i = 0; i < L.size(); ++i) L.data()[i] = portable::exp(L.data()[i]);
    }
  }
  // X W^V W^O is evaluated left to right, (X W^V) W^O, as the plain expression would.
  f.XV.noalias() = X * w.V[static_cast<std::size_t>(h)];
  f.U.noalias() = f.XV * w.O[static_cast<std::size_t>(h)];
}

HeadForward head_forward(const ModelSpec& spec, const Eigen::MatrixXd& X, const Weights& w, int h) {
  HeadForward f;
  head_forward(spec, X, w, h, f);
  return f;
}

/// The backward pass's buffers, one set per thread, reused from sample to sample and call to call.
struct Workspace {
  std::vector<HeadForward> forward;
  Eigen::MatrixXd R, SR, SRO, dS, dL, dD, dQ, dK;
  Eigen::VectorXd row, column;
};

void require_weights(const Weights& w) {
  const std::size_t H = w.Q.size();
  if (H == 0 || w.K.size() != H || w.V.size() != H || w.O.size() != H) {
    detail::throw_invalid_argument("sim::kernels", "weights need H >= 1 heads of Q, K, V and O");
  }
}

}  // namespace

double Gradient::squared_norm() const {
  double sum = 0;
  for (const auto* blocks : {&Q, &K, &V}) {
    for (const Eigen::MatrixXd& block : *blocks) sum += block.squaredNorm();
  }
  return sum;
}

Eigen::MatrixXd log_kernel(const ModelSpec& spec, const Eigen::MatrixXd& X, const Eigen::MatrixXd& WQ,
                           const Eigen::MatrixXd& WK) {
  require_shapes(X, WQ, WK);
  const Eigen::MatrixXd Q = X * WQ, K = X * WK;
  const double root_d = std::sqrt(static_cast<double>(X.cols()));
  const auto n = X.rows();
  Eigen::MatrixXd L(n, n);
  if (spec.kernel == Kernel::softmax) {
    L.noalias() = Q * K.transpose();
    L /= root_d;
    return L;
  }
  for (Eigen::Index a = 0; a < n; ++a) {
    for (Eigen::Index b = 0; b < n; ++b) {
      double squared = 0;
      for (Eigen::Index j = 0; j < Q.cols(); ++j) {
        const double diff = Q(a, j) - K(b, j);
        squared += diff * diff;
      }
      L(a, b) = -squared / (2 * root_d);
    }
  }
  return L;
}

Eigen::MatrixXd attention(const ModelSpec& spec, const Eigen::MatrixXd& X, const Eigen::MatrixXd& WQ,
                          const Eigen::MatrixXd& WK) {
  require_shapes(X, WQ, WK);
  Weights w;
  w.Q = {WQ};
  w.K = {WK};
  w.V = {Eigen::MatrixXd::Zero(X.cols(), 1)};
  w.O = {Eigen::MatrixXd::Zero(1, 1)};
  return head_forward(spec, X, w, 0).S;
}

Eigen::MatrixXd output(const ModelSpec& spec, const Eigen::MatrixXd& X, const Weights& w) {
  require_weights(w);
  Eigen::MatrixXd T = Eigen::MatrixXd::Zero(X.rows(), w.O[0].cols());
  for (int h = 0; h < w.heads(); ++h) {
    const HeadForward f = head_forward(spec, X, w, h);
    T.noalias() += f.S * f.U;
  }
  return T;
}

void require_data(const Data& data) {
  if (data.X.empty() || data.X.size() != data.Y.size()) {
    detail::throw_invalid_argument("sim::kernels", "data need N >= 1 samples and as many targets as inputs");
  }
}

double loss(const ModelSpec& spec, const Data& data, const Weights& w) {
  require_weights(w);
  require_data(data);
  double f = 0;
  for (std::size_t i = 0; i < data.X.size(); ++i) f += 0.5 * (output(spec, data.X[i], w) - data.Y[i]).squaredNorm();
  return f;
}

double loss_and_gradient(const ModelSpec& spec, const Data& data, const Weights& w, const Trained& trained,
                         Gradient& g) {
  require_weights(w);
  require_data(data);
  const auto H = static_cast<std::size_t>(w.heads());
  // The gradient blocks keep their storage from call to call (GD calls this once per step with the same g).
  for (auto* blocks : {&g.Q, &g.K, &g.V}) blocks->resize(H);
  for (std::size_t h = 0; h < H; ++h) {
    g.Q[h].setZero(w.Q[h].rows(), w.Q[h].cols());
    g.K[h].setZero(w.K[h].rows(), w.K[h].cols());
    g.V[h].setZero(w.V[h].rows(), w.V[h].cols());
  }
  thread_local Workspace work;
  work.forward.resize(H);
  double f = 0;
  for (std::size_t i = 0; i < data.X.size(); ++i) {
    const Eigen::MatrixXd& X = data.X[i];
    const double root_d = std::sqrt(static_cast<double>(X.cols()));
    Eigen::MatrixXd& R = work.R;
    R = -data.Y[i];
    for (std::size_t h = 0; h < H; ++h) {
      head_forward(spec, X, w, static_cast<int>(h), work.forward[h]);
      R.noalias() += work.forward[h].S * work.forward[h].U;
    }
    f += 0.5 * R.squaredNorm();
    for (std::size_t h = 0; h < H; ++h) {
      const HeadForward& fw = work.forward[h];
      if (trained.V) {
        // X' (S' R O'), the parenthesis evaluated left to right as the plain expression would: (S' R) O'.
        work.SR.noalias() = fw.S.transpose() * R;
        work.SRO.noalias() = work.SR * w.O[h].transpose();
        g.V[h].noalias() += X.transpose() * work.SRO;
      }
      if (!trained.Q && !trained.K) continue;
      Eigen::MatrixXd& dS = work.dS;
      dS.noalias() = R * fw.U.transpose();  // dL/dS
      Eigen::MatrixXd& dQ = work.dQ;
      Eigen::MatrixXd& dK = work.dK;
      const bool normalised = spec.kernel == Kernel::softmax || spec.gauss_rownorm;
      Eigen::MatrixXd& dL = work.dL;  // dL/d(log-kernel)
      dL = fw.S.cwiseProduct(dS);  // unnormalised: d exp(l) = exp(l) dl
      if (normalised) {
        work.row = dL.rowwise().sum();
        // dL_ab -= S_ab row_a (row_a x 1 is exact: the outer product with a row of ones it replaces)
        for (Eigen::Index b = 0; b < dL.cols(); ++b) {
          for (Eigen::Index a = 0; a < dL.rows(); ++a) dL(a, b) -= fw.S(a, b) * work.row[a];
        }
      }
      if (spec.kernel == Kernel::softmax) {
        dQ.noalias() = dL * fw.K;
        dQ /= root_d;
        dK.noalias() = dL.transpose() * fw.Q;
        dK /= root_d;
      } else {
        Eigen::MatrixXd& dD = work.dD;
        dD = -dL / (2 * root_d);  // l = -D/(2 sqrt d), D_ab = |q_a - k_b|^2
        dQ = 2 * (dD.rowwise().sum().asDiagonal() * fw.Q - dD * fw.K);
        dK = 2 * (dD.colwise().sum().transpose().asDiagonal() * fw.K - dD.transpose() * fw.Q);
      }
      if (trained.Q) g.Q[h].noalias() += X.transpose() * dQ;
      if (trained.K) g.K[h].noalias() += X.transpose() * dK;
    }
  }
  return f;
}

void step_in_place(Weights& w, const Gradient& g, double eta) {
  for (std::size_t h = 0; h < w.Q.size(); ++h) {
    if (h < g.Q.size()) w.Q[h] -= eta * g.Q[h];
    if (h < g.K.size()) w.K[h] -= eta * g.K[h];
    if (h < g.V.size()) w.V[h] -= eta * g.V[h];
  }
}

Weights step(const Weights& w, const Gradient& g, double eta) {
  Weights next = w;
  step_in_place(next, g, eta);
  return next;
}

GdResult gradient_descent(const ModelSpec& spec, const Data& data, const Weights& w0, const Trained& trained,
                          const GdOptions& options, const StepObserver& observer) {
  if (!(options.eta > 0) || !std::isfinite(options.eta)) {
    detail::throw_invalid_argument("sim::kernels::gradient_descent", "eta must be finite and > 0", options.eta);
  }
  if (options.steps < 0) {
    detail::throw_invalid_argument("sim::kernels::gradient_descent", "steps must be >= 0",
                                   static_cast<double>(options.steps));
  }
  GdResult result;
  Weights w = w0;
  Gradient g;
  double f = loss_and_gradient(spec, data, w, trained, g);
  result.loss.push_back(f);
  double eta = options.eta;
  for (long long t = 0; t < options.steps && f > options.stop_loss; ++t) {
    const double g2 = g.squared_norm();
    if (!(g2 > 0)) break;
    GdStep record{f, 0, 0, g2};
    Weights next;
    if (options.rule == GdOptions::Rule::fixed) {
      next = step(w, g, eta);
      record.f_after = loss(spec, data, next);
      record.eta = eta;
    } else {
      bool accepted = false;
      for (int k = 0; k <= options.max_halvings; ++k) {
        next = step(w, g, eta);
        const double trial = loss(spec, data, next);
        if (trial <= f - options.armijo_c * eta * g2) {
          record.f_after = trial;
          record.eta = eta;
          accepted = true;
          break;
        }
        eta *= options.armijo_shrink;
      }
      if (!accepted) {
        result.stopped_by_line_search = true;
        break;
      }
    }
    if (observer) observer(t, w, g, record);
    result.steps.push_back(record);
    w = std::move(next);
    f = loss_and_gradient(spec, data, w, trained, g);
    result.loss.push_back(f);
    if (options.rule == GdOptions::Rule::armijo) eta *= options.armijo_grow;
  }
  result.final = std::move(w);
  return result;
}

Eigen::MatrixXd gaussian_matrix(Rng& rng, int rows, int cols, double sd) {
  Eigen::VectorXd z(static_cast<Eigen::Index>(rows) * cols);
  fill_standard_normal(rng, z);
  Eigen::MatrixXd M(rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) M(r, c) = sd * z[static_cast<Eigen::Index>(r) * cols + c];
  }
  return M;
}

std::vector<Eigen::MatrixXd> gaussian_inputs(Rng& rng, int N, int n, int d) {
  std::vector<Eigen::MatrixXd> X;
  for (int i = 0; i < N; ++i) X.push_back(gaussian_matrix(rng, n, d, 1.0));
  return X;
}

Weights gaussian_weights(Rng& rng, int H, int d, double s_Q, double s_K, double s_V,
                         const std::vector<Eigen::MatrixXd>& O) {
  if (static_cast<int>(O.size()) != H) detail::throw_invalid_argument("sim::kernels::gaussian_weights", "O needs H blocks");
  const double root_d = std::sqrt(static_cast<double>(d));
  Weights w;
  for (int h = 0; h < H; ++h) {
    w.Q.push_back(gaussian_matrix(rng, d, d, s_Q / root_d));
    w.K.push_back(gaussian_matrix(rng, d, d, s_K / root_d));
    w.V.push_back(gaussian_matrix(rng, d, d, s_V / root_d));
  }
  w.O = O;
  return w;
}

std::vector<Eigen::MatrixXd> teacher_targets(const ModelSpec& spec, const std::vector<Eigen::MatrixXd>& X,
                                             const Weights& teacher) {
  std::vector<Eigen::MatrixXd> Y;
  for (const Eigen::MatrixXd& x : X) Y.push_back(output(spec, x, teacher));
  return Y;
}

std::vector<Eigen::MatrixXd> random_targets(Rng& rng, int N, int n, int d_out, double sd) {
  std::vector<Eigen::MatrixXd> Y;
  for (int i = 0; i < N; ++i) Y.push_back(gaussian_matrix(rng, n, d_out, sd));
  return Y;
}

}  // namespace dyncheck::sim::kernels
