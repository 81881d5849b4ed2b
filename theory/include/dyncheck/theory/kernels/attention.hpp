// dyncheck/theory/kernels/attention.hpp
//
// specs/kernels.md A.2 and A.4 D1 [derived]: the one-layer attention map and its exact
// directional derivatives (forward mode), templated on the scalar. Written independently of
// sim/kernels (which backpropagates): the two meet only in checks/, where the simulated gradient
// must equal J' r.
//
//   S_h = kernel(X W_h^Q, X W_h^K),  T = sum_h S_h X W_h^V W_h^O
//   softmax:  S = rowsoftmax(Q K' / c),          c = d^{scale_power} (the paper: c = sqrt d)
//   Gaussian: S = exp(-D / (2c)), D_ab = |q_a - k_b|^2 (rownorm: rowsoftmax(-D / (2c)))
//   dS (softmax)  = S o (dZ - rowsum(S o dZ) 1'),  dZ = (dQ K' + Q dK') / c
//   dS (Gaussian) = S o dL (rownorm: S o (dL - rowsum(S o dL) 1')),  dL = -dD/(2c),
//                   dD_ab = 2 (q_a - k_b)'(dq_a - dk_b)
//   dT = sum_h dS_h X V_h O_h + S_h X dV_h O_h.
// The Jacobian of vec(T) (all samples, rows ordered sample, token, output coordinate) with respect
// to the trained blocks (head by head: Q, K, V, each column-major) is assembled column by column
// from these directional derivatives: exact, no finite differences.
#pragma once

#include <cmath>
#include <stdexcept>
#include <vector>

#include "dyncheck/portable/math.hpp"
#include "dyncheck/theory/numeric/eigen.hpp"

