// The ODE API dyncheck::theory::integrate_with_error side by side with a plain Boost.ODEint
// runge_kutta_fehlberg78 controlled stepper, on the same problem, tolerance and scalar type; and
// the raw cost of one scalar operation in double, mp50 and mp100 (numerics.md §5).
//
// Problems, on [0, 1], with closed forms:
//   harmonic: x'' = -x as (x, v)' = (v, -x), (x, v)(0) = (1, 0): x = cos t, v = -sin t;
//   logistic: x' = r x (1 - x), r = 5, x(0) = 1/100: x = x0 e^{rt} / (1 - x0 + x0 e^{rt})
//             (crosses its inflection point x = 1/2 at t = ln(99)/5 ≈ 0.92).
//
// Tolerances (tol = the tolerance passed to integrate_with_error and to rkf78): 1e-30 and 1e-40 in
// mp50, 1e-60 in mp100. In double, integrate_with_error accepts tol >= 1e4 x tolerance_floor =
// 2.2e-10 only, so it runs at 1e-9 (its returned states then come from a 1e-12 solve, see below);
// rkf78 runs at 1e-9 and at 1e-12.
//
// integrate_with_error makes two Bulirsch–Stoer solves, at tol and at tol/1000, returns the states
// of the tighter one and charges their difference to it as the error estimate; the time is for
// both. rkf78 is a single solve at tol, with no error estimate.
// Counters (of the last iteration; every iteration computes the same thing):
//   steps, rhs_evals          accepted steps and right-hand-side calls of the solve at tol;
//   ref_steps, ref_rhs_evals  the same for integrate_with_error's solve at tol/1000;
//   error                     max over components of |x(1) - closed form| of the returned state,
//                             rounded to double;
//   error_estimate            integrate_with_error's max_error_estimate.
// The rkf78 stepper is ODEint's controlled_runge_kutta with default_error_checker(tol, tol, 1, 0),
// i.e. the same per-step criterion |err_i| <= tol (1 + |x_i|) that integrate_with_error uses,
// on std::array states with ODEint's default (array_algebra), integrated by integrate_adaptive.
//
// Skipped because a single run would take far more than 10 s: rkf78 in mp100 at 1e-60. Its step
// count grows like tol^(-1/8): from 19 092 steps at 1e-40 (harmonic, measured here and in
// numerics.md §2b) to ~6e6 at 1e-60; at the ~30 µs per step measured in mp50 (more in mp100)
// that is several minutes per solve.
//
// Run e.g. build/bench/bench/dyncheck_ode_bench --benchmark_min_time=0.05 (the mp100 cases take a
// few seconds per iteration, so they run once).

#include <benchmark/benchmark.h>

#include <boost/numeric/odeint.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include <dyncheck/theory/numeric/ode.hpp>
#include <dyncheck/theory/numeric/scalar.hpp>

// ODEint in Boost 1.74 cannot compile a controlled stepper on std::array/std::vector of a
// Boost.Multiprecision type: extract_value_type recurses because number::value_type is the number
// itself (boostorg/odeint#40; fixed after 1.74). The one-line specialisation of numerics.md §2b:
namespace boost::numeric::odeint::detail {
template <>
struct extract_value_type<dyncheck::theory::mp50, void> {
  using type = dyncheck::theory::mp50;
};
template <>
struct extract_value_type<dyncheck::theory::mp100, void> {
  using type = dyncheck::theory::mp100;
};
}  // namespace boost::numeric::odeint::detail

