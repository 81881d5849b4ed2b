// dyncheck/theory/joma/joint_gradient.hpp
//
// The reduced gradients of one sample in the JoMA block (specs/joma.md §1, "Joint gradient flow"),
// written from the attention Jacobians J_b of the spec, independently of the simulator's backprop.
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>

#include <cmath>
#include <stdexcept>

#include "dyncheck/portable/math.hpp"

namespace dyncheck::theory::joma {

enum class Kernel { linear, exp, softmax };

/// Attention output of one sample (§1): linear \f$b = z\circ x\f$; exp \f$b = e^{z/T}\circ x\f$;
/// softmax \f$b = e^{z/T}\circ x / \mathbf 1^T(e^{z/T}\circ x)\f$.
template <class S>
Vector<S> attention_output(Kernel kernel, const Vector<S>& z, const Vector<S>& x, const S& temperature) {
  if (z.size() != x.size()) throw std::invalid_argument("attention_output: z and x must have M_C entries");
  if (!(temperature > S(0))) throw std::invalid_argument("attention_output: temperature must be > 0");
  if (kernel == Kernel::linear) return z.cwiseProduct(x);
  Vector<S> b(z.size());
  using portable::exp;
  for (Eigen::Index l = 0; l < z.size(); ++l) b[l] = exp(z[l] / temperature) * x[l];
  if (kernel == Kernel::softmax) b /= b.sum();
  return b;
}

/// Gradients of one sample's loss with respect to \f$z\f$ and to each \f$v_k\f$ (columns of V),
/// given \f$\delta_k = \partial\ell/\partial(w_k^T f)\f$ (§1):
/// \f[ \frac{\partial\ell}{\partial v_k} = \delta_k\, b,\qquad
///     \frac{\partial\ell}{\partial z} = \sum_k\delta_k\,J_b^T v_k,\quad
///     J_b = \mathrm{diag}(x),\ T^{-1}\mathrm{diag}(b),\ T^{-1}(\mathrm{diag}(b) - bb^T). \f]
/// (\f$\partial\ell/\partial v_k = U_C^T\partial\ell/\partial w_k\f$ needs orthonormal embeddings.)
template <class S>
struct ReducedGradient {
  Vector<S> z;  ///< \f$\partial\ell/\partial z\f$
  Matrix<S> V;  ///< column k: \f$\partial\ell/\partial v_k\f$
  Vector<S> b;  ///< the sample's attention output
};

template <class S>
ReducedGradient<S> reduced_gradient(Kernel kernel, const Vector<S>& z, const Matrix<S>& V, const Vector<S>& x,
                                    const Vector<S>& delta, const S& temperature) {
  if (V.rows() != z.size() || delta.size() != V.cols()) {
    throw std::invalid_argument("reduced_gradient: V must be M_C x K and delta of length K");
  }
  ReducedGradient<S> g{Vector<S>(z.size()), Matrix<S>(V.rows(), V.cols()), attention_output(kernel, z, x, temperature)};
  for (Eigen::Index k = 0; k < V.cols(); ++k) g.V.col(k) = delta[k] * g.b;
  const Vector<S> weighted = V * delta;  // sum_k delta_k v_k
  switch (kernel) {
    case Kernel::linear: g.z = x.cwiseProduct(weighted); break;
    case Kernel::exp: g.z = g.b.cwiseProduct(weighted) / temperature; break;
    case Kernel::softmax: g.z = (g.b.cwiseProduct(weighted) - g.b * g.b.dot(weighted)) / temperature; break;
  }
  return g;
}

}  // namespace dyncheck::theory::joma
