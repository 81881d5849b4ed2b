#include "softmax_rows.hpp"
#include "dyncheck/sim/multihead/student.hpp"

#include <dyncheck/portable/math.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace dyncheck::sim::multihead {
namespace {

void check_student(const Layer& student, int d) {
  if (student.theta.empty() || student.theta.size() != student.w.size()) {
    throw std::invalid_argument("multihead student: need m >= 1 pairs (Theta_i, W_i)");
  }
  for (std::size_t i = 0; i < student.theta.size(); ++i) {
    if (student.theta[i].rows() != d || student.theta[i].cols() != d || student.w[i].rows() != d ||
        student.w[i].cols() != d) {
      throw std::invalid_argument("multihead student: every Theta_i and W_i must be d x d");
    }
  }
}


/// Working storage of one input's forward pass.
struct Pass {
  std::vector<Eigen::MatrixXd> S, V;  ///< softmax patterns and X W_i per head
  Eigen::MatrixXd R;                  ///< F_student(X) − target
};

void forward_pass(const Layer& student, const Eigen::MatrixXd& X, const Eigen::MatrixXd& target, Pass& pass) {
  const std::size_t m = student.theta.size();
  pass.S.resize(m);
  pass.V.resize(m);
  pass.R = -target;
  for (std::size_t i = 0; i < m; ++i) {
    pass.S[i].noalias() = X * student.theta[i] * X.transpose();
    detail::softmax_rows(pass.S[i]);
    pass.V[i].noalias() = X * student.w[i];
    pass.R.noalias() += pass.S[i] * pass.V[i];
  }
}

void add_gradient(const Layer& student, const Eigen::MatrixXd& X, const Pass& pass, LayerGradient& g) {
  for (std::size_t i = 0; i < student.theta.size(); ++i) {
    const Eigen::MatrixXd& S = pass.S[i];
    g.w[i].noalias() += (S * X).transpose() * pass.R;
    const Eigen::MatrixXd dS = pass.R * pass.V[i].transpose();
    // Softmax Jacobian per row: dz = s ⊙ (ds − ⟨s, ds⟩).
    Eigen::MatrixXd dZ(S.rows(), S.cols());
    for (Eigen::Index a = 0; a < S.rows(); ++a) {
      const double inner = S.row(a).dot(dS.row(a));
      for (Eigen::Index b = 0; b < S.cols(); ++b) dZ(a, b) = S(a, b) * (dS(a, b) - inner);
    }
    g.theta[i].noalias() += X.transpose() * dZ * X;
  }
}

LayerGradient zero_gradient(const Layer& student) {
  LayerGradient g;
  for (std::size_t i = 0; i < student.theta.size(); ++i) {
    g.theta.push_back(Eigen::MatrixXd::Zero(student.theta[i].rows(), student.theta[i].cols()));
    g.w.push_back(Eigen::MatrixXd::Zero(student.w[i].rows(), student.w[i].cols()));
  }
  return g;
}

Layer step(const Layer& student, const LayerGradient& g, double eta) {
  Layer next = student;
  for (std::size_t i = 0; i < next.theta.size(); ++i) {
    next.theta[i] -= eta * g.theta[i];
    next.w[i] -= eta * g.w[i];
  }
  return next;
}

}  // namespace

double LayerGradient::squared_norm() const {
  double total = 0;
  for (const Eigen::MatrixXd& t : theta) total += t.squaredNorm();
  for (const Eigen::MatrixXd& t : w) total += t.squaredNorm();
  return total;
}

Population tabulate_population(const Layer& teacher, int k) {
  if (teacher.theta.empty()) throw std::invalid_argument("tabulate_population: need m >= 1 teacher heads");
  const auto d = static_cast<int>(teacher.theta.front().rows());
  if (k < 1 || d < 1 || k * d > 26) throw std::invalid_argument("tabulate_population: need k, d >= 1 and k*d <= 26");
  Population population;
  population.k = k;
  population.d = d;
  const std::uint64_t inputs = std::uint64_t{1} << static_cast<unsigned>(k * d);
  population.inputs.resize(inputs);
  population.targets.resize(inputs);
  for (std::uint64_t i = 0; i < inputs; ++i) {
    cube_point(i, k, d, population.inputs[i]);
    population.targets[i] = forward(teacher, population.inputs[i]);
  }
  return population;
}

