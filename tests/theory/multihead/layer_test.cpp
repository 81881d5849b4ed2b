// Heads (theory/multihead/layer.hpp): cast to another scalar keeps every entry exactly (doubles are
// exact in 50 digits); validate refuses an empty or unmatched set of heads and heads that are not
// all d x d.

#include "dyncheck/theory/multihead/layer.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "dyncheck/theory/numeric/scalar.hpp"

namespace dyncheck::theory::multihead {
namespace {

Heads<double> two_heads() {
  Heads<double> heads;
  Matrix<double> a(2, 2), b(2, 2), c(2, 2), d(2, 2);
  a << 0.3, -0.7, 0.5, 0.2;
  b << -0.4, 0.1, 0.6, -0.8;
  c << 1.0, 0.5, -0.3, 0.8;
  d << 0.2, -1.1, 0.7, 0.4;
  heads.theta = {a, b};
  heads.w = {c, d};
  return heads;
}

TEST(MultiheadHeads, CastKeepsEveryEntryExactly) {
  const Heads<double> heads = two_heads();
  const Heads<mp50> wide = heads.cast<mp50>();
  ASSERT_EQ(wide.m(), 2);
  ASSERT_EQ(wide.d(), 2);
  for (int i = 0; i < 2; ++i) {
    for (Eigen::Index k = 0; k < 4; ++k) {
      EXPECT_EQ(wide.theta[static_cast<std::size_t>(i)].data()[k], mp50(heads.theta[static_cast<std::size_t>(i)].data()[k]));
      EXPECT_EQ(wide.w[static_cast<std::size_t>(i)].data()[k], mp50(heads.w[static_cast<std::size_t>(i)].data()[k]));
    }
  }
  // The sum of two doubles is exact in 50 digits; rounded once to double it is the correctly rounded
  // sum, which is what IEEE double addition gives.
  const Matrix<mp50> sum = wide.w_sum();
  const Matrix<double> expected = heads.w_sum();
  for (Eigen::Index k = 0; k < 4; ++k) EXPECT_EQ(to_double(sum.data()[k]), expected.data()[k]);
}

TEST(MultiheadHeads, ValidateRefusesEmptyUnmatchedAndNonSquareHeads) {
  EXPECT_NO_THROW(two_heads().validate());
  EXPECT_THROW(Heads<double>{}.validate(), std::invalid_argument);
  Heads<double> unmatched = two_heads();
  unmatched.w.pop_back();
  EXPECT_THROW(unmatched.validate(), std::invalid_argument);
  Heads<double> wrong_shape = two_heads();
  wrong_shape.w[1] = Matrix<double>::Zero(2, 3);
  EXPECT_THROW(wrong_shape.validate(), std::invalid_argument);
  Heads<double> wrong_d = two_heads();
  wrong_d.theta[1] = Matrix<double>::Zero(3, 3);
  EXPECT_THROW(wrong_d.validate(), std::invalid_argument);
}

}  // namespace
}  // namespace dyncheck::theory::multihead
