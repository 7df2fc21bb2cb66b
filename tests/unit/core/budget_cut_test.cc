// spec.budget.gpuHours lowered below what is used and reserved: the running trials' deadlines
// shrink to what is left, each by the same share, and the sweep ends BudgetExhausted when nothing
// fits (decisions::ReservationFit, AdjustDeadline).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "operator/core/planner.h"
#include "tests/unit/core/simulated_sweep.h"

namespace bsw::testing {
namespace {

// Two trials launched under a one-hour budget (the table sweep), 60 s into their first segment,
// with no progress reported yet.
struct Running {
  SimulatedSweep harness;
  double used_device_seconds = 0;      // what the two segments ran so far
  double reserved_device_seconds = 0;  // what their deadlines still hold
};

Running TwoTrialsRunning(const PlannerOptions& options) {
  Running r{SimulatedSweep(ParseSweep(TableSweep()).value(), options)};
  r.harness.PassAndCarry();
  r.harness.Advance(60);
  for (const auto& [key, s] : r.harness.observed().segments) {
    r.used_device_seconds += r.harness.now() - *s.started_unix_seconds;
    r.reserved_device_seconds += s.deadline_unix_seconds - r.harness.now();
  }
  return r;
}

// The sweep of `running` resumed under a budget of `budget_device_seconds`, as the controller
// does after the edit: the same journal and observation, replayed under the edited spec.
SimulatedSweep ResumedWithBudget(Running& running, const PlannerOptions& options,
                                 double budget_device_seconds) {
  nlohmann::json edited = TableSweep();
  edited["spec"]["budget"]["gpuHours"] = budget_device_seconds / 3600;
  SimulatedSweep resumed(ParseSweep(edited).value(), options);
  for (const Event& e : running.harness.journal()) resumed.Journal(e);
  resumed.observed() = running.harness.observed();
  resumed.Advance(running.harness.now() - resumed.now());
  return resumed;
}

// What the running segments still reserve once the plan's deadline moves are carried out.
double ReservedAfter(SimulatedSweep& h, const Step& plan) {
  h.Carry(plan);
  double reserved = 0;
  for (const auto& [key, s] : h.observed().segments) {
    if (!s.finished_unix_seconds) reserved += s.deadline_unix_seconds - h.now();
  }
  return reserved;
}

class BudgetCut : public ::testing::TestWithParam<bool> {
 protected:
  PlannerOptions Options() const {
    PlannerOptions options;
    options.deadlines_only_shrink = GetParam();  // true: on Kubernetes
    return options;
  }
};

TEST_P(BudgetCut, BelowUsedAndReserved_ShrinksRunningDeadlinesToWhatIsLeft) {
  Running running = TwoTrialsRunning(Options());
  ASSERT_GT(running.reserved_device_seconds, 0);
  double budget = running.used_device_seconds + running.reserved_device_seconds / 2;
  SimulatedSweep h = ResumedWithBudget(running, Options(), budget);

  Step plan = h.Pass();

  EXPECT_EQ(CountActions<Launch>(plan), 0);
  EXPECT_EQ(CountActions<MoveDeadline>(plan), 2);
  EXPECT_EQ(CountEvents<event::DeadlineMoved>(plan), 2);
  EXPECT_LE(ReservedAfter(h, plan), budget - running.used_device_seconds + 1e-6);
  EXPECT_THAT(h.apply_failures(), ::testing::IsEmpty());
}

TEST_P(BudgetCut, BelowUsed_EndsTheRunningTrialsAndTheSweepBudgetExhausted) {
  Running running = TwoTrialsRunning(Options());
  SimulatedSweep h = ResumedWithBudget(running, Options(), running.used_device_seconds / 2);

  Step cut = h.Pass();
  // Each running segment is stopped, or its deadline brought to now: nothing is left to reserve.
  EXPECT_EQ(CountActions<Launch>(cut), 0);
  EXPECT_EQ(CountActions<Stop>(cut) + CountActions<MoveDeadline>(cut), 2);
  EXPECT_LE(ReservedAfter(h, cut), 1e-6);
  for (const auto& [key, s] : h.observed().segments) {
    if (!s.finished_unix_seconds)
      h.EndSegment(key.first, key.second, SegmentState::kFailed, 143, Reason::kDeadlineExceeded);
  }
  h.Advance(1);

  Step after = h.Pass();

  const auto* finished = FindEvent<event::SweepFinished>(after);
  ASSERT_NE(finished, nullptr) << "the sweep goes on after its budget was cut below what was used";
  EXPECT_EQ(finished->phase, SweepPhase::kBudgetExhausted);
  EXPECT_EQ(finished->reason, "BudgetExhausted");
  EXPECT_THAT(h.apply_failures(), ::testing::IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(DeadlinesOnlyShrink, BudgetCut, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& row) {
                           return row.param ? std::string("Kubernetes") : std::string("Local");
                         });

}  // namespace
}  // namespace bsw::testing
