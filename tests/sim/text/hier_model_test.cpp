// sim/text/hier_model.hpp: the Table 1 model in the libtorch plugin (skipped when the plugin is not built).
#include "dyncheck/sim/text/hier_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "dyncheck/sim/joma/hierarchy.hpp"
#include "dyncheck/sim/random/derive_stream.hpp"
#include "dyncheck/sim/text/transformer_lm.hpp"

namespace dyncheck::sim::text {
namespace {

struct Case {
  HierModelData data;
  HierModelConfig config;
};

Case small_case(std::int64_t steps) {
  Rng rng = derive_stream(3, "hier_model_test", 0);
  const auto h = joma::make_hierarchy({20, 12, {6, 8, 5}, {2, 2, 2}}, rng);
  Case c;
  for (const auto& t : h.tokens) c.data.class_tokens.insert(c.data.class_tokens.end(), t.begin(), t.end());
  c.config.vocabulary = 20;
  c.config.length = 12;
  c.config.classes = 5;
  c.config.layers = 2;
  c.config.d = 16;
  c.config.d_hidden = 32;
  c.config.learning_rate = 1e-2;
  c.config.steps = steps;
  c.config.batch = 16;
  c.config.checkpoints = {0, steps};
  c.data.labels = joma::sample_labels(h, static_cast<std::size_t>(steps * c.config.batch), rng);
  return c;
}

#define SKIP_WITHOUT_PLUGIN()                                       \
  if (const auto why = torch_unavailable()) GTEST_SKIP() << *why;

TEST(SimTextHierModel, LearnsTheClassesAndReportsPooledHiddensOfTheRightShape) {
  SKIP_WITHOUT_PLUGIN();
  const Case c = small_case(150);
  const auto runs = train_hier_models({c.data}, {c.config}, 1);
  ASSERT_EQ(runs.size(), 1U);
  const auto& points = runs[0].checkpoints;
  ASSERT_EQ(points.size(), 2U);
  EXPECT_EQ(points[0].step, 0);
  EXPECT_TRUE(std::isnan(points[0].train_loss));
  EXPECT_EQ(points[1].step, 150);
  EXPECT_LT(points[1].class_loss, points[0].class_loss);
  EXPECT_EQ(points[1].accuracy, 1.0);  // 5 fixed sequences, 150 Adam steps at lr 1e-2
  for (const auto& point : points) {
    ASSERT_EQ(point.pooled.size(), 2U);
    for (const auto& layer : point.pooled) {
      ASSERT_EQ(layer.size(), 5U * 32U);
      // max over positions of relu(...) is >= 0
      EXPECT_GE(*std::min_element(layer.begin(), layer.end()), 0.0F);
    }
  }
}

TEST(SimTextHierModel, ASeedGivesTheSameNumbersWhateverTheParallelism) {
  SKIP_WITHOUT_PLUGIN();
  Case a = small_case(20), b = small_case(20);
  b.config.seed = 2;
  const auto one = train_hier_models({a.data}, {a.config}, 1);
  const auto two = train_hier_models({b.data, a.data}, {b.config, a.config}, 2);
  EXPECT_EQ(one[0].checkpoints[1].class_loss, two[1].checkpoints[1].class_loss);
  EXPECT_EQ(one[0].checkpoints[1].pooled, two[1].checkpoints[1].pooled);
  EXPECT_NE(one[0].checkpoints[1].class_loss, two[0].checkpoints[1].class_loss);
}

TEST(SimTextHierModel, RefusesDataOutsideTheConfig) {
  SKIP_WITHOUT_PLUGIN();
  Case c = small_case(5);
  c.data.labels[3] = 5;  // classes = 5
  EXPECT_THROW(train_hier_models({c.data}, {c.config}, 1), std::invalid_argument);
  Case d = small_case(5);
  d.data.labels.pop_back();
  EXPECT_THROW(train_hier_models({d.data}, {d.config}, 1), std::invalid_argument);
}

// Run by ctest with DYNCHECK_TORCH_PLUGIN pointing nowhere (tests/sim/text/CMakeLists.txt).
TEST(SimTextHierModel, WithoutThePluginTheErrorNamesTheInstallCommand) {
  if (!torch_unavailable()) GTEST_SKIP() << "the plugin is available";
  const Case c = small_case(5);
  try {
    (void)train_hier_models({c.data}, {c.config}, 1);
    FAIL() << "no exception without the plugin";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("apt-get install -y libtorch-dev"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dyncheck::sim::text
