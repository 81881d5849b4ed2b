// sim/joma/nonlinear_toy.hpp: the first Euler step by hand, and the entropy of a uniform start.
#include "dyncheck/sim/joma/nonlinear_toy.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace dyncheck::sim::joma {
namespace {

TEST(SimJomaNonlinearToy, FirstStepAndUniformEntropy) {
  Eigen::VectorXd mu(3), v0 = Eigen::VectorXd::Constant(3, 0.05);
  mu << 1, 2, 3;
  const NonlinearToyTrajectory traj = nonlinear_softmax_toy(mu, v0, 3.0, 0.02, 1);
  EXPECT_NEAR(traj.entropy[0], std::log(3.0), 1e-15);
  for (Eigen::Index i = 0; i < 3; ++i) EXPECT_NEAR(traj.v_final[i], 0.05 + 0.02 * (mu[i] - 0.05) / 3, 1e-15);
}

TEST(SimJomaNonlinearToy, RejectsBadArguments) {
  EXPECT_THROW(nonlinear_softmax_toy(Eigen::VectorXd::Ones(2), Eigen::VectorXd::Ones(3), 1, 1, 1), std::invalid_argument);
  EXPECT_THROW(nonlinear_softmax_toy(Eigen::VectorXd::Ones(2), Eigen::VectorXd::Ones(2), 0, 1, 1), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::sim::joma
