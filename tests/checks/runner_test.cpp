#include "dyncheck/checks/runner.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace dyncheck::checks {
namespace {

/// A claim whose run is scripted by the test.
class ScriptedClaim final : public Claim {
 public:
  explicit ScriptedClaim(std::function<Verdict(const RunContext&)> script) : script_(std::move(script)) {
    info_.id = "test.scripted";
    info_.family = "test";
    info_.params = {{"x", 1, 0, 2, false, false, "a number"}};
    info_.mutants = {{"wrong", "wrong"}};
  }
  const ClaimInfo& info() const override { return info_; }
  Verdict run(const RunContext& context) const override { return script_(context); }

 private:
  ClaimInfo info_;
  std::function<Verdict(const RunContext&)> script_;
};

Verdict one_comparison(double measured) {
  Verdict verdict;
  verdict.comparisons.push_back(compare("q", {1.0, 0.0, ""}, {measured, 0.1, ""}, {0.0, ""}, {1.0, ""}));
  return verdict;
}

TEST(RunClaim, FillsOutcomeSeedParamsAndTheClaimsFixedFalseFailureShare) {
  const ScriptedClaim claim([](const RunContext& context) { return one_comparison(context.params.get("x")); });
  RunOptions options;
  options.seed = 99;
  options.overrides = {{"x", "1.05"}};
  const Verdict verdict = run_claim(claim, options);
  EXPECT_EQ(verdict.outcome, Outcome::pass);
  EXPECT_EQ(verdict.seed, 99u);
  EXPECT_DOUBLE_EQ(verdict.false_failure_rate, default_claim_false_failure_share);
  ASSERT_EQ(verdict.params.size(), 1u);
  EXPECT_DOUBLE_EQ(verdict.params[0].second, 1.05);
}

TEST(RunClaim, AnExceptionInTheRunIsAnErrorVerdictThatSaysWhere) {
  const ScriptedClaim claim([](const RunContext&) -> Verdict { throw std::runtime_error("overflow at step 12"); });
  const Verdict verdict = run_claim(claim, RunOptions{});
  EXPECT_EQ(verdict.outcome, Outcome::error);
  EXPECT_EQ(verdict.error, "overflow at step 12");
}

TEST(RunClaim, ANonFiniteMeasurementIsAnErrorNotAPass) {
  const ScriptedClaim claim([](const RunContext&) { return one_comparison(std::numeric_limits<double>::quiet_NaN()); });
  const Verdict verdict = run_claim(claim, RunOptions{});
  EXPECT_EQ(verdict.outcome, Outcome::error);
  EXPECT_NE(verdict.error.find("'q'"), std::string::npos);
}

TEST(RunClaim, ParameterErrorsAndUnknownMutantsPropagate) {
  const ScriptedClaim claim([](const RunContext&) { return one_comparison(1.0); });
  RunOptions bad_param;
  bad_param.overrides = {{"x", "3"}};
  EXPECT_THROW(run_claim(claim, bad_param), ParamError);
  RunOptions bad_mutant;
  bad_mutant.mutant = "nope";
  EXPECT_THROW(run_claim(claim, bad_mutant), ParamError);
}

/// Theory 1 (+ `shift` for the mutant), measured `x` ± 0.1, resolution 1: tolerance 0.1.
Verdict shifted_theory(const RunContext& context, double shift) {
  Verdict verdict;
  const double theory = 1.0 + (context.mutant_is("wrong") ? shift : 0.0);
  verdict.comparisons.push_back(
      compare("q", {theory, 0.0, ""}, {context.params.get("x"), 0.1, ""}, {0.0, ""}, {1.0, "scripted"}));
  return verdict;
}

Outcome mutant_outcome(double shift, const std::string& x, bool with_claim) {
  const ScriptedClaim claim([shift](const RunContext& context) { return shifted_theory(context, shift); });
  RunOptions options;
  options.overrides = {{"x", x}};
  if (!with_claim) {
    options.mutant = "wrong";
    return run_claim(claim, options).outcome;
  }
  const std::vector<Verdict> both = run_claim_variants(claim, options, {"", "wrong"});
  EXPECT_EQ(both[0].outcome, Outcome::pass);
  return both[1].outcome;
}

TEST(RunClaim, AMutantThatMovesTheQuantityLessThanTheToleranceIsInconclusiveNotPass) {
  for (const bool with_claim : {false, true}) {
    // Shift 0.05 < tolerance 0.1: no measurement consistent with the claim can tell them apart.
    EXPECT_EQ(mutant_outcome(0.05, "1.0", with_claim), Outcome::inconclusive);
    // Shift 0.15 > tolerance: the comparison resolves it; here the measurement sits between the two
    // theories and the mutant PASSes (what fuzz_claims reports as a failure of the claim's power).
    EXPECT_EQ(mutant_outcome(0.15, "1.07", with_claim), Outcome::pass);
    // Shift 0.5: FAIL, as before.
    EXPECT_EQ(mutant_outcome(0.5, "1.0", with_claim), Outcome::fail);
    // A mutant that changes nothing compared: INCONCLUSIVE.
    EXPECT_EQ(mutant_outcome(0.0, "1.0", with_claim), Outcome::inconclusive);
  }
}

TEST(CheckOverridesApply, RejectsAParameterNoSelectedClaimHas) {
  const ScriptedClaim claim([](const RunContext&) { return one_comparison(1.0); });
  EXPECT_NO_THROW(check_overrides_apply({&claim}, {{"x", "1"}}));
  EXPECT_THROW(check_overrides_apply({&claim}, {{"y", "1"}}), ParamError);
}

}  // namespace
}  // namespace dyncheck::checks
