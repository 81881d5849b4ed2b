#include "dyncheck/checks/verdict.hpp"

#include "dyncheck/checks/variant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace dyncheck::checks {

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::pass: return "PASS";
    case Outcome::fail: return "FAIL";
    case Outcome::inconclusive: return "INCONCLUSIVE";
    case Outcome::error: return "ERROR";
  }
  return "ERROR";
}

std::string_view to_string(Relation relation) {
  switch (relation) {
    case Relation::equal: return "=";
    case Relation::at_most: return "<=";
    case Relation::at_least: return ">=";
  }
  return "=";
}

double Comparison::discrepancy() const {
  switch (relation) {
    case Relation::equal: return std::abs(measured - theory);
    case Relation::at_most: return std::max(0.0, measured - theory);
    case Relation::at_least: return std::max(0.0, theory - measured);
  }
  return std::abs(measured - theory);
}

double Comparison::margin() const {
  const double allowed = tolerance.total();
  const double excess = discrepancy();
  if (allowed > 0) return excess / allowed;
  return excess > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

bool Comparison::finite() const {
  for (double value : {theory, theory_error, measured, half_width, tolerance.numerical.value, tolerance.bias.value,
                       tolerance.statistical.value, resolution}) {
    if (!std::isfinite(value)) return false;
  }
  return true;
}

Outcome Comparison::outcome() const {
  if (!finite()) return Outcome::error;
  if (discrepancy() > tolerance.total()) return Outcome::fail;
  if (tolerance.total() > resolution) return Outcome::inconclusive;
  return Outcome::pass;
}

Comparison compare(std::string quantity, const TheoryValue& theory, const Measurement& measured, const Bias& bias,
                   const Resolution& resolution, Relation relation) {
  Comparison comparison;
  comparison.quantity = std::move(quantity);
  comparison.relation = relation;
  comparison.theory = theory.value;
  comparison.theory_error = std::abs(theory.error);
  comparison.measured = measured.value;
  comparison.half_width = std::abs(measured.half_width);
  comparison.tolerance.numerical = {std::abs(theory.error) + std::abs(measured.numerical_error), theory.error_reason};
  if (measured.numerical_error != 0) {
    comparison.tolerance.numerical.reason += "; plus " + measured.numerical_error_reason;
  }
  comparison.tolerance.bias = {std::abs(bias.value), bias.reason};
  comparison.tolerance.statistical = {std::abs(measured.half_width), measured.half_width_reason};
  comparison.resolution = resolution.value;
  comparison.resolution_reason = resolution.reason;
  comparison.false_failure_share = measured.false_failure_share;
  return comparison;
}

double Verdict::margin() const {
  double largest = 0;
  for (const Comparison& comparison : comparisons) largest = std::max(largest, comparison.margin());
  return largest;
}

Outcome combine(const std::vector<Comparison>& comparisons) {
  if (comparisons.empty()) return Outcome::error;
  bool any_fail = false;
  bool any_inconclusive = false;
  for (const Comparison& comparison : comparisons) {
    switch (comparison.outcome()) {
      case Outcome::error: return Outcome::error;
      case Outcome::fail: any_fail = true; break;
      case Outcome::inconclusive: any_inconclusive = true; break;
      case Outcome::pass: break;
    }
  }
  if (any_fail) return Outcome::fail;
  if (any_inconclusive) return Outcome::inconclusive;
  return Outcome::pass;
}

void settle_outcome(Verdict& verdict) {
  verdict.outcome = combine(verdict.comparisons);
  if (verdict.outcome != Outcome::error) return;
  verdict.error = verdict.comparisons.empty() ? std::string("the run produced no comparison")
                                              : std::string("a compared quantity is NaN or infinite");
  for (const Comparison& comparison : verdict.comparisons) {
    if (!comparison.finite()) {
      verdict.error = "non-finite value in comparison '" + comparison.quantity + "'";
      break;
    }
  }
}

void require_finite(double value, std::string_view where) {
  if (!std::isfinite(value)) {
    throw NonFiniteError("non-finite value (" + std::to_string(value) + ") in " + std::string(where));
  }
}

}  // namespace dyncheck::checks
