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

/// The false-failure share of a claim unless it declares another (ClaimInfo::false_failure_share).
/// Fixed, so that adding a claim moves no other claim's numbers; the suite's rate is the sum over
/// its claims, printed by `dyncheck report` and `dyncheck list`.
inline constexpr double default_claim_false_failure_share = 1e-5;

struct Budget {
  BudgetLevel level = BudgetLevel::ci;

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
