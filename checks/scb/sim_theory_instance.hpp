#pragma once
// The random SCB instance shared by the sim-vs-theory claims (specs/scb.md §8): drawn by the sim
// layer from the claim's own "instance" stream (so it depends on the master seed and the
// parameters only), and handed to the theory layer as dense matrices in the scalar S.

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/param_set.hpp"
#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/random/uniform01.hpp"
#include "dyncheck/sim/scb/instance.hpp"
#include "dyncheck/theory/numeric/eigen.hpp"
#include "dyncheck/theory/scb/instance.hpp"
#include "params.hpp"
#include "theory_instance.hpp"  // to_theory

namespace dyncheck::checks::scb {

/// The instance parameters of spec §8 with their valid ranges; `N`, `T`, `Q` defaults per claim.
inline std::vector<ParamSpec> instance_param_specs(double N, double T, double Q) {
  return {
      {"N", N, 2, 20, true, false, "vocabulary size"},
      {"T", T, 5, 5000, true, false, "context length"},
      {"Q", Q, 1, 20, true, false, "support size of every q^(k); also Q <= T/4"},
      {"p_concentration", 1, 0, 10, false, true, "columns of P ~ Dirichlet(c 1) (spec: 1 or 0.3)"},
      {"identity_mix", 0, 0, 0.9, false, false, "P <- (1 - m) P + m I"},
      {"q_concentration", 0, 0, 10, false, false, "0: q uniform on its support; c > 0: q ~ Dirichlet(c 1) on it"},
  };
}

/// Reads the §8 instance parameters; throws ParamError for Q > T/4 (spec §8).
inline sim::scb::InstanceOptions instance_options(const RunContext& context) {
  sim::scb::InstanceOptions options;
  options.N = static_cast<int>(context.params.get_int("N"));
  options.T = static_cast<int>(context.params.get_int("T"));
  options.Q = static_cast<int>(context.params.get_int("Q"));
  require_sparsity(options.Q, options.T);
  options.dirichlet_concentration = context.params.get("p_concentration");
  options.identity_mix = context.params.get("identity_mix");
  const double q_concentration = context.params.get("q_concentration");
  options.q_uniform = q_concentration == 0.0;
  options.q_dirichlet_concentration = options.q_uniform ? 1.0 : q_concentration;
  return options;
}

/// The instance from the claim's "instance" stream.
inline sim::scb::Instance make_instance(const RunContext& context) {
  return draw_instance(context, instance_options(context));
}

/// One line describing the instance for the verdict notes.
inline std::string describe(const sim::scb::Instance& instance, const RunContext& context) {
  return fmt::format(
      "Instance (spec §8) from the master seed: N = {}, T = {}, Q = {}, P columns ~ Dirichlet({:g}) mixed with I at "
      "{:g}, mu = stationary distribution (min mu = {:.3g}, |P mu - mu|_inf = {:.2g}), supports uniform at random, q {}.",
      instance.N(), instance.T, instance.support.front().size(), context.params.get("p_concentration"),
      context.params.get("identity_mix"), instance.mu.minCoeff(),
      (instance.P * instance.mu - instance.mu).lpNorm<Eigen::Infinity>(),
      context.params.get("q_concentration") == 0.0
          ? std::string("uniform on its support")
          : fmt::format("~ Dirichlet({:g}) on its support", context.params.get("q_concentration")));
}

/// The spec §8 instance parameters as a typed set (a member of a claim's Params constructed with
/// its `this`): N and Q from params.hpp, T with the claim's default and upper end, and the shape of
/// P and q. check() enforces Q <= T/4.
struct InstanceShape {
  InstanceShape(ParamSet* owner, long long T_default, long long T_max, const char* T_description = "context length",
                Scale T_scale = Scale::linear)
      : vocabulary{owner},
        T{owner, "T", T_default, closed(5, static_cast<double>(T_max)), T_description, T_scale},
        support{owner, "support size of every q^(k); also Q <= T/4"},
        p_concentration{owner, "p_concentration", 1, open_closed(0, 10),
                        "columns of P ~ Dirichlet(c 1) (spec: 1 or 0.3)", Scale::log},
        identity_mix{owner, "identity_mix", 0, closed(0, 0.9), "P <- (1 - m) P + m I"},
        q_concentration{owner, "q_concentration", 0, closed(0, 10),
                        "0: q uniform on its support; c > 0: q ~ Dirichlet(c 1) on it"} {}

  Vocabulary vocabulary;
  Int T;
  Support support;
  Real p_concentration, identity_mix, q_concentration;

  /// Q <= T/4 (spec §8); ParamError naming Q otherwise.
  void check() const { require_sparsity(support.Q, T); }

  sim::scb::InstanceOptions options() const {
    sim::scb::InstanceOptions o;
    o.N = vocabulary.N.as_int();
    o.T = T.as_int();
    o.Q = support.Q.as_int();
    o.dirichlet_concentration = p_concentration;
    o.identity_mix = identity_mix;
    o.q_uniform = q_concentration.value() == 0.0;
    o.q_dirichlet_concentration = o.q_uniform ? 1.0 : q_concentration.value();
    return o;
  }
};

/// The instance of `shape` from the claim's "instance" stream; a draw without a positive stationary distribution
/// (tiny p_concentration) is refused naming p_concentration (draw_or_refuse), never an ERROR (issue #10 fuzz, seed
/// 14005: scb.softmax_step_matches_scaled_linear_step at p_concentration = 0.0011 was an ERROR).
inline sim::scb::Instance make_instance(const RunContext& context, const InstanceShape& shape) {
  return draw_or_refuse([&] { return draw_instance(context, shape.options()); });
}

/// One line describing the instance for the verdict notes.
inline std::string describe(const sim::scb::Instance& instance, const InstanceShape& shape) {
  return fmt::format(
      "Instance (spec §8) from the master seed: N = {}, T = {}, Q = {}, P columns ~ Dirichlet({:g}) mixed with I at "
      "{:g}, mu = stationary distribution (min mu = {:.3g}, |P mu - mu|_inf = {:.2g}), supports uniform at random, q {}.",
      instance.N(), instance.T, instance.support.front().size(), shape.p_concentration.value(),
      shape.identity_mix.value(), instance.mu.minCoeff(),
      (instance.P * instance.mu - instance.mu).lpNorm<Eigen::Infinity>(),
      shape.q_concentration.value() == 0.0
          ? std::string("uniform on its support")
          : fmt::format("~ Dirichlet({:g}) on its support", shape.q_concentration.value()));
}

/// Compared entries of A (flattened t + T k): every position when T ≤ 16, else the support of
/// q_k and 8 evenly spaced positions per column.
inline std::vector<Eigen::Index> selected_attention_entries(const sim::scb::Instance& instance) {
  std::vector<Eigen::Index> entries;
  const Eigen::Index T = instance.T;
  for (Eigen::Index k = 0; k < instance.N(); ++k) {
    std::vector<Eigen::Index> positions;
    if (T <= 16) {
      for (Eigen::Index t = 0; t < T; ++t) positions.push_back(t);
    } else {
      for (const int t : instance.support[static_cast<std::size_t>(k)]) positions.push_back(t);
      for (int i = 0; i < 8; ++i) positions.push_back((2 * i + 1) * T / 16);
      std::sort(positions.begin(), positions.end());
      positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
    }
    for (const Eigen::Index t : positions) entries.push_back(t + T * k);
  }
  return entries;
}

}  // namespace dyncheck::checks::scb
