#include "dyncheck/checks/params.hpp"

#include <gtest/gtest.h>

namespace dyncheck::checks {
namespace {

const std::vector<ParamSpec> specs = {
    {"d", 4, 1, 16, true, false, "dimension"},
    {"eta", 0.1, 0, 1, false, true, "step"},
};

std::string error_of(const std::vector<ParamOverride>& overrides) {
  try {
    (void)Params::resolve(specs, overrides);
  } catch (const ParamError& error) {
    return error.parameter() + ": " + error.what();
  }
  return "";
}

TEST(Params, DefaultsAndOverrides) {
  const Params params = Params::resolve(specs, {{"eta", "0.25"}});
  EXPECT_EQ(params.get_int("d"), 4);
  EXPECT_DOUBLE_EQ(params.get("eta"), 0.25);
}

TEST(Params, ErrorsNameTheParameterAndItsRange) {
  EXPECT_EQ(error_of({{"d", "0"}}), "d: parameter 'd' must be an integer in [1, 16] (dimension); got 0");
  EXPECT_EQ(error_of({{"d", "2.5"}}), "d: parameter 'd' must be an integer in [1, 16] (dimension); got 2.5");
  EXPECT_EQ(error_of({{"eta", "0"}}), "eta: parameter 'eta' must be a number in (0, 1] (step); got 0");
  EXPECT_EQ(error_of({{"eta", "nan"}}), "eta: parameter 'eta' must be a number in (0, 1] (step); got nan");
  EXPECT_EQ(error_of({{"eta", "1x"}}), "eta: parameter 'eta' must be a number in (0, 1]; got '1x', which is not a number");
  EXPECT_EQ(error_of({{"eta", "1"}}), "");
}

TEST(Params, OverrideSyntax) {
  EXPECT_EQ(parse_param_override("a=1"), (ParamOverride{"a", "1"}));
  EXPECT_THROW(parse_param_override("a"), ParamError);
  EXPECT_THROW(parse_param_override("=1"), ParamError);
}

}  // namespace
}  // namespace dyncheck::checks
