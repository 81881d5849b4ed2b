#pragma once
// Minibatch SGD on the JoMA block with separate learning rates for z and W (specs/joma.md §1),
// and the controls that break the invariants: heavy-ball momentum and L2 weight decay.

#include "dyncheck/sim/joma/block.hpp"

namespace dyncheck::sim::joma {

struct SgdSpec {
  double eta_z = 0.1;
  double eta_w = 0.1;
  /// Heavy-ball: m ← μ m + g, θ ← θ − η m (0: plain SGD).
  double momentum = 0;
  /// Adds λθ to the gradient of both z and W (0: none).
  double weight_decay = 0;
};

class JomaSgd {
 public:
  /// Throws std::invalid_argument for negative rates, momentum outside [0, 1) or weight decay < 0.
  explicit JomaSgd(SgdSpec spec);
  /// One step on `batch`; returns the gradient it used (evaluated before the step).
  BlockGradient step(const JomaBlock& block, BlockParameters& parameters, const Batch& batch);
  const SgdSpec& spec() const { return spec_; }

 private:
  SgdSpec spec_;
  Eigen::VectorXd velocity_z_;
  Eigen::MatrixXd velocity_W_;
};

}  // namespace dyncheck::sim::joma
