#include "dyncheck/theory/scb/attention_noise.hpp"

#include <gtest/gtest.h>

#include "dyncheck/theory/numeric/scalar.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/noise_corrected.hpp"
#include "dyncheck/theory/scb/reduced_state.hpp"
#include "test_instance.hpp"

namespace dyncheck::theory::scb {
namespace {

using S = mp50;

/// E[r rᵀ | query k] by enumerating all N^T contexts: given X, E[e_o | X] = P X q_k =: p, so
/// E[r rᵀ | X] = diag(p) − p (Vh)ᵀ − Vh pᵀ + Vh (Vh)ᵀ with h = X a_k.
Matrix<S> enumerated_residual_covariance(const Instance<S>& inst, const Matrix<S>& V, const Vector<S>& a,
                                         Eigen::Index k) {
  const auto N = static_cast<int>(inst.P.rows());
  const auto T = static_cast<int>(inst.q.rows());
  Matrix<S> C = Matrix<S>::Zero(N, N);
  std::vector<int> x(static_cast<std::size_t>(T), 0);
  while (true) {
    S weight = S(1);
    Vector<S> h = Vector<S>::Zero(N), source = Vector<S>::Zero(N);
    for (int t = 0; t < T; ++t) {
      const int token = x[static_cast<std::size_t>(t)];
      weight *= inst.mu[token];
      h[token] += a[t];
      source[token] += inst.q(t, k);
    }
    const Vector<S> p = inst.P * source;
    const Vector<S> prediction = V * h;
    Matrix<S> conditional = -p * prediction.transpose() - prediction * p.transpose() + prediction * prediction.transpose();
    conditional.diagonal() += p;
    C += weight * conditional;
    int t = 0;
    while (t < T && ++x[static_cast<std::size_t>(t)] == N) x[static_cast<std::size_t>(t++)] = 0;
    if (t == T) break;
  }
  return C;
}

void expect_matches_enumeration(int N, int T, int Q, std::uint64_t seed) {
  const Instance<S> inst = test::random_instance<S>(N, T, Q, seed);
  const Constants<S> c = constants(inst);
  const AttentionNoiseConstants<S> noise = attention_noise_constants(inst);
  auto [V_random, A] = test::random_start(inst, seed + 1, S("0.3"), S(3));
  // V = m 1ᵀ + α e (no V⊥, which the closed form drops): m and α from the random start.
  const Vector<S> m = V_random * inst.mu;
  const S alpha = sigma_inner(V_random, inst.P, inst.mu) / c.K_P;
  const Matrix<S> V = m * Vector<S>::Ones(N).transpose() + alpha * (inst.P - inst.mu * Vector<S>::Ones(N).transpose());
  const ReducedState<S> state = reduce(inst, V, A);
  ASSERT_LT(to_double(abs(state.nu)), 1e-45);
  const Matrix<S> sigma = token_covariance(inst.mu);
  for (Eigen::Index k = 0; k < N; ++k) {
    const Matrix<S> C = enumerated_residual_covariance(inst, V, A.col(k), k);
    const S exact = (V * sigma * V.transpose() * C).trace();
    const S closed = attention_gradient_variance(inst, c, noise, state, k);
    EXPECT_LT(to_double(abs(closed - exact)), 1e-40) << "N=" << N << " T=" << T << " k=" << k;
  }
}

TEST(AttentionNoise, ClosedFormEqualsEnumeratedResidualCovariance) {
  expect_matches_enumeration(2, 4, 1, 31);
  expect_matches_enumeration(3, 4, 2, 32);
  expect_matches_enumeration(3, 5, 1, 33);
}

TEST(AttentionNoise, ReducesToStageOneValueAtUniformAttention) {
  // At m = μ, a = 1/T the residual covariance is Σ, so σ_k² = α²K_2 for any α.
  const Instance<S> inst = test::random_instance<S>(4, 20, 2, 41);
  const Constants<S> c = constants(inst);
  const ReducedState<S> state{inst.mu, S("0.7"), S(0), Vector<S>::Zero(4), Vector<S>::Zero(4)};
  const S closed = attention_gradient_variance(inst, c, attention_noise_constants(inst), state, 1);
  const S inv_T = S(1) / S(20);
  // Only the O(α/T) overlap terms separate them: (2α/T − α²/T) K_4 α².
  const S expected = S("0.49") * (c.K_2 - (S("1.4") * inv_T - S("0.49") * inv_T) * attention_noise_constants(inst).K_4);
  EXPECT_LT(to_double(abs(closed - expected)), 1e-45);
}

TEST(AttentionNoise, StateNoiseIsSmallerThanStageOneNoiseOnceAttentionConcentrates) {
  const Instance<S> inst = test::random_instance<S>(3, 50, 1, 51);
  const Constants<S> c = constants(inst);
  const ReducedState<S> truth{inst.mu, S(1), S(0), Vector<S>::Ones(3), Vector<S>::Zero(3)};
  const AttentionNoiseConstants<S> noise = attention_noise_constants(inst);
  const S at_truth = attention_gradient_variance(inst, c, noise, truth, 0);
  // Q = 1 at the ground truth: ⟨q,a⟩ = ‖a‖² = 1, so σ² = K_2 − K_4 = tr(W(Σ − W)).
  EXPECT_LT(to_double(abs(at_truth - (c.K_2 - noise.K_4))), 1e-45);
  EXPECT_LT(to_double(at_truth), to_double(c.K_2));
  EXPECT_GT(to_double(at_truth), 0.0);
  const ReducedState<S> stepped_state = noise_corrected_step(inst, c, noise, truth, S("0.5"), S(1), S(100));
  const ReducedState<S> stepped_spec = noise_corrected_step(inst, c, truth, S("0.5"), S(1), S(100));
  EXPECT_LT(to_double(stepped_state.omega[0]), to_double(stepped_spec.omega[0]));
  EXPECT_THROW(attention_gradient_variance(inst, c, noise, truth, 3), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::theory::scb
