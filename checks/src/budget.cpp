#include "dyncheck/checks/budget.hpp"

#include <string>

#include "dyncheck/checks/params.hpp"

namespace dyncheck::checks {

std::string_view to_string(BudgetLevel level) {
  switch (level) {
    case BudgetLevel::smoke: return "smoke";
    case BudgetLevel::ci: return "ci";
    case BudgetLevel::full: return "full";
  }
  return "ci";
}

BudgetLevel parse_budget(std::string_view text) {
  if (text == "smoke") return BudgetLevel::smoke;
  if (text == "ci") return BudgetLevel::ci;
  if (text == "full") return BudgetLevel::full;
  throw ParamError("budget", "budget must be one of smoke, ci, full; got '" + std::string(text) + "'");
}

}  // namespace dyncheck::checks
