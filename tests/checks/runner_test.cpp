#include "dyncheck/checks/runner.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

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

TEST(CheckOverridesApply, RejectsAParameterNoSelectedClaimHas) {
  const ScriptedClaim claim([](const RunContext&) { return one_comparison(1.0); });
  EXPECT_NO_THROW(check_overrides_apply({&claim}, {{"x", "1"}}));
  EXPECT_THROW(check_overrides_apply({&claim}, {{"y", "1"}}), ParamError);
}

}  // namespace
}  // namespace dyncheck::checks
