// dyncheck/theory/multihead/layer.hpp
//
// The target of specs/multihead.md B.1: F(X) = Σ_i softmax(X Θ_i Xᵀ) X W_i, softmax row-wise,
// **no 1/√d scaling** [paper]. Templated on the scalar; exp is dyncheck::portable::exp on double
// (the same bits on every CPU) and Boost.Multiprecision's exp otherwise.
#pragma once

#include <dyncheck/portable/math.hpp>
#include <dyncheck/theory/numeric/eigen.hpp>

#include <cstddef>
#include <stdexcept>
#include <vector>

namespace dyncheck::theory::multihead {

/// The m heads (Θ_i, W_i), each d × d.
template <class S>
struct Heads {
  std::vector<Matrix<S>> theta;
  std::vector<Matrix<S>> w;

  int m() const { return static_cast<int>(theta.size()); }
  int d() const { return theta.empty() ? 0 : static_cast<int>(theta.front().rows()); }

  /// Σ_i W_i.
  Matrix<S> w_sum() const {
    Matrix<S> sum = Matrix<S>::Zero(d(), d());
    for (const Matrix<S>& wi : w) sum += wi;
    return sum;
  }

  template <class T>
  Heads<T> cast() const {
    Heads<T> out;
    for (const Matrix<S>& t : theta) out.theta.push_back(t.template cast<T>());
    for (const Matrix<S>& wi : w) out.w.push_back(wi.template cast<T>());
    return out;
  }

  void validate() const {
    if (theta.empty() || theta.size() != w.size()) throw std::invalid_argument("Heads: need m >= 1 pairs (Theta_i, W_i)");
    for (std::size_t i = 0; i < theta.size(); ++i) {
      if (theta[i].rows() != d() || theta[i].cols() != d() || w[i].rows() != d() || w[i].cols() != d()) {
        throw std::invalid_argument("Heads: every Theta_i and W_i must be d x d");
      }
    }
  }
};

template <class S>
S exp_of(const S& x) {
  using portable::exp;  // double: dyncheck::portable; multiprecision: found by argument-dependent lookup
  return exp(x);
}

/// Row-wise softmax of Z (shift by the row maximum, then normalise).
template <class S>
Matrix<S> softmax_rows(const Matrix<S>& Z) {
  Matrix<S> out(Z.rows(), Z.cols());
  for (Eigen::Index a = 0; a < Z.rows(); ++a) {
    const S top = Z.row(a).maxCoeff();
    S total(0);
    for (Eigen::Index b = 0; b < Z.cols(); ++b) {
      out(a, b) = exp_of(S(Z(a, b) - top));
      total += out(a, b);
    }
    out.row(a) /= total;
  }
  return out;
}

/// softmax(X Θ Xᵀ), the attention pattern of one head.
template <class S>
Matrix<S> attention(const Matrix<S>& X, const Matrix<S>& theta) {
  return softmax_rows<S>(Matrix<S>(X * theta * X.transpose()));
}

/// F(X) = Σ_i softmax(X Θ_i Xᵀ) X W_i (k × d).
template <class S>
Matrix<S> layer(const Heads<S>& heads, const Matrix<S>& X) {
  Matrix<S> out = Matrix<S>::Zero(X.rows(), X.cols());
  for (int i = 0; i < heads.m(); ++i) {
    const auto h = static_cast<std::size_t>(i);
    out += attention<S>(X, heads.theta[h]) * (X * heads.w[h]);
  }
  return out;
}

/// P = I_k − J/k, the centring projection.
template <class S>
Matrix<S> centring(int k) {
  return Matrix<S>::Identity(k, k) - Matrix<S>::Constant(k, k, S(1) / S(k));
}

}  // namespace dyncheck::theory::multihead
