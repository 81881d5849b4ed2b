#include "dyncheck/checks/runner.hpp"

#include <fmt/format.h>

#include <Eigen/Core>

#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/theory/numeric/scalar.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace dyncheck::checks {

std::uint64_t master_seed_from_environment() {
  // Set means given: an empty DYNCHECK_SEED is rejected like `--seed ''` (the same parser).
  const char* text = std::getenv("DYNCHECK_SEED");
  if (text == nullptr) return default_master_seed;
  return parse_seed("DYNCHECK_SEED", text);
}

void check_overrides_apply(const std::vector<const Claim*>& claims, const std::vector<ParamOverride>& overrides) {
  for (const auto& [name, value] : overrides) {
    const bool declared = std::any_of(claims.begin(), claims.end(), [&name = name](const Claim* claim) {
      const auto& params = claim->info().params;
      return std::any_of(params.begin(), params.end(), [&](const ParamSpec& spec) { return spec.name == name; });
    });
    if (!declared) {
      std::string known;
      for (const Claim* claim : claims) {
        for (const ParamSpec& spec : claim->info().params) {
          known += fmt::format("\n  {} ({}): {}", spec.name, claim->info().id, spec.range_text());
        }
      }
      throw ParamError(name, fmt::format("no selected claim has a parameter '{}'; parameters are:{}", name, known));
    }
  }
}

void check_mutant_known(const ClaimInfo& info, const std::string& name) {
  const bool known = std::any_of(info.mutants.begin(), info.mutants.end(),
                                 [&](const MutantInfo& mutant) { return mutant.name == name; });
  if (!known) {
    std::string names;
    for (const MutantInfo& mutant : info.mutants) names += (names.empty() ? "" : ", ") + mutant.name;
    throw ParamError("mutant", fmt::format("claim {} has no mutant '{}'; its mutants are: {}", info.id, name, names));
  }
}

namespace {

/// Eigen's matrix products choose their blocking (and so their summation order) from the cache sizes
/// it reads off the CPU at run time; fixed sizes make the order, and the bits, the same on every
/// machine. The values are those of a common x86-64 core (32 KiB L1, 1 MiB L2, 32 MiB L3); only
/// the speed of products larger than a block depends on them.
void pin_eigen_blocking() {
  static const bool pinned = [] {
    Eigen::setCpuCacheSizes(32 * 1024, 1024 * 1024, 32 * 1024 * 1024);
    return true;
  }();
  (void)pinned;
}

/// Boost 1.74 sets up std::numeric_limits of the MPFR type (mp100) on first use without a lock
/// (a data race under ThreadSanitizer in a small test program, session 15); claims may evaluate
/// theory in worker threads, so the limits of both multiprecision types are touched once here, on
/// the calling thread, before any claim starts its workers.
void initialise_multiprecision_limits() {
  static const bool done = [] {
    (void)std::numeric_limits<theory::mp100>::epsilon();
    (void)std::numeric_limits<theory::mp100>::min();
    (void)std::numeric_limits<theory::mp100>::max();
    (void)std::numeric_limits<theory::mp100>::lowest();
    (void)std::numeric_limits<theory::mp50>::epsilon();
    (void)std::numeric_limits<theory::mp50>::min();
    (void)std::numeric_limits<theory::mp50>::max();
    return true;
  }();
  (void)done;
}

/// The invariant of the error shares (DESIGN.md, Statistics), checked on every verdict.
void check_shares(const ClaimInfo& info, double share, Verdict& verdict) {
  double spent = 0;
  for (const Comparison& comparison : verdict.comparisons) {
    spent += comparison.false_failure_share;
    if (info.records_shares && comparison.half_width > 0 && comparison.false_failure_share <= 0) {
      verdict.outcome = Outcome::error;
      verdict.error = fmt::format("comparison '{}' has a statistical half-width but records no false-failure share",
                                  comparison.quantity);
      return;
    }
  }
  verdict.false_failure_spent = spent;
  // A relative slack of 1e-9 for the rounding of shares computed as share / count.
  if (spent > share * (1 + 1e-9)) {
    verdict.outcome = Outcome::error;
    verdict.error = fmt::format("the comparisons' false-failure shares add up to {:.6g}, more than the claim's {:.6g}",
                                spent, share);
  }
}

/// A mutant's comparisons against the claim's, from the same run (issue #10: the fuzz found small
/// mutants PASSing at valid points where they hardly move a compared quantity).
///
/// A mutant is a named edit of the claim's theory (or experiment). At some valid points an edit
/// moves a compared quantity by less than the comparison's tolerance: no measurement consistent
/// with the claim's theory can then tell the edit from it, and a PASS of the mutant would wrongly
/// say that the claim missed an error it could have seen. Such a comparison is INCONCLUSIVE for
/// the mutant: its resolution becomes the shift the edit causes,
///   s = |(measured' - theory') - (measured - theory)|
/// (|theory' - theory| when the measurement is shared), so it is INCONCLUSIVE exactly when the
/// tolerance exceeds s, unless it FAILs. A comparison the edit does not move at all (s = 0) is
/// left as the claim's; if the edit moves none, the mutant is INCONCLUSIVE ("changes nothing
/// compared here"). An edit that moves a quantity by more than the tolerance keeps the claim's
/// resolution there, so it must FAIL (fuzz_claims: every mutant that resolves). This is the rule
/// checks/scb/resolution.hpp applied per claim before, now for every claim. A verdict whose
/// outcome the claim did not take from its comparisons (an exploratory claim's) is not touched.
void resolve_against_claim(const Verdict& claim, Verdict& mutant) {
  if (claim.outcome == Outcome::error || mutant.outcome == Outcome::error) return;
  if (mutant.outcome != combine(mutant.comparisons)) return;
  const std::size_t paired = std::min(mutant.comparisons.size(), claim.comparisons.size());
  std::vector<double> shifts(paired);
  for (std::size_t i = 0; i < paired; ++i) {  // all checked before any is changed
    const Comparison& m = mutant.comparisons[i];
    const Comparison& c = claim.comparisons[i];
    if (m.quantity != c.quantity || m.relation != c.relation) return;  // not the same comparisons: leave it
    shifts[i] = std::abs((m.measured - m.theory) - (c.measured - c.theory));
    if (!std::isfinite(shifts[i])) return;
  }
  bool any_moved = false;
  for (std::size_t i = 0; i < paired; ++i) {
    Comparison& m = mutant.comparisons[i];
    const double shift = shifts[i];
    if (shift == 0) continue;
    any_moved = true;
    if (!(shift < m.resolution)) continue;
    m.resolution_reason = fmt::format(
        "{:.4g}: this variant moves the compared quantity only that far from the claim's theory here, so a "
        "tolerance above it cannot tell them apart (the claim's resolution: {:.4g}, {})",
        shift, m.resolution, m.resolution_reason);
    m.resolution = shift;
  }
  if (!any_moved && mutant.comparisons.size() == claim.comparisons.size()) {
    for (Comparison& m : mutant.comparisons) {
      m.resolution_reason = fmt::format(
          "0: this variant changes no compared quantity at this point, so no comparison can tell it from the claim "
          "(the claim's resolution: {:.4g}, {})",
          m.resolution, m.resolution_reason);
      m.resolution = 0;
    }
  }
  mutant.outcome = combine(mutant.comparisons);
}

}  // namespace

