#include "dyncheck/reports/json.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace dyncheck::reports {
namespace {

TEST(Json, VerdictCarriesTheToleranceTermsAndTheirReasons) {
  checks::Verdict verdict;
  verdict.claim_id = "fam.c";
  verdict.comparisons.push_back(
      checks::compare("x", {1.0, 0.0, "exact"}, {1.0, 0.1, "Hoeffding"}, {0.2, "O(eta)"}, {1.0, "design"}));
  verdict.outcome = checks::combine(verdict.comparisons);
  const nlohmann::json json = to_json(verdict);
  EXPECT_EQ(json["outcome"], "PASS");
  EXPECT_DOUBLE_EQ(json["comparisons"][0]["tolerance"]["bias"]["value"].get<double>(), 0.2);
  EXPECT_EQ(json["comparisons"][0]["tolerance"]["statistical"]["reason"], "Hoeffding");
}

TEST(Json, NonFiniteNumbersBecomeStringsAndTheVerdictAnError) {
  checks::Verdict verdict;
  verdict.comparisons.push_back(checks::compare("x", {std::numeric_limits<double>::quiet_NaN(), 0.0, ""},
                                                {1.0, 0.1, ""}, {0.0, ""}, {1.0, ""}));
  verdict.outcome = checks::combine(verdict.comparisons);
  const nlohmann::json json = to_json(verdict);
  EXPECT_EQ(json["outcome"], "ERROR");
  EXPECT_EQ(json["comparisons"][0]["theory"], "NaN");
  EXPECT_NO_THROW((void)json.dump());
}

}  // namespace
}  // namespace dyncheck::reports
