// sim/kernels: the one-layer attention model and full-batch gradient descent (attention.hpp).

#include "dyncheck/sim/kernels/attention.hpp"

#include <cmath>
#include <string>

#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/detail/throw_invalid_argument.hpp"
#include "dyncheck/sim/random/fill_standard_normal.hpp"
#include "dyncheck/sim/kernels/products.hpp"

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

/// C = A B (or C + A B) through the fixed-order kernel; C is resized to A.rows() x B.cols() unless accumulating.
void multiply(bool accumulate, const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, Eigen::MatrixXd& C) {
  if (!accumulate) C.resize(A.rows(), B.cols());
  fixed_order::product(simd_path(), accumulate, static_cast<int>(A.rows()), static_cast<int>(B.cols()),
                  static_cast<int>(A.cols()), A.data(), A.rows(), B.data(), 1, B.rows(), C.data(), C.rows());
}

/// C = A B' (or C + A B').
void multiply_transposed(bool accumulate, const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, Eigen::MatrixXd& C) {
  if (!accumulate) C.resize(A.rows(), B.rows());
  fixed_order::product(simd_path(), accumulate, static_cast<int>(A.rows()), static_cast<int>(B.rows()),
                  static_cast<int>(A.cols()), A.data(), A.rows(), B.data(), B.rows(), 1, C.data(), C.rows());
}

/// T = A' (a copy, so that the kernel reads T's columns contiguously).
void transpose_into(const Eigen::MatrixXd& A, Eigen::MatrixXd& T) {
  T.resize(A.cols(), A.rows());
  for (Eigen::Index j = 0; j < A.cols(); ++j) {
    for (Eigen::Index i = 0; i < A.rows(); ++i) T(j, i) = A(i, j);
  }
}

/// The log-kernel matrix of Q and K into L: Q K'/sqrt(d) (softmax) or -|q_a - k_b|^2/(2 sqrt d) (Gaussian).
void log_kernel_into(const ModelSpec& spec, const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, double root_d,
                     Eigen::MatrixXd& L) {
  const auto n = Q.rows();
  if (spec.kernel == Kernel::softmax) {
    multiply_transposed(false, Q, K, L);
    L /= root_d;
    return;
  }
  L.resize(n, n);
  fixed_order::squared_distances(simd_path(), static_cast<int>(n), static_cast<int>(Q.cols()), Q.data(), Q.rows(),
                            K.data(), K.rows(), L.data(), L.rows());
  for (Eigen::Index i = 0; i < L.size(); ++i) L.data()[i] = -L.data()[i] / (2 * root_d);
}

void head_forward(const ModelSpec& spec, const Eigen::MatrixXd& X, const Weights& w, int h, HeadForward& f) {
  const auto k = static_cast<std::size_t>(h);
  multiply(false, X, w.Q[k], f.Q);
  multiply(false, X, w.K[k], f.K);
  const double root_d = std::sqrt(static_cast<double>(X.cols()));
  log_kernel_into(spec, f.Q, f.K, root_d, f.S);
  if (spec.kernel == Kernel::softmax || spec.gauss_rownorm) {
    softmax_rows(f.S);
  } else {
    for (Eigen::Index i = 0; i < f.S.size(); ++i) f.S.data()[i] = portable::exp(f.S.data()[i]);
  }
  // X W^V W^O is evaluated left to right, (X W^V) W^O.
  multiply(false, X, w.V[k], f.XV);
  multiply(false, f.XV, w.O[k], f.U);
}

/// The buffers of the forward and backward passes, one set per thread, reused from sample to sample and call to
/// call.
struct Workspace {
  std::vector<HeadForward> forward;
  Eigen::MatrixXd R, St, SR, SRO, Xt, dS, dL, dLt, P, dQ, dK;
  Eigen::VectorXd row, column;
};

void require_weights(const Weights& w) {
  const std::size_t H = w.Q.size();
  if (H == 0 || w.K.size() != H || w.V.size() != H || w.O.size() != H) {
    detail::throw_invalid_argument("sim::kernels", "weights need H >= 1 heads of Q, K, V and O");
  }
}

void require_data(const Data& data) {
  if (data.X.empty() || data.X.size() != data.Y.size()) {
    detail::throw_invalid_argument("sim::kernels", "data need N >= 1 samples and as many targets as inputs");
  }
}

/// The forward pass of every head on one sample into work.forward and its residual R = sum_h S_h U_h - Y into
/// work.R (entry by entry: -Y, then head 0's products left to right, then head 1's, ...).
void residual(const ModelSpec& spec, const Eigen::MatrixXd& X, const Eigen::MatrixXd& Y, const Weights& w,
              Workspace& work) {
  const auto H = static_cast<std::size_t>(w.heads());
  work.forward.resize(H);
  work.R = -Y;
  for (std::size_t h = 0; h < H; ++h) {
    head_forward(spec, X, w, static_cast<int>(h), work.forward[h]);
    multiply(true, work.forward[h].S, work.forward[h].U, work.R);
  }
}

double half_squared_norm(const Eigen::MatrixXd& R) { return 0.5 * fixed_order::sum_squares(R.data(), R.size()); }

Workspace& thread_workspace() {
  thread_local Workspace work;
  return work;
}

/// row[a] = sum_b M(a, b), added left to right over b (the fixed order of the whole step).
void row_sums_left_to_right(const Eigen::MatrixXd& M, Eigen::VectorXd& row) {
  const Eigen::Index n = M.rows();
  row.resize(n);
  for (Eigen::Index a = 0; a < n; ++a) {
    double sum = M(a, 0);
    for (Eigen::Index b = 1; b < M.cols(); ++b) sum += M(a, b);
    row[a] = sum;
  }
}

}  // namespace

