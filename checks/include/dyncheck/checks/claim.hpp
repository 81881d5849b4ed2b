#pragma once
// A claim: one quantitative statement of one paper, with its experiment (DESIGN.md).

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dyncheck/checks/budget.hpp"
#include "dyncheck/checks/params.hpp"
#include "dyncheck/checks/verdict.hpp"
#include "dyncheck/sim/replicates.hpp"

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
};

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
};

/// Everything a claim's run may depend on. The run is a pure function of this context.
struct RunContext {
  Params params;
  Budget budget;
  std::uint64_t seed = 0;
  std::string claim_id;
  std::string mutant;  ///< empty: the claim's own theory
  unsigned threads = 0;
  /// Optional progress callback (stage, done, total); called from worker threads, serialized.
  std::function<void(std::string_view stage, std::size_t done, std::size_t total)> progress;

  bool mutant_is(std::string_view name) const { return mutant == name; }
  /// The claim's share of the suite-wide false-failure rate.
  double false_failure_rate() const { return budget.claim_false_failure_rate(); }
  /// Replicate options for one experiment of this claim: stream "<claim id>/<experiment>".
  sim::ReplicateOptions replicates(std::string_view experiment, std::size_t count) const;
};

class Claim {
 public:
  virtual ~Claim() = default;
  virtual const ClaimInfo& info() const = 0;
  /// Runs the experiment and returns comparisons, plots and notes. The runner fills in the
  /// outcome, seed, parameters and timing. Throws ParamError for invalid parameter
  /// combinations; any other exception becomes an ERROR verdict.
  virtual Verdict run(const RunContext& context) const = 0;
};

}  // namespace dyncheck::checks
