// dyncheck/theory/numeric/eigen.hpp
//
// Eigen 3.4 on double, mp50 and mp100. Include this header, never
// <boost/multiprecision/eigen.hpp>, wherever an Eigen object holds a multiprecision scalar.
//
// Boost 1.74's adapter breaks Eigen 3.4 (numerics.md §2a): its NumTraits lacks infinity(), digits(),
// min_exponent() and max_exponent(), so SelfAdjointEigenSolver and BDCSVD (through numext::hypot)
// and blueNorm do not compile (boostorg/multiprecision#400, fixed in Boost 1.79), and its lowest()
// returns numeric_limits::min(), a tiny *positive* number, so any max-reduction seeded with
// lowest() is wrong.
//
// Chosen fix ("Fix A" of numerics.md §2a): give Eigen no specialisation at all. With et_off
// scalars the primary NumTraits, i.e. Eigen's GenericNumTraits, reads everything from
// std::numeric_limits, which Boost.Multiprecision specialises correctly: lowest() == -max(),
// infinity(), digits(), min/max_exponent() all exist. Why A rather than a full specialisation
// ("Fix B"):
//  - One definition everywhere. A specialisation must be visible before the first use of
//    NumTraits<mp50> in *every* translation unit; a file that includes <Eigen/Dense> and
//    scalar.hpp but not this header would silently use the primary template: two different
//    NumTraits<mp50> in one program (an ODR violation no tool reports). With no specialisation
//    the include order cannot matter.
//  - Literal == Scalar, so the constants inside Eigen's algorithms (Literal(2), Literal(-1), ...)
//    are multiprecision values, and since Boost's ScalarBinaryOpTraits for (mp, double) are
//    absent, a Matrix<double> cannot be silently mixed into a multiprecision product: that is a
//    compile error. Scalars still promote: `2.0 * A` and `A / 3` compile.
// Cost: GenericNumTraits::dummy_precision() is 0, so isApprox(), isZero(), isIdentity() etc. with
// their *default* precision compare exactly for mp50/mp100. Always pass the precision explicitly.
// No decomposition reads dummy_precision (they use epsilon()).
#pragma once

// If Boost's adapter came first, its partial specialisation of NumTraits is already in force for
// every Boost.Multiprecision number and this header cannot take it back.
#ifdef BOOST_MP_EIGEN_HPP
#error "dyncheck/theory/numeric/eigen.hpp: <boost/multiprecision/eigen.hpp> was included first; \
its Boost 1.74 NumTraits breaks SelfAdjointEigenSolver, BDCSVD, blueNorm and lowest() (numerics.md §2a)"
#endif
// ...and if it comes later, defining its include guard turns it into a no-op, so that no
// translation unit of a program that includes this header can see a second NumTraits.
#define BOOST_MP_EIGEN_HPP

#include <dyncheck/theory/numeric/scalar.hpp>

#include <Eigen/Dense>

#include <limits>
#include <type_traits>

namespace dyncheck::theory {

/// A column vector \f$x \in S^n\f$ whose size is known at run time.
template <class S>
using Vector = Eigen::Matrix<S, Eigen::Dynamic, 1>;

/// A matrix \f$A \in S^{m \times n}\f$ whose size is known at run time.
template <class S>
using Matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;

namespace detail {

// What Fix A relies on; each line failed (or was wrong) with Boost 1.74's adapter.
template <class S>
inline constexpr bool eigen_reads_numeric_limits =
    std::is_same_v<typename Eigen::NumTraits<S>::Literal, S> &&
    std::is_same_v<typename Eigen::NumTraits<S>::Real, S> && Eigen::NumTraits<S>::IsComplex == 0 &&
    Eigen::NumTraits<S>::RequireInitialization == 1 &&
    Eigen::NumTraits<S>::digits() == std::numeric_limits<S>::digits &&
    Eigen::NumTraits<S>::digits10() == std::numeric_limits<S>::digits10 &&
    Eigen::NumTraits<S>::min_exponent() == std::numeric_limits<S>::min_exponent &&
    Eigen::NumTraits<S>::max_exponent() == std::numeric_limits<S>::max_exponent;

static_assert(eigen_reads_numeric_limits<mp50>);
static_assert(eigen_reads_numeric_limits<mp100>);
// lowest() < 0 cannot be checked at compile time for a non-literal type; tests/theory/numeric/eigen_test.cpp does.

}  // namespace detail

}  // namespace dyncheck::theory
