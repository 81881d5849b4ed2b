#pragma once
// The one-layer attention model of specs/kernels.md A.2 [reconstructed], in double precision, and
// full-batch gradient descent on it (Armijo rule or fixed step), training any subset of
// {W^Q, W^K, W^V}; W^O is fixed.
//
//   head h:  q_a = W_h^Q' x_a,  k_b = W_h^K' x_b  (W^Q, W^K, W^V in R^{d x d}, W_h^O in R^{d x d_out})
//   softmax:  S[a,b] = exp(z_ab) / sum_c exp(z_ac),  z_ab = q_a'k_b / sqrt(d)
//   Gaussian: S[a,b] = exp(-|q_a - k_b|^2 / (2 sqrt(d)))  (unnormalised; `gauss_rownorm` normalises rows)
//   T_i = sum_h S_ih X_i W_h^V W_h^O,   f = 1/2 sum_i |T_i - Y_i|_F^2.
//
// Log-kernels are direct differences (|q_a - k_b|^2 summed coordinate by coordinate, never the
// norm expansion |q|^2 + |k|^2 - 2q'k, which cancels catastrophically). exp through
// dyncheck::portable; products and sums of squares through the library's own fixed-order kernels
// (dyncheck/sim/kernels/products.hpp: every entry summed left to right over the inner index, whatever the sizes,
// the vector width or the CPU), with a portable and an AVX2 path that give the same bits.
// The gradient is reverse mode (backpropagation), written from the chain rule independently of
// theory/kernels (which computes Jacobian-vector products in forward mode).

#include <Eigen/Core>

#include <functional>
#include <vector>

#include "dyncheck/sim/random/rng.hpp"

namespace dyncheck::sim::kernels {

enum class Kernel { softmax, gaussian };

/// The implementation of the model's products: portable C++ (baseline x86-64: SSE2) or AVX2, chosen at run
/// time. Both perform the same IEEE operations in the same order on every entry, so every function below gives
/// the same bits on either path (tests/sim/kernels/attention_test.cpp checks this); the choice is speed only.
enum class SimdPath { portable, avx2 };
/// The paths this CPU runs, portable first.
std::vector<SimdPath> available_simd_paths();
/// "portable", "avx2".
const char* simd_path_name(SimdPath path) noexcept;
/// The calling thread's path: the widest the CPU runs, unless use_simd_path chose another.
SimdPath simd_path() noexcept;
/// Chooses the calling thread's path (tests and the bench); throws std::invalid_argument if the CPU does not run it.
void use_simd_path(SimdPath path);

struct ModelSpec {
  Kernel kernel = Kernel::softmax;
  bool gauss_rownorm = false;  ///< Gaussian only: normalise rows (softmax of -|q-k|^2/(2 sqrt d))
};

/// Per head: Q, K, V are d x d, O is d x d_out.
struct Weights {
  std::vector<Eigen::MatrixXd> Q, K, V, O;
  int heads() const { return static_cast<int>(Q.size()); }
};

/// X_i is n x d, Y_i is n x d_out.
struct Data {
  std::vector<Eigen::MatrixXd> X, Y;
};

struct Trained {
  bool Q = false, K = false, V = false;
};

/// Gradient blocks per head; a block of an untrained matrix is zero.
struct Gradient {
  std::vector<Eigen::MatrixXd> Q, K, V;
  double squared_norm() const;
};

/// The attention matrix S (n x n) of one head on one sample.
Eigen::MatrixXd attention(const ModelSpec& spec, const Eigen::MatrixXd& X, const Eigen::MatrixXd& WQ,
                          const Eigen::MatrixXd& WK);
/// The log-kernel matrix (z for softmax, -|q_a - k_b|^2/(2 sqrt d) for Gaussian), before any normalisation.
Eigen::MatrixXd log_kernel(const ModelSpec& spec, const Eigen::MatrixXd& X, const Eigen::MatrixXd& WQ,
                           const Eigen::MatrixXd& WK);
/// T_i = sum_h S_ih X_i W_h^V W_h^O.
Eigen::MatrixXd output(const ModelSpec& spec, const Eigen::MatrixXd& X, const Weights& w);
/// f = 1/2 sum_i |T_i - Y_i|^2.
double loss(const ModelSpec& spec, const Data& data, const Weights& w);
/// f and its gradient with respect to the trained blocks (backpropagation). Reuses `gradient`'s storage and
/// per-thread buffers from call to call (no allocation once the shapes are set).
double loss_and_gradient(const ModelSpec& spec, const Data& data, const Weights& w, const Trained& trained,
                         Gradient& gradient);

/// w - eta g on the trained blocks.
Weights step(const Weights& w, const Gradient& g, double eta);
/// The same step in place (w -= eta g): the same numbers without copying the weights.
void step_in_place(Weights& w, const Gradient& g, double eta);

struct GdOptions {
  enum class Rule { armijo, fixed };
  Rule rule = Rule::armijo;
  long long steps = 1000;
  double eta = 1;  ///< fixed: the step; Armijo: the first trial step
  double armijo_c = 0.5;       ///< accept when f(w - eta g) <= f - c eta |g|^2
  double armijo_shrink = 0.5;  ///< trial step *= shrink until accepted
  double armijo_grow = 1.5;    ///< after an accepted step, eta *= grow
  int max_halvings = 200;      ///< no acceptance after this many halvings: stop (stalled at rounding level)
  double stop_loss = 0;        ///< stop once f <= stop_loss
};

/// One accepted step: f before, f after, the step, |g|^2.
struct GdStep {
  double f_before = 0, f_after = 0, eta = 0, grad_norm2 = 0;
};

struct GdResult {
  std::vector<double> loss;  ///< f_0, f_1, ..., one per accepted step
  std::vector<GdStep> steps;
  Weights final;
  bool stopped_by_line_search = false;  ///< Armijo found no acceptable step (rounding level)
};

/// Called after each accepted step with (t, w_t, g_t, step record): w_t is the iterate the step started from.
using StepObserver = std::function<void(long long t, const Weights& w, const Gradient& g, const GdStep& step)>;

/// Full-batch gradient descent from `w0` (only the `trained` blocks move).
GdResult gradient_descent(const ModelSpec& spec, const Data& data, const Weights& w0, const Trained& trained,
                          const GdOptions& options, const StepObserver& observer = {});

/// A rows x cols matrix of independent N(0, sd^2) entries (row-major draw order).
Eigen::MatrixXd gaussian_matrix(Rng& rng, int rows, int cols, double sd);
/// N inputs X_i (n x d) with iid N(0, 1) entries, drawn sample by sample.
std::vector<Eigen::MatrixXd> gaussian_inputs(Rng& rng, int N, int n, int d);
/// H heads of d x d weights with entries N(0, s^2/d), drawn Q, K, V head by head; O is given.
Weights gaussian_weights(Rng& rng, int H, int d, double s_Q, double s_K, double s_V,
                         const std::vector<Eigen::MatrixXd>& O);
/// Targets of a teacher: Y_i = T_i(teacher).
std::vector<Eigen::MatrixXd> teacher_targets(const ModelSpec& spec, const std::vector<Eigen::MatrixXd>& X,
                                             const Weights& teacher);
/// Random targets with iid N(0, sd^2) entries.
std::vector<Eigen::MatrixXd> random_targets(Rng& rng, int N, int n, int d_out, double sd);

}  // namespace dyncheck::sim::kernels
