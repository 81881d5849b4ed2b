// Unit tests of checks/multihead/common.hpp: the cost refusal, the teacher draw, worst_entry.
#include "multihead/common.hpp"

#include <gtest/gtest.h>

namespace dyncheck::checks::multihead {
namespace {

TEST(MultiheadCommon, RefusesEnumerationsBeyondTheBudgetNamingK) {
  const Budget ci{BudgetLevel::ci}, smoke{BudgetLevel::smoke};
  EXPECT_NO_THROW(refuse_enumeration(ci, 3, 3, 2, 5, false));
  try {
    refuse_enumeration(smoke, 5, 4, 3, 5, false);
    FAIL() << "2^20 inputs at smoke must be refused";
  } catch (const ParamError& error) {
    EXPECT_EQ(error.parameter(), "k");
  }
  EXPECT_THROW(refuse_enumeration(Budget{BudgetLevel::full}, 9, 3, 1, 1, false), ParamError);  // k*d > 26
  // 50 digits cost ~175x double per op.
  EXPECT_GT(enumeration_seconds(3, 3, 2, 1, true), 100 * enumeration_seconds(3, 3, 2, 1, false));
}

TEST(MultiheadCommon, TeacherIsAPureFunctionOfSeedAndClaim) {
  RunContext a;
  a.seed = 11;
  a.claim_id = "multihead.x";
  RunContext b = a;
  const sim::multihead::Layer first = draw_teacher(a, 3, 2, 0.5, 2.0), second = draw_teacher(b, 3, 2, 0.5, 2.0);
  ASSERT_EQ(first.theta.size(), 2U);
  EXPECT_EQ(first.theta[1], second.theta[1]);
  EXPECT_EQ(first.w[0], second.w[0]);
  b.claim_id = "multihead.y";
  EXPECT_NE(draw_teacher(b, 3, 2, 0.5, 2.0).w[0], first.w[0]);
  const theory::multihead::Heads<theory::mp50> heads = to_heads<theory::mp50>(first);
  EXPECT_EQ(theory::to_double(heads.w[1](2, 1)), first.w[1](2, 1));
}

TEST(MultiheadCommon, WorstEntryIsTheLargestRatio) {
  Eigen::MatrixXd theory = Eigen::MatrixXd::Zero(2, 2), measured(2, 2), tolerance(2, 2);
  measured << 1, 2, 3, 4;
  tolerance << 1, 1, 10, 1;
  EXPECT_EQ(worst_entry(theory, measured, tolerance), 3);  // (1, 1): ratio 4
  const Comparison c = compare_matrices("m", theory, 0.0, "t", measured, 5.0, "r", {0.0, "none"}, {10.0, "ten"});
  EXPECT_EQ(c.measured, 4);
  EXPECT_EQ(c.outcome(), Outcome::pass);
}

}  // namespace
}  // namespace dyncheck::checks::multihead
