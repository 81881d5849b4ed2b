#pragma once
// Parameter sets shared by the scb claims (declared once; a claim's Params holds them as members
// constructed with its `this`, e.g. `Vocabulary vocabulary{this};` read as `p.vocabulary.N`).

#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "dyncheck/checks/param_set.hpp"
#include "dyncheck/sim/scb/instance.hpp"

namespace dyncheck::checks::scb {

/// N, the vocabulary size of the SCB instance; a claim whose derivation holds for fewer words
/// passes its largest N and the reason.
struct Vocabulary {
  explicit Vocabulary(ParamSet* owner, long long N_max = 20, const char* description = "vocabulary size")
      : N{owner, "N", 3, closed(2, static_cast<double>(N_max)), description} {}
  Int N;
};

/// Q, the support size of each q^(k); the claim's check() enforces Q <= T/4 for its T.
struct Support {
  explicit Support(ParamSet* owner, const char* description = "support size of q^(k), <= T/4", long long Q_default = 2)
      : Q{owner, "Q", Q_default, closed(1, 20), description} {}
  Int Q;
};

/// The two step sizes of the reduced dynamics: eta (V) and eta_A K_P (attention); a claim whose
/// derivation needs a smaller range of eta_A K_P passes its range and the reason.
struct StepSizes {
  StepSizes(ParamSet* owner, double eta_default, double eta_max, double eta_A_K_P_default,
            Range eta_A_K_P_range = open_closed(0, 1), const char* eta_A_K_P_description = "attention step size times K_P")
      : eta{owner, "eta", eta_default, open_closed(0, eta_max), "V step size"},
        eta_A_K_P{owner, "eta_A_K_P", eta_A_K_P_default, eta_A_K_P_range, eta_A_K_P_description} {}
  Real eta;
  Real eta_A_K_P;
};

/// The conditioning of a claim's random instances (issue #10: the automatic batch of the finite-
/// sample claims follows K_2/K_P^2 and 1/mu_min of the drawn P, which are unbounded over
/// Dirichlet draws, so a cost refusal at the defaults depended on the seed). Instances are drawn
/// conditioned on
///   K_2/K_P^2 <= noise_ratio_max  (spec §5: the stage-1 batch is B_1 ~ T K_2/K_P^2), and
///   N mu_min >= N_mu_min          (the stage-2 threshold and the noise floor scale as 1/mu_min),
/// by sim::scb::random_instance's deterministic rejection (P redrawn from the same stream; a first
/// draw that satisfies both is the unconditioned instance, unchanged). Then mu_max <= 1 - (N - 1)
/// mu_min, and every batch the claims derive is bounded by a function of the parameters alone:
/// the cost refusal (exit 2) is decided in check(), before any draw. Defaults: noise_ratio_max = 15
/// is the 0.95 quantile of K_2/K_P^2 at N = 3 with Dirichlet(1) columns (0.99 quantile 48; from
/// N = 4 on 0.99 is below 12, so the ceiling hardly binds there); N_mu_min per claim (0.1 quantile
/// of N mu_min at N = 3 is 0.24).
struct InstanceBounds {
  /// `floor_needed`: the claim's cost follows 1/mu_min, so N_mu_min = 0 is outside its range.
  InstanceBounds(ParamSet* owner, double N_mu_min_default, const char* N_mu_min_reason, bool floor_needed)
      : noise_ratio_max{owner, "noise_ratio_max", 15, closed(2, 1000),
                        "instances are drawn conditioned on K_2/K_P^2 <= this (the stage-1 noise/signal constant of "
                        "spec §5; bounds the automatic batch, hence the cost, by the parameters)",
                        Scale::log},
        N_mu_min{owner, "N_mu_min", N_mu_min_default, floor_needed ? open_closed(0, 0.8) : closed(0, 0.8),
                 std::string("instances are drawn conditioned on N mu_min >= this; ") + N_mu_min_reason} {}

  Real noise_ratio_max;
  Real N_mu_min;

  double mu_min(int N) const { return N_mu_min / N; }
  /// mu_max <= 1 - (N - 1) mu_min over the conditioned instances.
  double mu_max(int N) const { return 1.0 - (N - 1) * mu_min(N); }
  /// Bound on K_2/(K_P^2 mu_min) (the stage-1 stationary attention noise constant of §5).
  double noise_over_mu_min(int N) const { return noise_ratio_max / mu_min(N); }
  /// Bound on K_2 mu_max/(K_P^2 mu_min^2) (the stage-2 threshold's batch constant).
  double noise_mu_max_over_mu_min2(int N) const { return noise_ratio_max * mu_max(N) / (mu_min(N) * mu_min(N)); }

  /// One sentence for the verdict notes.
  std::string describe(const sim::scb::Instance& instance) const {
    return fmt::format("instance drawn conditioned on K_2/K_P^2 <= {:g} and N mu_min >= {:g} (accepted at P draw {})",
                       noise_ratio_max.value(), N_mu_min.value(), instance.draws);
  }

  /// `options` with the conditioning applied.
  sim::scb::InstanceOptions apply(sim::scb::InstanceOptions options) const {
    options.noise_ratio_max = noise_ratio_max;
    options.mu_min = mu_min(options.N);
    return options;
  }
};

}  // namespace dyncheck::checks::scb

