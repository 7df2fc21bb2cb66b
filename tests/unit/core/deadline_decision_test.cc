// Table tests of AdjustDeadline: a running segment's deadline follows what its next milestone
// needs, later only when the budget admits it, earlier only on the trial's own pace.
#include "operator/core/deadline_decision.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>

#include "tests/unit/core/simulated_sweep.h"

namespace bsw::decisions {
namespace {

struct DeadlineRow {
  std::string name;
  double seconds_to_deadline;       // from now
  std::optional<double> completed;  // the trainer's resource_completed
  double elapsed;                   // seconds since the segment started
  double reserved_elsewhere;        // device-seconds already reserved in the pass
  bool deadlines_only_shrink;
  std::optional<double> want_moved_by;  // the new deadline minus the old; nullopt: unchanged
  bool denied;
};

void PrintTo(const DeadlineRow& row, std::ostream* os) { *os << row.name; }

class AdjustDeadlineTable : public ::testing::TestWithParam<DeadlineRow> {};

// Trial 0 of the table sweep (rungs 1, 3, 9; grace 30 s) runs its first segment toward epoch 9.
TEST_P(AdjustDeadlineTable, MovesTheDeadlineAsTheNextMilestoneNeeds) {
  const DeadlineRow& row = GetParam();
  SweepModel model(ParseSweep(testing::TableSweep()).value());
  ASSERT_TRUE(model.Apply(event::TrialCreated{.at = 0, .trial = 0}).ok());
  event::SegmentLaunched launched{.at = 0, .trial = 0, .segment = 0};
  launched.until = 9;
  ASSERT_TRUE(model.Apply(launched).ok());
  const Trial& t = model.trial(0);
  const double now = 1000;
  SegmentStatus st;
  st.state = SegmentState::kRunning;
  st.started_unix_seconds = now - row.elapsed;
  st.deadline_unix_seconds = now + row.seconds_to_deadline;
  TrialMetrics metrics;
  metrics.resource_completed = row.completed;
  Observed observed;
  PlannerOptions options;
  options.deadlines_only_shrink = row.deadlines_only_shrink;
  PlanInput in{model, observed, now, options};
  Ledger ledger(3600);
  ASSERT_FALSE(ledger.Admit(row.reserved_elsewhere).has_value());

  Admitted a = AdjustDeadline(in, t, t.segments.back(), st, &metrics, ledger);
  EXPECT_EQ(a.part.denials.size(), row.denied ? 1u : 0u);
  if (!row.want_moved_by) {
    EXPECT_TRUE(a.part.events.empty());
    EXPECT_TRUE(a.part.actions.empty());
    EXPECT_DOUBLE_EQ(a.ledger.reserved(), ledger.reserved());
    return;
  }
  ASSERT_EQ(a.part.events.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<event::DeadlineMoved>(a.part.events[0]));
  ASSERT_EQ(a.part.actions.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<SetDeadline>(a.part.actions[0]));
  double moved = std::get<SetDeadline>(a.part.actions[0]).deadline - st.deadline_unix_seconds;
  EXPECT_NEAR(moved, *row.want_moved_by, 1e-9);
  EXPECT_NEAR(a.ledger.reserved() - ledger.reserved(), moved, 1e-9) << "one device";
}

// At 10 s per epoch after 1 epoch: the next milestone (3) needs 2 epochs, 20 s × 1.25 margin,
// plus 30 s grace and an 8 s lookahead (4 × the 2 s slack), from now: 63 s. An extension adds
// the lookahead again (71 s); a shrink leaves it as headroom (71 s).
INSTANTIATE_TEST_SUITE_P(
    Rows, AdjustDeadlineTable,
    ::testing::Values(
        DeadlineRow{"NothingMeasuredHolds", 500, std::nullopt, 5, 0, false, std::nullopt, false},
        DeadlineRow{"OwnPaceShortOfTheDeadlineExtendsIt", 40, 1, 10, 0, false, 71 - 40, false},
        DeadlineRow{"AnExtensionTheBudgetRefusesIsADenial", 40, 1, 10, 3600 - 20, false,
                    std::nullopt, true},
        DeadlineRow{"OwnPaceFarBelowTheDeadlineShrinksIt", 500, 1, 10, 1000, false, 71 - 500,
                    false},
        DeadlineRow{"CloseEnoughHolds", 75, 1, 10, 0, false, std::nullopt, false},
        DeadlineRow{"WhereDeadlinesOnlyShrinkNoExtension", 40, 1, 10, 0, true, std::nullopt,
                    false}),
    [](const ::testing::TestParamInfo<DeadlineRow>& row) { return row.param.name; });

// A ledger of `budget` device-seconds with one finished segment that used `used` and one running
// from now that holds `reserved`.
Ledger Account(double budget, double used, double reserved) {
  Ledger ledger(budget);
  SegmentStatus done;
  done.started_unix_seconds = 0;
  done.finished_unix_seconds = used;
  SegmentStatus running;
  running.started_unix_seconds = 1000;
  running.deadline_unix_seconds = 1000 + reserved;
  ledger.Observe({done, running}, 1000);
  return ledger;
}

TEST(ReservationFitTest, IsTheShareOfWhatIsReservedThatTheBudgetStillHolds) {
  PlannerOptions o;  // deadline slack 2 s
  EXPECT_EQ(ReservationFit(Account(1000, 400, 600), o), 1) << "exactly full";
  EXPECT_EQ(ReservationFit(Account(1000, 400, 300), o), 1) << "room left";
  EXPECT_EQ(ReservationFit(Account(1000, 400, 601.5), o), 1) << "over by less than the slack";
  EXPECT_DOUBLE_EQ(ReservationFit(Account(700, 400, 600), o), 0.5) << "cut to half of it";
  EXPECT_EQ(ReservationFit(Account(400, 400, 600), o), 0) << "cut to what was used";
  EXPECT_EQ(ReservationFit(Account(100, 400, 600), o), 0) << "cut below what was used";
  EXPECT_EQ(ReservationFit(Account(100, 400, 0), o), 1) << "nothing reserved to give back";
}

}  // namespace
}  // namespace bsw::decisions
