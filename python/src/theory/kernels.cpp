// dyncheck.theory.kernels: the Gaussian-vs-softmax theory (specs/kernels.md) on the claims' own templates.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "dyncheck/theory/kernels/hull.hpp"
#include "dyncheck/theory/kernels/value_only.hpp"
#include "theory/common.hpp"

namespace py = pybind11;
using namespace dyncheck;
using namespace dyncheck::python;

void bind_theory_kernels(py::module_& m) {
  auto kernels = m.def_submodule("theory_kernels", "Gaussian vs softmax attention (specs/kernels.md)");
  kernels.def(
      "value_only",
      [](const Eigen::MatrixXd& B, const Eigen::MatrixXd& W0, const Eigen::MatrixXd& O, const Eigen::MatrixXd& Y,
         double eta, const std::vector<long long>& t, std::optional<int> digits) {
        // The floor sums the modes with lambda_i mu_j <= 1e-40 lambda_max mu_max, a threshold only 50 or
        // more digits resolve (in double a rank-deficient P has eigenvalues near 1e-16 lambda_max): the
        // dynamics are evaluated in 50 digits whatever `digits` asks, and rounded to double for None.
        return with_digits(digits, [&]<class R>() -> py::object {
          using S = theory::mp50;
          if (B.cols() != W0.rows() || W0.cols() != O.rows() || Y.rows() != B.rows() || Y.cols() != O.cols()) {
            throw std::invalid_argument("value_only: needs B (Nn x d), W0 (d x d), O (d x d_out), Y (Nn x d_out)");
          }
          if (!(eta > 0)) throw std::invalid_argument("value_only: eta must be > 0");
          const theory::kernels::ValueOnlyDynamics<S> dynamics(in<S>(B), in<S>(W0), in<S>(O), in<S>(Y), S(eta));
          std::vector<S> loss;
          for (long long step : t) {
            if (step < 0) throw std::invalid_argument("value_only: steps t must be >= 0");
            loss.push_back(dynamics.loss(step));
          }
          auto as = [](const S& x) { return R(x); };
          std::vector<R> loss_r;
          for (const S& x : loss) loss_r.push_back(as(x));
          py::dict result;
          result["loss"] = out_series(loss_r);
          result["floor"] = out(as(dynamics.floor()));
          result["lambda"] = out(theory::Vector<R>(dynamics.lambda().template cast<R>()));
          result["lambda_min"] = out(as(dynamics.lambda_min()));
          result["slowest_rho"] = out(as(dynamics.slowest_rho()));
          return result;
        });
      },
      "The W^V-only GD loss f_t = 1/2 sum C_ij^2 (1 - eta lambda_i mu_j)^(2t) at the steps t (specs/kernels.md\n"
      "A.4 D2), its least-squares floor, the eigenvalues lambda of B B' and the slowest mode's |rho|.",
      py::arg("B"), py::arg("W0"), py::arg("O"), py::arg("Y"), py::arg("eta"), py::arg("t"),
      py::arg("digits") = py::none());
  kernels.def(
      "softmax_loss_floor",
      [](const std::vector<Eigen::VectorXd>& u, const std::vector<Eigen::VectorXd>& t) {
        if (u.size() != t.size()) throw py::value_error("softmax_loss_floor: u and t need one entry per sample");
        for (std::size_t i = 0; i < u.size(); ++i) {
          if (u[i].size() == 0) throw py::value_error("softmax_loss_floor: every sample needs n >= 1 values");
        }
        return theory::kernels::softmax_loss_floor(u, t);
      },
      "LB = 1/2 sum_{i,a} dist(t_ia, [min_b u_ib, max_b u_ib])^2 (specs/kernels.md A.4 D4, scalar output): the\n"
      "floor under every softmax model trained in W^Q, W^K only; u[i] the n values x_b' W^V W^O of sample i,\n"
      "t[i] its targets. Double only (no rounding beyond max/min and one sum).",
      py::arg("u"), py::arg("t"));
}
