#include "dyncheck/sim/joma/sgd.hpp"

#include <cmath>
#include <stdexcept>

namespace dyncheck::sim::joma {

JomaSgd::JomaSgd(SgdSpec spec) : spec_(spec) {
  if (!(spec_.eta_z >= 0) || !(spec_.eta_w >= 0) || !std::isfinite(spec_.eta_z) || !std::isfinite(spec_.eta_w)) {
    throw std::invalid_argument("JomaSgd: eta_z and eta_w must be finite and >= 0");
  }
  if (!(spec_.momentum >= 0 && spec_.momentum < 1)) throw std::invalid_argument("JomaSgd: momentum must be in [0, 1)");
  if (!(spec_.weight_decay >= 0) || !std::isfinite(spec_.weight_decay)) {
    throw std::invalid_argument("JomaSgd: weight_decay must be finite and >= 0");
  }
}

BlockGradient JomaSgd::step(const JomaBlock& block, BlockParameters& parameters, const Batch& batch) {
  BlockGradient g = block.gradient(parameters, batch);
  Eigen::VectorXd direction_z = g.z;
  Eigen::MatrixXd direction_W = g.W;
  if (spec_.weight_decay != 0) {
    direction_z += spec_.weight_decay * parameters.z;
    direction_W += spec_.weight_decay * parameters.W;
  }
  if (spec_.momentum != 0) {
    if (velocity_z_.size() != direction_z.size()) {
      velocity_z_ = Eigen::VectorXd::Zero(direction_z.size());
      velocity_W_ = Eigen::MatrixXd::Zero(direction_W.rows(), direction_W.cols());
    }
    velocity_z_ = spec_.momentum * velocity_z_ + direction_z;
    velocity_W_ = spec_.momentum * velocity_W_ + direction_W;
    direction_z = velocity_z_;
    direction_W = velocity_W_;
  }
  parameters.z -= spec_.eta_z * direction_z;
  parameters.W -= spec_.eta_w * direction_W;
  return g;
}

}  // namespace dyncheck::sim::joma