namespace dyncheck::theory::kernels {

enum class Kernel { softmax, gaussian };

/// The kernel's definition; the default is the paper's ([reconstructed] A.2).
struct KernelSpec {
  Kernel kernel = Kernel::softmax;
  bool gauss_rownorm = false;
  double scale_power = 0.5;  ///< c = d^scale_power (the sqrt(d) of A.2)
  /// The derivative of the row normalisation, - S o (rowsum(S o dL) 1'); false only in a mutant.
  bool normalisation_term = true;
};

template <class S>
struct Head {
  Matrix<S> Q, K, V, O;  ///< d x d, d x d, d x d, d x d_out
};

struct TrainedBlocks {
  bool Q = false, K = false, V = false;
};

namespace detail {

template <class S>
S scale_of(const KernelSpec& spec, Eigen::Index d) {
  using std::pow;  // portability-guard: multiprecision only (double takes portable::pow below)
  if constexpr (std::is_same_v<S, double>) {
    return portable::pow(static_cast<double>(d), spec.scale_power);
  } else {
    return pow(S(static_cast<long>(d)), S(spec.scale_power));  // portability-guard: S is software arithmetic
  }
}

template <class S>
S exp_of(const S& x) {
  using portable::exp;  // double: dyncheck::portable; multiprecision: found by argument-dependent lookup
  return exp(x);
}

template <class S>
void softmax_rows(Matrix<S>& L) {
  for (Eigen::Index a = 0; a < L.rows(); ++a) {
    S m = L(a, 0);
    for (Eigen::Index b = 1; b < L.cols(); ++b) m = L(a, b) > m ? L(a, b) : m;
    S sum(0);
    for (Eigen::Index b = 0; b < L.cols(); ++b) {
      L(a, b) = exp_of(S(L(a, b) - m));
      sum += L(a, b);
    }
    for (Eigen::Index b = 0; b < L.cols(); ++b) L(a, b) /= sum;
  }
}

/// -|q_a - k_b|^2 / (2c), as a direct difference.
template <class S>
Matrix<S> gaussian_log_kernel(const Matrix<S>& Q, const Matrix<S>& K, const S& c) {
  Matrix<S> L(Q.rows(), K.rows());
  for (Eigen::Index a = 0; a < Q.rows(); ++a) {
    for (Eigen::Index b = 0; b < K.rows(); ++b) {
      S squared(0);
      for (Eigen::Index j = 0; j < Q.cols(); ++j) {
        const S diff = Q(a, j) - K(b, j);
        squared += diff * diff;
      }
      L(a, b) = -squared / (S(2) * c);
    }
  }
  return L;
}

}  // namespace detail

/// S = kernel(X W^Q, X W^K).
template <class S>
Matrix<S> attention(const KernelSpec& spec, const Matrix<S>& X, const Matrix<S>& WQ, const Matrix<S>& WK) {
  const Matrix<S> Q = X * WQ, K = X * WK;
  const S c = detail::scale_of<S>(spec, X.cols());
  Matrix<S> L;
  if (spec.kernel == Kernel::softmax) {
    L = Q * K.transpose() / c;
    detail::softmax_rows(L);
    return L;
  }
  L = detail::gaussian_log_kernel(Q, K, c);
  if (spec.gauss_rownorm) {
    detail::softmax_rows(L);
  } else {
    for (Eigen::Index i = 0; i < L.size(); ++i) L.data()[i] = detail::exp_of(L.data()[i]);
  }
  return L;
}

/// T = sum_h S_h X V_h O_h.
template <class S>
Matrix<S> output(const KernelSpec& spec, const Matrix<S>& X, const std::vector<Head<S>>& heads) {
  Matrix<S> T = Matrix<S>::Zero(X.rows(), heads.at(0).O.cols());
  for (const Head<S>& h : heads) T += attention(spec, X, h.Q, h.K) * (X * h.V * h.O);
  return T;
}

/// What the directional derivative reuses per head: Q = XW^Q, K = XW^K, S and U = X W^V W^O.
template <class S>
struct HeadCache {
  Matrix<S> Q, K, Sm, U;
};

template <class S>
std::vector<HeadCache<S>> head_caches(const KernelSpec& spec, const Matrix<S>& X, const std::vector<Head<S>>& heads) {
  std::vector<HeadCache<S>> caches;
  for (const Head<S>& w : heads) caches.push_back({X * w.Q, X * w.K, attention(spec, X, w.Q, w.K), X * w.V * w.O});
  return caches;
}

/// dT from precomputed head caches (see output_jvp).
template <class S>
Matrix<S> output_jvp(const KernelSpec& spec, const Matrix<S>& X, const std::vector<Head<S>>& heads,
                     const std::vector<HeadCache<S>>& caches, const std::vector<Head<S>>& direction) {
  const S c = detail::scale_of<S>(spec, X.cols());
  Matrix<S> dT = Matrix<S>::Zero(X.rows(), heads.at(0).O.cols());
  for (std::size_t h = 0; h < heads.size(); ++h) {
    const Head<S>& w = heads[h];
    const Head<S>& dw = direction[h];
    const HeadCache<S>& cache = caches[h];
    const Matrix<S>& Q = cache.Q;
    const Matrix<S>& K = cache.K;
    const Matrix<S>& Sm = cache.Sm;
    const bool moves_kernel = !dw.Q.isZero(0) || !dw.K.isZero(0);
    if (moves_kernel) {
      const Matrix<S> dQ = X * dw.Q, dK = X * dw.K;
      Matrix<S> dL;
      if (spec.kernel == Kernel::softmax) {
        dL = (dQ * K.transpose() + Q * dK.transpose()) / c;
      } else {
        dL.resize(X.rows(), X.rows());
        for (Eigen::Index a = 0; a < X.rows(); ++a) {
          for (Eigen::Index b = 0; b < X.rows(); ++b) {
            S dD(0);
            for (Eigen::Index j = 0; j < Q.cols(); ++j) dD += S(2) * (Q(a, j) - K(b, j)) * (dQ(a, j) - dK(b, j));
            dL(a, b) = -dD / (S(2) * c);
          }
        }
      }
      Matrix<S> dS = Sm.cwiseProduct(dL);
      if ((spec.kernel == Kernel::softmax || spec.gauss_rownorm) && spec.normalisation_term) {
        const Vector<S> row = dS.rowwise().sum();
        dS -= Sm.cwiseProduct(row * Matrix<S>::Ones(1, Sm.cols()));
      }
      dT += dS * cache.U;
    }
    if (!dw.V.isZero(0)) dT += Sm * (X * dw.V * w.O);
  }
  return dT;
}

/// The directional derivative dT of T(X) in the direction (dQ_h, dK_h, dV_h) of the weights.
template <class S>
Matrix<S> output_jvp(const KernelSpec& spec, const Matrix<S>& X, const std::vector<Head<S>>& heads,
                     const std::vector<Head<S>>& direction) {
  return output_jvp(spec, X, heads, head_caches(spec, X, heads), direction);
}

/// Number of trained parameters.
template <class S>
Eigen::Index trained_size(const std::vector<Head<S>>& heads, const TrainedBlocks& trained) {
  Eigen::Index p = 0;
  for (const Head<S>& h : heads) p += (trained.Q ? h.Q.size() : 0) + (trained.K ? h.K.size() : 0) + (trained.V ? h.V.size() : 0);
  return p;
}

/// J = d vec(T_1; ...; T_N) / d theta (rows: sample, token, output coordinate; columns: head by
/// head Q, K, V of the trained blocks, each column-major), column by column from output_jvp.
template <class S>
Matrix<S> jacobian(const KernelSpec& spec, const std::vector<Matrix<S>>& X, const std::vector<Head<S>>& heads,
                   const TrainedBlocks& trained) {
  const Eigen::Index n = X.at(0).rows(), d_out = heads.at(0).O.cols();
  const Eigen::Index rows = static_cast<Eigen::Index>(X.size()) * n * d_out;
  Matrix<S> J(rows, trained_size(heads, trained));
  std::vector<Head<S>> zero;
  for (const Head<S>& h : heads) {
    zero.push_back({Matrix<S>::Zero(h.Q.rows(), h.Q.cols()), Matrix<S>::Zero(h.K.rows(), h.K.cols()),
                    Matrix<S>::Zero(h.V.rows(), h.V.cols()), h.O});
  }
  std::vector<std::vector<HeadCache<S>>> caches;
  for (const Matrix<S>& x : X) caches.push_back(head_caches(spec, x, heads));
  Eigen::Index column = 0;
  auto fill = [&](std::vector<Head<S>>& direction) {
    Eigen::Index row = 0;
    for (std::size_t i = 0; i < X.size(); ++i) {
      const Matrix<S> dT = output_jvp(spec, X[i], heads, caches[i], direction);
      for (Eigen::Index a = 0; a < n; ++a) {
        for (Eigen::Index k = 0; k < d_out; ++k) J(row++, column) = dT(a, k);
      }
    }
    ++column;
  };
  for (std::size_t h = 0; h < heads.size(); ++h) {
    for (int block = 0; block < 3; ++block) {
      if ((block == 0 && !trained.Q) || (block == 1 && !trained.K) || (block == 2 && !trained.V)) continue;
      Matrix<S>& M = block == 0 ? zero[h].Q : block == 1 ? zero[h].K : zero[h].V;
      for (Eigen::Index i = 0; i < M.size(); ++i) {
        M.data()[i] = S(1);
        fill(zero);
        M.data()[i] = S(0);
      }
    }
  }
  return J;
}

/// The residual vec(T - Y), in the row order of jacobian().
template <class S>
Vector<S> residual(const KernelSpec& spec, const std::vector<Matrix<S>>& X, const std::vector<Matrix<S>>& Y,
                   const std::vector<Head<S>>& heads) {
  const Eigen::Index n = X.at(0).rows(), d_out = heads.at(0).O.cols();
  Vector<S> r(static_cast<Eigen::Index>(X.size()) * n * d_out);
  Eigen::Index row = 0;
  for (std::size_t i = 0; i < X.size(); ++i) {
    const Matrix<S> R = output(spec, X[i], heads) - Y[i];
    for (Eigen::Index a = 0; a < n; ++a) {
      for (Eigen::Index k = 0; k < d_out; ++k) r(row++) = R(a, k);
    }
  }
  return r;
}

}  // namespace dyncheck::theory::kernels
