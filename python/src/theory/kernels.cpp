// dyncheck.theory.kernels: the Gaussian-vs-softmax theory (specs/kernels.md) on the claims' own templates.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <string>
#include <vector>

#include "dyncheck/theory/kernels/conditions.hpp"
#include "dyncheck/theory/kernels/hull.hpp"
#include "dyncheck/theory/kernels/value_only.hpp"
#include "theory/common.hpp"

namespace py = pybind11;
using namespace dyncheck;
using namespace dyncheck::python;

namespace {

/// One 2-D array (one head, or one sample) or a sequence of 2-D arrays; anything else is a ValueError naming `name`.
std::vector<Eigen::MatrixXd> matrices(const py::handle& value, const std::string& name) {
  auto one = [&](const py::handle& item) {
    const auto a = py::array_t<double, py::array::forcecast>::ensure(item);
    if (!a || a.ndim() != 2) throw py::value_error(name + ": needs a 2-D array or a list of 2-D arrays");
    return a.cast<Eigen::MatrixXd>();
  };
  if (py::isinstance<py::array>(value) && py::reinterpret_borrow<py::array>(value).ndim() == 2) return {one(value)};
  if (!py::isinstance<py::sequence>(value) || py::isinstance<py::str>(value)) {
    throw py::value_error(name + ": needs a 2-D array or a list of 2-D arrays");
  }
  std::vector<Eigen::MatrixXd> out;
  for (const py::handle item : value) out.push_back(one(item));
  if (out.empty()) throw py::value_error(name + ": needs at least one matrix");
  return out;
}

theory::kernels::KernelSpec kernel_spec(const std::string& kernel, double scale_power) {
  theory::kernels::KernelSpec spec;
  if (kernel == "softmax") {
    spec.kernel = theory::kernels::Kernel::softmax;
  } else if (kernel == "gaussian" || kernel == "gaussian_rownorm") {
    spec.kernel = theory::kernels::Kernel::gaussian;
    spec.gauss_rownorm = kernel == "gaussian_rownorm";
  } else {
    throw py::value_error("kernel must be 'softmax', 'gaussian' or 'gaussian_rownorm'; got '" + kernel + "'");
  }
  if (!std::isfinite(scale_power)) throw py::value_error("scale_power must be finite");
  spec.scale_power = scale_power;
  return spec;
}

}  // namespace

void bind_theory_kernels(py::module_& m) {
  auto kernels = m.def_submodule("theory_kernels", "Gaussian vs softmax attention (specs/kernels.md)");
  kernels.def(
      "value_only",
      [](const Eigen::MatrixXd& B, const Eigen::MatrixXd& W0, const Eigen::MatrixXd& O, const Eigen::MatrixXd& Y,
         double eta, const std::vector<long long>& t, std::optional<int> digits) {
        // Evaluated in the scalar `digits` asks for (double for None): the zero-mode threshold of the floor
        // follows the scalar's epsilon (ValueOnlyDynamics::zero_mode_threshold), so a rank-deficient P's zero
        // modes are found in double too.
        return with_digits(digits, [&]<class R>() -> py::object {
          using S = R;
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
  kernels.def(
      "conditions",
      [](const py::object& X, const py::object& Q, const py::object& K, const py::object& V, const py::object& O,
         const std::string& kernel, double scale_power) {
        const theory::kernels::KernelSpec spec = kernel_spec(kernel, scale_power);
        const std::vector<Eigen::MatrixXd> x = matrices(X, "X");
        const std::vector<Eigen::MatrixXd> q = matrices(Q, "Q"), k = matrices(K, "K"), v = matrices(V, "V"),
                                           o = matrices(O, "O");
        if (k.size() != q.size() || v.size() != q.size() || o.size() != q.size()) {
          throw py::value_error("Q, K, V, O: need one matrix per head each (got " + std::to_string(q.size()) + ", " +
                                std::to_string(k.size()) + ", " + std::to_string(v.size()) + ", " +
                                std::to_string(o.size()) + ")");
        }
        std::vector<theory::kernels::Head<double>> heads;
        for (std::size_t h = 0; h < q.size(); ++h) heads.push_back({q[h], k[h], v[h], o[h]});
        theory::kernels::Conditions c;
        try {
          c = theory::kernels::evaluate_conditions(spec, x, heads);
        } catch (const std::invalid_argument& e) {
          throw py::value_error(e.what());
        }
        py::dict result;
        result["lambda_V"] = c.lambda_V;
        result["lambda_V_max"] = c.lambda_V_max;
        result["lambda_Q"] = c.lambda_Q;
        result["rounding_V"] = c.rounding_V;
        result["rounding_Q"] = c.rounding_Q;
        result["zero_V_by_shape"] = c.zero_V_by_shape;
        result["zero_Q_by_shape"] = c.zero_Q_by_shape;
        result["d_at_least_Nn"] = c.d_at_least_Nn;
        result["eta_max_value_only"] = c.eta_max_value_only;
        return result;
      },
      "The conditions of specs/kernels.md A.3 [reconstructed] on one instance (theory::kernels::evaluate_conditions):\n"
      "lambda_V = lambda_min(J_V J_V') (A-T1; for H = 1, W^O = I it is lambda_min(BB'), B = [S_i X_i]) and\n"
      "lambda_V_max, lambda_Q = lambda_min(J_Q J_Q') (A-T3), from the exact Jacobians of vec(T) (A.4 D1); their\n"
      "eigensolver rounding bounds rounding_V, rounding_Q (a lambda below its bound is not resolved from 0);\n"
      "zero_V_by_shape / zero_Q_by_shape when the Jacobian has more rows (N n d_out) than columns (H d^2), so\n"
      "lambda_min = 0 exactly; d_at_least_Nn; eta_max_value_only = 1 / lambda_V_max, the W^V-only GD step bound.\n"
      "X: the N inputs (a list of n x d arrays); Q, K, V (d x d) and O (d x d_out): one array per head, or a list\n"
      "of them; kernel 'softmax', 'gaussian' or 'gaussian_rownorm'; the kernel scale c = d^scale_power. Double only.",
      py::arg("X"), py::arg("Q"), py::arg("K"), py::arg("V"), py::arg("O"), py::arg("kernel") = "softmax",
      py::arg("scale_power") = 0.5);
}
