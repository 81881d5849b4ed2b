#include "dyncheck/checks/registry.hpp"

#include <gtest/gtest.h>

#include <set>

namespace dyncheck::checks {
namespace {

TEST(BuiltinRegistry, EveryClaimHasAFamilyPrefixedIdMutantsAndValidDefaults) {
  const Registry& registry = builtin_registry();
  ASSERT_GE(registry.size(), 3u);
  std::set<std::string> ids;
  for (const Claim* claim : registry.all()) {
    const ClaimInfo& info = claim->info();
    EXPECT_TRUE(ids.insert(info.id).second) << info.id;
    EXPECT_EQ(info.id.rfind(info.family + ".", 0), 0u) << info.id;
    EXPECT_FALSE(info.mutants.empty()) << info.id;
    EXPECT_FALSE(info.statement.empty()) << info.id;
    for (const ParamSpec& spec : info.params) EXPECT_NO_THROW(spec.validate(spec.default_value)) << info.id << " " << spec.name;
  }
}

TEST(BuiltinRegistry, SelectsByIdOrFamilyAndRejectsUnknownNames) {
  const Registry& registry = builtin_registry();
  EXPECT_EQ(registry.select({"calib"}).size(), 3u);
  EXPECT_EQ(registry.select({"calib.balanced_factorisation_flow", "calib"}).size(), 3u);
  EXPECT_EQ(registry.select({"calib.balanced_factorisation_flow"}).size(), 1u);
  EXPECT_THROW(registry.select({"calib.nope"}), ParamError);
}

}  // namespace
}  // namespace dyncheck::checks
