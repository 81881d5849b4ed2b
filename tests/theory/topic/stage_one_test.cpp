// Tests of theory/topic/stage_one.hpp: the spec's reference values (specs/topic.md §9 C1, C3), the
// closed forms against the direct solve, and values from an independent numpy/mpmath computation
// (reference_values.py in this folder; printed digits pasted here).

#include "dyncheck/theory/topic/stage_one.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <stdexcept>
#include <limits>

namespace dyncheck::theory::topic {
namespace {

TEST(TheoryTopicStageOne, ExcludedKeysInfiniteNReferenceValues) {
  const auto m = dirichlet_moments<double>(10, 0.1);
  const auto w = excluded_keys_closed_form<double>(10, 10, rho_topic(m, 10), 1e-3);
  EXPECT_NEAR(w.same, 0.0840909091, 1e-10);
  EXPECT_NEAR(w.diff, 7.57575758e-4, 1e-12);
  const auto s = subset_moments<double>(10, 3);
  const auto ws = excluded_keys_closed_form<double>(10, 10, rho_topic(s, 10), 1e-3);
  EXPECT_NEAR(ws.same, 0.0740393627, 1e-10);
  EXPECT_NEAR(ws.diff, 1.87441425e-3, 1e-11);
}

TEST(TheoryTopicStageOne, FiniteLengthEtaAndFormula) {
  const auto length = length_statistics<double>(100, 150, 0.15);
  EXPECT_NEAR(length.inverse_keys, 0.0095026, 5e-8);
  const auto m = dirichlet_moments<double>(10, 0.1);
  const auto w = excluded_keys_closed_form<double>(10, 10, rho_topic(m, 10), 1e-3, &length);
  EXPECT_NEAR(w.same, 0.0835017, 1e-7);
  EXPECT_NEAR(w.diff, 8.2305e-4, 1e-8);
}

TEST(TheoryTopicStageOne, ClosedFormsEqualTheDirectSolve) {
  for (const bool finite : {false, true}) {
    const auto length = length_statistics<mp50>(20, 30, mp50("0.2"));
    const auto m = subset_moments<mp50>(4, 2);
    const mp50 lambda("0.003");
    const auto eq = excluded_keys_equations<mp50>(4, 3, m, finite ? &length : nullptr);
    const auto summary = block_summary<mp50>(ridge_solution(eq, lambda), 4, 3);
    const auto closed = excluded_keys_closed_form<mp50>(4, 3, rho_topic(m, 3), lambda, finite ? &length : nullptr);
    EXPECT_LT(to_double(abs(summary.mean.same - closed.same)), 1e-40);
    EXPECT_LT(to_double(abs(summary.mean.diag - closed.diag)), 1e-40);
    EXPECT_LT(to_double(abs(summary.mean.diff - closed.diff)), 1e-40);
    EXPECT_LT(to_double(abs(summary.mean.mask)), 1e-40);
    EXPECT_LT(to_double(summary.spread), 1e-40);
  }
}

TEST(TheoryTopicStageOne, AllKeysReferenceValues) {
  const auto m = dirichlet_moments<double>(10, 0.1);
  const auto infinite = block_summary<double>(ridge_solution(all_keys_equations<double>(10, 10, m, 0.15, 0.1, 0.1), 1e-3), 10, 10);
  EXPECT_NEAR(infinite.mean.diag, 0.0859030, 1e-7);
  EXPECT_NEAR(infinite.mean.same, 0.0859030, 1e-7);
  EXPECT_NEAR(infinite.mean.diff, -0.0053200, 1e-7);
  EXPECT_NEAR(infinite.mean.mask, 0.0518493, 1e-7);
  const auto length = length_statistics<double>(100, 150, 0.15);
  const auto finite =
      block_summary<double>(ridge_solution(all_keys_equations<double>(10, 10, m, 0.15, 0.1, 0.1, &length), 1e-3), 10, 10);
  EXPECT_NEAR(finite.mean.diag, 0.0936498, 1e-7);
  EXPECT_NEAR(finite.mean.same, 0.0861728, 1e-7);
  EXPECT_NEAR(finite.mean.diff, -0.0039808, 1e-7);
  EXPECT_NEAR(finite.mean.mask, 0.0397075, 1e-7);
  const auto limit = all_keys_min_norm_closed_form<double>(10, 10, mask_fractions<double>(0.15, 0.1, 0.1));
  EXPECT_NEAR(limit.same, 0.1080202, 1e-7);
  EXPECT_NEAR(limit.diff, -0.0075867, 1e-7);
  EXPECT_NEAR(limit.mask, 0.0541908, 1e-7);
}

TEST(TheoryTopicStageOne, AllKeysMinimumNormIsTheSmallRidgeLimit) {
  const auto m = dirichlet_moments<mp50>(3, mp50("0.7"));
  const auto eq = all_keys_equations<mp50>(3, 2, m, mp50("0.3"), mp50("0.2"), mp50("0.15"));
  const mp50 lambda("1e-20");
  const auto at = block_summary<mp50>(ridge_solution(eq, lambda), 3, 2).mean;
  const auto half = block_summary<mp50>(ridge_solution(eq, lambda / 2), 3, 2).mean;
  const auto closed = all_keys_min_norm_closed_form<mp50>(3, 2, mask_fractions<mp50>(mp50("0.3"), mp50("0.2"), mp50("0.15")));
  // Richardson: 2 W(lambda/2) - W(lambda) = W(0) + O(lambda^2).
  EXPECT_LT(to_double(abs(2 * half.same - at.same - closed.same)), 1e-28);
  EXPECT_LT(to_double(abs(2 * half.diff - at.diff - closed.diff)), 1e-28);
  EXPECT_LT(to_double(abs(2 * half.mask - at.mask - closed.mask)), 1e-28);
}

TEST(TheoryTopicStageOne, BinomialPmfSumsToOneAndHasItsMean) {
  const auto pmf = binomial_pmf<double>(2000, 0.85);
  double total = 0, mean = 0;
  for (std::size_t k = 0; k < pmf.size(); ++k) {
    total += pmf[k];
    mean += static_cast<double>(k) * pmf[k];
  }
  EXPECT_NEAR(total, 1.0, 1e-13);
  EXPECT_NEAR(mean, 1700.0, 1e-9);
}

TEST(TheoryTopicStageOne, AllKeysWithoutOwnTokenLawIsIidKeys) {
  // own_token_law = false: the N positions are N iid keys of law nu, so S = E_w[1/N] diag(E nu) + E_w[(N-1)/N] E[nu nu^T]
  // and C = E[nu mu^T]: the finite-N equations with and without the own-token law differ only by the self term.
  const int T = 4, v = 3;
  const auto m = dirichlet_moments<double>(T, 0.3);
  const auto length = length_statistics<double>(20, 30, 0.2);
  const auto iid = all_keys_equations<double>(T, v, m, 0.2, 0.1, 0.1, &length, false);
  const auto infinite = all_keys_equations<double>(T, v, m, 0.2, 0.1, 0.1, nullptr);
  const int D = T * v + 1;
  const MaskFractions<double> f = mask_fractions(0.2, 0.1, 0.1);
  for (int i = 0; i < D; ++i) {
    const double E_nu = i < T * v ? (f.a + f.r) / (T * v) : f.q;
    for (int j = 0; j < D; ++j) {
      const double expected = length.inverse_N * (i == j ? E_nu : 0.0) + (1 - length.inverse_N) * infinite.S_matrix(i, j);
      EXPECT_NEAR(iid.S_matrix(i, j), expected, 1e-15) << i << "," << j;
    }
    for (int j = 0; j < T * v; ++j) EXPECT_NEAR(iid.C_matrix(i, j), infinite.C_matrix(i, j), 1e-15) << i << "," << j;
  }
}


TEST(TheoryTopicStageOne, CrossEntropySubsetContrastMatchesAnIndependentRoot) {
  // D* from mpmath (40 digits, findroot on the same F written independently; printed digits pasted here).
  struct Case {
    int T, v, tau;
    const char* lambda;
    const char* D;
  };
  for (const Case& c : {Case{10, 10, 3, "1e-2", "0.0129461664247229639645188413086"},
                        Case{10, 10, 3, "1e-3", "0.127956913438557999053052359273"},
                        Case{5, 3, 2, "0.05", "0.0819618736699741092315164716996"},
                        Case{12, 1, 1, "1e-4", "6.61343375637987984598513089481"}}) {
    const mp50 reference(c.D);
    const mp50 D50 = cross_entropy_subset_contrast<mp50>(c.T, c.v, c.tau, mp50(c.lambda), 200);
    EXPECT_LT(to_double(abs(D50 - reference) / reference), 1e-28) << c.T << " " << c.v << " " << c.tau;
    const double D = cross_entropy_subset_contrast<double>(c.T, c.v, c.tau, std::stod(c.lambda), 100);
    EXPECT_LT(std::abs(D - to_double(reference)), 8 * std::numeric_limits<double>::epsilon() * to_double(reference));
    // The block values: the contrast is D, the off-topic value negative, the minimum-norm split.
    const auto b = cross_entropy_subset_block_values<double>(c.T, c.v, D);
    EXPECT_NEAR(b.diag / c.v + (1 - 1.0 / c.v) * b.same - b.diff, D, 4 * std::numeric_limits<double>::epsilon() * D);
    EXPECT_LT(b.diff, 0.0);
    EXPECT_EQ(b.mask, 0.0);
  }
  EXPECT_THROW((void)cross_entropy_subset_contrast<double>(4, 2, 4, 0.1, 10), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::theory::topic
