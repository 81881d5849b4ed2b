#pragma once
// What the scb population claims share: drawing a random SCB instance for an experiment, handing
// the same numbers to the theory side, reducing a simulated model with the theory's coordinates,
// and checking the common parameters.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/params.hpp"
#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/random/uniform01.hpp"
#include "dyncheck/sim/scb/instance.hpp"
#include "dyncheck/sim/scb/model.hpp"
#include "dyncheck/theory/numeric/eigen.hpp"
#include "dyncheck/theory/scb/instance.hpp"
#include "dyncheck/theory/scb/reduced_state.hpp"

namespace dyncheck::checks::scb {

/// Random instance `index` from the claim's stream "<claim id>/<name>" of the master seed.
/// A conditioned draw (options.noise_ratio_max or mu_min > 0, see params.hpp InstanceBounds) that
/// finds no instance in options.max_draws P draws is refused (ParamError naming noise_ratio_max):
/// the conditioned law then has probability p below about 1e-3 (a refusal at p has chance (1-p)^1e4).
inline sim::scb::Instance draw_instance(const RunContext& context, const sim::scb::InstanceOptions& options,
                                        const std::string& name = "instance", std::uint64_t index = 0) {
  sim::Rng rng = sim::derive_stream(context.seed, context.claim_id + "/" + name, index);
  if (options.noise_ratio_max <= 0 && options.mu_min <= 0) return sim::scb::random_instance(options, rng);
  try {
    return sim::scb::random_instance(options, rng);
  } catch (const std::runtime_error& e) {
    throw ParamError("noise_ratio_max",
                     fmt::format("parameters 'noise_ratio_max' and 'N_mu_min' leave (almost) no instance to draw: {}; "
                                 "raise noise_ratio_max or lower N_mu_min",
                                 e.what()));
  }
}

/// Random instance `index` of experiment `experiment` (stream "<claim id>/<experiment>/instance").
inline sim::scb::Instance draw_instance(const RunContext& context, std::string_view experiment, std::uint64_t index,
                                        const sim::scb::InstanceOptions& options) {
  return draw_instance(context, options, std::string(experiment) + "/instance", index);
}

/// The same instance for the theory, entry by entry (doubles convert exactly to mp50 / mp100).
template <class S>
theory::scb::Instance<S> to_theory(const sim::scb::Instance& instance) {
  return {instance.P.cast<S>(), instance.mu.cast<S>(), sim::scb::dense_q(instance).cast<S>()};
}

/// The theory's reduced coordinates (§4.1) of a simulated model.
template <class S>
theory::scb::ReducedState<S> reduce_model(const theory::scb::Instance<S>& instance, const sim::scb::LinearModel& model) {
  return theory::scb::reduce(instance, theory::Matrix<S>(model.V.cast<S>()), theory::Matrix<S>(model.A.cast<S>()));
}

/// A random start with \f$\mathbf 1^\top a_k = 1\f$ on the positive branch (§4.3): V = μ1ᵀ + v_scale √K_P U[−1,1]
/// (α = ⟨δV,P⟩_Σ/K_P and ν ≤ ⟨δV,δV⟩_Σ, so this keeps η_A K_VV in the stable range whatever K_P is),
/// a_k = 1/T + (a_scale/T)(u − mean u), u ~ U[−1,1]^T; then δV is negated if α < 0 and a_k − 1/T if
/// β_k < 0 (neither changes ν or ω_k). On the negative branch β → −∞, E‖a‖² grows without bound and
/// any fixed η eventually destabilises ν (the spec: property tests start with u_0 + 1/T > 0).
/// Draws from stream "<claim id>/start", replicate `index`.
inline sim::scb::LinearModel random_positive_start(const RunContext& context, std::uint64_t index,
                                                   const sim::scb::Instance& instance, double K_P, double v_scale,
                                                   double a_scale) {
  const Eigen::Index N = instance.N(), T = instance.T;
  sim::Rng rng = sim::derive_stream(context.seed, context.claim_id + "/start", index);
  const Eigen::MatrixXd base = instance.mu * Eigen::RowVectorXd::Ones(N);
  sim::scb::LinearModel model{base, Eigen::MatrixXd(T, N)};
  for (Eigen::Index j = 0; j < model.V.size(); ++j) {
    model.V.data()[j] += v_scale * std::sqrt(K_P) * (2 * sim::uniform01(rng) - 1);
  }
  const double uniform = 1.0 / static_cast<double>(T);
  for (Eigen::Index k = 0; k < N; ++k) {
    Eigen::VectorXd u(T);
    for (Eigen::Index t = 0; t < T; ++t) u[t] = 2 * sim::uniform01(rng) - 1;
    model.A.col(k) = Eigen::VectorXd::Constant(T, uniform) + (a_scale * uniform) * (u.array() - u.mean()).matrix();
  }
  const auto theory_instance = to_theory<double>(instance);
  const auto state = reduce_model(theory_instance, model);
  if (state.alpha < 0) model.V = base - (model.V - base);
  for (Eigen::Index k = 0; k < N; ++k) {
    if (state.beta[k] < 0) model.A.col(k) = (2 * uniform - model.A.col(k).array()).matrix();
  }
  return model;
}

/// \f$\|P\mu - \mu\|_\infty\f$ of the double instance: the reduction of §4 uses \f$P\mu = \mu\f$ exactly, so
/// the simulated and the reduced dynamics may differ by this much per step (a numerical term).
inline double stationarity_defect(const sim::scb::Instance& instance) {
  return (instance.P * instance.mu - instance.mu).cwiseAbs().maxCoeff();
}

/// The probability mass of sample-level events too rare for `samples` iid SCB examples to be sure to show
/// them: each token j appears in an example (T + 2 tokens with marginal mu, the chain being stationary)
/// with probability <= (T + 2) mu_j, and a transition j -> i at one of its T + 1 adjacent pairs with
/// probability <= (T + 1) mu_j P_ij (union bounds). Events whose expected count over the samples is
/// below `min_count` are counted. A mean over the samples can miss at most B x this mass of the
/// population mean when every per-sample value is bounded by B: a bias term, since the Student-t
/// interval of replicate means cannot see events that no replicate drew (issue #10: P nearly a
/// permutation made every replicate identical and the half-width 0).
inline double rare_event_mass(const sim::scb::Instance& instance, double samples, double min_count = 30) {
  const Eigen::Index N = instance.N();
  const double T = static_cast<double>(instance.T);
  double mass = 0;
  for (Eigen::Index j = 0; j < N; ++j) {
    const double token = (T + 2) * instance.mu[j];
    if (token * samples < min_count) {
      mass += token;
      continue;
    }
    for (Eigen::Index i = 0; i < N; ++i) {
      const double pair = (T + 1) * instance.mu[j] * instance.P(i, j);
      if (pair * samples < min_count) mass += pair;
    }
  }
  return std::min(mass, 1.0);
}

/// `draw()` (an instance draw), with a failure of the draw itself turned into a ParamError naming
/// p_concentration: with a tiny Dirichlet concentration (and a large identity_mix) the drawn P can be
/// (nearly) reducible, without a positive stationary distribution; the point is then refused (exit 2)
/// before any work, instead of an ERROR.
template <class Draw>
auto draw_or_refuse(Draw draw) -> decltype(draw()) {
  try {
    return draw();
  } catch (const ParamError&) {
    throw;
  } catch (const std::exception& e) {
    throw ParamError("p_concentration",
                     fmt::format("parameter 'p_concentration' (with identity_mix) gave an instance this claim cannot use "
                                 "at this seed ({}); raise p_concentration or lower identity_mix",
                                 e.what()));
  }
}

/// Throws ParamError naming `name` unless `ok`.
inline void require(bool ok, const std::string& name, const std::string& message) {
  if (!ok) throw ParamError(name, fmt::format("parameter '{}' {}", name, message));
}

/// Q must leave q^{(k)} non-uniform (rho_k > 0) and fit the spec's range Q <= T/4 (§8).
inline void require_sparsity(long long Q, long long T) {
  require(4 * Q <= T, "Q", fmt::format("must be in [1, T/4] = [1, {}] for T = {} (specs/scb.md §8)", T / 4, T));
}

}  // namespace dyncheck::checks::scb
