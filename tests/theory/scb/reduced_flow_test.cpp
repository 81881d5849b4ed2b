#include "dyncheck/theory/scb/reduced_flow.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "dyncheck/theory/numeric/ode.hpp"
#include "dyncheck/theory/numeric/scalar.hpp"
#include "dyncheck/theory/scb/constants.hpp"
#include "dyncheck/theory/scb/noise_corrected.hpp"
#include "dyncheck/theory/scb/population_step.hpp"
#include "dyncheck/theory/scb/reduced_recurrence.hpp"
#include "test_instance.hpp"

namespace dyncheck::theory::scb {
namespace {

using S = mp50;

TEST(ReducedFlow, PackRoundTrips) {
  const ReducedState<S> state{Vector<S>::Constant(3, S(1)), S(2), S(3), Vector<S>::Constant(3, S(4)), Vector<S>::Constant(3, S(5))};
  const Vector<S> x = pack(state);
  ASSERT_EQ(x.size(), 11);
  const ReducedState<S> back = unpack(x);
  EXPECT_EQ(to_double(back.alpha), 2.0);
  EXPECT_EQ(to_double(back.nu), 3.0);
  EXPECT_EQ(to_double(back.beta[2]), 4.0);
  EXPECT_EQ(to_double(back.omega[0]), 5.0);
  EXPECT_THROW(unpack(Vector<S>(Vector<S>::Zero(4))), std::invalid_argument);
}

/// max over the output times of |alpha_GD(t) - alpha_flow(t)| for step eta (and eta_A = ratio * eta),
/// over the fixed horizon eta t = tau.
double gd_flow_error(const Instance<S>& inst, const Constants<S>& c, const ReducedState<S>& start, const S& eta,
                     const S& ratio, long long steps_per_output, int outputs) {
  const S eta_A = ratio * eta;
  std::vector<S> times{S(0)};
  for (int i = 1; i <= outputs; ++i) times.push_back(S(steps_per_output * i));
  const auto flow = integrate_with_error(ReducedFlow<S>(inst, c, eta, eta_A), pack(start), times, S("1e-30"));
  ReducedState<S> state = start;
  double worst = 0;
  for (int i = 1; i <= outputs; ++i) {
    for (long long s = 0; s < steps_per_output; ++s) state = reduced_gd_step(inst, c, state, eta, eta_A);
    worst = std::max(worst, to_double((pack(state) - flow.states[static_cast<std::size_t>(i)]).cwiseAbs().maxCoeff()));
  }
  return worst;
}

TEST(ReducedFlow, GradientDescentConvergesToItAtFirstOrder) {
  const Instance<S> inst = test::random_instance<S>(3, 12, 2, 21);
  const Constants<S> c = constants(inst);
  const auto [V, A] = test::random_start(inst, 22, S("0.3"), S(2));
  const ReducedState<S> start = reduce(inst, V, A);
  const S ratio = S("0.5") / c.K_P;  // eta_A K_P = eta / 2
  // Horizon eta t = 4: eta = 0.1 (40 steps) and eta = 0.05 (80 steps).
  const double coarse = gd_flow_error(inst, c, start, S("0.1"), ratio, 10, 4);
  const double fine = gd_flow_error(inst, c, start, S("0.05"), ratio, 20, 4);
  EXPECT_NEAR(coarse / fine, 2.0, 0.1);
}

TEST(NoiseCorrectedStep, ReducesToTheNoiselessStepForInfiniteBatch) {
  const Instance<S> inst = test::random_instance<S>(3, 12, 2, 21);
  const Constants<S> c = constants(inst);
  const auto [V, A] = test::random_start(inst, 22, S("0.3"), S(2));
  const ReducedState<S> start = reduce(inst, V, A);
  const ReducedState<S> exact = reduced_gd_step(inst, c, start, S("0.3"), S("0.4"));
  const ReducedState<S> noisy = noise_corrected_step(inst, c, start, S("0.3"), S("0.4"), S("1e60"));
  EXPECT_LT(to_double((pack(exact) - pack(noisy)).cwiseAbs().maxCoeff()), 1e-45);
  const ReducedState<S> small_batch = noise_corrected_step(inst, c, start, S("0.3"), S("0.4"), S(100));
  const S added = S("0.4") * S("0.4") * S(10) * start.alpha * start.alpha * c.K_2 / (S(100) * inst.mu[1]);
  EXPECT_LT(to_double(abs(small_batch.omega[1] - exact.omega[1] - added)), 1e-45);
  EXPECT_GT(to_double(small_batch.nu - exact.nu), 0.0);
  EXPECT_DOUBLE_EQ(stationary_attention_noise(0.5, 100.0, 0.2, 10.0, 0.25, 0.4), 0.5 * 100 * 0.2 / (2 * 10 * 0.25 * 0.4));
}

}  // namespace
}  // namespace dyncheck::theory::scb