double Gradient::squared_norm() const {
  double sum = 0;
  for (const auto* blocks : {&Q, &K, &V}) {
    for (const Eigen::MatrixXd& block : *blocks) sum += fixed_order::sum_squares(block.data(), block.size());
  }
  return sum;
}

Eigen::MatrixXd log_kernel(const ModelSpec& spec, const Eigen::MatrixXd& X, const Eigen::MatrixXd& WQ,
                           const Eigen::MatrixXd& WK) {
  require_shapes(X, WQ, WK);
  Eigen::MatrixXd Q, K, L;
  multiply(false, X, WQ, Q);
  multiply(false, X, WK, K);
  log_kernel_into(spec, Q, K, std::sqrt(static_cast<double>(X.cols())), L);
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
  HeadForward f;
  head_forward(spec, X, w, 0, f);
  return f.S;
}

Eigen::MatrixXd output(const ModelSpec& spec, const Eigen::MatrixXd& X, const Weights& w) {
  require_weights(w);
  Eigen::MatrixXd T;
  HeadForward f;
  for (int h = 0; h < w.heads(); ++h) {
    head_forward(spec, X, w, h, f);
    multiply(h > 0, f.S, f.U, T);
  }
  return T;
}

double loss(const ModelSpec& spec, const Data& data, const Weights& w) {
  require_weights(w);
  require_data(data);
  Workspace& work = thread_workspace();
  double f = 0;
  for (std::size_t i = 0; i < data.X.size(); ++i) {
    residual(spec, data.X[i], data.Y[i], w, work);
    f += half_squared_norm(work.R);
  }
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
  Workspace& work = thread_workspace();
  const bool normalised = spec.kernel == Kernel::softmax || spec.gauss_rownorm;
  double f = 0;
  for (std::size_t i = 0; i < data.X.size(); ++i) {
    const Eigen::MatrixXd& X = data.X[i];
    const double root_d = std::sqrt(static_cast<double>(X.cols()));
    residual(spec, X, data.Y[i], w, work);
    const Eigen::MatrixXd& R = work.R;
    f += half_squared_norm(R);
    if (trained.Q || trained.K || trained.V) transpose_into(X, work.Xt);
    // Every gradient block accumulates X' (...) over the samples: entry by entry, sample 0's products left to
    // right, then sample 1's, ...
    for (std::size_t h = 0; h < H; ++h) {
      const HeadForward& fw = work.forward[h];
      if (trained.V) {
        // X' (S' R O'), the parenthesis evaluated left to right: (S' R) O'.
        transpose_into(fw.S, work.St);
        multiply(false, work.St, R, work.SR);
        multiply_transposed(false, work.SR, w.O[h], work.SRO);
        multiply(true, work.Xt, work.SRO, g.V[h]);
      }
      if (!trained.Q && !trained.K) continue;
      multiply_transposed(false, R, fw.U, work.dS);  // dL/dS
      Eigen::MatrixXd& dL = work.dL;                 // dL/d(log-kernel)
      dL = fw.S.cwiseProduct(work.dS);               // unnormalised: d exp(l) = exp(l) dl
      const auto n = dL.rows();
      if (normalised) {
        // dL_ab -= S_ab row_a, row_a = sum_b dL_ab left to right
        row_sums_left_to_right(dL, work.row);
        for (Eigen::Index b = 0; b < n; ++b) {
          for (Eigen::Index a = 0; a < n; ++a) dL(a, b) -= fw.S(a, b) * work.row[a];
        }
      }
      Eigen::MatrixXd& dQ = work.dQ;
      Eigen::MatrixXd& dK = work.dK;
      if (spec.kernel == Kernel::softmax) {
        multiply(false, dL, fw.K, dQ);
        dQ /= root_d;
        transpose_into(dL, work.dLt);
        multiply(false, work.dLt, fw.Q, dK);
        dK /= root_d;
      } else {
        // l = -D/(2 sqrt d), D_ab = |q_a - k_b|^2: with dD = -dL/(2 sqrt d),
        // dQ = 2 (diag(rowsum dD) Q - dD K), dK = 2 (diag(colsum dD) K - dD' Q), the sums left to right.
        dL /= -(2 * root_d);  // dL now holds dD
        row_sums_left_to_right(dL, work.row);
        work.column.resize(n);
        for (Eigen::Index b = 0; b < n; ++b) {
          double sum = dL(0, b);
          for (Eigen::Index a = 1; a < n; ++a) sum += dL(a, b);
          work.column[b] = sum;
        }
        multiply(false, dL, fw.K, work.P);
        dQ.resize(fw.Q.rows(), fw.Q.cols());
        for (Eigen::Index j = 0; j < dQ.cols(); ++j) {
          for (Eigen::Index a = 0; a < n; ++a) dQ(a, j) = 2 * (work.row[a] * fw.Q(a, j) - work.P(a, j));
        }
        transpose_into(dL, work.dLt);
        multiply(false, work.dLt, fw.Q, work.P);
        dK.resize(fw.K.rows(), fw.K.cols());
        for (Eigen::Index j = 0; j < dK.cols(); ++j) {
          for (Eigen::Index b = 0; b < n; ++b) dK(b, j) = 2 * (work.column[b] * fw.K(b, j) - work.P(b, j));
        }
      }
      if (trained.Q) multiply(true, work.Xt, dQ, g.Q[h]);
      if (trained.K) multiply(true, work.Xt, dK, g.K[h]);
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
