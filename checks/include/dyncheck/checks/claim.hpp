#pragma once
// A claim: one quantitative statement of one paper, with its experiment (DESIGN.md).
//
// New claims are written in the three-part shape of claim_shape.hpp (measure once, predict per
// mutant, compare); see checks/README.md. This header is the interface the runner sees.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dyncheck/checks/budget.hpp"
#include "dyncheck/checks/params.hpp"
#include "dyncheck/checks/verdict.hpp"

namespace dyncheck::checks {

/// Provenance tags of the specs (specs/README.md).
enum class Provenance { paper, code, derived, reconstructed };
std::string_view to_string(Provenance tag);  // "[paper]", "[code]", "[derived]", "[reconstructed]"

/// A deliberately wrong variant of the claim's theory. At the ci budget the claim must PASS
/// and each of its mutants must FAIL; a mutant that passes shows a check that cannot detect
/// the error it exists for.
struct MutantInfo {
  std::string name;
  std::string description;
  /// The mutant changes the experiment itself (a control), so it is measured anew; otherwise it
  /// reuses the claim's measurement and changes only the theory.
  bool changes_experiment = false;
  /// The lowest budget at which the mutant must FAIL. ci (the default): it FAILs in the claim's ctest.
  /// full: the error it stands for is decided only by the full-budget experiment (the claim says why);
  /// below full its verdict is reported but not required to be FAIL, and ctest registers its test
  /// disabled (tests/claims/CMakeLists.txt). Every claim keeps at least one mutant that FAILs at ci.
  BudgetLevel resolves_at = BudgetLevel::ci;
};

/// Whether a mutant run at `budget` must FAIL (its resolves_at is at or below the budget).
inline bool must_fail_at(const MutantInfo& mutant, BudgetLevel budget) {
  return static_cast<int>(mutant.resolves_at) <= static_cast<int>(budget);
}

struct ClaimInfo {
  std::string id;      ///< "<family>.<what_is_claimed>"
  std::string family;  ///< "calib", "scb", ...
  std::string paper;   ///< short citation
  std::string source;  ///< spec section / theorem / figure
  Provenance tag = Provenance::derived;
  std::string statement;   ///< one or two sentences in words
  std::string latex;       ///< the statement as a formula (Markdown math)
  std::string simulation;  ///< how it is simulated
  std::vector<ParamSpec> params;
  std::vector<MutantInfo> mutants;
  /// The claim's fixed false-failure share (independent of how many claims exist).
  double false_failure_share = default_claim_false_failure_share;
  /// The claim records each comparison's part of its share (claim_shape.hpp does); the runner then
  /// also requires every comparison with a statistical term to have recorded one.
  bool records_shares = false;
  /// Empty: every number the claim reports is the same on every machine (issue #10; the golden files
  /// pin them). Otherwise why its numbers are reproducible on one machine only (e.g. a library that
  /// picks CPU-specific kernels at run time): the report says so beside the claim, and the golden and
  /// libm-variant tests compare its structure, ids, verdicts and labels but not its numbers.
  std::string machine_dependent;
};

/// Everything a claim's run may depend on. The run is a pure function of this context.
struct RunContext {
  Params params;
  std::vector<ParamOverride> overrides;  ///< as given; a typed claim resolves its ParamSet from them
  Budget budget;
  std::uint64_t seed = 0;
  std::string claim_id;
  std::string mutant;  ///< empty: the claim's own theory (one-variant run() of older claims)
  unsigned threads = 0;
  double claim_false_failure_share = default_claim_false_failure_share;
  /// Optional progress callback (stage, done, total); called from worker threads, serialized.
  std::function<void(std::string_view stage, std::size_t done, std::size_t total)> progress;

  bool mutant_is(std::string_view name) const { return mutant == name; }
  /// The claim's false-failure share.
  double false_failure_rate() const { return claim_false_failure_share; }
};

class Claim {
 public:
  virtual ~Claim() = default;
  virtual const ClaimInfo& info() const = 0;
  /// The parameters of a run: defaults with `overrides` applied, range-checked, and the claim's
  /// cross-parameter and cost conditions checked. Throws ParamError before any work is done.
  virtual Params resolve(const std::vector<ParamOverride>& overrides, const Budget& budget) const;
  /// Runs the claim's own theory (variant "") and the named mutants, in the order given. One
  /// measurement serves every variant that does not change the experiment. Throws ParamError for
  /// invalid parameters; any other exception becomes an ERROR verdict of the variants it concerns.
  /// The default runs run() once per variant (claims not yet in the three-part shape).
  virtual std::vector<Verdict> evaluate(const RunContext& context, const std::vector<std::string>& variants) const;

 protected:
  /// One variant (context.mutant); claims in the three-part shape do not implement it.
  virtual Verdict run(const RunContext& context) const;
};

}  // namespace dyncheck::checks
