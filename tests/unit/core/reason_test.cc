#include "operator/core/reason.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace bsw {
namespace {

TEST(Reason, EveryReasonParsesBackFromItsName) {
  for (int i = 0; i <= static_cast<int>(Reason::kNothingMeasured); ++i) {
    auto reason = static_cast<Reason>(i);
    EXPECT_EQ(ParseReason(ReasonName(reason)), reason) << ReasonName(reason);
  }
}

TEST(Reason, NamesAreTheJournalsWords) {
  EXPECT_STREQ(ReasonName(Reason::kNone), "");
  EXPECT_STREQ(ReasonName(Reason::kError), "Error");
  EXPECT_STREQ(ReasonName(Reason::kInterrupted), "Interrupted");
  EXPECT_STREQ(ReasonName(Reason::kRungCutoff), "RungCutoff");
  EXPECT_STREQ(ReasonName(Reason::kExitedShort), "ExitedShort");
  EXPECT_STREQ(ReasonName(Reason::kAllTrialsFailed), "AllTrialsFailed");
  EXPECT_EQ(ParseReason("OOMKilled"), std::nullopt);
}

TEST(Reason, OnlyErrorAndLostAreRetriedAndTheyDivergedAndExitedShortAreTrainerFailures) {
  for (int i = 0; i <= static_cast<int>(Reason::kNothingMeasured); ++i) {
    auto reason = static_cast<Reason>(i);
    bool retried = reason == Reason::kError || reason == Reason::kLost;
    EXPECT_EQ(Retryable(reason), retried) << ReasonName(reason);
    EXPECT_EQ(TrainerFailed(reason),
              retried || reason == Reason::kDiverged || reason == Reason::kExitedShort)
        << ReasonName(reason);
    EXPECT_EQ(Retryable(std::string(ReasonName(reason))), retried) << ReasonName(reason);
  }
  EXPECT_FALSE(Retryable(std::string("OOMKilled")));
  EXPECT_FALSE(TrainerFailed(std::string("OOMKilled")));
}

}  // namespace
}  // namespace bsw