std::uint64_t calibration_seed(std::uint64_t master_seed, const std::string& claim_id, std::size_t run) {
  return sim::derive_stream(master_seed, "calibrate/" + claim_id, run)();
}

std::vector<std::string> all_variants(const Claim& claim) {
  std::vector<std::string> variants{""};
  for (const MutantInfo& mutant : claim.info().mutants) variants.push_back(mutant.name);
  return variants;
}

void check_parameters(const std::vector<const Claim*>& claims, const RunOptions& options) {
  for (const Claim* claim : claims) (void)claim->resolve(options.overrides, options.budget);
}

double suite_false_failure_rate(const std::vector<const Claim*>& claims) {
  double rate = 0;
  for (const Claim* claim : claims) rate += claim->info().false_failure_share;
  return rate;
}

std::vector<Verdict> run_claim_variants(const Claim& claim, const RunOptions& options,
                                        const std::vector<std::string>& variants) {
  pin_eigen_blocking();
  initialise_multiprecision_limits();
  const ClaimInfo& info = claim.info();
  for (const std::string& variant : variants) {
    if (!variant.empty()) check_mutant_known(info, variant);
  }

  RunContext context;
  context.params = claim.resolve(options.overrides, options.budget);
  context.overrides = options.overrides;
  context.budget = options.budget;
  context.seed = options.seed;
  context.claim_id = info.id;
  context.threads = options.threads;
  const double share = options.false_failure_share > 0 ? options.false_failure_share : info.false_failure_share;
  context.claim_false_failure_share = share;
  context.progress = options.progress;

  // A mutant is judged against the claim's own verdict at the same point (resolve_against_claim), so
  // the claim is evaluated with it even when only mutants were asked for (from the same measurement
  // unless the mutant changes the experiment).
  const auto claim_at = std::find(variants.begin(), variants.end(), std::string());
  const bool claim_asked = claim_at != variants.end();
  const bool any_mutant = std::any_of(variants.begin(), variants.end(), [](const std::string& v) { return !v.empty(); });
  std::vector<std::string> evaluated = variants;
  if (any_mutant && !claim_asked) evaluated.insert(evaluated.begin(), std::string());
  std::vector<Verdict> verdicts = claim.evaluate(context, evaluated);
  if (verdicts.size() != evaluated.size()) {
    throw std::logic_error(fmt::format("claim {} returned {} verdicts for {} variants", info.id, verdicts.size(),
                                       evaluated.size()));
  }
  if (any_mutant) {
    const std::size_t claim_index =
        claim_asked ? static_cast<std::size_t>(claim_at - variants.begin()) : std::size_t{0};
    for (std::size_t v = 0; v < evaluated.size(); ++v) {
      if (!evaluated[v].empty()) resolve_against_claim(verdicts[claim_index], verdicts[v]);
    }
    if (!claim_asked) verdicts.erase(verdicts.begin());
  }
  for (std::size_t v = 0; v < verdicts.size(); ++v) {
    Verdict& verdict = verdicts[v];
    if (verdict.outcome != Outcome::error) check_shares(info, share, verdict);
    verdict.claim_id = info.id;
    verdict.mutant = variants[v];
    verdict.seed = options.seed;
    verdict.budget = std::string(to_string(options.budget.level));
    verdict.params = context.params.items();
    verdict.false_failure_rate = share;
  }
  return verdicts;
}

Verdict run_claim(const Claim& claim, const RunOptions& options) {
  return run_claim_variants(claim, options, {options.mutant}).front();
}

}  // namespace dyncheck::checks
