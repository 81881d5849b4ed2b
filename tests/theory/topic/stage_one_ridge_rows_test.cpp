// ridge_solution_rows (the first rows of the stage-1 ridge solution, what the all-keys claim solves)
// against the same rows of the full solve ridge_solution, and against the normal equations
// W* (S + lambda I) = C^T themselves, in 50 digits.

#include "dyncheck/theory/topic/stage_one.hpp"

#include <gtest/gtest.h>

namespace dyncheck::theory::topic {
namespace {

TEST(TheoryTopicStageOne, RidgeSolutionRowsAreTheFirstRowsOfTheFullSolve) {
  const auto length = length_statistics<mp50>(20, 30, mp50("0.2"));
  const auto m = subset_moments<mp50>(4, 2);
  const mp50 lambda("0.003");
  const auto eq = excluded_keys_equations<mp50>(4, 3, m, &length);
  const Matrix<mp50> full = ridge_solution(eq, lambda);
  for (const Eigen::Index rows : {Eigen::Index{1}, Eigen::Index{5}, full.rows()}) {
    const Matrix<mp50> top = ridge_solution_rows(eq, lambda, rows);
    ASSERT_EQ(top.rows(), rows);
    ASSERT_EQ(top.cols(), full.cols());
    EXPECT_LT(to_double((top - full.topRows(rows)).cwiseAbs().maxCoeff()), 1e-40) << rows;
    const Eigen::Index D = eq.S_matrix.rows();
    const Matrix<mp50> lhs = top * (eq.S_matrix + lambda * Matrix<mp50>::Identity(D, D));
    EXPECT_LT(to_double((lhs - eq.C_matrix.leftCols(rows).transpose()).cwiseAbs().maxCoeff()), 1e-40) << rows;
  }
}

}  // namespace
}  // namespace dyncheck::theory::topic
