// dyncheck.theory: the theory functions a reader plots, on the same C++ templates the claims use
// (theory/), as numpy-returning functions with keyword arguments named as in the specs. Each takes
// digits=None (double) or digits=50 (Boost.Multiprecision cpp_bin_float<50>, returned as decimal
// strings of 50 significant digits, for Python's decimal.Decimal). Bad arguments raise ValueError.

#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dyncheck/theory/joma/linear_activation_erf.hpp"
#include "dyncheck/theory/numeric/scalar.hpp"
#include "dyncheck/theory/scb/linearised.hpp"

namespace py = pybind11;
using namespace dyncheck;
using theory::mp50;

namespace {

void check_digits(const std::optional<int>& digits) {
  if (digits && *digits != 50) {
    throw py::value_error("digits must be None (double) or 50; got " + std::to_string(*digits));
  }
}

std::string text(const mp50& value) { return value.str(50, std::ios_base::scientific); }

template <class S>
theory::Matrix<S> cast(const Eigen::MatrixXd& m) {
  return m.cast<S>();
}
template <class S>
theory::Vector<S> cast(const Eigen::VectorXd& v) {
  return v.cast<S>();
}

/// The JoMA erf solution (specs/joma.md §3) at the times `t`: zeta (len(t) x M_C), V (len(t) x M_C x K
/// flattened per time) and the blow-up times.
template <class S>
py::dict erf_solution(const Eigen::MatrixXd& Delta, const Eigen::MatrixXd& V0, const Eigen::VectorXd& zeta0,
                      double kappa, double eta_w, const std::vector<double>& t) {
  const theory::joma::LinearActivationErfSolution<S> solution(cast<S>(Delta), cast<S>(V0), cast<S>(zeta0), S(kappa),
                                                               S(eta_w));
  const Eigen::Index tokens = solution.tokens();
  std::vector<std::vector<S>> zeta(t.size(), std::vector<S>(static_cast<std::size_t>(tokens)));
  std::vector<theory::Matrix<S>> V;
  for (std::size_t i = 0; i < t.size(); ++i) {
    for (Eigen::Index l = 0; l < tokens; ++l) zeta[i][static_cast<std::size_t>(l)] = solution.zeta(l, S(t[i]));
    V.push_back(solution.V(S(t[i])));
  }
  std::vector<S> blow_up;
  for (Eigen::Index l = 0; l < tokens; ++l) blow_up.push_back(solution.blow_up_time(l));
  py::dict out;
  if constexpr (std::is_same_v<S, double>) {
    py::array_t<double> z({t.size(), static_cast<std::size_t>(tokens)});
    auto zv = z.mutable_unchecked<2>();
    for (std::size_t i = 0; i < t.size(); ++i) {
      for (Eigen::Index l = 0; l < tokens; ++l) zv(i, l) = zeta[i][static_cast<std::size_t>(l)];
    }
    out["zeta"] = z;
    out["V"] = V;
    out["blow_up_time"] = blow_up;
  } else {
    std::vector<std::vector<std::string>> z;
    for (const auto& row : zeta) {
      z.emplace_back();
      for (const S& value : row) z.back().push_back(text(value));
    }
    std::vector<std::vector<std::vector<std::string>>> v;
    for (const auto& m : V) {
      v.emplace_back();
      for (Eigen::Index r = 0; r < m.rows(); ++r) {
        v.back().emplace_back();
        for (Eigen::Index c = 0; c < m.cols(); ++c) v.back().back().push_back(text(m(r, c)));
      }
    }
    std::vector<std::string> b;
    for (const S& value : blow_up) b.push_back(isinf(value) ? std::string("inf") : text(value));
    out["zeta"] = z;
    out["V"] = v;
    out["blow_up_time"] = b;
  }
  return out;
}

template <class S, class F>
py::object map_times(const std::vector<double>& t, F f) {
  std::vector<S> x, y;
  for (double ti : t) {
    const auto point = f(ti);
    x.push_back(point.x);
    y.push_back(point.y);
  }
  if constexpr (std::is_same_v<S, double>) {
    return py::make_tuple(py::array_t<double>(x.size(), x.data()), py::array_t<double>(y.size(), y.data()));
  } else {
    std::vector<std::string> xs, ys;
    for (const S& v : x) xs.push_back(text(v));
    for (const S& v : y) ys.push_back(text(v));
    return py::make_tuple(xs, ys);
  }
}

}  // namespace

