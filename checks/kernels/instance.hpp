#pragma once
// Shared pieces of the kernels claims (family-private): the instance shape parameters, the kernel
// variant switch, conversions between the simulator's and the theory's types, and the rounding
// constant gamma_k of Higham's bounds.

#include <fmt/format.h>

#include <Eigen/Core>
#include <limits>
#include <string>
#include <vector>

#include "dyncheck/checks/param_set.hpp"
#include "dyncheck/checks/params.hpp"
#include "dyncheck/sim/kernels/attention.hpp"
#include "dyncheck/theory/kernels/attention.hpp"

namespace dyncheck::checks::kernels {

/// The kernel variant: 0 softmax, 1 Gaussian (unnormalised, the paper's), 2 Gaussian row-normalised.
struct KernelVariant {
  KernelVariant(ParamSet* owner, long long default_value)
      : kernel{owner, "kernel", default_value, closed(0, 2),
               "attention kernel: 0 softmax, 1 Gaussian (unnormalised), 2 Gaussian row-normalised"} {}
  Int kernel;

  sim::kernels::ModelSpec sim_spec() const {
    return {kernel.value() == 0 ? sim::kernels::Kernel::softmax : sim::kernels::Kernel::gaussian, kernel.value() == 2};
  }
  theory::kernels::KernelSpec theory_spec(double scale_power = 0.5) const {
    return {kernel.value() == 0 ? theory::kernels::Kernel::softmax : theory::kernels::Kernel::gaussian,
            kernel.value() == 2, scale_power};
  }
  std::string name() const {
    return kernel.value() == 0 ? "softmax" : kernel.value() == 1 ? "Gaussian" : "row-normalised Gaussian";
  }
};

/// gamma_k = k u / (1 - k u), u = 2^-53: |fl(A B) - A B| <= gamma_k |A||B| entrywise for inner dimension k
/// (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.5).
inline double gamma(double k) {
  const double u = std::numeric_limits<double>::epsilon() / 2;
  return k * u / (1 - k * u);
}

template <class S>
theory::Matrix<S> to_scalar(const Eigen::MatrixXd& M) {
  return M.cast<S>();
}

/// The theory's heads from the simulator's weights.
template <class S>
std::vector<theory::kernels::Head<S>> to_heads(const sim::kernels::Weights& w) {
  std::vector<theory::kernels::Head<S>> heads;
  for (int h = 0; h < w.heads(); ++h) {
    const auto i = static_cast<std::size_t>(h);
    heads.push_back({w.Q[i].cast<S>(), w.K[i].cast<S>(), w.V[i].cast<S>(), w.O[i].cast<S>()});
  }
  return heads;
}

/// The simulator's gradient flattened in the column order of theory::kernels::jacobian (head by head
/// Q, K, V of the trained blocks, each column-major).
inline Eigen::VectorXd flatten(const sim::kernels::Gradient& g, const sim::kernels::Trained& trained) {
  std::vector<double> values;
  for (std::size_t h = 0; h < g.Q.size(); ++h) {
    for (int block = 0; block < 3; ++block) {
      if ((block == 0 && !trained.Q) || (block == 1 && !trained.K) || (block == 2 && !trained.V)) continue;
      const Eigen::MatrixXd& M = block == 0 ? g.Q[h] : block == 1 ? g.K[h] : g.V[h];
      values.insert(values.end(), M.data(), M.data() + M.size());
    }
  }
  return Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size()));
}

}  // namespace dyncheck::checks::kernels
