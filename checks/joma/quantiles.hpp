#pragma once
// Normal and Student-t upper quantiles for the joma claims, evaluated in 50-digit software arithmetic and
// rounded once to double. Boost.Math in double calls glibc's exp/log/lgamma, whose variant (and last bits)
// depends on the CPU, so a quantile in double could differ between machines and move a reported
// half-width; the software type performs every operation itself (README, "Which guarantees hold across
// machines"; checks/src/stats.cpp does the same for stats::student_t_half_width).

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <stdexcept>

namespace dyncheck::checks::joma {

using quantile_real =
    boost::multiprecision::number<boost::multiprecision::cpp_bin_float<50>, boost::multiprecision::et_off>;

/// z with P(Z > z) = tail for a standard normal Z; tail in (0, 1).
inline double normal_upper_quantile(double tail) {
  if (!(tail > 0 && tail < 1)) throw std::invalid_argument("normal_upper_quantile: tail must be in (0, 1)");
  return static_cast<double>(boost::math::quantile(
      boost::math::complement(boost::math::normal_distribution<quantile_real>(), quantile_real(tail))));
}

/// t with P(T > t) = tail for Student's t with `dof` > 0 degrees of freedom; tail in (0, 1).
inline double student_t_upper_quantile(double dof, double tail) {
  if (!(dof > 0)) throw std::invalid_argument("student_t_upper_quantile: dof must be > 0");
  if (!(tail > 0 && tail < 1)) throw std::invalid_argument("student_t_upper_quantile: tail must be in (0, 1)");
  return static_cast<double>(boost::math::quantile(boost::math::complement(
      boost::math::students_t_distribution<quantile_real>(quantile_real(dof)), quantile_real(tail))));
}

}  // namespace dyncheck::checks::joma