void bind_theory(py::module_& m) {
  auto joma = m.def_submodule("theory_joma", "JoMA (specs/joma.md)");
  joma.def(
      "erf_solution",
      [](const Eigen::MatrixXd& Delta, const Eigen::MatrixXd& V0, const Eigen::VectorXd& zeta0, double kappa,
         double eta_w, const std::vector<double>& t, std::optional<int> digits) -> py::dict {
        check_digits(digits);
        try {
          return digits ? erf_solution<mp50>(Delta, V0, zeta0, kappa, eta_w, t)
                        : erf_solution<double>(Delta, V0, zeta0, kappa, eta_w, t);
        } catch (const std::invalid_argument& e) {
          throw py::value_error(e.what());
        } catch (const std::domain_error& e) {
          throw py::value_error(e.what());
        }
      },
      py::arg("Delta"), py::arg("V0"), py::arg("zeta0"), py::arg("kappa"), py::arg("eta_w"), py::arg("t"),
      py::arg("digits") = py::none());
  joma.def(
      "zeta_at_first_blow_up",
      [](double delta_norm, double salient_delta_norm, std::optional<int> digits) -> py::object {
        check_digits(digits);
        try {
          if (digits) return py::str(text(theory::joma::zeta_at_first_blow_up(mp50(delta_norm), mp50(salient_delta_norm))));
          return py::float_(theory::joma::zeta_at_first_blow_up(delta_norm, salient_delta_norm));
        } catch (const std::invalid_argument& e) {
          throw py::value_error(e.what());
        }
      },
      py::arg("delta_norm"), py::arg("salient_delta_norm"), py::arg("digits") = py::none());

  auto scb = m.def_submodule("theory_scb", "Sparse contextual bigrams (specs/scb.md)");
  scb.def(
      "linearised_flow",
      [](const std::vector<double>& t, double eta, double coupling, double T, std::optional<int> digits) {
        check_digits(digits);
        if (!(eta > 0) || !(coupling >= 0) || !(T > 0)) {
          throw py::value_error("linearised_flow: needs eta > 0, coupling >= 0, T > 0");
        }
        if (digits) {
          return map_times<mp50>(t, [&](double ti) {
            return theory::scb::linearised_flow(mp50(ti), mp50(eta), mp50(coupling), mp50(T));
          });
        }
        return map_times<double>(t, [&](double ti) { return theory::scb::linearised_flow(ti, eta, coupling, T); });
      },
      py::arg("t"), py::arg("eta"), py::arg("coupling"), py::arg("T"), py::arg("digits") = py::none());
  scb.def(
      "linearised_gd",
      [](const std::vector<long long>& t, double eta, double coupling, double T, std::optional<int> digits) {
        check_digits(digits);
        if (!(eta > 0) || !(coupling >= 0) || !(T > 0)) {
          throw py::value_error("linearised_gd: needs eta > 0, coupling >= 0, T > 0");
        }
        std::vector<double> times(t.begin(), t.end());
        for (long long ti : t) {
          if (ti < 0) throw py::value_error("linearised_gd: steps t must be >= 0");
        }
        if (digits) {
          return map_times<mp50>(times, [&](double ti) {
            return theory::scb::linearised_gd(static_cast<long long>(ti), mp50(eta), mp50(coupling), mp50(T));
          });
        }
        return map_times<double>(
            times, [&](double ti) { return theory::scb::linearised_gd(static_cast<long long>(ti), eta, coupling, T); });
      },
      py::arg("t"), py::arg("eta"), py::arg("coupling"), py::arg("T"), py::arg("digits") = py::none());
  scb.def(
      "growth_rate",
      [](double eta, double rho_bar, double eta_A_K_P) {
        if (!(eta > 0) || !(rho_bar > 0) || !(eta_A_K_P > 0)) {
          throw py::value_error("growth_rate: needs eta, rho_bar, eta_A_K_P > 0");
        }
        return theory::scb::growth_rate(eta, rho_bar, eta_A_K_P);
      },
      py::arg("eta"), py::arg("rho_bar"), py::arg("eta_A_K_P"));
}