namespace {

namespace dt = dyncheck::theory;
using dt::mp100;
using dt::mp50;

template <class S>
S parse(const char* text) {
  if constexpr (std::is_same_v<S, double>) {
    return std::stod(text);
  } else {
    return S(text);
  }
}

// ---------------------------------------------------------------------------------------------
// Problems: the right-hand side works on Eigen vectors (integrate_with_error) and std::array
// (plain ODEint) alike.

template <class S>
struct Harmonic {
  static constexpr std::size_t dim = 2;
  static constexpr const char* name = "harmonic";
  static std::array<S, dim> initial() { return {S(1), S(0)}; }
  static std::array<S, dim> exact(const S& t) {
    using std::cos;
    using std::sin;
    return {cos(t), -sin(t)};
  }
  template <class X>
  void operator()(const X& x, X& dxdt, const S& /*t*/) const {
    dxdt[0] = x[1];
    dxdt[1] = -x[0];
  }
};

template <class S>
struct Logistic {
  static constexpr std::size_t dim = 1;
  static constexpr const char* name = "logistic";
  static S rate() { return S(5); }
  static S x0() { return S(1) / S(100); }
  static std::array<S, dim> initial() { return {x0()}; }
  static std::array<S, dim> exact(const S& t) {
    using std::exp;
    const S growth = x0() * exp(rate() * t);
    return {growth / (S(1) - x0() + growth)};
  }
  template <class X>
  void operator()(const X& x, X& dxdt, const S& /*t*/) const {
    dxdt[0] = rate() * x[0] * (S(1) - x[0]);
  }
};

template <class Problem, class S, class X>
double error_vs_exact(const X& x, const S& t) {
  using std::abs;
  const auto exact = Problem::exact(t);
  S worst(0);
  for (std::size_t i = 0; i < Problem::dim; ++i) {
    const S e = abs(S(x[static_cast<decltype(x.size())>(i)]) - exact[i]);
    if (e > worst) worst = e;
  }
  return dt::to_double(worst);
}

// ---------------------------------------------------------------------------------------------

// The default OdeOptions::max_steps (10 000 per solve) is too few for the logistic equation in
// mp100 at 1e-60: its solve at 1e-63 takes about 10 750 steps (measured: ~9 s for both solves,
// the slowest case kept here).
const dt::OdeOptions kOdeOptions{.max_steps = 100'000};

template <template <class> class ProblemT, class S>
void bm_integrate_with_error(benchmark::State& state, const char* tolerance_text) {
  using Problem = ProblemT<S>;
  const S tolerance = parse<S>(tolerance_text);
  const auto init = Problem::initial();
  dt::Vector<S> x0(static_cast<Eigen::Index>(Problem::dim));
  for (std::size_t i = 0; i < Problem::dim; ++i) x0(static_cast<Eigen::Index>(i)) = init[i];
  const std::vector<S> times{S(0), S(1)};
  dt::OdeSolution<S> solution;
  for (auto _ : state) {
    solution = dt::integrate_with_error(Problem{}, x0, times, tolerance, kOdeOptions);
    benchmark::DoNotOptimize(solution);
  }
  state.counters["steps"] = static_cast<double>(solution.steps);
  state.counters["rhs_evals"] = static_cast<double>(solution.rhs_evaluations);
  state.counters["ref_steps"] = static_cast<double>(solution.reference_steps);
  state.counters["ref_rhs_evals"] = static_cast<double>(solution.reference_rhs_evaluations);
  state.counters["error"] = error_vs_exact<Problem>(solution.states.back(), S(1));
  state.counters["error_estimate"] = dt::to_double(solution.max_error_estimate);
}

template <template <class> class ProblemT, class S>
void bm_odeint_rkf78(benchmark::State& state, const char* tolerance_text) {
  namespace odeint = boost::numeric::odeint;
  using Problem = ProblemT<S>;
  using state_type = std::array<S, Problem::dim>;
  using error_stepper = odeint::runge_kutta_fehlberg78<state_type, S, state_type, S>;
  using error_checker = odeint::default_error_checker<S, typename error_stepper::algebra_type,
                                                      typename error_stepper::operations_type>;
  using controlled = odeint::controlled_runge_kutta<error_stepper, error_checker>;
  const S tolerance = parse<S>(tolerance_text);
  std::size_t steps = 0;
  std::size_t rhs_evals = 0;
  state_type x{};
  for (auto _ : state) {
    rhs_evals = 0;
    auto system = [&rhs_evals](const state_type& xs, state_type& dxdt, const S& t) {
      ++rhs_evals;
      Problem{}(xs, dxdt, t);
    };
    controlled stepper(error_checker(tolerance, tolerance, S(1), S(0)));
    x = Problem::initial();
    steps = odeint::integrate_adaptive(std::ref(stepper), system, x, S(0), S(1), S(1) / S(16));
    benchmark::DoNotOptimize(x);
  }
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["rhs_evals"] = static_cast<double>(rhs_evals);
  state.counters["error"] = error_vs_exact<Problem>(x, S(1));
}

template <class S>
constexpr benchmark::TimeUnit ode_unit = std::is_same_v<S, double> ? benchmark::kMicrosecond : benchmark::kMillisecond;

std::string ode_name(const char* problem, const char* scalar_name, const char* tolerance_text, const char* method) {
  return std::string("BM_ode/") + problem + "/" + scalar_name + "/tol=" + tolerance_text + "/" + method;
}

template <template <class> class ProblemT, class S>
void register_dyncheck(const char* scalar_name, const char* tolerance_text) {
  benchmark::RegisterBenchmark(
      ode_name(ProblemT<S>::name, scalar_name, tolerance_text, "dyncheck_integrate_with_error").c_str(),
      bm_integrate_with_error<ProblemT, S>, tolerance_text)
      ->Unit(ode_unit<S>);
}

template <template <class> class ProblemT, class S>
void register_rkf78(const char* scalar_name, const char* tolerance_text) {
  benchmark::RegisterBenchmark(ode_name(ProblemT<S>::name, scalar_name, tolerance_text, "odeint_rkf78").c_str(),
                               bm_odeint_rkf78<ProblemT, S>, tolerance_text)
      ->Unit(ode_unit<S>);
}

template <template <class> class ProblemT>
void register_ode_problem() {
  register_dyncheck<ProblemT, double>("double", "1e-9");  // 1e-12 is below its valid range
  register_rkf78<ProblemT, double>("double", "1e-9");
  register_rkf78<ProblemT, double>("double", "1e-12");
  for (const char* tolerance : {"1e-30", "1e-40"}) {
    register_dyncheck<ProblemT, mp50>("mp50", tolerance);
    register_rkf78<ProblemT, mp50>("mp50", tolerance);
  }
  register_dyncheck<ProblemT, mp100>("mp100", "1e-60");  // rkf78 skipped, see the top
}

// ---------------------------------------------------------------------------------------------
// Raw cost per element: y_i += a x_i and y_i = exp(x_i), over kOpLength elements, x_i in [-1, 1].

constexpr std::size_t kOpLength = 256;

template <class S>
std::vector<S> op_input() {
  std::vector<S> x(kOpLength);
  for (std::size_t i = 0; i < kOpLength; ++i) {
    x[i] = S(2 * static_cast<int>(i) - static_cast<int>(kOpLength)) / S(static_cast<int>(kOpLength)) + S(1) / S(3);
  }
  return x;
}

template <class S>
void bm_axpy(benchmark::State& state) {
  const std::vector<S> x = op_input<S>();
  std::vector<S> y = op_input<S>();
  const S a = S(1) / S(1000);
  for (auto _ : state) {
    for (std::size_t i = 0; i < kOpLength; ++i) y[i] += a * x[i];
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kOpLength));
}

template <class S>
void bm_exp(benchmark::State& state) {
  using std::exp;
  const std::vector<S> x = op_input<S>();
  std::vector<S> y(kOpLength);
  for (auto _ : state) {
    for (std::size_t i = 0; i < kOpLength; ++i) y[i] = exp(x[i]);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kOpLength));
}

void register_ops() {
  benchmark::RegisterBenchmark("BM_op_axpy/double", bm_axpy<double>);
  benchmark::RegisterBenchmark("BM_op_axpy/mp50", bm_axpy<mp50>);
  benchmark::RegisterBenchmark("BM_op_axpy/mp100", bm_axpy<mp100>);
  benchmark::RegisterBenchmark("BM_op_exp/double", bm_exp<double>);
  benchmark::RegisterBenchmark("BM_op_exp/mp50", bm_exp<mp50>);
  benchmark::RegisterBenchmark("BM_op_exp/mp100", bm_exp<mp100>);
}

[[maybe_unused]] const bool registered = [] {
  register_ops();
  register_ode_problem<Harmonic>();
  register_ode_problem<Logistic>();
  return true;
}();

}  // namespace
