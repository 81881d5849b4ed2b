// Tests of the kernels claims: each runs at smoke without FAIL or ERROR, refuses invalid parameters
// (ParamError naming the parameter) and declares its mutants; the ci runs (PASS, every mutant FAIL) are
// the claim's own ctest (tests/claims).

#include <gtest/gtest.h>

#include <string>

#include "dyncheck/checks/mutant_points.hpp"
#include "dyncheck/checks/registry.hpp"
#include "dyncheck/checks/runner.hpp"

namespace dyncheck::checks {
namespace {

const Registry& registry() {
  static const Registry r = [] {
    Registry reg;
    register_builtin_families(reg);
    return reg;
  }();
  return r;
}

std::vector<const Claim*> kernels_claims() { return registry().select({"kernels"}); }

TEST(ChecksKernels, FamilyIsRegisteredWithItsClaims) {
  EXPECT_GE(kernels_claims().size(), 4u);
  for (const Claim* claim : kernels_claims()) {
    EXPECT_EQ(claim->info().family, "kernels");
    EXPECT_GE(claim->info().mutants.size(), 2u) << claim->info().id;
  }
}

TEST(ChecksKernels, SmokeRunsNeitherFailNorError) {
  for (const Claim* claim : kernels_claims()) {
    RunOptions options;
    options.budget = Budget{BudgetLevel::smoke};
    options.threads = 1;
    const Verdict verdict = run_claim(*claim, options);
    EXPECT_NE(verdict.outcome, Outcome::fail) << claim->info().id;
    EXPECT_NE(verdict.outcome, Outcome::error) << claim->info().id << ": " << verdict.error;
  }
}

// The A.3 conditions reach the command line through the claims' notes (`run --json`, the report): at smoke, on
// both sides of d = Nn, the note names the condition, says whether d >= Nn holds, and carries lambda values.
TEST(ChecksKernels, ClaimsReportTheA3ConditionsOfTheirInstance) {
  for (const std::string id : {"kernels.pl_certificate_every_step", "kernels.q_only_separation"}) {
    const Claim* claim = registry().find(id);
    ASSERT_NE(claim, nullptr) << id;
    const bool q_only = id == "kernels.q_only_separation";
    for (const std::string& d : {std::string("4"), std::string(q_only ? "16" : "6")}) {  // Nn = 16 (q_only), 6 (pl)
      RunOptions options;
      options.budget = Budget{BudgetLevel::smoke};
      options.threads = 1;
      options.overrides = {{"d", d}};
      const Verdict verdict = run_claim(*claim, options);
      const int Nn = q_only ? 16 : 6;
      const std::string holds = std::stoi(d) >= Nn ? "holds" : "fails";
      bool found = false;
      for (const std::string& note : verdict.notes) {
        if (note.find("evaluate_conditions") == std::string::npos) continue;
        found = true;
        EXPECT_NE(note.find("lambda_Q"), std::string::npos) << note;
        EXPECT_NE(note.find(holds), std::string::npos) << id << " d = " << d << ": " << note;
      }
      EXPECT_TRUE(found) << id << " d = " << d;
    }
  }
}

// kernels.q_only_separation's level_for_every_d drops A-T3's hypothesis d >= Nn, so it is the claim itself at the
// defaults (d = Nn = 16); it declares its point beyond the hypothesis, where its ctest requires FAIL at ci
// (tests/claims/CMakeLists.txt). The point must lie beyond the hypothesis and be one the claim accepts at ci.
TEST(ChecksKernels, HypothesisDroppingMutantDeclaresAnAffordablePointBeyondTheHypothesis) {
  const Claim* claim = registry().find("kernels.q_only_separation");
  ASSERT_NE(claim, nullptr);
  bool listed = false;
  for (const MutantInfo& m : claim->info().mutants) listed = listed || m.name == "level_for_every_d";
  ASSERT_TRUE(listed);
  std::vector<ParamOverride> overrides;
  double N = 0, n = 0, d = 0;
  for (const auto& [name, value] : hypothesis_mutant_point(claim->info().id, "level_for_every_d")) {
    overrides.emplace_back(name, std::to_string(static_cast<int>(value)));
    (name == "N" ? N : name == "n" ? n : d) = value;
  }
  ASSERT_EQ(overrides.size(), 3u);
  EXPECT_LT(d, N * n);
  EXPECT_NO_THROW((void)claim->resolve(overrides, Budget{BudgetLevel::ci}));
  EXPECT_FALSE(at_failing_point(claim->info().id, "level_for_every_d", {{"N", 4}, {"n", 4}, {"d", 16}}));
  EXPECT_TRUE(at_failing_point(claim->info().id, "level_for_every_d", {{"N", N}, {"n", n}, {"d", d}, {"steps", 0}}));
  EXPECT_TRUE(hypothesis_mutant_point(claim->info().id, "no_separation").empty());  // the default kind
}

TEST(ChecksKernels, RefusesOutOfRangeAndUnaffordableParameters) {
  const Claim* floor = registry().find("kernels.value_only_floor_below_Nn");
  ASSERT_NE(floor, nullptr);
  RunOptions options;
  options.budget = Budget{BudgetLevel::ci};
  options.overrides = {{"d", "12"}};  // N n = 12: not below Nn
  try {
    run_claim(*floor, options);
    ADD_FAILURE() << "d = Nn was accepted";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.parameter(), "d");
  }
  const Claim* closed = registry().find("kernels.value_only_closed_form");
  ASSERT_NE(closed, nullptr);
  options.overrides = {{"N", "8"}, {"n", "8"}};
  EXPECT_THROW(run_claim(*closed, options), ParamError);
  options.overrides = {{"steps", "200000"}, {"d", "64"}};
  EXPECT_THROW(run_claim(*closed, options), ParamError);
  options.overrides = {{"kernel", "3"}};
  EXPECT_THROW(run_claim(*closed, options), ParamError);
}

// Spec E-A1's grid (value_only claims at full): its work bound is affordable at full, it replaces N, n and d (a changed
// one is refused naming `grid`), and several instances per cell are compared instance by instance (`seeds`; at smoke
// here, on one cell). Checks only, except one smoke run of 3 instances.
TEST(ChecksKernels, ValueOnlyGridAndSeeds) {
  for (const std::string id : {"kernels.value_only_closed_form", "kernels.value_only_floor_below_Nn"}) {
    const Claim* claim = registry().find(id);
    ASSERT_NE(claim, nullptr) << id;
    EXPECT_NO_THROW((void)claim->resolve({}, Budget{BudgetLevel::full})) << id;
    try {
      (void)claim->resolve({{"N", "2"}}, Budget{BudgetLevel::full});
      ADD_FAILURE() << id << ": the grid accepted N = 2";
    } catch (const ParamError& e) {
      EXPECT_EQ(e.parameter(), "grid") << id;
    }
    EXPECT_NO_THROW((void)claim->resolve({{"N", "4"}, {"grid", "1"}}, Budget{BudgetLevel::full})) << id;
    try {
      (void)claim->resolve({{"seeds", "59"}}, Budget{BudgetLevel::smoke});
      ADD_FAILURE() << id << ": 59 instances accepted at smoke";
    } catch (const ParamError& e) {
      EXPECT_EQ(e.parameter(), "seeds") << id;
    }
  }
  const Claim* closed = registry().find("kernels.value_only_closed_form");
  RunOptions options;
  options.budget = Budget{BudgetLevel::smoke};
  options.threads = 1;
  options.overrides = {{"seeds", "3"}};
  const Verdict verdict = run_claim(*closed, options);
  EXPECT_NE(verdict.outcome, Outcome::fail);
  EXPECT_NE(verdict.outcome, Outcome::error) << verdict.error;
  ASSERT_EQ(verdict.comparisons.size(), 3u);
  for (const Comparison& c : verdict.comparisons) EXPECT_EQ(c.quantity.rfind("instance ", 0), 0u) << c.quantity;
}

}  // namespace
}  // namespace dyncheck::checks
