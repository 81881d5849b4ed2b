// dyncheck/theory/numeric/odeint_eigen_algebra.hpp
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>

// is_resizeable / same_size / resize for Eigen objects, so that steppers can size their
// temporaries like the state. This header only specialises odeint traits.
#include <boost/numeric/odeint/external/eigen/eigen_resize.hpp>

#include <Eigen/Core>

namespace dyncheck::theory {

/// An ODEint algebra for states of type Vector<S> that hands each operation one coefficient at a
/// time: `for_eachN(v1, ..., vN, op)` performs \f$\mathrm{op}(v_1[i], \dots, v_N[i])\f$ for
/// \f$i = 0, \dots, n-1\f$, and `norm_inf(v)` is \f$\max_i |v_i|\f$.
///
/// Why not the two routes numerics.md §2b measured:
///  - range_algebra over std::vector<mp> does not compile with Boost 1.74's controlled steppers:
///    `extract_value_type` recurses forever since Boost.Multiprecision's `number::value_type` is the
///    number itself (boostorg/odeint#40, fixed by odeint PR #34 / #63 after Boost 1.74).
///  - vector_space_algebra over Eigen needs <boost/numeric/odeint/external/eigen/eigen_algebra.hpp>,
///    which adds `operator+(matrix, scalar)`, a coefficient-wise `operator/(matrix, matrix)` and
///    `abs(matrix)` to namespace Eigen for every file that includes it: `A / B` would then compile,
///    and mean something no reader expects, anywhere in the project.
/// Coefficient-wise application gives ODEint's operations (scale_sum, rel_error, ...) plain scalars,
/// exactly as with range_algebra; for multiprecision scalars nothing is lost by not vectorising.
struct odeint_eigen_algebra {
  template <class S1, class Op>
  static void for_each1(S1& s1, Op op) {
    for (Eigen::Index i = 0; i < s1.size(); ++i) op(s1(i));
  }
  template <class S1, class S2, class Op>
  static void for_each2(S1& s1, S2& s2, Op op) {
    for (Eigen::Index i = 0; i < s1.size(); ++i) op(s1(i), s2(i));
  }
  template <class S1, class S2, class S3, class Op>
  static void for_each3(S1& s1, S2& s2, S3& s3, Op op) {
    for (Eigen::Index i = 0; i < s1.size(); ++i) op(s1(i), s2(i), s3(i));
  }
  template <class S1, class S2, class S3, class S4, class Op>
  static void for_each4(S1& s1, S2& s2, S3& s3, S4& s4, Op op) {
    for (Eigen::Index i = 0; i < s1.size(); ++i) op(s1(i), s2(i), s3(i), s4(i));
  }

  template <class V>
  static typename V::Scalar norm_inf(const V& v) {
    using Scalar = typename V::Scalar;
    return v.size() == 0 ? Scalar(0) : Scalar(v.cwiseAbs().maxCoeff());
  }
};

}  // namespace dyncheck::theory
