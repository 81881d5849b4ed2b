#include "dyncheck/reports/markdown.hpp"

#include <gtest/gtest.h>

#include "dyncheck/checks/mutant_points.hpp"

namespace dyncheck::reports {
namespace {

Report one_claim_report(checks::Outcome outcome_of_mutant) {
  Report report;
  report.budget = "ci";
  report.seed = 7;
  report.suite_false_failure_rate = 1e-3;
  report.claims_in_suite = 1;
  report.version = "test";
  ClaimReport claim;
  claim.info.id = "fam.some_claim";
  claim.info.family = "fam";
  claim.info.paper = "A paper";
  claim.info.tag = checks::Provenance::reconstructed;
  claim.info.mutants = {{"wrong", "a wrong constant"}};
  claim.verdict.claim_id = claim.info.id;
  claim.verdict.comparisons.push_back(checks::compare("x", {1.0, 1e-12, "precision doubling"},
                                                      {1.1, 0.05, "Student-t"}, {0.1, "O(eta)"}, {1.0, "by design"}));
  claim.verdict.outcome = checks::combine(claim.verdict.comparisons);
  claim.verdict.wall_seconds = 1.5;
  checks::Verdict mutant;
  mutant.mutant = "wrong";
  mutant.outcome = outcome_of_mutant;
  claim.mutants.push_back(mutant);
  report.claims.push_back(claim);
  return report;
}

TEST(Markdown, SummaryRowShowsVerdictMarginMutantsAndTime) {
  const std::string text = to_markdown(one_claim_report(checks::Outcome::fail));
  EXPECT_NE(text.find("| [fam.some_claim](#famsome_claim) | A paper | [reconstructed] | PASS | 0.667 | 1/1 | 1.500 s |"),
            std::string::npos)
      << text;
}

TEST(Markdown, ToleranceBreakdownAndReasonsAreWritten) {
  const std::string text = to_markdown(one_claim_report(checks::Outcome::fail));
  EXPECT_NE(text.find("0.15 = 1e-12 + 0.1 + 0.05"), std::string::npos) << text;
  EXPECT_NE(text.find("- **bias**: O(eta)"), std::string::npos);
  EXPECT_NE(text.find("- **statistical**: Student-t"), std::string::npos);
}

TEST(Markdown, ReconstructedStatementsSaySo) {
  EXPECT_NE(to_markdown(one_claim_report(checks::Outcome::fail)).find("**[reconstructed]**"), std::string::npos);
}

TEST(Markdown, MutantThatPassesIsFlaggedAsNotCaught) {
  const std::string text = to_markdown(one_claim_report(checks::Outcome::pass));
  EXPECT_NE(text.find("| `wrong` | a wrong constant | PASS | 0 | **no** |"), std::string::npos) << text;
  EXPECT_NE(text.find("| 0/1 |"), std::string::npos);
}

TEST(Markdown, MutantThatDropsAHypothesisMustFailOnlyAtItsDeclaredPoint) {
  // checks/mutant_points.hpp: the claim itself where the hypothesis holds; it must FAIL at its own point only (a claim
  // id of its own, so that the other tests' mutant stays of the default kind)
  Report report = one_claim_report(checks::Outcome::pass);
  report.claims.front().info.id = "fam.hypothesis_claim";
  checks::declare_hypothesis_mutant("fam.hypothesis_claim", "wrong", {{"d", 4}});
  report.claims.front().mutants.front().claim_id = "fam.hypothesis_claim";
  report.claims.front().mutants.front().budget = "ci";
  report.claims.front().mutants.front().params = {{"d", 16}};
  std::string text = to_markdown(report);
  EXPECT_NE(text.find("| `wrong` | a wrong constant | PASS | 0 | not here: it drops a hypothesis of the claim, so it is "
                      "the claim itself where the hypothesis holds; it FAILs beyond it, at d = 4 |"),
            std::string::npos)
      << text;
  report.claims.front().mutants.front().params = {{"d", 4}};
  text = to_markdown(report);
  EXPECT_NE(text.find("| `wrong` | a wrong constant | PASS | 0 | **no** |"), std::string::npos) << text;
}

TEST(Markdown, ClaimsAreGroupedIntoOneSectionPerFamilyInRegistrationOrder) {
  Report report = one_claim_report(checks::Outcome::fail);
  ClaimReport other = report.claims.front();
  other.info.id = "other.claim";
  other.info.family = "other";
  other.info.paper = "Another paper";
  report.claims.push_back(other);
  ClaimReport second = report.claims.front();
  second.info.id = "fam.second_claim";
  report.claims.push_back(second);
  const std::string text = to_markdown(report);
  const auto fam = text.find("## Family `fam`: A paper\n\n2 of 2 claims pass; 2 of 2 mutants caught.");
  const auto other_family = text.find("## Family `other`: Another paper");
  ASSERT_NE(fam, std::string::npos) << text;
  ASSERT_NE(other_family, std::string::npos) << text;
  EXPECT_LT(fam, text.find("### fam.some_claim"));
  EXPECT_LT(text.find("### fam.second_claim"), other_family);
  EXPECT_LT(other_family, text.find("### other.claim"));
}

TEST(Markdown, FamilyDescriptionGivesPaperSpecAndWhatIsNotChecked) {
  Report report = one_claim_report(checks::Outcome::fail);
  report.families.push_back({"fam", "Full citation of the paper", "specs/fam.md", {"Not checked: claim 10, no data."}});
  const std::string text = to_markdown(report);
  EXPECT_NE(text.find("## Family `fam`: Full citation of the paper\n\nSpec: specs/fam.md.\n\n1 of 1 claims pass; 1 of 1 "
                      "mutants caught.\n\n- Not checked: claim 10, no data.\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace dyncheck::reports
