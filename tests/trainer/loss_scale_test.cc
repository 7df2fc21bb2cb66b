#include "trainer-image/loss_scale.h"

#include <gtest/gtest.h>

namespace bsw::trainer {
namespace {

TEST(DynamicLossScale, SkipsAndHalvesOnNonFiniteGradients) {
  DynamicLossScale scale(1024.0, 3);
  EXPECT_FALSE(scale.Update(false));
  EXPECT_DOUBLE_EQ(scale.scale(), 512.0);
  EXPECT_TRUE(scale.Update(true));
  EXPECT_DOUBLE_EQ(scale.scale(), 512.0);
}

TEST(DynamicLossScale, DoublesAfterAGrowthIntervalOfFiniteSteps) {
  DynamicLossScale scale(8.0, 3);
  EXPECT_TRUE(scale.Update(true));
  EXPECT_TRUE(scale.Update(true));
  EXPECT_DOUBLE_EQ(scale.scale(), 8.0);
  EXPECT_TRUE(scale.Update(true));
  EXPECT_DOUBLE_EQ(scale.scale(), 16.0);
  EXPECT_FALSE(scale.Update(false));
  EXPECT_EQ(scale.finite_streak(), 0);
}

TEST(DynamicLossScale, NeverDropsBelowOne) {
  DynamicLossScale scale(2.0, 10);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(scale.Update(false));
  EXPECT_DOUBLE_EQ(scale.scale(), 1.0);
}

}  // namespace
}  // namespace bsw::trainer
