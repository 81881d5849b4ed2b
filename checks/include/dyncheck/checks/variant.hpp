#pragma once
// Running one variant of a claim (its own theory or a mutant) and turning what went wrong into an
// ERROR verdict, timed. Used by Claim::evaluate and claim_shape.hpp.

#include <chrono>
#include <exception>
#include <string>

#include "dyncheck/checks/params.hpp"
#include "dyncheck/checks/verdict.hpp"

namespace dyncheck::checks {

/// Sets the outcome from the comparisons and, for ERROR, says which number was not finite.
void settle_outcome(Verdict& verdict);

/// Calls `body` (which returns the verdict's comparisons, plots and notes), settles the outcome,
/// records the mutant name and the wall time. ParamError propagates (a usage error); any other
/// exception becomes an ERROR verdict carrying its message.
template <class Body>
Verdict timed_variant(const std::string& variant, Body&& body) {
  const auto start = std::chrono::steady_clock::now();
  Verdict verdict;
  try {
    verdict = body();
    settle_outcome(verdict);
  } catch (const ParamError&) {
    throw;
  } catch (const InputUnavailable& error) {
    verdict = Verdict{};
    verdict.outcome = Outcome::error;
    verdict.error = std::string(input_unavailable_prefix) + error.what();
    verdict.input_unavailable = true;
  } catch (const std::exception& error) {
    verdict = Verdict{};
    verdict.outcome = Outcome::error;
    verdict.error = error.what();
  }
  verdict.mutant = variant;
  verdict.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return verdict;
}

}  // namespace dyncheck::checks
