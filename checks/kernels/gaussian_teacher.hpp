#pragma once
// The instance of the kernels claims that train W^Q alone against a Gaussian teacher
// (kernels.q_only_separation, kernels.scale_sweep_softmax_floor; specs/kernels.md A.3 A-T3/A-T4, A.5 E-A3): its
// parameters, its draw, and the rounding bound of the softmax student's loss.

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dyncheck/checks/param_set.hpp"
#include "dyncheck/sim/kernels/attention.hpp"
#include "instance.hpp"  // gamma

namespace dyncheck::checks::kernels {

/// N samples of n tokens in dimension d; W^K fixed, the teacher's W^Q* and the student's initial W^Q,
/// each ~ N(0, s^2/d). A claim whose grid redraws d, s_K or the student's scale says where the
/// parameter applies (`grid_note`, e.g. " in the dimension grid").
struct GaussianTeacherParams : ParamSet {
  GaussianTeacherParams(const char* d_description, const std::string& grid_note)
      : N{this, "N", 4, closed(1, 8), "samples"},
        n{this, "n", 4, closed(2, 8), "tokens per sample"},
        d{this, "d", 16, closed(2, 32), d_description},
        s_K{this, "s_K", 0.3, closed(0.05, 2), "fixed W^K ~ N(0, s^2/d)" + grid_note, Scale::log},
        s_teacher{this, "s_teacher", 0.3, closed(0.05, 2), "Gaussian teacher W^Q* ~ N(0, s^2/d)", Scale::log},
        s_student{this, "s_student", 0.7, closed(0.05, 2), "student's initial W^Q ~ N(0, s^2/d)" + grid_note,
                  Scale::log} {}
  Int N, n, d;
  Real s_K, s_teacher, s_student;
};

/// One instance: w ~ N(0, 1/d) (d x 1, W^V = I), W^K ~ N(0, s_K^2/d), the teacher's W^Q* ~
/// N(0, s_teacher^2/d), the student's W^Q ~ N(0, s_student^2/d) and the inputs X, drawn from `rng`
/// in this order; targets from the Gaussian (unnormalised) teacher, which shares W^K and w.
struct GaussianTeacherInstance {
  GaussianTeacherInstance(sim::Rng& rng, int N, int n, int d, double s_K, double s_teacher, double s_student) {
    const double root_d = std::sqrt(static_cast<double>(d));
    w = sim::kernels::gaussian_matrix(rng, d, 1, 1.0 / root_d);
    WK = sim::kernels::gaussian_matrix(rng, d, d, s_K / root_d);
    const Eigen::MatrixXd WQ_teacher = sim::kernels::gaussian_matrix(rng, d, d, s_teacher / root_d);
    WQ = sim::kernels::gaussian_matrix(rng, d, d, s_student / root_d);
    data.X = sim::kernels::gaussian_inputs(rng, N, n, d);
    const sim::kernels::Weights teacher{{WQ_teacher}, {WK}, {Eigen::MatrixXd::Identity(d, d)}, {w}};
    data.Y = sim::kernels::teacher_targets({sim::kernels::Kernel::gaussian, false}, data.X, teacher);
    for (int i = 0; i < N; ++i) {
      u.push_back(data.X[static_cast<std::size_t>(i)] * w);
      t.push_back(data.Y[static_cast<std::size_t>(i)].col(0));
    }
  }

  /// The student at its start: W^Q, with the instance's W^K, W^V = I and w.
  sim::kernels::Weights student() const {
    const auto d = static_cast<int>(WK.rows());
    return {{WQ}, {WK}, {Eigen::MatrixXd::Identity(d, d)}, {w}};
  }

  /// The rounding of the softmax loss f at W^Q = `WQ_final`, first order (Higham §3.5): per entry of the
  /// residual 3 gamma_{max(n,d)+2} A + u|R| with A = |S||X||w|, then sqrt(2f) e + e^2/2 + gamma_{Nn} f.
  double softmax_loss_rounding(const sim::kernels::ModelSpec& spec, const Eigen::MatrixXd& WQ_final, double f) const {
    const auto N = static_cast<int>(data.X.size());
    const auto n = static_cast<int>(data.X.front().rows()), d = static_cast<int>(WK.rows());
    double e2 = 0;
    const double unit = std::numeric_limits<double>::epsilon() / 2;
    for (std::size_t i = 0; i < data.X.size(); ++i) {
      const Eigen::MatrixXd S = sim::kernels::attention(spec, data.X[i], WQ_final, WK);
      const Eigen::MatrixXd R = S * (data.X[i] * w) - data.Y[i];
      e2 += (3 * gamma(static_cast<double>(std::max(n, d) + 2)) * (S.cwiseAbs() * (data.X[i].cwiseAbs() * w.cwiseAbs())) +
             unit * R.cwiseAbs())
                .squaredNorm();
    }
    const double e = std::sqrt(e2);
    return std::sqrt(2 * f) * e + e * e / 2 + gamma(static_cast<double>(N * n)) * f;
  }

  Eigen::MatrixXd w, WK, WQ;  ///< WQ: the student's start
  sim::kernels::Data data;
  std::vector<Eigen::VectorXd> u, t;  ///< values u_ib = x_ib'w and targets t_ia, per sample
};

}  // namespace dyncheck::checks::kernels
