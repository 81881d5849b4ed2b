// dyncheck.theory.multihead: the multi-head attention identities (specs/multihead.md) on the claims' own
// templates (exact expectations by enumeration of the Boolean cube {±1}^{k×d}).
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "dyncheck/theory/multihead/identities.hpp"
#include "theory/common.hpp"

namespace py = pybind11;
using namespace dyncheck;
using namespace dyncheck::python;

namespace {

// Enumeration cost: 2^{kd} inputs; 2^20 take seconds in double on one core (issue #14).
constexpr int kMaxCubeBits = 20;

void check_cube(int k, int d) {
  if (k < 1 || d < 1 || k * d > kMaxCubeBits) {
    throw std::invalid_argument("needs k >= 1, d >= 1 and k*d <= " + std::to_string(kMaxCubeBits) + "; got k = " +
                                std::to_string(k) + ", d = " + std::to_string(d));
  }
}

template <class S>
theory::multihead::Heads<S> heads(const std::vector<Eigen::MatrixXd>& theta, const std::vector<Eigen::MatrixXd>& w) {
  theory::multihead::Heads<S> h;
  for (const auto& t : theta) h.theta.push_back(in<S>(t));
  for (const auto& x : w) h.w.push_back(in<S>(x));
  h.validate();
  return h;
}

}  // namespace

void bind_theory_multihead(py::module_& m) {
  auto mh = m.def_submodule("theory_multihead", "Learning a multi-head attention layer (specs/multihead.md)");
  mh.def(
      "boolean_moments",
      [](int k, int d, unsigned threads, std::optional<int> digits) {
        return with_digits(digits, [&]<class S>() -> py::object {
          check_cube(k, d);
          const auto moments = theory::multihead::boolean_moments<S>(k, d, threads);
          py::dict result;
          result["uniform"] = out(moments.uniform);
          result["gram"] = out(moments.gram);
          result["centred"] = out(moments.centred);
          result["diag"] = out(moments.diag);
          return result;
        });
      },
      "The moments of D1 over X uniform on {±1}^{k×d}: E[X'(J/k)X], E[X'X], E[X'PX], E[x_ab^2] (exact,\n"
      "independent of threads).",
      py::arg("k"), py::arg("d"), py::arg("threads") = 1u, py::arg("digits") = py::none());
  mh.def(
      "crude_estimates",
      [](const std::vector<Eigen::MatrixXd>& theta, const std::vector<Eigen::MatrixXd>& w, int k, unsigned threads,
         std::optional<int> digits) {
        return with_digits(digits, [&]<class S>() -> py::object {
          const auto h = heads<S>(theta, w);
          check_cube(k, h.d());
          const auto c = theory::multihead::crude_estimates<S>(h, k, threads);
          py::dict result;
          result["c1"] = out(c.c1);
          result["c2"] = out(c.c2);
          result["w_sum"] = out(h.w_sum());
          result["relative_error_c1"] = out(theory::multihead::relative_error(c.c1, h.w_sum()));
          result["relative_error_c2"] = out(theory::multihead::relative_error(c.c2, h.w_sum()));
          return result;
        });
      },
      "The crude estimates C1 = E[X'F(X)] and C2 = (1/k) E[X'JF(X)] of sum_i W_i (D2) for the teacher\n"
      "F(X) = sum_i softmax(X Theta_i X') X W_i, with their relative errors against sum_i W_i.",
      py::arg("theta"), py::arg("w"), py::arg("k"), py::arg("threads") = 1u, py::arg("digits") = py::none());
}
