// dyncheck.theory.joma: the JoMA theory (specs/joma.md) on the claims' own templates.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "dyncheck/theory/joma/linear_activation_erf.hpp"
#include "dyncheck/theory/joma/nonlinear_flow.hpp"
#include "dyncheck/theory/joma/nonlinear_flow_solution.hpp"
#include "theory/common.hpp"

namespace py = pybind11;
using namespace dyncheck;
using namespace dyncheck::python;

namespace {

/// The JoMA erf solution (specs/joma.md §3) at the times `t`: zeta (len(t) x M_C), V (len(t) x M_C x K
/// flattened per time) and the blow-up times.
template <class S>
py::dict erf_solution(const Eigen::MatrixXd& Delta, const Eigen::MatrixXd& V0, const Eigen::VectorXd& zeta0,
                      double kappa, double eta_w, const std::vector<double>& t) {
  const theory::joma::LinearActivationErfSolution<S> solution(in<S>(Delta), in<S>(V0), in<S>(zeta0), S(kappa),
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


}  // namespace

void bind_theory_joma(py::module_& m) {
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

  joma.def(
      "nonlinear_flow",
      [](const Eigen::VectorXd& mu, const Eigen::VectorXd& v0, const std::vector<double>& t, std::optional<double> tolerance,
         const std::optional<Eigen::VectorXd>& x, std::optional<int> digits) {
        return with_digits(digits, [&]<class S>() -> py::object {
          std::vector<S> times(t.begin(), t.end());
          const auto solution = theory::joma::solve_nonlinear_flow<S>(in<S>(mu), in<S>(v0), times, S(default_tolerance<S>(tolerance, 1e-6)));
          py::dict result;
          result["t"] = out_series(solution.times);
          result["v"] = out_rows(solution.states);
          result["error_estimate"] = out_series(solution.error_estimate);
          if (x) {
            std::vector<S> entropy;
            for (const auto& v : solution.states) {
              entropy.push_back(theory::joma::entropy(theory::joma::nonlinear_attention(in<S>(*x), v)));
            }
            result["entropy"] = out_series(entropy);
            result["entropy_limit"] = out(theory::joma::asymptotic_attention_entropy(in<S>(*x), in<S>(mu)));
          }
          return result;
        });
      },
      "v(t) of the nonlinear JoMA flow v' = (mu - v) o exp(v^2/2) (specs/joma.md §4) at the times t, with\n"
      "its error estimate (default tolerance 1e-6 in double: the chained solve also runs at tolerance / 1000); with x (the token frequencies, >= 0) also the attention entropy H(t) in nats of\n"
      "p ∝ x o exp(v^2/2) and its limit H(inf).",
      py::arg("mu"), py::arg("v0"), py::arg("t"), py::arg("tolerance") = py::none(), py::arg("x") = py::none(),
      py::arg("digits") = py::none());
  joma.def(
      "late_time_rate",
      [](double mu, std::optional<int> digits) {
        return with_digits(digits, [&]<class S>() -> py::object { return out(theory::joma::late_time_rate(S(mu))); });
      },
      "The rate of the late-time exponential approach of v to mu in the nonlinear flow.", py::arg("mu"),
      py::arg("digits") = py::none());
}
