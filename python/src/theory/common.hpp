// dyncheck/python: what every family's theory bindings share (python/src/theory/<family>.cpp).
// Each binding takes digits=None (double, numpy results) or digits=50 (Boost.Multiprecision
// cpp_bin_float<50>; results as decimal strings of 50 significant digits, for decimal.Decimal or
// mpmath.mpf). std::invalid_argument and std::domain_error from theory/ become ValueError with the
// theory's own message.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <Eigen/Dense>

#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "dyncheck/theory/numeric/eigen.hpp"
#include "dyncheck/theory/numeric/scalar.hpp"

namespace dyncheck::python {

namespace py = pybind11;
using theory::mp50;

inline void check_digits(const std::optional<int>& digits) {
  if (digits && *digits != 50) {
    throw py::value_error("digits must be None (double) or 50; got " + std::to_string(*digits));
  }
}

inline std::string text(const mp50& value) {
  if (isinf(value)) return value > 0 ? "inf" : "-inf";
  return value.str(50, std::ios_base::scientific);
}

/// A scalar: a Python float (double) or a 50-digit string (mp50).
template <class S>
py::object out(const S& x) {
  if constexpr (std::is_same_v<S, double>) {
    return py::float_(x);
  } else {
    return py::str(text(x));
  }
}

/// A vector: a 1-D numpy array (double) or a list of strings (mp50).
template <class S>
py::object out(const theory::Vector<S>& v) {
  if constexpr (std::is_same_v<S, double>) {
    return py::array_t<double>(static_cast<py::ssize_t>(v.size()), v.data());
  } else {
    py::list list;
    for (Eigen::Index i = 0; i < v.size(); ++i) list.append(text(v[i]));
    return list;
  }
}

/// A matrix: a 2-D numpy array (double) or a list of lists of strings (mp50).
template <class S>
py::object out(const theory::Matrix<S>& m) {
  if constexpr (std::is_same_v<S, double>) {
    py::array_t<double> a({static_cast<py::ssize_t>(m.rows()), static_cast<py::ssize_t>(m.cols())});
    auto view = a.mutable_unchecked<2>();
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
      for (Eigen::Index c = 0; c < m.cols(); ++c) view(r, c) = m(r, c);
    }
    return a;
  } else {
    py::list rows;
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
      py::list row;
      for (Eigen::Index c = 0; c < m.cols(); ++c) row.append(text(m(r, c)));
      rows.append(row);
    }
    return rows;
  }
}

/// A series of scalars at output times: a numpy array (double) or a list of strings (mp50).
template <class S>
py::object out_series(const std::vector<S>& values) {
  theory::Vector<S> v(static_cast<Eigen::Index>(values.size()));
  for (std::size_t i = 0; i < values.size(); ++i) v[static_cast<Eigen::Index>(i)] = values[i];
  return out(v);
}

/// A series of vectors at output times: a (times x size) numpy array (double) or nested lists (mp50).
template <class S>
py::object out_rows(const std::vector<theory::Vector<S>>& rows) {
  theory::Matrix<S> m(static_cast<Eigen::Index>(rows.size()), rows.empty() ? 0 : rows.front().size());
  for (std::size_t i = 0; i < rows.size(); ++i) m.row(static_cast<Eigen::Index>(i)) = rows[i].transpose();
  return out(m);
}

/// The ODE tolerance a binding uses when the caller gives none: `in_double` in double (integrate_with_error
/// accepts down to 1e6 eps = 2.2e-10 for its own solve; a solver that also solves at tolerance / 1000
/// needs 1000 times that), 1e-30 in 50 digits.
template <class S>
double default_tolerance(const std::optional<double>& tolerance, double in_double = 1e-9) {
  if (tolerance) return *tolerance;
  return std::is_same_v<S, double> ? in_double : 1e-30;
}

template <class S>
theory::Matrix<S> in(const Eigen::MatrixXd& m) {
  return m.cast<S>();
}
template <class S>
theory::Vector<S> in(const Eigen::VectorXd& v) {
  return v.cast<S>();
}

/// Calls f.template operator()<double>() or <mp50>() as `digits` asks, with the theory's argument
/// errors turned into ValueError.
template <class F>
py::object with_digits(const std::optional<int>& digits, F&& f) {
  check_digits(digits);
  try {
    if (digits) return f.template operator()<mp50>();
    return f.template operator()<double>();
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  } catch (const std::domain_error& e) {
    throw py::value_error(e.what());
  }
}

}  // namespace dyncheck::python
