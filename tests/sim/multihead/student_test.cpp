// Unit tests of sim/multihead/student.hpp (the E-B3 multi-head student).
#include "dyncheck/sim/multihead/student.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/random/standard_normal.hpp"

namespace dyncheck::sim::multihead {
namespace {

Layer random_layer(Rng& rng, int d, int m, double theta_scale, double w_scale) {
  Layer layer;
  for (int i = 0; i < m; ++i) {
    Eigen::MatrixXd theta(d, d), w(d, d);
    for (Eigen::Index j = 0; j < theta.size(); ++j) theta.data()[j] = theta_scale * standard_normal(rng);
    for (Eigen::Index j = 0; j < w.size(); ++j) w.data()[j] = w_scale * standard_normal(rng);
    layer.theta.push_back(theta);
    layer.w.push_back(w);
  }
  return layer;
}

TEST(MultiheadStudent, PerInputGradientMatchesCentralDifferences) {
  Rng rng = derive_stream(3, "student", 0);
  Layer student = random_layer(rng, 3, 2, 0.7, 1.0);
  const Layer teacher = random_layer(rng, 3, 2, 0.7, 1.0);
  Eigen::MatrixXd X;
  sample_boolean(rng, 4, 3, X);
  const Eigen::MatrixXd Y = forward(teacher, X);
  const LayerGradient g = layer_gradient(student, X, Y);
  EXPECT_NEAR(g.loss, 0.5 * (forward(student, X) - Y).squaredNorm(), 1e-13);
  const double h = 1e-5;
  for (std::size_t i = 0; i < 2; ++i) {
    for (int which = 0; which < 2; ++which) {
      Eigen::MatrixXd& p = which == 0 ? student.theta[i] : student.w[i];
      const Eigen::MatrixXd& grad = which == 0 ? g.theta[i] : g.w[i];
      for (Eigen::Index j = 0; j < p.size(); ++j) {
        const double original = p.data()[j];
        p.data()[j] = original + h;
        const double up = 0.5 * (forward(student, X) - Y).squaredNorm();
        p.data()[j] = original - h;
        const double down = 0.5 * (forward(student, X) - Y).squaredNorm();
        p.data()[j] = original;
        EXPECT_NEAR(grad.data()[j], (up - down) / (2 * h), 1e-6 * (1 + std::abs(grad.data()[j])));
      }
    }
  }
}

TEST(MultiheadStudent, PopulationIsTheMeanOverTheCube) {
  Rng rng = derive_stream(4, "student", 0);
  const Layer student = random_layer(rng, 2, 2, 0.5, 1.0), teacher = random_layer(rng, 2, 2, 0.5, 1.0);
  const Population population = tabulate_population(teacher, 3);
  ASSERT_EQ(population.inputs.size(), 64U);
  const LayerGradient g = population_layer_gradient(student, population);
  double loss = 0, max_residual = 0;
  Eigen::MatrixXd w0 = Eigen::MatrixXd::Zero(2, 2);
  Eigen::MatrixXd X;
  for (std::uint64_t i = 0; i < 64; ++i) {
    cube_point(i, 3, 2, X);
    const LayerGradient one = layer_gradient(student, X, forward(teacher, X));
    loss += one.loss / 64;
    w0 += one.w[0] / 64;
    max_residual = std::max(max_residual, (forward(student, X) - forward(teacher, X)).cwiseAbs().maxCoeff());
  }
  EXPECT_NEAR(g.loss, loss, 1e-13 * loss);
  EXPECT_NEAR(population_layer_loss(student, population), g.loss, 0.0);  // the same arithmetic: identical bits
  EXPECT_LT((g.w[0] - w0).cwiseAbs().maxCoeff(), 1e-13);
  EXPECT_DOUBLE_EQ(population_max_residual(student, population), max_residual);
  EXPECT_LT(population_layer_loss(teacher, population), 1e-28);  // R = −Y + Σ S_i V_i: rounding only
}

TEST(MultiheadStudent, ArmijoDescentNeverIncreasesAndRecordsCheckpoints) {
  Rng rng = derive_stream(5, "student", 0);
  const Layer teacher = random_layer(rng, 2, 1, 1.0, 1.0);
  const Layer start = random_layer(rng, 2, 1, 0.5, 0.5);
  const Population population = tabulate_population(teacher, 3);
  GdOptions options;
  options.max_steps = 400;
  options.checkpoints = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  const GdRun run = gradient_descent(start, population, options);
  EXPECT_FALSE(run.search_failed);
  EXPECT_LE(run.largest_increase, 0.0);
  ASSERT_GE(run.checkpoints.size(), 2U);
  EXPECT_EQ(run.checkpoints.front().step, 0);
  EXPECT_EQ(run.checkpoints.back().step, run.steps);
  for (std::size_t c = 1; c < run.checkpoints.size(); ++c) {
    EXPECT_LT(run.checkpoints[c - 1].step, run.checkpoints[c].step);
    EXPECT_LE(run.checkpoints[c].loss, run.checkpoints[c - 1].loss);
    EXPECT_EQ(run.checkpoints[c].loss, population_layer_loss(run.checkpoints[c].student, population));
  }
  EXPECT_EQ(run.reached, run.checkpoints.back().loss <= options.target_loss);
  EXPECT_LT(run.checkpoints.back().loss, 1e-3 * run.checkpoints.front().loss);
}

TEST(MultiheadStudent, StartingAtTheTeacherStopsAtOnce) {
  Rng rng = derive_stream(6, "student", 0);
  const Layer teacher = random_layer(rng, 2, 2, 1.0, 1.0);
  const GdRun run = gradient_descent(teacher, tabulate_population(teacher, 2), GdOptions{});
  EXPECT_TRUE(run.reached);
  EXPECT_EQ(run.steps, 0);
  EXPECT_EQ(run.checkpoints.size(), 1U);
}

}  // namespace
}  // namespace dyncheck::sim::multihead
