// dyncheck.theory.scb: the sparse contextual bigram theory (specs/scb.md) on the claims' own templates.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "dyncheck/theory/numeric/ode.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/instance.hpp"
#include "dyncheck/theory/scb/linearised.hpp"
#include "dyncheck/theory/scb/reduced_flow.hpp"
#include "theory/common.hpp"

namespace py = pybind11;
using namespace dyncheck;
using namespace dyncheck::python;

namespace {

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

void bind_theory_scb(py::module_& m) {
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
  scb.def(
      "constants",
      [](const Eigen::MatrixXd& P, const Eigen::VectorXd& mu, const Eigen::MatrixXd& q, std::optional<int> digits) {
        return with_digits(digits, [&]<class S>() -> py::object {
          const theory::scb::Instance<S> instance{in<S>(P), in<S>(mu), in<S>(q)};
          theory::scb::validate(instance);
          const auto c = theory::scb::constants(instance);
          py::dict result;
          result["K_P"] = out(c.K_P);
          result["K_2"] = out(c.K_2);
          result["rho_bar"] = out(c.rho_bar);
          result["rho"] = out(c.rho);
          result["L_irr"] = out(c.L_irr);
          return result;
        });
      },
      "The instance constants of specs/scb.md §4 (K_P, K_2, rho_k, rho_bar, L_irr) of a transition matrix\n"
      "P (N x N, columns sum to 1, P mu = mu), stationary law mu and emission matrix q (T x N).",
      py::arg("P"), py::arg("mu"), py::arg("q"), py::arg("digits") = py::none());
  scb.def(
      "reduced_flow",
      [](const Eigen::MatrixXd& P, const Eigen::VectorXd& mu, const Eigen::MatrixXd& q, double eta, double eta_A,
         const Eigen::VectorXd& m0, double alpha0, double nu0, const Eigen::VectorXd& beta0,
         const Eigen::VectorXd& omega0, const std::vector<double>& t, std::optional<double> tolerance, std::optional<int> digits) {
        return with_digits(digits, [&]<class S>() -> py::object {
          const theory::scb::Instance<S> instance{in<S>(P), in<S>(mu), in<S>(q)};
          theory::scb::validate(instance);
          const auto N = instance.N();
          if (m0.size() != N || beta0.size() != N || omega0.size() != N) {
            throw std::invalid_argument("reduced_flow: m0, beta0 and omega0 must have N = " + std::to_string(N) +
                                        " entries");
          }
          if (!(eta > 0) || !(eta_A > 0)) throw std::invalid_argument("reduced_flow: needs eta > 0 and eta_A > 0");
          const theory::scb::ReducedState<S> state0{in<S>(m0), S(alpha0), S(nu0), in<S>(beta0), in<S>(omega0)};
          std::vector<S> times(t.begin(), t.end());
          const theory::scb::ReducedFlow<S> flow(instance, theory::scb::constants(instance), S(eta), S(eta_A));
          const auto solution = theory::integrate_with_error(flow, theory::scb::pack(state0), times, S(default_tolerance<S>(tolerance)));
          std::vector<theory::Vector<S>> m_rows, beta, omega;
          std::vector<S> alpha, nu;
          for (const auto& x : solution.states) {
            const auto s = theory::scb::unpack(x);
            m_rows.push_back(s.m);
            alpha.push_back(s.alpha);
            nu.push_back(s.nu);
            beta.push_back(s.beta);
            omega.push_back(s.omega);
          }
          py::dict result;
          result["t"] = out_series(times);
          result["m"] = out_rows(m_rows);
          result["alpha"] = out_series(alpha);
          result["nu"] = out_series(nu);
          result["beta"] = out_rows(beta);
          result["omega"] = out_rows(omega);
          result["error_estimate"] = out_series(solution.error_estimate);
          return result;
        });
      },
      "The reduced stage-1 gradient flow of specs/scb.md §4.2 (time in steps) from the state\n"
      "(m0, alpha0, nu0, beta0, omega0), on the instance (P, mu, q), at the times t, with its error estimate.",
      py::arg("P"), py::arg("mu"), py::arg("q"), py::arg("eta"), py::arg("eta_A"), py::arg("m0"), py::arg("alpha0"),
      py::arg("nu0"), py::arg("beta0"), py::arg("omega0"), py::arg("t"), py::arg("tolerance") = py::none(),
      py::arg("digits") = py::none());
}
