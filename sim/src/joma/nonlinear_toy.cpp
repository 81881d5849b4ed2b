#include "dyncheck/sim/joma/nonlinear_toy.hpp"

#include <cmath>
#include <stdexcept>

#include "dyncheck/portable/math.hpp"

namespace dyncheck::sim::joma {
namespace {

double softmax_entropy(const Eigen::ArrayXd& logits, Eigen::ArrayXd& p) {
  p = (logits - logits.maxCoeff()).unaryExpr(portable::exp_op{});
  p /= p.sum();
  double h = 0;
  for (Eigen::Index i = 0; i < p.size(); ++i) {
    if (p[i] > 0) h -= p[i] * portable::log(p[i]);
  }
  return h;
}

}  // namespace

NonlinearToyTrajectory nonlinear_softmax_toy(const Eigen::VectorXd& mu, const Eigen::VectorXd& v0, double temperature,
                                             double eta, long long steps) {
  if (mu.size() != v0.size() || mu.size() == 0 || !(temperature > 0) || !(eta > 0) || steps < 0) {
    throw std::invalid_argument("nonlinear_softmax_toy: needs equal non-empty mu, v0, T > 0, eta > 0, steps >= 0");
  }
  NonlinearToyTrajectory out;
  out.entropy.reserve(static_cast<std::size_t>(steps) + 1);
  Eigen::ArrayXd v = v0.array(), p(v.size());
  for (long long t = 0;; ++t) {
    out.entropy.push_back(softmax_entropy(v.square() / temperature, p));
    if (t == steps) break;
    v += eta * (mu.array() - v) * p;
  }
  out.v_final = v.matrix();
  return out;
}

}  // namespace dyncheck::sim::joma
