#include "dyncheck/theory/scb/population_gradient.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "dyncheck/theory/numeric/scalar.hpp"
#include "dyncheck/theory/scb/population_loss.hpp"
#include "test_instance.hpp"

namespace dyncheck::theory::scb {
namespace {

using S = mp50;

// Central differences with h = 1e-20 in 50 digits: truncation h²|L'''|/6 ~ 1e-40, rounding
// 1e-50/h = 1e-30, so the relative error of each entry should be far below 1e-20.
RC_GTEST_PROP(PopulationGradient, MatchesCentralDifferencesInFiftyDigits, ()) {
  const int N = *rc::gen::inRange(2, 5);
  const int T = *rc::gen::inRange(3, 9);
  const int Q = *rc::gen::inRange(1, T);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const Instance<S> inst = test::random_instance<S>(N, T, Q, seed);
  test::SplitMix rng{seed ^ 0x5555};
  Matrix<S> V(N, N), A(T, N);
  for (Eigen::Index i = 0; i < V.size(); ++i) V.data()[i] = rng.symmetric_unit<S>();
  for (Eigen::Index i = 0; i < A.size(); ++i) A.data()[i] = rng.symmetric_unit<S>();
  const Gradient<S> g = population_gradient(inst, V, A);
  const S h("1e-20");
  double worst = 0;
  auto check = [&](Matrix<S>& X, const Matrix<S>& analytic) {
    for (Eigen::Index i = 0; i < X.size(); ++i) {
      const S saved = X.data()[i];
      X.data()[i] = saved + h;
      const S up = population_loss(inst, V, A);
      X.data()[i] = saved - h;
      const S down = population_loss(inst, V, A);
      X.data()[i] = saved;
      const S fd = (up - down) / (2 * h);
      const S scale = abs(analytic.data()[i]) + S(1e-6);
      worst = std::max(worst, to_double(abs(fd - analytic.data()[i]) / scale));
    }
  };
  check(V, g.V);
  check(A, g.A);
  RC_ASSERT(worst < 1e-20);
}

}  // namespace
}  // namespace dyncheck::theory::scb
