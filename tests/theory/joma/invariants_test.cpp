// Exact per-step identities of theory/joma/invariants.hpp and softmax_invariant.hpp in 50 digits:
// plain SGD steps built from the §1 gradients (joint_gradient.hpp) for random settings.
#include <dyncheck/theory/joma/invariants.hpp>
#include <dyncheck/theory/joma/joint_gradient.hpp>
#include <dyncheck/theory/joma/softmax_invariant.hpp>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <vector>

namespace dyncheck::theory::joma {
namespace {

// Deterministic pseudo-random reals in [-1, 1) from a counter (tests need no sim/ generator).
class Lcg {
 public:
  explicit Lcg(std::uint64_t seed) : state_(seed * 6364136223846793005ULL + 1442695040888963407ULL) {}
  double next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state_ >> 11U) * 0x1.0p-52 - 1.0;
  }

 private:
  std::uint64_t state_;
};

template <class S>
struct Trajectory {
  Vector<S> z;
  Matrix<S> V;
};

struct Setting {
  int tokens, neurons, batch, steps;
  double temperature, rate_ratio, eta_w, scale;
  std::uint64_t seed;
};

// One SGD step on a batch with arbitrary per-sample back-propagated δ (the identities hold for
// any δ, i.e. any activation and loss). Returns per-sample b and r_s = Σ_k G_{s,k}^T v_k.
template <class S>
void sgd_step(Kernel kernel, const Setting& s, Trajectory<S>& state, Lcg& random, Matrix<S>& b, Vector<S>& r) {
  const S T(s.temperature), eta_w(s.eta_w), eta_z = S(s.rate_ratio) * S(s.eta_w);
  Vector<S> grad_z = Vector<S>::Zero(state.z.size());
  Matrix<S> grad_V = Matrix<S>::Zero(state.V.rows(), state.V.cols());
  b.resize(state.z.size(), s.batch);
  r.resize(s.batch);
  for (int n = 0; n < s.batch; ++n) {
    Vector<S> x(state.z.size());
    for (Eigen::Index l = 0; l < x.size(); ++l) x[l] = S(random.next() + 1.5);
    x /= x.sum();
    Vector<S> delta(state.V.cols());
    for (Eigen::Index k = 0; k < delta.size(); ++k) delta[k] = S(random.next());
    const ReducedGradient<S> g = reduced_gradient(kernel, state.z, state.V, x, delta, T);
    grad_z += g.z;
    grad_V += g.V;
    b.col(n) = g.b;
    r[n] = (g.V.transpose() * state.V).trace();  // Σ_k G_k^T v_k
  }
  state.z -= eta_z * grad_z / S(s.batch);
  state.V -= eta_w * grad_V / S(s.batch);
}

template <class S>
Trajectory<S> initial_state(const Setting& s, Lcg& random) {
  Trajectory<S> state{Vector<S>(s.tokens), Matrix<S>(s.tokens, s.neurons)};
  for (Eigen::Index l = 0; l < state.z.size(); ++l) state.z[l] = S(s.scale * random.next() + 0.5);
  for (Eigen::Index i = 0; i < state.V.size(); ++i) state.V.data()[i] = S(s.scale * random.next());
  return state;
}

// Largest relative residual over s.steps SGD steps from `state`: `residual(before, after, b, r)`
// is |actual - predicted change|_inf / scale of one step.
template <class S, class StepResidual>
S worst_step_residual(Kernel kernel, const Setting& s, Lcg& random, Trajectory<S> state, StepResidual residual) {
  S worst = 0;
  Matrix<S> b;
  Vector<S> r;
  for (int t = 0; t < s.steps; ++t) {
    const Trajectory<S> before = state;
    sgd_step(kernel, s, state, random, b, r);
    using std::max;
    worst = max(worst, S(residual(before, state, b, r)));
  }
  return worst;
}

template <class S>
S exp_identity_residual(const Setting& s) {
  Lcg random(s.seed);
  const Trajectory<S> start = initial_state<S>(s, random);
  const S kappa = S(s.rate_ratio) / S(s.temperature);
  return worst_step_residual(
      Kernel::exp, s, random, start,
      [&](const Trajectory<S>& before, const Trajectory<S>& after, const Matrix<S>&, const Vector<S>&) {
        const Vector<S> actual = exp_invariant(after.z, after.V, kappa) - exp_invariant(before.z, before.V, kappa);
        const Vector<S> predicted = exp_invariant_step_change(before.V, after.V, kappa);
        const S scale = S(1) + after.z.cwiseAbs().maxCoeff() + kappa * after.V.squaredNorm();
        return S((actual - predicted).cwiseAbs().maxCoeff() / scale);
      });
}

template <class S>
S linear_identity_residual(const Setting& s) {
  Lcg random(s.seed);
  const Trajectory<S> start = initial_state<S>(s, random);
  const S ratio(s.rate_ratio);
  return worst_step_residual(
      Kernel::linear, s, random, start,
      [&](const Trajectory<S>& before, const Trajectory<S>& after, const Matrix<S>&, const Vector<S>&) {
        const Vector<S> actual = linear_invariant(after.z, after.V, ratio) - linear_invariant(before.z, before.V, ratio);
        const Vector<S> predicted = linear_invariant_step_change(before.z, after.z, before.V, after.V, ratio);
        const S scale = S(1) + after.z.squaredNorm() + ratio * after.V.squaredNorm();
        return S((actual - predicted).cwiseAbs().maxCoeff() / scale);
      });
}

