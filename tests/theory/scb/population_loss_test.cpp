#include "dyncheck/theory/scb/population_loss.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "dyncheck/theory/numeric/scalar.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "test_instance.hpp"

namespace dyncheck::theory::scb {
namespace {

using S = mp50;

/// ½ E‖e_{x_o} − V X a_k‖² by exact enumeration of the data model of §1: contexts x_1..x_T (prob
/// Π μ_{x_t}), query k (μ_k), position s (q_k[s]), output o (P[o, x_s]).
S enumerated_loss(const Instance<S>& inst, const Matrix<S>& V, const Matrix<S>& A) {
  const int N = static_cast<int>(inst.N()), T = static_cast<int>(inst.T());
  std::vector<int> x(static_cast<std::size_t>(T), 0);
  S total = S(0);
  while (true) {
    S p_context = S(1);
    for (int t = 0; t < T; ++t) p_context *= inst.mu[x[static_cast<std::size_t>(t)]];
    for (int k = 0; k < N; ++k) {
      Vector<S> h = Vector<S>::Zero(N);
      for (int t = 0; t < T; ++t) h[x[static_cast<std::size_t>(t)]] += A(t, k);
      const Vector<S> prediction = V * h;
      for (int s = 0; s < T; ++s) {
        for (int o = 0; o < N; ++o) {
          Vector<S> residual = -prediction;
          residual[o] += S(1);
          total += p_context * inst.mu[k] * inst.q(s, k) * inst.P(o, x[static_cast<std::size_t>(s)]) *
                   residual.squaredNorm() / 2;
        }
      }
    }
    int t = 0;
    while (t < T && ++x[static_cast<std::size_t>(t)] == N) x[static_cast<std::size_t>(t++)] = 0;
    if (t == T) break;
  }
  return total;
}

TEST(PopulationLoss, EqualsExactEnumerationToFiftyDigits) {
  for (int N : {2, 3}) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      const Instance<S> inst = test::random_instance<S>(N, 3, 2, seed);
      // Any V and A, including 1^T a_k != 1: the closed form holds for all A.
      test::SplitMix rng{seed + 100};
      Matrix<S> V(N, N), A(3, N);
      for (Eigen::Index i = 0; i < V.size(); ++i) V.data()[i] = rng.symmetric_unit<S>();
      for (Eigen::Index i = 0; i < A.size(); ++i) A.data()[i] = rng.symmetric_unit<S>();
      EXPECT_LT(to_double(abs(population_loss(inst, V, A) - enumerated_loss(inst, V, A))), 1e-45)
          << "N = " << N << ", seed = " << seed;
    }
  }
}

TEST(PopulationLoss, IrreducibleLossAtTheGroundTruth) {
  const Instance<S> inst = test::random_instance<S>(3, 3, 2, 7);
  const Constants<S> c = constants(inst);
  EXPECT_LT(to_double(abs(population_loss(inst, inst.P, inst.q) - c.L_irr / 2)), 1e-45);
  EXPECT_LT(to_double(abs(enumerated_loss(inst, inst.P, inst.q) - c.L_irr / 2)), 1e-45);
}

TEST(PopulationLoss, RejectsWrongShapes) {
  const Instance<S> inst = test::random_instance<S>(2, 3, 2, 1);
  EXPECT_THROW(population_loss(inst, Matrix<S>(Matrix<S>::Zero(3, 3)), Matrix<S>(Matrix<S>::Zero(3, 2))), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::theory::scb
