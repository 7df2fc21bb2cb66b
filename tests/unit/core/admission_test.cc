// Table tests of admission: launching a segment, the pause-mode finish reserve, filling free
// slots, and when the sweep is over.
#include "operator/core/admission.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>

#include "tests/unit/core/simulated_sweep.h"

namespace bsw::decisions {
namespace {

using ::testing::HasSubstr;
using testing::SimulatedSweep;

SweepSpec Spec(const std::function<void(nlohmann::json&)>& edit = testing::NoEdit) {
  nlohmann::json j = testing::TableSweep();
  edit(j);
  return ParseSweep(j).value();
}

TEST(Launch, ReservesTheRequestAndDeadlinesTheSegmentByIt) {
  SweepModel model(Spec());
  Observed observed;
  PlannerOptions options;
  PlanInput in{model, observed, 100, options};
  // Nothing measured yet: an equal share of what is left among the free slots.
  Admitted a = Launch(in, Ledger(3600), 0, 0, 0, 1, 2);
  ASSERT_EQ(a.part.events.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<event::SegmentLaunched>(a.part.events[0]));
  EXPECT_DOUBLE_EQ(std::get<event::SegmentLaunched>(a.part.events[0]).deadline, 100 + 1800);
  ASSERT_EQ(a.part.actions.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<StartSegment>(a.part.actions[0]));
  EXPECT_DOUBLE_EQ(std::get<StartSegment>(a.part.actions[0]).until, 1);
  EXPECT_EQ(a.part.occupied, 1);
  EXPECT_DOUBLE_EQ(a.ledger.reserved(), 1800);
  EXPECT_TRUE(a.part.denials.empty());
}

TEST(Launch, ARefusedLaunchIsOnlyItsDenial) {
  SweepModel model(Spec());
  Observed observed;
  PlannerOptions options;
  PlanInput in{model, observed, 100, options};
  Ledger spent(3600);
  ASSERT_FALSE(spent.Admit(3600).has_value());
  Admitted a = Launch(in, spent, 0, 0, 0, 1, 2);
  EXPECT_TRUE(a.part.events.empty());
  EXPECT_TRUE(a.part.actions.empty());
  EXPECT_EQ(a.part.occupied, 0);
  ASSERT_EQ(a.part.denials.size(), 1u);
  EXPECT_EQ(a.part.denials[0].reason, Reason::kBudgetExhausted);
  EXPECT_DOUBLE_EQ(a.ledger.reserved(), 3600);
}

struct FinishRow {
  std::string name;
  std::function<void(nlohmann::json&)> edit;
  int trials;  // created, all ended
  int occupied;
  bool denied;
  std::optional<SweepPhase> want;
};

void PrintTo(const FinishRow& row, std::ostream* os) { *os << row.name; }

class FinishOfTable : public ::testing::TestWithParam<FinishRow> {};

TEST_P(FinishOfTable, EndsTheSweepOnlyWhenNothingRunsAndNothingIsLeft) {
  const FinishRow& row = GetParam();
  SweepModel model(Spec(row.edit));
  for (int64_t i = 0; i < row.trials; ++i) {
    ASSERT_TRUE(model.Apply(event::TrialCreated{.at = 0, .trial = i}).ok());
  }
  std::vector<Denial> denials;
  if (row.denied) denials.push_back(Denial{Reason::kBudgetExhausted, 10, 5});
  std::optional<Finish> finish = FinishOf(model, row.occupied, denials);
  ASSERT_EQ(finish.has_value(), row.want.has_value());
  if (!finish) return;
  EXPECT_EQ(finish->phase, *row.want);
  event::SweepFinished e = finish->ToEvent(7);
  EXPECT_EQ(e.phase, *row.want);
  if (row.denied) {
    EXPECT_THAT(e.message, HasSubstr("requested"));
  }
}

void MaxTrialsTwo(nlohmann::json& j) { j["spec"]["maxTrials"] = 2; }

INSTANTIATE_TEST_SUITE_P(
    Rows, FinishOfTable,
    ::testing::Values(
        FinishRow{"ARunningTrialKeepsItGoing", MaxTrialsTwo, 2, 1, true, std::nullopt},
        FinishRow{"ADenialWithNothingRunningIsBudgetExhausted", testing::NoEdit, 3, 0, true,
                  SweepPhase::kBudgetExhausted},
        FinishRow{"TrialsLeftToCreateKeepItGoing", testing::NoEdit, 3, 0, false, std::nullopt},
        FinishRow{"EveryTrialCreatedAndEndedIsCompleted", MaxTrialsTwo, 2, 0, false,
                  SweepPhase::kCompleted}),
    [](const ::testing::TestParamInfo<FinishRow>& row) { return row.param.name; });

TEST(TooManyFailures, FailsTheSweepAtSpecMaxFailedTrials) {
  SweepModel model(Spec([](nlohmann::json& j) { j["spec"]["maxFailedTrials"] = 1; }));
  EXPECT_FALSE(TooManyFailures(model).has_value());
  ASSERT_TRUE(model.Apply(event::TrialCreated{.at = 0, .trial = 0}).ok());
  event::SegmentLaunched launched{.at = 0, .trial = 0, .segment = 0};
  launched.until = 9;
  ASSERT_TRUE(model.Apply(launched).ok());
  for (int segment = 0; segment < 2; ++segment) {
    if (segment > 0) {
      launched.segment = segment;
      ASSERT_TRUE(model.Apply(launched).ok());
    }
    event::SegmentEnded ended{.at = 0, .trial = 0, .segment = segment};
    ended.reason = "Error";
    ASSERT_TRUE(model.Apply(ended).ok());
  }
  ASSERT_EQ(model.count(TrialPhase::kFailed), 1);
  std::optional<Finish> finish = TooManyFailures(model);
  ASSERT_TRUE(finish.has_value());
  EXPECT_EQ(finish->phase, SweepPhase::kFailed);
  EXPECT_EQ(finish->reason, Reason::kTooManyFailedTrials);
  EXPECT_EQ(finish->message, "1 trials failed (spec.maxFailedTrials is 1)");
}

TEST(CanCreate, StopsAtMaxTrials) {
  SweepModel model(Spec(MaxTrialsTwo));
  EXPECT_TRUE(CanCreate(model, 1));
  EXPECT_FALSE(CanCreate(model, 2));
}

struct FillRow {
  std::string name;
  int occupied;
  bool denied;
  int created;
};

void PrintTo(const FillRow& row, std::ostream* os) { *os << row.name; }

class FillSlotsTable : public ::testing::TestWithParam<FillRow> {};

TEST_P(FillSlotsTable, CreatesTrialsForTheFreeSlotsUnlessTheBudgetRefusedThisPass) {
  const FillRow& row = GetParam();
  SweepModel model(Spec());
  Observed observed;
  PlannerOptions options;
  PlanInput in{model, observed, 100, options};
  Admitted a = FillSlots(in, Ledger(3600), row.occupied, row.denied);
  int created = 0;
  for (const Event& e : a.part.events) created += std::holds_alternative<event::TrialCreated>(e);
  EXPECT_EQ(created, row.created);
  EXPECT_EQ(a.part.occupied, row.created);
  EXPECT_EQ(static_cast<int>(a.part.actions.size()), row.created);
}

INSTANTIATE_TEST_SUITE_P(
    Rows, FillSlotsTable,
    ::testing::Values(FillRow{"TwoFreeSlotsGetTwoTrials", 0, false, 2},
                      FillRow{"OneFreeSlotGetsOne", 1, false, 1},
                      FillRow{"NoFreeSlotGetsNone", 2, false, 0},
                      FillRow{"ADenialEarlierInThePassCreatesNone", 0, true, 0}),
    [](const ::testing::TestParamInfo<FillRow>& row) { return row.param.name; });

// Pause mode, rungs 1, 3, 9: trials 0 and 1 reach rung 1 in 10 s (trial 1 the better) and pause;
// trial 2 takes a slot.
SimulatedSweep PausedAtRungOne() {
  SimulatedSweep h(Spec([](nlohmann::json& j) {
    j["spec"]["scheduler"]["mode"] = "pause";
    j["spec"]["maxTrials"] = 3;
  }));
  h.FirstTwoReportAtEpochOneAndExit(10, 0.5, 0.6);
  h.PassAndCarry();
  return h;
}

TEST(FinishReserveOf, KeepsWhatTakingTheLeaderToTheEndCosts) {
  SimulatedSweep h = PausedAtRungOne();
  PlannerOptions options;
  PlanInput in{h.model(), h.observed(), h.now(), options};
  std::optional<FinishReserve> reserve = FinishReserveOf(in, Ledger(3600));
  ASSERT_TRUE(reserve.has_value());
  EXPECT_EQ(reserve->trial, 1);
  EXPECT_EQ(reserve->rung, 0);
  EXPECT_GT(reserve->device_seconds, 0);
  // A budget that cannot cover it keeps nothing back.
  Ledger spent(3600);
  ASSERT_FALSE(spent.Admit(3600 - reserve->device_seconds / 2).has_value());
  EXPECT_FALSE(FinishReserveOf(in, spent).has_value());
}

}  // namespace
}  // namespace bsw::decisions
