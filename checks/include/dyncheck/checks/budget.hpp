#pragma once
// Budgets: how much computation a claim may spend (DESIGN.md, "The central types").

#include <cstddef>
#include <string>
#include <string_view>

namespace dyncheck::checks {

/// smoke: well under a second (unit tests); ci: the whole suite in minutes on 2 cores;
/// full: paper scale, what the published report uses.
enum class BudgetLevel { smoke, ci, full };

std::string_view to_string(BudgetLevel level);
/// Parses "smoke" | "ci" | "full"; throws ParamError (parameter "budget") otherwise.
BudgetLevel parse_budget(std::string_view text);

struct Budget {
  BudgetLevel level = BudgetLevel::ci;
  /// Probability that the whole suite reports a false FAIL when every claim is true.
  double suite_false_failure_rate = 1e-3;
  /// Claims the suite-wide rate is split over (Bonferroni): every registered claim, so that
  /// a claim run alone gets the same share, and the same verdict, as in the whole suite.
  std::size_t claims_in_suite = 1;

  /// \f$\delta_{claim} = \delta_{suite} / K\f$.
  double claim_false_failure_rate() const;

  template <class T>
  T pick(T smoke, T ci, T full) const {
    switch (level) {
      case BudgetLevel::smoke: return smoke;
      case BudgetLevel::ci: return ci;
      case BudgetLevel::full: return full;
    }
    return ci;
  }
};

}  // namespace dyncheck::checks
