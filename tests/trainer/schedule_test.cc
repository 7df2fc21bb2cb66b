#include "trainer-image/schedule.h"

#include <gtest/gtest.h>

namespace bsw::trainer {
namespace {

TEST(WarmupCosineSchedule, ReachesPeakAtWarmupEndAndFloorAtTheLastStep) {
  const WarmupCosineSchedule schedule(0.1, 0.05, 0.01, 1000);
  ASSERT_EQ(schedule.warmup_steps(), 50);
  EXPECT_DOUBLE_EQ(schedule.LearningRate(0), 0.1 / 50);
  EXPECT_DOUBLE_EQ(schedule.LearningRate(49), 0.1);
  EXPECT_DOUBLE_EQ(schedule.LearningRate(50), 0.1);
  EXPECT_NEAR(schedule.LearningRate(999), 0.001, 1e-15);
  const double midpoint = schedule.LearningRate(50 + 949 / 2);
  EXPECT_NEAR(midpoint, 0.001 + 0.099 * 0.5, 2e-4);
}

TEST(WarmupCosineSchedule, DecaysMonotonicallyAfterWarmup) {
  const WarmupCosineSchedule schedule(1.0, 0.1, 0.0, 200);
  for (int64_t s = 20; s + 1 < 200; ++s) {
    EXPECT_GE(schedule.LearningRate(s), schedule.LearningRate(s + 1)) << s;
  }
}

TEST(WarmupCosineSchedule, WithoutWarmupStartsAtThePeak) {
  const WarmupCosineSchedule schedule(0.5, 0.0, 0.0, 10);
  EXPECT_DOUBLE_EQ(schedule.LearningRate(0), 0.5);
  EXPECT_NEAR(schedule.LearningRate(9), 0.0, 1e-15);
}

TEST(LearningRateScaling, LinearScalingUsesTheEffectiveBatch) {
  EXPECT_DOUBLE_EQ(ScaledLearningRate(0.001, true, 64, 4, 128), 0.002);
  EXPECT_DOUBLE_EQ(ScaledLearningRate(0.001, false, 64, 4, 128), 0.001);
}

TEST(StepsPerEpoch, CountsARemainderAsOneMoreStep) {
  EXPECT_EQ(StepsPerEpoch(40, 4), 10);
  EXPECT_EQ(StepsPerEpoch(41, 4), 11);
  EXPECT_EQ(StepsPerEpoch(3, 1), 3);
}

}  // namespace
}  // namespace bsw::trainer
