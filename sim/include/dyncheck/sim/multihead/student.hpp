#pragma once
// A full multi-head student (specs/multihead.md B.5 E-B3) on the simulation side: m heads
// (Θ_i, W_i) trained by gradient descent on the population loss
//   L = ½ E‖F_student(X) − F_teacher(X)‖²_F,  X uniform on {±1}^{k×d},
// with the expectation by enumeration of the cube (inputs and teacher outputs tabulated once;
// sums in index order, so a run is a pure function of its start), gradients by backpropagation
// through the softmax Jacobian, and an Armijo backtracking step rule:
//   trial step η = min(growth · η_previous, max_step); accept when
//   L(p − η g) <= L(p) − c η ‖g‖², else halve η (at most max_halvings times).
// The accepted loss is the loss of the next iterate in the same arithmetic, so the recorded
// losses are non-increasing by construction; the checks verify them with the theory's own
// enumeration. Shares no code with theory/multihead.

#include <Eigen/Core>
#include <vector>

#include "dyncheck/sim/multihead/layer.hpp"

namespace dyncheck::sim::multihead {

/// The cube {±1}^{k×d} with the teacher's outputs, tabulated in index order (cube_point).
struct Population {
  int k = 0, d = 0;
  std::vector<Eigen::MatrixXd> inputs, targets;
};
Population tabulate_population(const Layer& teacher, int k);

/// Loss and gradients of every head; theta[i], w[i] are ∂L/∂Θ_i, ∂L/∂W_i.
struct LayerGradient {
  double loss = 0;
  std::vector<Eigen::MatrixXd> theta, w;
  double squared_norm() const;
};

/// ½‖F_student(X) − target‖² and its gradients for one input.
LayerGradient layer_gradient(const Layer& student, const Eigen::MatrixXd& X, const Eigen::MatrixXd& target);

/// The population loss and gradients (mean over the tabulated cube, summed in index order).
LayerGradient population_layer_gradient(const Layer& student, const Population& population);
/// The population loss alone (the same per-input arithmetic and order as population_layer_gradient).
double population_layer_loss(const Layer& student, const Population& population);
/// max over inputs and entries of |F_student(X) − F_teacher(X)|.
double population_max_residual(const Layer& student, const Population& population);

struct GdOptions {
  long long max_steps = 1000;
  double target_loss = 1e-8;  ///< stop once the loss is at or below it
  double armijo_c = 1e-4;
  double first_step = 1.0;  ///< η_0 before the first growth
  double growth = 2.0;
  double max_step = 1e6;
  int max_halvings = 80;
  /// Steps after which the iterate is recorded (ascending; the start and the end are always recorded).
  std::vector<long long> checkpoints;
};

struct GdCheckpoint {
  long long step = 0;
  double loss = 0;  ///< the run's own loss at this iterate
  Layer student;
};

struct GdRun {
  std::vector<GdCheckpoint> checkpoints;  ///< the start, the requested steps reached, and the end
  long long steps = 0;                    ///< accepted steps
  bool reached = false;                   ///< loss <= target_loss
  bool search_failed = false;             ///< the line search found no Armijo step within max_halvings
  double largest_increase = 0;            ///< max over steps of L_{t+1} − L_t in the run's arithmetic (<= 0)
  double start_gradient_norm = 0, end_gradient_norm = 0;
};

/// Gradient descent with the Armijo rule above from `student`.
GdRun gradient_descent(Layer student, const Population& population, const GdOptions& options);

}  // namespace dyncheck::sim::multihead