template <class S>
S softmax_decomposition_residual(const Setting& s) {
  Lcg random(s.seed);
  const Trajectory<S> start = initial_state<S>(s, random);
  const S T(s.temperature), kappa = S(s.rate_ratio) / T, eta_z = S(s.rate_ratio) * S(s.eta_w);
  Vector<S> b_bar(s.tokens);
  for (Eigen::Index l = 0; l < b_bar.size(); ++l) b_bar[l] = S(random.next() + 1.5);
  b_bar /= b_bar.sum();
  return worst_step_residual(
      Kernel::softmax, s, random, start,
      [&](const Trajectory<S>& before, const Trajectory<S>& after, const Matrix<S>& b, const Vector<S>& r) {
        const Vector<S> actual = (after.z - softmax_invariant_estimate(after.V, b_bar, kappa)) -
                                 (before.z - softmax_invariant_estimate(before.V, b_bar, kappa));
        const Vector<S> predicted = softmax_defect_step_change(b, r, b_bar, before.V, after.V, S(eta_z / T), kappa);
        const S scale = S(1) + after.z.cwiseAbs().maxCoeff() + kappa * after.V.squaredNorm();
        return S((actual - predicted).cwiseAbs().maxCoeff() / scale);
      });
}

rc::Gen<Setting> settings() {
  return rc::gen::build<Setting>(
      rc::gen::set(&Setting::tokens, rc::gen::inRange(2, 9)), rc::gen::set(&Setting::neurons, rc::gen::inRange(1, 6)),
      rc::gen::set(&Setting::batch, rc::gen::inRange(1, 5)), rc::gen::set(&Setting::steps, rc::gen::inRange(1, 6)),
      rc::gen::set(&Setting::temperature, rc::gen::map(rc::gen::inRange(1, 40), [](int i) { return 0.1 * i; })),
      rc::gen::set(&Setting::rate_ratio, rc::gen::map(rc::gen::inRange(1, 50), [](int i) { return 0.1 * i; })),
      rc::gen::set(&Setting::eta_w, rc::gen::map(rc::gen::inRange(1, 30), [](int i) { return 0.01 * i; })),
      rc::gen::set(&Setting::scale, rc::gen::map(rc::gen::inRange(1, 30), [](int i) { return 0.1 * i; })),
      rc::gen::set(&Setting::seed, rc::gen::arbitrary<std::uint64_t>()));
}

RC_GTEST_PROP(TheoryJomaInvariants, ExpIdentityHoldsTo1e40In50Digits, ()) {
  const Setting s = *settings();
  RC_ASSERT(exp_identity_residual<mp50>(s) < mp50("1e-40"));
}

RC_GTEST_PROP(TheoryJomaInvariants, LinearIdentityHoldsTo1e40In50Digits, ()) {
  const Setting s = *settings();
  RC_ASSERT(linear_identity_residual<mp50>(s) < mp50("1e-40"));
}

RC_GTEST_PROP(TheoryJomaInvariants, SoftmaxDecompositionHoldsTo1e40In50Digits, ()) {
  const Setting s = *settings();
  RC_ASSERT(softmax_decomposition_residual<mp50>(s) < mp50("1e-40"));
}

RC_GTEST_PROP(TheoryJomaInvariants, IdentitiesHoldTo1e12InDouble, ()) {
  const Setting s = *settings();
  RC_ASSERT(exp_identity_residual<double>(s) < 1e-12);
  RC_ASSERT(linear_identity_residual<double>(s) < 1e-12);
  RC_ASSERT(softmax_decomposition_residual<double>(s) < 1e-12);
}

TEST(TheoryJomaInvariants, ExpInvariantOfZeroIsZero) {
  const Vector<double> z = Vector<double>::Zero(3);
  const Matrix<double> V = Matrix<double>::Zero(3, 2);
  EXPECT_EQ(exp_invariant(z, V, 2.0).norm(), 0.0);
}

TEST(TheoryJomaInvariants, ExpInvariantMatchesHandComputation) {
  Vector<double> z(2);
  z << 1.0, -2.0;
  Matrix<double> V(2, 2);
  V << 1.0, 2.0, 3.0, 4.0;
  const Vector<double> I = exp_invariant(z, V, 0.5);  // z - 0.25 (row sums of squares 5, 25)
  EXPECT_DOUBLE_EQ(I[0], 1.0 - 1.25);
  EXPECT_DOUBLE_EQ(I[1], -2.0 - 6.25);
}

TEST(TheoryJomaInvariants, NormalisedCorrelationIgnoresShiftAndScale) {
  Vector<double> a(4);
  a << 1, 2, 4, 3;
  EXPECT_NEAR(normalised_correlation<double>(a, (3.0 * a.array() + 7.0).matrix()), 1.0, 1e-15);
  EXPECT_NEAR(normalised_correlation<double>(a, (-a.array()).matrix()), -1.0, 1e-15);
  EXPECT_THROW(normalised_correlation<double>(a, Vector<double>::Ones(4)), std::invalid_argument);
}

TEST(TheoryJomaInvariants, ShapeMismatchThrows) {
  EXPECT_THROW(exp_invariant<double>(Vector<double>::Zero(3), Matrix<double>::Zero(2, 2), 1.0), std::invalid_argument);
  EXPECT_THROW(exp_invariant_step_change<double>(Matrix<double>::Zero(3, 2), Matrix<double>::Zero(2, 2), 1.0),
               std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::theory::joma
