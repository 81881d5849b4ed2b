#pragma once
// The three-part shape of a claim (issue #11, checks/README.md):
//
//   measure(params, settings, context)          the experiment; independent of the mutant
//   predict(params, measured, settings, context) the theory, with the claim's theory settings
//   compare(params, measured, predicted, context) the verdict: comparisons, plots, notes
//
// `Settings` is a small struct of the knobs of the claim's theory (coefficients, switches), whose
// default-constructed value is the true theory. A mutant is a named edit of the settings; one run
// evaluates the claim and every mutant from one measurement. A mutant declared with
// `changes_experiment` (a control that alters the simulation) is measured anew with its settings.
// `Params` is the claim's ParamSet (param_set.hpp).

#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/param_set.hpp"
#include "dyncheck/checks/variant.hpp"

namespace dyncheck::checks {

template <class Settings>
struct Mutant {
  std::string name;
  std::string description;
  std::function<void(Settings&)> edit;
  bool changes_experiment = false;
  BudgetLevel resolves_at = BudgetLevel::ci;  ///< MutantInfo::resolves_at
};

template <class P, class Settings, class Measured, class Predicted>
class ClaimShape : public Claim {
 public:
  using Params = P;
  using MutantSpec = Mutant<Settings>;

  ClaimShape(ClaimInfo info, std::vector<MutantSpec> mutants) : info_(std::move(info)), mutants_(std::move(mutants)) {
    const P defaults{};
    info_.params = defaults.specs();
    info_.records_shares = true;
    info_.mutants.clear();
    for (const MutantSpec& mutant : mutants_) {
      info_.mutants.push_back({mutant.name, mutant.description, mutant.changes_experiment, mutant.resolves_at});
    }
  }

  const ClaimInfo& info() const final { return info_; }

  checks::Params resolve(const std::vector<ParamOverride>& overrides, const Budget& budget) const final {
    P params;
    params.resolve(overrides, budget);
    return params.as_params();
  }

  std::vector<Verdict> evaluate(const RunContext& context, const std::vector<std::string>& variants) const final {
    P params;
    params.resolve(context.overrides, context.budget);
    const Settings truth{};
    std::optional<Measured> shared;
    std::exception_ptr shared_failure;
    bool measured_once = false;
    std::vector<Verdict> verdicts;
    for (const std::string& variant : variants) {
      Settings settings = truth;
      bool own_measurement = false;
      if (!variant.empty()) {
        const MutantSpec& mutant = find(variant);
        mutant.edit(settings);
        own_measurement = mutant.changes_experiment;
      }
      verdicts.push_back(timed_variant(variant, [&]() -> Verdict {
        if (own_measurement) {
          const Measured measured = measure(params, settings, context);
          return compare(params, measured, predict(params, measured, settings, context), context);
        }
        if (!measured_once) {
          measured_once = true;
          try {
            shared.emplace(measure(params, truth, context));
          } catch (const ParamError&) {
            throw;
          } catch (...) {
            shared_failure = std::current_exception();
          }
        }
        if (shared_failure) std::rethrow_exception(shared_failure);
        return compare(params, *shared, predict(params, *shared, settings, context), context);
      }));
    }
    return verdicts;
  }

 protected:
  virtual Measured measure(const P& params, const Settings& settings, const RunContext& context) const = 0;
  virtual Predicted predict(const P& params, const Measured& measured, const Settings& settings,
                            const RunContext& context) const = 0;
  virtual Verdict compare(const P& params, const Measured& measured, const Predicted& predicted,
                          const RunContext& context) const = 0;

 private:
  const MutantSpec& find(const std::string& name) const {
    for (const MutantSpec& mutant : mutants_) {
      if (mutant.name == name) return mutant;
    }
    throw ParamError("mutant", "claim " + info_.id + " has no mutant '" + name + "'");
  }

  ClaimInfo info_;
  std::vector<MutantSpec> mutants_;
};

}  // namespace dyncheck::checks
