#include "operator/collect/exposition.h"

#include <gtest/gtest.h>

namespace bsw::collect {
namespace {

TEST(FormatResource, WritesIntegersWithoutADecimalPoint) {
  EXPECT_EQ(FormatResource(3), "3");
  EXPECT_EQ(FormatResource(0), "0");
  EXPECT_EQ(FormatResource(100000), "100000");
  EXPECT_EQ(FormatResource(0.5), "0.5");
  EXPECT_EQ(FormatResource(1.0 / 3), "0.3333333333333333");
}

TEST(EscapeLabelValue, EscapesBackslashQuoteAndNewline) {
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
}

TEST(RenderExposition, ServesEveryValueAndTheResourceCompleted) {
  std::map<SeriesKey, double> values = {{{"accuracy", 1}, 0.5}, {{"loss", 2.5}, 0.25}};
  EXPECT_EQ(RenderExposition("s\"1", "t1", values, 2.5),
            "# TYPE budgetsweep_trainer_objective gauge\n"
            "budgetsweep_trainer_objective{sweep=\"s\\\"1\",trial=\"t1\",metric=\"accuracy\","
            "resource=\"1\"} 0.5\n"
            "budgetsweep_trainer_objective{sweep=\"s\\\"1\",trial=\"t1\",metric=\"loss\","
            "resource=\"2.5\"} 0.25\n"
            "# TYPE budgetsweep_trainer_resource_completed gauge\n"
            "budgetsweep_trainer_resource_completed{sweep=\"s\\\"1\",trial=\"t1\"} 2.5\n");
}

}  // namespace
}  // namespace bsw::collect
