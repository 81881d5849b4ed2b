// The paper's initialisation of the linear-attention SCB model (see model.hpp).

#include "dyncheck/sim/scb/model.hpp"

namespace dyncheck::sim::scb {

LinearModel initial_model(const Instance& instance) {
  const Eigen::Index n = instance.P.rows();
  LinearModel model;
  model.V = instance.mu * Eigen::RowVectorXd::Ones(n);
  model.A = Eigen::MatrixXd::Constant(instance.T, n, 1.0 / static_cast<double>(instance.T));
  return model;
}

}  // namespace dyncheck::sim::scb
