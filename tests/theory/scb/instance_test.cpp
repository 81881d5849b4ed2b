// validate (theory/scb/instance.hpp): a stationary instance passes, in double and in 50 digits, and
// each condition it checks is refused on its own, with its name in the message.

#include "dyncheck/theory/scb/instance.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>

#include "dyncheck/theory/numeric/scalar.hpp"
#include "test_instance.hpp"

namespace dyncheck::theory::scb {
namespace {

void expect_refused(const Instance<double>& inst, const std::string& fragment) {
  try {
    validate(inst);
    ADD_FAILURE() << "accepted; expected a refusal naming \"" << fragment << "\"";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ScbInstance, ValidateAcceptsAStationaryInstanceAndRefusesEachBrokenCondition) {
  EXPECT_NO_THROW(validate(test::random_instance<mp50>(4, 5, 2, 11)));
  const Instance<double> good = test::random_instance<double>(4, 5, 2, 11);
  EXPECT_NO_THROW(validate(good));
  const std::vector<std::pair<std::function<void(Instance<double>&)>, std::string>> breaks = {
      {[](Instance<double>& i) { i.P = Matrix<double>::Identity(1, 1); }, "P must be N x N with N >= 2"},
      {[](Instance<double>& i) { i.mu = Vector<double>::Constant(3, 1.0 / 3); }, "mu must have N entries"},
      {[](Instance<double>& i) { i.q = Matrix<double>::Constant(1, 4, 1.0); }, "q must be T x N with T >= 2"},
      {[](Instance<double>& i) { i.P(0, 0) = -i.P(0, 0); }, "P has a negative"},
      {[](Instance<double>& i) { i.q(0, 1) = -1; }, "q has a negative"},
      {[](Instance<double>& i) { i.mu[2] = 0; }, "mu must be > 0"},
      {[](Instance<double>& i) { i.P(0, 1) += 0.01; }, "column 1 of P does not sum to 1"},
      {[](Instance<double>& i) { i.q.col(3) *= 1.01; }, "column 3 of q does not sum to 1"},
      {[](Instance<double>& i) { i.mu *= 1.01; }, "mu does not sum to 1"},
      // a positive unit-sum mu that is not P's stationary law (P's columns still sum to 1)
      {[](Instance<double>& i) { i.mu = Vector<double>::Constant(4, 0.25); }, "mu is not stationary"},
  };
  for (const auto& [edit, fragment] : breaks) {
    Instance<double> broken = good;
    edit(broken);
    expect_refused(broken, fragment);
  }
}

}  // namespace
}  // namespace dyncheck::theory::scb
