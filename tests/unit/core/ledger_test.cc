#include "operator/core/ledger.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <optional>
#include <vector>

namespace bsw {
namespace {

SegmentStatus Segment(int devices, std::optional<double> started, std::optional<double> finished,
                      double deadline) {
  SegmentStatus s;
  s.devices = devices;
  s.started_unix_seconds = started;
  s.finished_unix_seconds = finished;
  s.deadline_unix_seconds = deadline;
  s.state = !started ? SegmentState::kPending
                     : (finished ? SegmentState::kSucceeded : SegmentState::kRunning);
  return s;
}

TEST(Ledger, ChargesDevicesTimesBackendSecondsOfFinishedSegments) {
  Ledger ledger(1e6);
  ledger.Observe({Segment(2, 100, 250, 400), Segment(4, 1000, 1010, 2000)}, 5000);
  EXPECT_DOUBLE_EQ(ledger.used(), 2 * 150 + 4 * 10);
  EXPECT_DOUBLE_EQ(ledger.reserved(), 0);
}

TEST(Ledger, ChargesRunningSegmentsUpToNowAndReservesTheRestOfTheirDeadline) {
  Ledger ledger(1e6);
  ledger.Observe({Segment(2, 100, std::nullopt, 400)}, 150);
  EXPECT_DOUBLE_EQ(ledger.used(), 2 * 50);
  EXPECT_DOUBLE_EQ(ledger.reserved(), 2 * 250);
  EXPECT_DOUBLE_EQ(ledger.remaining(), 1e6 - 600);
}

TEST(Ledger, CountsACpuOnlySegmentAsOneDevice) {
  Ledger ledger(1e6);
  ledger.Observe({Segment(0, 0, 30, 60)}, 100);
  EXPECT_DOUBLE_EQ(ledger.used(), 30);
  EXPECT_EQ(ChargedDevices(0), 1);
  EXPECT_EQ(ChargedDevices(8), 8);
}

TEST(Ledger, PendingSegmentCostsNothingButHoldsItsReservation) {
  Ledger ledger(1e6);
  ledger.Observe({Segment(1, std::nullopt, std::nullopt, 700)}, 100);
  EXPECT_DOUBLE_EQ(ledger.used(), 0);
  EXPECT_DOUBLE_EQ(ledger.reserved(), 600);
}

TEST(Ledger, SegmentPastItsDeadlineReservesNothingMore) {
  Ledger ledger(1e6);
  ledger.Observe({Segment(1, 0, std::nullopt, 50)}, 80);
  EXPECT_DOUBLE_EQ(ledger.used(), 80);
  EXPECT_DOUBLE_EQ(ledger.reserved(), 0);
}

TEST(Ledger, ObserveRecomputesInsteadOfAccumulating) {
  Ledger ledger(1e6);
  std::vector<SegmentStatus> segments = {Segment(1, 0, 10, 100)};
  ledger.Observe(segments, 20);
  ledger.Observe(segments, 30);
  EXPECT_DOUBLE_EQ(ledger.used(), 10);
}

TEST(Ledger, AdmitsRequestThatExactlyFillsTheBudget) {
  Ledger ledger(1000);
  ledger.Observe({Segment(1, 0, 250, 300), Segment(1, 0, std::nullopt, 500)}, 250);
  ASSERT_DOUBLE_EQ(ledger.used() + ledger.reserved(), 750);
  EXPECT_EQ(ledger.Admit(250), std::nullopt);
  EXPECT_DOUBLE_EQ(ledger.reserved(), 500);
  EXPECT_DOUBLE_EQ(ledger.remaining(), 0);
}

TEST(Ledger, DeniesRequestAnEpsilonOverTheBudgetWithTheFigures) {
  Ledger ledger(1000);
  ledger.Observe({Segment(1, 0, 250, 300), Segment(1, 0, std::nullopt, 500)}, 250);
  std::optional<Denial> denial = ledger.Admit(250.001);
  ASSERT_TRUE(denial.has_value());
  EXPECT_EQ(denial->reason, Reason::kBudgetExhausted);
  EXPECT_DOUBLE_EQ(denial->requested_device_seconds, 250.001);
  EXPECT_DOUBLE_EQ(denial->remaining_device_seconds, 250);
  EXPECT_DOUBLE_EQ(ledger.reserved(), 250);  // a denial reserves nothing
}

TEST(Ledger, SeveralAdmissionsInOnePassCannotOvercommit) {
  Ledger ledger(100);
  EXPECT_EQ(ledger.Admit(60), std::nullopt);
  EXPECT_TRUE(ledger.Admit(60).has_value());
  EXPECT_EQ(ledger.Admit(40), std::nullopt);
  EXPECT_TRUE(ledger.Admit(1).has_value());
}

TEST(Ledger, ReleaseGivesBackReservationButNeverBelowZero) {
  Ledger ledger(100);
  ASSERT_EQ(ledger.Admit(60), std::nullopt);
  ledger.Release(20);
  EXPECT_DOUBLE_EQ(ledger.reserved(), 40);
  ledger.Release(1000);
  EXPECT_DOUBLE_EQ(ledger.reserved(), 0);
}

TEST(Denial, MessageSaysRequestedAndRemainingInGpuHours) {
  Denial d{Reason::kBudgetExhausted, 1800, 720};
  EXPECT_EQ(d.Message(), "requested 0.5000 GPU-hours, remaining 0.2000 GPU-hours");
}

// Issue 40 point 5: "BudgetExhausted (BudgetExhausted: BudgetExhausted: ...)". The sweep's own
// budget is the reason its events carry, so the message does not repeat it; a pool's limit is
// news, so the message names it.
TEST(Denial, MessageNamesAPoolsLimitButNotTheSweepsOwnBudget) {
  EXPECT_EQ((Denial{Reason::kPoolFairShare, 1800, 720}).Message(),
            "PoolFairShare: requested 0.5000 GPU-hours, remaining 0.2000 GPU-hours");
  EXPECT_EQ((Denial{Reason::kBudgetExhausted, 1800, 720}).Message().find("BudgetExhausted"),
            std::string::npos);
}

TEST(CostModel, IsUnknownUntilSomethingWasMeasured) {
  CostModel cost;
  EXPECT_EQ(cost.SecondsPerUnit(), std::nullopt);
  cost.Measure({3, 0});
  cost.Measure({0, 10});
  EXPECT_EQ(cost.SecondsPerUnit(), std::nullopt);
  EXPECT_EQ(cost.MarginalSecondsPerUnit(), std::nullopt);
}

TEST(CostModel, EstimatesWithTheSlowestOfTheRecentMeasurements) {
  CostModel cost;
  cost.Measure({3, 30});
  cost.Measure({2, 100});
  cost.Measure({4, 12});
  EXPECT_DOUBLE_EQ(*cost.SecondsPerUnit(), 50);
  for (int i = 0; i < 16; ++i) cost.Measure({2, 20});
  EXPECT_DOUBLE_EQ(*cost.SecondsPerUnit(), 10);  // the slow one aged out of the window
}

TEST(CostModel, TwoMeasurementsOfOneSegmentGiveThePaceWithoutTheStartUp) {
  CostModel cost;
  cost.Measure({1, 12});
  EXPECT_EQ(cost.MarginalSecondsPerUnit(), std::nullopt);
  cost.Measure({3, 16}, CostPoint{1, 12});  // 10 s of start-up, 2 s per unit
  EXPECT_DOUBLE_EQ(*cost.MarginalSecondsPerUnit(), 2);
  EXPECT_DOUBLE_EQ(*cost.SecondsPerUnit(), 12);
  cost.Measure({1, 14}, CostPoint{1, 12});  // the same length: no pace between them
  cost.Measure({2, 20}, CostPoint{1, 14});
  EXPECT_DOUBLE_EQ(*cost.MarginalSecondsPerUnit(), 6);  // the steepest recent one
}

TEST(FitLinearCost, CoversEveryMeasurementWithTheSteepestSlopeWithinASegment) {
  EXPECT_EQ(FitLinearCost({}), std::nullopt);
  EXPECT_EQ(FitLinearCost({{{1, 10}, {1, 12}}}), std::nullopt);
  std::optional<LinearCost> fit = FitLinearCost({{{1, 10}, {2, 11}, {6, 17}}});
  ASSERT_TRUE(fit.has_value());
  EXPECT_DOUBLE_EQ(fit->per_unit, 1.5);  // 2 -> 6 is steeper than 1 -> 2
  EXPECT_DOUBLE_EQ(fit->startup, 8.5);   // what 1 unit in 10 s needs at 1.5 s per unit
  for (CostPoint p : {CostPoint{1, 10}, CostPoint{2, 11}, CostPoint{6, 17}}) {
    EXPECT_GE(fit->Of(p.units), p.seconds);
  }
  // A longer segment that took less time (a faster machine) gives no negative pace.
  fit = FitLinearCost({{{1, 10}, {3, 8}}});
  ASSERT_TRUE(fit.has_value());
  EXPECT_DOUBLE_EQ(fit->per_unit, 0);
  EXPECT_DOUBLE_EQ(fit->startup, 10);
}

// Pause mode's segments report one rung value each. A first start (1 epoch in 2.52 s) and a
// resume (2 epochs in 2.66 s) start up differently, so the 0.14 s per epoch between them is no
// pace (a ROI run's trial took 0.6 s per epoch): no fit comes from different segments.
TEST(FitLinearCost, TakesNoPaceBetweenDifferentSegments) {
  EXPECT_EQ(FitLinearCost({{{1, 2.52}}, {{2, 2.66}}}), std::nullopt);
  // Their measurements still bound the start-up once one segment gives the pace.
  std::optional<LinearCost> fit = FitLinearCost({{{1, 2.52}}, {{2, 2.66}, {6, 5.06}}});
  ASSERT_TRUE(fit.has_value());
  EXPECT_DOUBLE_EQ(fit->per_unit, 0.6);
  EXPECT_DOUBLE_EQ(fit->startup, 1.92);
}

// Simulates a controller that admits segments, lets the backend run them (never past their
// deadline), ends some early and observes again: used + reserved never exceeds the budget.
RC_GTEST_PROP(Ledger, AdmissionsNeverCommitMoreThanTheBudget, ()) {
  const double budget = *rc::gen::inRange(100, 100000);
  const auto steps = *rc::gen::container<std::vector<std::tuple<int, int, int>>>(
      rc::gen::tuple(rc::gen::inRange(0, 3), rc::gen::inRange(1, 5000), rc::gen::inRange(0, 4)));
  Ledger ledger(budget);
  std::vector<SegmentStatus> segments;
  double now = 0;
  for (const auto& [op, amount, devices] : steps) {
    if (op == 0) {
      std::optional<Denial> denial = ledger.Admit(amount);
      if (denial) {
        RC_ASSERT(ledger.used() + ledger.reserved() + amount > budget);
        RC_ASSERT(denial->requested_device_seconds == amount);
      } else {
        int charged = ChargedDevices(devices);
        segments.push_back(Segment(devices, std::nullopt, std::nullopt,
                                   now + static_cast<double>(amount) / charged));
      }
    } else if (op == 1) {
      now += amount / 10.0;
      for (SegmentStatus& s : segments) {
        if (!s.started_unix_seconds && amount % 2 == 0) s.started_unix_seconds = now;
        // The backend (or the kubelet) ends every segment at its deadline.
        if (s.started_unix_seconds && !s.finished_unix_seconds && now >= s.deadline_unix_seconds) {
          s.finished_unix_seconds = s.deadline_unix_seconds;
        }
      }
    } else if (!segments.empty()) {
      SegmentStatus& s = segments[static_cast<size_t>(amount) % segments.size()];
      if (s.started_unix_seconds && !s.finished_unix_seconds) s.finished_unix_seconds = now;
    }
    if (op != 0) ledger.Observe(segments, now);
    RC_ASSERT(ledger.used() + ledger.reserved() <= budget * (1 + 1e-12));
    RC_ASSERT(ledger.remaining() >= 0);
  }
}

}  // namespace
}  // namespace bsw
