// Tests of sim/kernels/attention.hpp: gradients against central differences and an independent
// numpy computation (reference_values.py), the invariants of specs/kernels.md A.5, and GD.

#include "dyncheck/sim/kernels/attention.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "dyncheck/sim/random/derive_stream.hpp"

namespace dyncheck::sim::kernels {
namespace {

struct Instance {
  ModelSpec spec;
  Data data;
  Weights w;
};

/// The deterministic instance of reference_values.py (N = 2, n = 3, d = 4, H = 2).
Instance numpy_instance(Kernel kernel, bool rownorm, int d_out) {
  constexpr int N = 2, n = 3, d = 4, H = 2;
  Instance in;
  in.spec = {kernel, rownorm};
  for (int i = 0; i < N; ++i) {
    Eigen::MatrixXd X(n, d), Y(n, d_out);
    for (int a = 0; a < n; ++a) {
      for (int j = 0; j < d; ++j) X(a, j) = std::sin(1.0 + 7 * i + 3 * a + j);
      for (int k = 0; k < d_out; ++k) Y(a, k) = std::cos(1.0 + i + 2 * a + 3 * k);
    }
    in.data.X.push_back(X);
    in.data.Y.push_back(Y);
  }
  for (int h = 0; h < H; ++h) {
    Eigen::MatrixXd Q(d, d), K(d, d), V(d, d), O(d, d_out);
    for (int j = 0; j < d; ++j) {
      for (int k = 0; k < d; ++k) {
        Q(j, k) = 0.3 * std::cos(2 * j + k + 0.5 * h);
        K(j, k) = 0.4 * std::sin(j - 2 * k + 0.25 * h);
        V(j, k) = 0.5 * std::cos(j * k + 1.0 + h);
      }
      for (int k = 0; k < d_out; ++k) O(j, k) = std::cos(0.3 * j + 0.7 * k + h);
    }
    in.w.Q.push_back(Q);
    in.w.K.push_back(K);
    in.w.V.push_back(V);
    in.w.O.push_back(O);
  }
  return in;
}

struct NumpyReference {
  const char* kernel;
  bool rownorm;
  int d_out;
  double loss, dQ, dK, dV;  // gradient entries (head 1, row 2, column 1)
};

// Output of reference_values.py (numpy float64; the gradient entries by Richardson-extrapolated central
// differences with step 1e-5, whose error is about eps |f| / step ~ 3e-10).
const NumpyReference numpy_references[] = {
    {"softmax", false, 1, 1.5193297769746676, -0.04639497075409337, -0.01677517316722721, -0.020659751372627728},
    {"softmax", false, 4, 7.113976957167649, 0.02843891229176165, 0.0029179184994158423, -0.03356275545633262},
    {"gaussian", false, 1, 1.6866466449312925, -0.11048481492655543, -0.02098328441557662, -0.08690182533577227},
    {"gaussian", false, 4, 11.390257317926553, -0.004523659091759669, 0.016260759894137777, -0.24952436262400582},
    {"gaussian", true, 1, 1.519801943289838, -0.04646522499355635, -0.017955867886998433, -0.02114765660365947},
    {"gaussian", true, 4, 7.119561654075377, 0.0280229479769171, -0.00025672431587982675, -0.038098669596919876},
};

TEST(SimKernels, LossAndGradientMatchNumpy) {
  for (const NumpyReference& ref : numpy_references) {
    const Kernel kernel = std::string(ref.kernel) == "softmax" ? Kernel::softmax : Kernel::gaussian;
    const Instance in = numpy_instance(kernel, ref.rownorm, ref.d_out);
    Gradient g;
    const double f = loss_and_gradient(in.spec, in.data, in.w, {true, true, true}, g);
    SCOPED_TRACE(std::string(ref.kernel) + (ref.rownorm ? " rownorm" : "") + " d_out " + std::to_string(ref.d_out));
    // the loss: a few hundred roundings of O(1) terms in each implementation
    EXPECT_NEAR(f, ref.loss, 1e-13 * ref.loss);
    // numpy's difference quotients carry ~3e-10 of rounding (see above); 1e-8 leaves 30x
    EXPECT_NEAR(g.Q[1](2, 1), ref.dQ, 1e-8);
    EXPECT_NEAR(g.K[1](2, 1), ref.dK, 1e-8);
    EXPECT_NEAR(g.V[1](2, 1), ref.dV, 1e-8);
  }
}

/// max over all trained entries of |g - central difference| / max(|g|_inf, 1e-3).
double gradient_error(const Instance& in, const Trained& trained) {
  Gradient g;
  loss_and_gradient(in.spec, in.data, in.w, trained, g);
  double scale = 1e-3;
  for (const auto* blocks : {&g.Q, &g.K, &g.V}) {
    for (const Eigen::MatrixXd& b : *blocks) scale = std::max(scale, b.cwiseAbs().maxCoeff());
  }
  double worst = 0;
  const double h = 1e-5;
  for (int block = 0; block < 3; ++block) {
    if ((block == 0 && !trained.Q) || (block == 1 && !trained.K) || (block == 2 && !trained.V)) continue;
    for (int head = 0; head < in.w.heads(); ++head) {
      const auto hh = static_cast<std::size_t>(head);
      const Eigen::MatrixXd& grad = block == 0 ? g.Q[hh] : block == 1 ? g.K[hh] : g.V[hh];
      for (Eigen::Index e = 0; e < grad.size(); ++e) {
        auto at = [&](double delta) {
          Weights w = in.w;
          Eigen::MatrixXd& m = block == 0 ? w.Q[hh] : block == 1 ? w.K[hh] : w.V[hh];
          m.data()[e] += delta;
          return loss(in.spec, in.data, w);
        };
        const double d1 = (at(h) - at(-h)) / (2 * h), d2 = (at(2 * h) - at(-2 * h)) / (4 * h);
        worst = std::max(worst, std::abs(grad.data()[e] - (4 * d1 - d2) / 3) / scale);
      }
    }
  }
  return worst;
}

// Property (A.5): gradients against finite differences at <= 1e-7 relative, over random N, n, d (both
// sides of Nn), H, d_out, scales, kernel variant and trained subset. Error of the Richardson-extrapolated
// difference quotient: rounding ~ eps |f| / h (|f| <= ~1e2 here, h = 1e-5: ~2e-9) plus truncation O(h^4);
// relative to max(|g|_inf, 1e-3) that stays below ~2e-6 in the worst case and ~1e-10 typically.
RC_GTEST_PROP(SimKernels, GradientMatchesCentralDifferences, ()) {
  const int N = *rc::gen::inRange(1, 3);
  const int n = *rc::gen::inRange(2, 5);
  const int d = *rc::gen::inRange(2, 7);
  const int H = *rc::gen::inRange(1, 3);
  const bool vector_out = *rc::gen::arbitrary<bool>();
  const int kernel = *rc::gen::inRange(0, 3);
  const int s_index = *rc::gen::inRange(0, 3);
  const double s = std::array<double, 3>{0.3, 0.7, 1.5}[static_cast<std::size_t>(s_index)];
  const int subset = *rc::gen::inRange(1, 8);
  const auto seed = *rc::gen::arbitrary<std::uint32_t>();
  Rng rng = derive_stream(seed, "kernels-gradient", 0);
  Instance in;
  in.spec = {kernel == 0 ? Kernel::softmax : Kernel::gaussian, kernel == 2};
  const int d_out = vector_out ? d : 1;
  std::vector<Eigen::MatrixXd> O;
  for (int h = 0; h < H; ++h) O.push_back(gaussian_matrix(rng, d, d_out, 1.0 / std::sqrt(static_cast<double>(d))));
  in.w = gaussian_weights(rng, H, d, s, s, 1.0, O);
  in.data.X = gaussian_inputs(rng, N, n, d);
  in.data.Y = random_targets(rng, N, n, d_out, 1.0);
  const Trained trained{(subset & 1) != 0, (subset & 2) != 0, (subset & 4) != 0};
  RC_ASSERT(gradient_error(in, trained) <= 1e-7);
}

TEST(SimKernels, Invariants) {
  Rng rng = derive_stream(7, "kernels-invariants", 0);
  const int n = 5, d = 6;
  const Eigen::MatrixXd X = gaussian_inputs(rng, 1, n, d)[0];
  const Eigen::MatrixXd WQ = gaussian_matrix(rng, d, d, 0.5), WK = gaussian_matrix(rng, d, d, 0.5);
  const Eigen::MatrixXd S = attention({Kernel::softmax, false}, X, WQ, WK);
  for (Eigen::Index a = 0; a < n; ++a) EXPECT_NEAR(S.row(a).sum(), 1.0, 8 * n * 1.1e-16);
  const Eigen::MatrixXd G = attention({Kernel::gaussian, false}, X, WQ, WK);
  EXPECT_GT(G.minCoeff(), 0.0);
  EXPECT_LE(G.maxCoeff(), 1.0);
  // diagonal = 1 iff q_a = k_a: with W^Q = W^K every q_a = k_a, so the diagonal is exactly exp(-0) = 1
  const Eigen::MatrixXd G_same = attention({Kernel::gaussian, false}, X, WQ, WQ);
  for (Eigen::Index a = 0; a < n; ++a) EXPECT_EQ(G_same(a, a), 1.0);
  for (Eigen::Index a = 0; a < n; ++a) EXPECT_LT(G(a, a), 1.0);
  const Eigen::MatrixXd R = attention({Kernel::gaussian, true}, X, WQ, WK);
  for (Eigen::Index a = 0; a < n; ++a) EXPECT_NEAR(R.row(a).sum(), 1.0, 8 * n * 1.1e-16);
  // log-kernel as a direct difference: exact zero on the diagonal when q_a = k_a
  const Eigen::MatrixXd L = log_kernel({Kernel::gaussian, false}, X, WQ, WQ);
  for (Eigen::Index a = 0; a < n; ++a) EXPECT_EQ(L(a, a), 0.0);
}

// Permutation equivariance T(Pi X) = Pi T(X), for every kernel variant (up to rounding: Eigen may sum
// a permuted product in another order).
TEST(SimKernels, PermutationEquivariance) {
  Rng rng = derive_stream(11, "kernels-permutation", 0);
  const int n = 4, d = 5;
  const Eigen::MatrixXd X = gaussian_inputs(rng, 1, n, d)[0];
  std::vector<Eigen::MatrixXd> O{Eigen::MatrixXd::Identity(d, d), Eigen::MatrixXd::Identity(d, d)};
  const Weights w = gaussian_weights(rng, 2, d, 0.8, 0.8, 1.0, O);
  Eigen::PermutationMatrix<Eigen::Dynamic> pi(n);
  pi.indices() << 2, 0, 3, 1;
  for (const ModelSpec spec : {ModelSpec{Kernel::softmax, false}, ModelSpec{Kernel::gaussian, false},
                               ModelSpec{Kernel::gaussian, true}}) {
    const Eigen::MatrixXd T = output(spec, X, w);
    const Eigen::MatrixXd PT = output(spec, pi * X, w);
    EXPECT_LE((PT - pi * T).cwiseAbs().maxCoeff(), 1e-13 * (1 + T.cwiseAbs().maxCoeff()));
  }
}

TEST(SimKernels, ArmijoDecreasesAndFixedStepMoves) {
  Rng rng = derive_stream(3, "kernels-gd", 0);
  const int N = 2, n = 3, d = 4;
  Data data;
  data.X = gaussian_inputs(rng, N, n, d);
  std::vector<Eigen::MatrixXd> O{Eigen::MatrixXd::Identity(d, d)};
  const Weights teacher = gaussian_weights(rng, 1, d, 0.5, 0.5, 1.0, O);
  const ModelSpec spec{Kernel::gaussian, false};
  data.Y = teacher_targets(spec, data.X, teacher);
  const Weights w0 = gaussian_weights(rng, 1, d, 0.7, 0.7, 1.0, O);
  GdOptions options;
  options.steps = 200;
  long long observed = 0;
  const GdResult result = gradient_descent(spec, data, w0, {true, true, true}, options,
                                           [&](long long, const Weights&, const Gradient&, const GdStep& s) {
                                             EXPECT_LE(s.f_after, s.f_before - 0.5 * s.eta * s.grad_norm2);
                                             ++observed;
                                           });
  EXPECT_EQ(observed, static_cast<long long>(result.steps.size()));
  for (std::size_t t = 1; t < result.loss.size(); ++t) EXPECT_LT(result.loss[t], result.loss[t - 1]);
  EXPECT_LT(result.loss.back(), 1e-2 * result.loss.front());
  // only W^V trained: Q and K stay put
  options.rule = GdOptions::Rule::fixed;
  options.eta = 1e-3;
  options.steps = 5;
  const GdResult fixed = gradient_descent(spec, data, w0, {false, false, true}, options);
  EXPECT_EQ(fixed.final.Q[0], w0.Q[0]);
  EXPECT_EQ(fixed.final.K[0], w0.K[0]);
  EXPECT_NE(fixed.final.V[0], w0.V[0]);
  EXPECT_EQ(fixed.steps.size(), 5u);
}

// Property (A.5 "parameters to randomise"): the invariants over random N, n, d (both sides of Nn), H, d_out, the
// scales s_Q, s_K, s_V, the target type (random, a teacher of the same kernel, of the other kernel), the kernel
// variant and the step rule. Rows of softmax and of the row-normalised Gaussian sum to 1 (n terms, each rounded
// once by the division: <= 8 n u); unnormalised Gaussian entries lie in (0, 1], and the diagonal is exactly 1
// when q_a = k_a (W^Q = W^K); T(Pi X) = Pi T(X) up to rounding (a permuted sum over b adds in another order:
// <= 1e-13 of the largest |T|); Armijo steps decrease f by at least c eta |g|^2, a fixed step takes exactly the
// steps asked for, and untrained blocks never move.
RC_GTEST_PROP(SimKernels, InvariantsOverRandomInstances, ()) {
  const int N = *rc::gen::inRange(1, 4);
  const int n = *rc::gen::inRange(2, 7);
  const int d = *rc::gen::inRange(2, 13);
  const int H = *rc::gen::inRange(1, 3);
  const bool vector_out = *rc::gen::arbitrary<bool>();
  const int kernel = *rc::gen::inRange(0, 3);
  const int target = *rc::gen::inRange(0, 3);
  const bool armijo = *rc::gen::arbitrary<bool>();
  const int subset = *rc::gen::inRange(1, 8);
  const std::array<double, 4> scales{0.1, 0.5, 1.0, 2.5};
  const double s_Q = scales[static_cast<std::size_t>(*rc::gen::inRange(0, 4))];
  const double s_K = scales[static_cast<std::size_t>(*rc::gen::inRange(0, 4))];
  const double s_V = scales[static_cast<std::size_t>(*rc::gen::inRange(0, 4))];
  const auto seed = *rc::gen::arbitrary<std::uint32_t>();
  Rng rng = derive_stream(seed, "kernels-invariants-random", 0);
  const ModelSpec spec{kernel == 0 ? Kernel::softmax : Kernel::gaussian, kernel == 2};
  const int d_out = vector_out ? d : 1;
  std::vector<Eigen::MatrixXd> O;
  for (int h = 0; h < H; ++h) O.push_back(gaussian_matrix(rng, d, d_out, 1.0 / std::sqrt(static_cast<double>(d))));
  Data data;
  data.X = gaussian_inputs(rng, N, n, d);
  if (target == 0) {
    data.Y = random_targets(rng, N, n, d_out, 1.0);
  } else {
    ModelSpec teacher_spec = spec;
    if (target == 2) teacher_spec.kernel = spec.kernel == Kernel::softmax ? Kernel::gaussian : Kernel::softmax;
    data.Y = teacher_targets(teacher_spec, data.X, gaussian_weights(rng, H, d, s_Q, s_K, s_V, O));
  }
  const Weights w = gaussian_weights(rng, H, d, s_Q, s_K, s_V, O);
  const double u = 1.1102230246251565e-16;
  for (int h = 0; h < H; ++h) {
    const auto k = static_cast<std::size_t>(h);
    for (const Eigen::MatrixXd& X : data.X) {
      const Eigen::MatrixXd S = attention(spec, X, w.Q[k], w.K[k]);
      if (kernel != 1) {
        for (Eigen::Index a = 0; a < n; ++a) RC_ASSERT(std::abs(S.row(a).sum() - 1.0) <= 8 * n * u);
      } else {
        RC_ASSERT(S.minCoeff() > 0.0 || std::abs(S.minCoeff()) == 0.0);  // exp underflows to +0 only far out
        RC_ASSERT(S.maxCoeff() <= 1.0);
        const Eigen::MatrixXd same = attention(spec, X, w.Q[k], w.Q[k]);
        for (Eigen::Index a = 0; a < n; ++a) RC_ASSERT(same(a, a) == 1.0);
      }
    }
  }
  Eigen::PermutationMatrix<Eigen::Dynamic> pi(n);
  pi.setIdentity();
  for (int a = n - 1; a > 0; --a) std::swap(pi.indices()[a], pi.indices()[static_cast<int>(rng() % static_cast<std::uint64_t>(a + 1))]);
  const Eigen::MatrixXd T = output(spec, data.X[0], w);
  const Eigen::MatrixXd PT = output(spec, pi * data.X[0], w);
  RC_ASSERT((PT - pi * T).cwiseAbs().maxCoeff() <= 1e-13 * (1 + T.cwiseAbs().maxCoeff()));
  const Trained trained{(subset & 1) != 0, (subset & 2) != 0, (subset & 4) != 0};
  GdOptions options;
  options.rule = armijo ? GdOptions::Rule::armijo : GdOptions::Rule::fixed;
  options.eta = armijo ? 1.0 : 1e-3;
  options.steps = 20;
  const GdResult result = gradient_descent(spec, data, w, trained, options,
                                           [&](long long, const Weights&, const Gradient&, const GdStep& step) {
                                             if (armijo) RC_ASSERT(step.f_after <= step.f_before - 0.5 * step.eta * step.grad_norm2);
                                           });
  if (!armijo && result.loss.front() > 0) RC_ASSERT(result.steps.size() == 20u);
  for (int h = 0; h < H; ++h) {
    const auto k = static_cast<std::size_t>(h);
    if (!trained.Q) RC_ASSERT(result.final.Q[k] == w.Q[k]);
    if (!trained.K) RC_ASSERT(result.final.K[k] == w.K[k]);
    if (!trained.V) RC_ASSERT(result.final.V[k] == w.V[k]);
    RC_ASSERT(result.final.O[k] == w.O[k]);
  }
}

/// The bits of a matrix, for exact comparison (== on doubles would equate +0 and -0).
bool same_bits(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
  return A.rows() == B.rows() && A.cols() == B.cols() &&
         std::memcmp(A.data(), B.data(), sizeof(double) * static_cast<std::size_t>(A.size())) == 0;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// A B with every entry summed left to right over the inner index, starting at the first product: the order
/// attention.hpp promises (dyncheck/sim/kernels/products.hpp).
Eigen::MatrixXd left_to_right(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
  Eigen::MatrixXd C(A.rows(), B.cols());
  for (Eigen::Index i = 0; i < A.rows(); ++i) {
    for (Eigen::Index j = 0; j < B.cols(); ++j) {
      double s = A(i, 0) * B(0, j);
      for (Eigen::Index k = 1; k < A.cols(); ++k) s += A(i, k) * B(k, j);
      C(i, j) = s;
    }
  }
  return C;
}

/// Restores the thread's SIMD path when a test ends.
struct PathGuard {
  SimdPath saved = simd_path();
  ~PathGuard() { use_simd_path(saved); }
};

// The summation order is the declared one, bit for bit, on every path and at sizes that are and are not
// multiples of the kernels' blocks of four and eight (the tail rows and columns take other code).
RC_GTEST_PROP(SimKernels, ProductsSumLeftToRight, ()) {
  const int n = *rc::gen::inRange(1, 20);
  const int d = *rc::gen::inRange(1, 20);
  const int p = *rc::gen::inRange(1, 20);
  const auto seed = *rc::gen::arbitrary<std::uint32_t>();
  Rng rng = derive_stream(seed, "kernels-order", 0);
  const Eigen::MatrixXd X = gaussian_matrix(rng, n, d, 1.0);
  const Eigen::MatrixXd WQ = gaussian_matrix(rng, d, p, 1.0), WK = gaussian_matrix(rng, d, p, 1.0);
  const Eigen::MatrixXd Q = left_to_right(X, WQ), K = left_to_right(X, WK);
  const double root_d = std::sqrt(static_cast<double>(d));
  Eigen::MatrixXd softmax_logits = left_to_right(Q, K.transpose()) / root_d;
  Eigen::MatrixXd gauss_logits(n, n);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      double s = 0;
      for (int j = 0; j < p; ++j) s += (Q(a, j) - K(b, j)) * (Q(a, j) - K(b, j));
      gauss_logits(a, b) = -s / (2 * root_d);
    }
  }
  PathGuard guard;
  for (const SimdPath path : available_simd_paths()) {
    use_simd_path(path);
    RC_ASSERT(same_bits(log_kernel({Kernel::softmax, false}, X, WQ, WK), softmax_logits));
    RC_ASSERT(same_bits(log_kernel({Kernel::gaussian, false}, X, WQ, WK), gauss_logits));
  }
}

// Every SIMD path gives the portable path's bits: loss, gradient, output and a few GD steps, over random shapes
// (both sides of Nn, tails of the blocks of four), heads, outputs, kernel variants and trained subsets.
RC_GTEST_PROP(SimKernels, SimdPathsGiveThePortableBits, ()) {
  const int N = *rc::gen::inRange(1, 4);
  const int n = *rc::gen::inRange(1, 11);
  const int d = *rc::gen::inRange(1, 19);
  const int H = *rc::gen::inRange(1, 3);
  const bool vector_out = *rc::gen::arbitrary<bool>();
  const int kernel = *rc::gen::inRange(0, 3);
  const int subset = *rc::gen::inRange(1, 8);
  const auto seed = *rc::gen::arbitrary<std::uint32_t>();
  Rng rng = derive_stream(seed, "kernels-paths", 0);
  Instance in;
  in.spec = {kernel == 0 ? Kernel::softmax : Kernel::gaussian, kernel == 2};
  const int d_out = vector_out ? d : 1;
  std::vector<Eigen::MatrixXd> O;
  for (int h = 0; h < H; ++h) O.push_back(gaussian_matrix(rng, d, d_out, 1.0 / std::sqrt(static_cast<double>(d))));
  in.w = gaussian_weights(rng, H, d, 0.8, 0.8, 1.0, O);
  in.data.X = gaussian_inputs(rng, N, n, d);
  in.data.Y = random_targets(rng, N, n, d_out, 1.0);
  const Trained trained{(subset & 1) != 0, (subset & 2) != 0, (subset & 4) != 0};
  GdOptions options;
  options.steps = 3;
  PathGuard guard;
  use_simd_path(SimdPath::portable);
  Gradient g0;
  const double f0 = loss_and_gradient(in.spec, in.data, in.w, trained, g0);
  const double l0 = loss(in.spec, in.data, in.w);
  const Eigen::MatrixXd T0 = output(in.spec, in.data.X[0], in.w);
  const GdResult gd0 = gradient_descent(in.spec, in.data, in.w, trained, options);
  RC_ASSERT(same_bits(f0, l0));  // the loss alone and with its gradient: the same forward pass
  for (const SimdPath path : available_simd_paths()) {
    use_simd_path(path);
    Gradient g;
    RC_ASSERT(same_bits(loss_and_gradient(in.spec, in.data, in.w, trained, g), f0));
    for (int h = 0; h < H; ++h) {
      const auto k = static_cast<std::size_t>(h);
      RC_ASSERT(same_bits(g.Q[k], g0.Q[k]));
      RC_ASSERT(same_bits(g.K[k], g0.K[k]));
      RC_ASSERT(same_bits(g.V[k], g0.V[k]));
    }
    RC_ASSERT(same_bits(loss(in.spec, in.data, in.w), l0));
    RC_ASSERT(same_bits(output(in.spec, in.data.X[0], in.w), T0));
    const GdResult gd = gradient_descent(in.spec, in.data, in.w, trained, options);
    RC_ASSERT(gd.loss.size() == gd0.loss.size());
    for (std::size_t t = 0; t < gd.loss.size(); ++t) RC_ASSERT(same_bits(gd.loss[t], gd0.loss[t]));
  }
}

TEST(SimKernels, SimdPathsListed) {
  const std::vector<SimdPath> paths = available_simd_paths();
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.front(), SimdPath::portable);
  std::printf("sim::kernels SIMD paths on this CPU:");
  for (const SimdPath path : paths) std::printf(" %s", simd_path_name(path));
  std::printf(" (default %s)\n", simd_path_name(simd_path()));
}

TEST(SimKernels, RejectsBadArguments) {
  Data data;
  Weights w;
  EXPECT_THROW(loss({}, data, w), std::invalid_argument);
  GdOptions options;
  options.eta = 0;
  EXPECT_THROW(gradient_descent({}, data, w, {}, options), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::sim::kernels