LayerGradient layer_gradient(const Layer& student, const Eigen::MatrixXd& X, const Eigen::MatrixXd& target) {
  check_student(student, static_cast<int>(X.cols()));
  Pass pass;
  forward_pass(student, X, target, pass);
  LayerGradient g = zero_gradient(student);
  g.loss = 0.5 * pass.R.squaredNorm();
  add_gradient(student, X, pass, g);
  return g;
}

LayerGradient population_layer_gradient(const Layer& student, const Population& population) {
  check_student(student, population.d);
  LayerGradient g = zero_gradient(student);
  Pass pass;
  for (std::size_t n = 0; n < population.inputs.size(); ++n) {
    forward_pass(student, population.inputs[n], population.targets[n], pass);
    g.loss += 0.5 * pass.R.squaredNorm();
    add_gradient(student, population.inputs[n], pass, g);
  }
  // Division by 2^{kd}: exact.
  const double scale = 1.0 / static_cast<double>(population.inputs.size());
  g.loss *= scale;
  for (Eigen::MatrixXd& t : g.theta) t *= scale;
  for (Eigen::MatrixXd& t : g.w) t *= scale;
  return g;
}

double population_layer_loss(const Layer& student, const Population& population) {
  check_student(student, population.d);
  Pass pass;
  double loss = 0;
  for (std::size_t n = 0; n < population.inputs.size(); ++n) {
    forward_pass(student, population.inputs[n], population.targets[n], pass);
    loss += 0.5 * pass.R.squaredNorm();
  }
  return loss * (1.0 / static_cast<double>(population.inputs.size()));
}

double population_max_residual(const Layer& student, const Population& population) {
  check_student(student, population.d);
  Pass pass;
  double largest = 0;
  for (std::size_t n = 0; n < population.inputs.size(); ++n) {
    forward_pass(student, population.inputs[n], population.targets[n], pass);
    largest = std::max(largest, pass.R.cwiseAbs().maxCoeff());
  }
  return largest;
}

GdRun gradient_descent(Layer student, const Population& population, const GdOptions& options) {
  if (!(options.armijo_c > 0 && options.armijo_c < 1) || !(options.growth >= 1) || !(options.first_step > 0) ||
      options.max_steps < 0 || options.max_halvings < 1) {
    throw std::invalid_argument("gradient_descent: need 0 < c < 1, growth >= 1, first_step > 0, max_steps >= 0");
  }
  GdRun run;
  LayerGradient g = population_layer_gradient(student, population);
  run.start_gradient_norm = std::sqrt(g.squared_norm());
  run.checkpoints.push_back({0, g.loss, student});
  std::size_t next_checkpoint = 0;
  while (next_checkpoint < options.checkpoints.size() && options.checkpoints[next_checkpoint] <= 0) ++next_checkpoint;
  double eta = options.first_step / options.growth;
  double loss = g.loss;
  run.reached = loss <= options.target_loss;
  while (!run.reached && run.steps < options.max_steps) {
    const double g2 = g.squared_norm();
    eta = std::min(eta * options.growth, options.max_step);
    bool accepted = false;
    Layer trial;
    double trial_loss = 0;
    for (int h = 0; h <= options.max_halvings; ++h, eta *= 0.5) {
      trial = step(student, g, eta);
      trial_loss = population_layer_loss(trial, population);
      if (trial_loss <= loss - options.armijo_c * eta * g2) {
        accepted = true;
        break;
      }
    }
    if (!accepted) {
      run.search_failed = true;
      break;
    }
    student = std::move(trial);
    g = population_layer_gradient(student, population);
    // g.loss repeats trial_loss's arithmetic (same per-input terms, same order): identical bits.
    run.largest_increase = run.steps == 0 ? g.loss - loss : std::max(run.largest_increase, g.loss - loss);
    loss = g.loss;
    ++run.steps;
    run.reached = loss <= options.target_loss;
    if (next_checkpoint < options.checkpoints.size() && options.checkpoints[next_checkpoint] == run.steps) {
      run.checkpoints.push_back({run.steps, loss, student});
      ++next_checkpoint;
    }
  }
  if (run.checkpoints.back().step != run.steps) run.checkpoints.push_back({run.steps, loss, student});
  run.end_gradient_norm = std::sqrt(g.squared_norm());
  return run;
}

}  // namespace dyncheck::sim::multihead
