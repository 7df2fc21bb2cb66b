#include "operator/core/planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "tests/unit/core/simulated_sweep.h"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw {
namespace {

using nlohmann::json;
using testing::CountActions;
using testing::CountEvents;
using testing::FindCondition;
using testing::FindEvent;
using ::testing::HasSubstr;
using testing::NoEdit;
using testing::SimulatedSweep;
using testing::Situation;
using ::testing::StartsWith;

class PlannerTable : public ::testing::TestWithParam<testing::Situation> {};

TEST_P(PlannerTable, DecidesAsTheSituationRequires) {
  testing::RunSituation(testing::TableSweep(), GetParam());
}

// The name an action is for.
std::string NameOf(const Launch& a) { return a.spec.trial; }
std::string NameOf(const Stop& a) { return a.name; }
std::string NameOf(const MoveDeadline& a) { return a.name; }

// The action of kind `Kind` on trial `trial`, if the step has one.
template <class Kind>
const Kind* FindAction(const Step& step, int64_t trial) {
  for (const StepAction& action : step.actions) {
    const Kind* a = std::get_if<Kind>(&action);
    if (a != nullptr && NameOf(*a) == step.model->TrialName(trial)) return a;
  }
  return nullptr;
}
// The action points into the step: a temporary step would leave it dangling.
template <class Kind>
const Kind* FindAction(Step&& step, int64_t trial) = delete;

// Both first trials report the given values at every rung up to `resource` and, when it is the
// last rung, exit.
void RunBothTo(SimulatedSweep& h, double resource, double v0, double v1) {
  for (double r : {1.0, 3.0, 9.0}) {
    if (r > resource) break;
    h.Advance(10 * r);
    h.Report(0, r, v0 + r / 100);
    h.Report(1, r, v1 + r / 100);
    h.PassAndCarry();
  }
}

// Trials 0 and 1 reach rung 1 after `seconds_per_epoch`; trial 1, the worse, is cut there and
// trial 2 takes its slot. Returns trial 2's launch, which the caller checks for.
Step LaunchTrialTwoAfterRungOne(SimulatedSweep& h, double seconds_per_epoch) {
  h.PassAndCarry();
  h.Advance(seconds_per_epoch);
  h.Report(0, 1, 0.5);
  h.Report(1, 1, 0.4);
  h.PassAndCarry();  // trial 1 is cut at rung 1
  return h.PassAndCarry();
}

// Advances the clock by `seconds` and passes: the deadline the pass gave `trial`, if it moved one.
std::optional<double> DeadlineMovedAfter(SimulatedSweep& h, double seconds, int64_t trial) {
  h.Advance(seconds);
  const Step plan = h.PassAndCarry();
  const auto* move = FindAction<MoveDeadline>(plan, trial);
  return move ? std::optional<double>(move->deadline) : std::nullopt;
}

INSTANTIATE_TEST_SUITE_P(
    Reconcile, PlannerTable,
    ::testing::Values(
        Situation{"FirstPassStartsParallelismTrialsAndPublishesConditions", NoEdit,
                  [](SimulatedSweep& h) {
                    EXPECT_EQ(h.model().phase(), SweepPhase::kPending);
                    Step plan = h.Pass();
                    EXPECT_EQ(CountEvents<event::TrialCreated>(plan), 2);
                    ASSERT_EQ(CountActions<Launch>(plan), 2);
                    for (const StepAction& action : plan.actions) {
                      const Launch& a = std::get<Launch>(action);
                      EXPECT_EQ(a.spec.segment, 0);
                      EXPECT_DOUBLE_EQ(a.spec.until_resource, 9);  // stop mode runs to max
                      // Nothing is measured yet: each gets an equal share of the budget.
                      EXPECT_DOUBLE_EQ(a.spec.deadline_unix_seconds, h.now() + 1800);
                    }
                    EXPECT_TRUE(plan.denials.empty());
                    ASSERT_EQ(plan.conditions.size(), 4u);
                    EXPECT_EQ(FindCondition(plan, "Progressing")->status, "True");
                    EXPECT_EQ(FindCondition(plan, "TrialsScheduled")->status, "True");
                    EXPECT_EQ(FindCondition(plan, "BudgetAvailable")->status, "True");
                    EXPECT_EQ(FindCondition(plan, "MetricsAvailable")->status, "True");
                    EXPECT_EQ(h.model().phase(), SweepPhase::kRunning);
                    EXPECT_EQ(h.model().count(TrialPhase::kRunning), 2);
                    EXPECT_EQ(h.model().trial(1).params, h.model().search_space().ConfigAt(1));
                  }},
        Situation{"RungWithTooFewResultsContinuesTheFirstValueAndStopsAWorseSecond", NoEdit,
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.Advance(10);
                    h.Report(0, 1, 0.5);
                    Step plan = h.PassAndCarry();
                    EXPECT_EQ(CountActions<Stop>(plan), 0);
                    EXPECT_EQ(h.model().continued(0), 1);
                    h.Report(1, 1, 0.4);
                    plan = h.PassAndCarry();
                    const auto* stop = FindAction<Stop>(plan, 1);
                    ASSERT_NE(stop, nullptr);
                    EXPECT_EQ(stop->reason, "RungCutoff");
                    EXPECT_THAT(FindEvent<event::TrialStopped>(plan)->message,
                                HasSubstr("not in the top 1/3"));
                    EXPECT_EQ(FindAction<Stop>(plan, 0), nullptr);
                    h.Advance(1);
                    plan = h.PassAndCarry();
                    EXPECT_EQ(h.model().trial(1).phase, TrialPhase::kStopped);
                    EXPECT_EQ(h.model().trial(1).reason, "RungCutoff");
                    EXPECT_EQ(CountEvents<event::TrialCreated>(plan), 1);  // its slot refills
                  }},
        Situation{"SegmentWithoutProgressKeepsItsLaunchDeadlineUntilSigtermIsALookaheadAway",
                  NoEdit,
                  [](SimulatedSweep& h) {
                    Step plan = LaunchTrialTwoAfterRungOne(h, 10);
                    const auto* start = FindAction<Launch>(plan, 2);
                    ASSERT_NE(start, nullptr);
                    // To rung 1: 1 × 10 × 1.25 + 30 s of grace. SIGTERM comes at 12.5 s.
                    EXPECT_DOUBLE_EQ(start->spec.deadline_unix_seconds, h.now() + 42.5);
                    double launched = h.now();
                    EXPECT_EQ(DeadlineMovedAfter(h, 0.25, 2), std::nullopt);
                    // 5 s in, SIGTERM is 7.5 s away, within the lookahead (8 s): extended by
                    // the estimate plus two lookaheads.
                    EXPECT_EQ(DeadlineMovedAfter(h, 4.75, 2), launched + 5 + 12.5 + 30 + 16);
                  }},
        Situation{"ShortSegmentsGetALookaheadNoLongerThanTheirWork", NoEdit,
                  [](SimulatedSweep& h) {
                    Step plan = LaunchTrialTwoAfterRungOne(h, 1);
                    ASSERT_NE(FindAction<Launch>(plan, 2), nullptr);
                    double launched = h.now();
                    // SIGTERM comes 1.25 s after the launch, within the 1 s epoch's lookahead
                    // (the 2 s minimum, not 8 s): extended by the estimate plus 2 × 2 s.
                    EXPECT_EQ(DeadlineMovedAfter(h, 0.25, 2), launched + 0.25 + 1.25 + 30 + 4);
                  }},
        Situation{"AShrunkDeadlineKeepsHeadroomSoTheNextPassLeavesIt", NoEdit,
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();  // equal shares: 1800 s each
                    h.Advance(10);
                    h.Report(0, 1, 0.5);
                    Step plan = h.PassAndCarry();
                    const auto* shrink = FindAction<MoveDeadline>(plan, 0);
                    ASSERT_NE(shrink, nullptr);
                    // To rung 2 (epoch 3) at its own 10 s per epoch: 25 s, 30 s of grace, and
                    // a lookahead (8 s) twice.
                    EXPECT_DOUBLE_EQ(shrink->deadline, h.now() + 25 + 30 + 16);
                    EXPECT_EQ(DeadlineMovedAfter(h, 0.25, 0), std::nullopt);
                  }},
        Situation{"PastARungTheRestIsReservedAtThePaceSinceTheRungWithoutTheStartUp", NoEdit,
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.Advance(10);  // 10 s to epoch 1, most of it the trainer's start-up
                    h.Report(0, 1, 0.5);
                    h.PassAndCarry();  // to rung 2 at 10 s per epoch: now + 25 + 30 + 16
                    // Epoch 2 takes 2 s: the 1 epoch left to rung 2 needs 2 × 1.25 s, with 30 s
                    // of grace and a lookahead of one epoch at that pace (at least 2 s), twice.
                    // From the segment's start (6 s per epoch) it would keep 53.5 s.
                    h.observed().metrics[h.model().TrialName(0)].resource_completed = 2;
                    std::optional<double> moved = DeadlineMovedAfter(h, 2, 0);
                    ASSERT_TRUE(moved.has_value());
                    EXPECT_DOUBLE_EQ(*moved - h.now(), 2.5 + 30 + 4);
                  }},
        Situation{"AtARungTheRestIsReservedAtTheTrialsOwnPaceWithoutTheStartUp", NoEdit,
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.Advance(10);
                    h.Report(0, 1, 0.5);
                    h.PassAndCarry();
                    // Epoch 3 after 14 s: 8 s of start-up and 2 s per epoch. The 6 epochs to the
                    // end need 6 × 2 × 1.25 s; from the start (4.67 s per epoch) it would extend
                    // the deadline to now + 35 + 30 + 16.
                    h.Report(0, 3, 0.6);
                    std::optional<double> moved = DeadlineMovedAfter(h, 4, 0);
                    ASSERT_TRUE(moved.has_value());
                    EXPECT_DOUBLE_EQ(*moved - h.now(), 15 + 30 + 4);
                  }},
        Situation{"ResumedTrialReservesAtItsOwnPaceNotTheSlowestOfTheSweep",
                  [](json& j) {
                    j["spec"]["scheduler"]["mode"] = "pause";
                    j["spec"]["parallelism"] = 1;
                  },
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    // Trial 0 takes 30 s to epoch 1, trials 1 and 2 take 5 s; trial 1 is best.
                    const std::vector<double> seconds = {30, 5, 5}, values = {0.3, 0.9, 0.5};
                    Step plan;
                    for (size_t trial = 0; trial < 3; ++trial) {
                      h.Advance(seconds[trial]);
                      h.Report(static_cast<int64_t>(trial), 1, values[trial]);
                      h.Exit(static_cast<int64_t>(trial));
                      plan = h.PassAndCarry();
                    }
                    const auto* resume = FindAction<Launch>(plan, 1);
                    ASSERT_NE(resume, nullptr);
                    EXPECT_DOUBLE_EQ(resume->spec.until_resource, 3);
                    // 2 epochs at trial 1's own 5 s, with margin, and the grace period; at the
                    // sweep's slowest (30 s per epoch) it would ask 105 s.
                    EXPECT_DOUBLE_EQ(resume->spec.deadline_unix_seconds,
                                     h.now() + 2 * 5 * 1.25 + 30);
                  }},
        Situation{"StopNotYetCarriedOutIsReissuedWithoutAnotherEvent", NoEdit,
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.Advance(10);
                    h.Report(0, 1, 0.5);
                    h.Report(1, 1, 0.4);
                    Step plan = h.Pass();  // the stop is journaled, then the controller crashes
                    ASSERT_NE(FindAction<Stop>(plan, 1), nullptr);
                    h.Advance(1);
                    plan = h.Pass();
                    EXPECT_NE(FindAction<Stop>(plan, 1), nullptr);
                    EXPECT_EQ(CountEvents<event::TrialStopped>(plan), 0);
                  }},
        Situation{"MetricMissingWaitsUntilTheTimeoutThenStopsWithMetricsMissing", NoEdit,
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.Advance(5);
                    h.observed().metrics.erase(h.model().TrialName(0));
                    h.Report(1, 1, 0.4);
                    Step plan = h.PassAndCarry();
                    EXPECT_THAT(plan.unknown, ::testing::ElementsAre(h.model().TrialName(0)));
                    EXPECT_EQ(FindCondition(plan, "MetricsAvailable")->reason, "MetricsMissing");
                    EXPECT_EQ(CountActions<Stop>(plan), 0);
                    h.Advance(60);  // exactly the timeout: still waiting
                    plan = h.PassAndCarry();
                    EXPECT_EQ(CountActions<Stop>(plan), 0);
                    h.Advance(1);
                    plan = h.PassAndCarry();
                    const auto* stop = FindAction<Stop>(plan, 0);
                    ASSERT_NE(stop, nullptr);
                    EXPECT_EQ(stop->reason, "MetricsMissing");
                    EXPECT_EQ(FindAction<Stop>(plan, 1), nullptr);
                  }},
        Situation{"PassedRungWithoutItsValueIsUnknownNotAVerdict", NoEdit,
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.Advance(30);
                    h.observed().metrics[h.model().TrialName(0)].resource_completed = 3;
                    h.Report(1, 1, 0.4);
                    Step plan = h.PassAndCarry();
                    EXPECT_THAT(plan.unknown, ::testing::ElementsAre(h.model().TrialName(0)));
                    EXPECT_EQ(CountActions<Stop>(plan), 0);
                  }},
        Situation{"PendingTrialIsNeverStoppedForMissingMetrics", NoEdit,
                  [](SimulatedSweep& h) {
                    Step plan = h.Pass();
                    for (const StepAction& action : plan.actions) {
                      const Launch& a = std::get<Launch>(action);
                      SegmentStatus pending;
                      pending.trial = a.spec.trial;
                      pending.state = SegmentState::kPending;
                      pending.devices = 1;
                      pending.deadline_unix_seconds = a.spec.deadline_unix_seconds;
                      h.observed().segments[{pending.trial, 0}] = pending;
                    }
                    for (int i = 0; i < 10; ++i) {
                      h.Advance(60);
                      plan = h.Pass();
                      EXPECT_TRUE(plan.unknown.empty());
                      EXPECT_EQ(CountActions<Stop>(plan), 0);
                    }
                  }},
        Situation{"FailedTrialIsRetriedOnceAsSegmentOneThenFails",
                  [](json& j) { j["spec"]["parallelism"] = 1; },
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.Advance(12);
                    h.Report(0, 1, 0.5);
                    h.Exit(0, 1);
                    Step plan = h.PassAndCarry();
                    EXPECT_EQ(FindEvent<event::SegmentEnded>(plan)->reason, "Error");
                    // The retry keeps its slot: no new trial takes it.
                    EXPECT_EQ(CountEvents<event::TrialCreated>(plan), 0);
                    EXPECT_EQ(h.model().trial(0).phase, TrialPhase::kRunning);
                    h.Advance(1);
                    plan = h.PassAndCarry();
                    const auto* retry = FindAction<Launch>(plan, 0);
                    ASSERT_NE(retry, nullptr);
                    EXPECT_EQ(retry->spec.segment, 1);
                    EXPECT_DOUBLE_EQ(FindEvent<event::SegmentLaunched>(plan)->from, 1);
                    EXPECT_EQ(CountEvents<event::TrialCreated>(plan), 0);
                    h.Advance(5);
                    h.Exit(0, 1);
                    plan = h.PassAndCarry();
                    EXPECT_EQ(h.model().trial(0).phase, TrialPhase::kFailed);
                    EXPECT_EQ(h.model().count(TrialPhase::kFailed), 1);
                    EXPECT_EQ(h.model().trial(0).failures, 2);
                  }},
        Situation{"APodTheNodeRefusedIsLaunchedAgainWithoutCountingAFailure",
                  [](json& j) { j["spec"]["trial"]["maxRetries"] = 0; },
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.End(0, 0, SegmentState::kFailed, 0, Reason::kEvicted);
                    Step plan = h.PassAndCarry();
                    EXPECT_EQ(FindEvent<event::SegmentEnded>(plan)->reason, "Interrupted");
                    EXPECT_EQ(h.model().trial(0).phase, TrialPhase::kRunning);
                    EXPECT_EQ(h.model().trial(0).failures, 0);
                    plan = h.PassAndCarry();
                    const auto* again = FindAction<Launch>(plan, 0);
                    ASSERT_NE(again, nullptr) << "relaunched though maxRetries is 0";
                    EXPECT_EQ(again->spec.segment, 1);
                  }},
        Situation{"DivergedTrainerEndsItsTrialAsDiverged", NoEdit,
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.Advance(5);
                    h.Exit(0, 3);
                    Step plan = h.PassAndCarry();
                    EXPECT_EQ(FindEvent<event::SegmentEnded>(plan)->reason, "Diverged");
                    EXPECT_EQ(h.model().trial(0).phase, TrialPhase::kStopped);
                  }},
        Situation{
            "TooManyFailedTrialsFailTheSweepAndStopTheRest",
            [](json& j) {
              j["spec"]["maxFailedTrials"] = 1;
              j["spec"]["trial"]["maxRetries"] = 0;
            },
            [](SimulatedSweep& h) {
              h.PassAndCarry();
              h.Advance(5);
              h.Exit(0, 1);
              h.PassAndCarry();
              EXPECT_EQ(h.model().count(TrialPhase::kFailed), 1);
              Step plan = h.PassAndCarry();
              const auto* finished = FindEvent<event::SweepFinished>(plan);
              ASSERT_NE(finished, nullptr);
              EXPECT_EQ(finished->reason, "TooManyFailedTrials");
              EXPECT_EQ(h.model().phase(), SweepPhase::kFailed);
              EXPECT_NE(FindAction<Stop>(plan, 1), nullptr);
              EXPECT_EQ(CountActions<Launch>(plan), 0);
              EXPECT_EQ(FindCondition(plan, "Progressing")->reason, "Failed");
              EXPECT_THAT(FindCondition(plan, "Progressing")->message, HasSubstr("1 trials failed"))
                  << "the finish's message, not the stop decided after it";
              // The stopped trial's end is recorded, with its charge, once it shows.
              h.Advance(1);
              plan = h.PassAndCarry();
              const auto* ended = FindEvent<event::SegmentEnded>(plan);
              ASSERT_NE(ended, nullptr);
              EXPECT_EQ(ended->trial, 1);
              EXPECT_EQ(ended->reason, "Stopped");
              EXPECT_GT(ended->finished, ended->started);
              EXPECT_EQ(h.model().trial(1).phase, TrialPhase::kStopped);
              EXPECT_EQ(h.model().count(TrialPhase::kRunning), 0);
              EXPECT_TRUE(h.PassAndCarry().events.empty()) << "nothing left to decide";
            }},
        Situation{"AFinishedSweepStopsATrialWaitingForItsRetry",
                  [](json& j) { j["spec"]["maxFailedTrials"] = 1; },
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.Advance(5);
                    h.Exit(0, 1);
                    h.PassAndCarry();
                    h.PassAndCarry();  // trial 0's retry, segment 1
                    h.Advance(5);
                    h.Exit(0, 1);  // for good
                    h.Exit(1, 1);  // its first failure: a retry is left
                    h.PassAndCarry();
                    ASSERT_EQ(h.model().trial(0).phase, TrialPhase::kFailed);
                    ASSERT_EQ(h.model().trial(1).phase, TrialPhase::kRunning);
                    Step plan = h.PassAndCarry();
                    EXPECT_EQ(h.model().phase(), SweepPhase::kFailed);
                    EXPECT_EQ(CountActions<Launch>(plan), 0) << "no retry";
                    EXPECT_EQ(h.model().trial(1).phase, TrialPhase::kStopped);
                    EXPECT_EQ(h.model().trial(1).reason, "SweepFinished");
                    // Trial 2 took trial 0's slot; it is stopped, and its end recorded next pass.
                    EXPECT_NE(FindAction<Stop>(plan, 2), nullptr);
                    h.Advance(1);
                    h.PassAndCarry();
                    EXPECT_EQ(h.model().count(TrialPhase::kRunning), 0)
                        << "no trial is counted running once the sweep has ended";
                  }},
        Situation{"APodThatCannotBeScheduledSaysWhyInACondition", NoEdit,
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    for (int64_t trial : {0, 1}) {
                      SegmentStatus& s = h.observed().segments.at({h.model().TrialName(trial), 0});
                      s.state = SegmentState::kPending;
                      s.started_unix_seconds.reset();
                      s.waiting_reason = "Unschedulable";
                      s.waiting_message = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.";
                    }
                    Step plan = h.PassAndCarry();
                    const Condition* scheduled = FindCondition(plan, "TrialsScheduled");
                    ASSERT_NE(scheduled, nullptr);
                    EXPECT_EQ(scheduled->status, "False");
                    EXPECT_EQ(scheduled->reason, "Unschedulable");
                    EXPECT_EQ(scheduled->message,
                              h.model().TrialName(0) +
                                  ": 0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
                                  "(and 1 more held up)");
                    EXPECT_EQ(CountActions<Stop>(plan), 0)
                        << "a pending trial costs nothing and is not given up on";
                  }},
        Situation{"AFailedTrainersLastLinesAreRecordedWithItsEnd",
                  [](json& j) { j["spec"]["trial"]["maxRetries"] = 0; },
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.Advance(5);
                    h.Exit(0, 2);
                    h.observed().segments.at({h.model().TrialName(0), 0}).output_tail =
                        "loading\nerror: --dataset: no such file";
                    h.Exit(1, 3);  // diverged, with nothing written
                    Step plan = h.PassAndCarry();
                    ASSERT_EQ(CountEvents<event::SegmentEnded>(plan), 2);
                    const auto& error = std::get<event::SegmentEnded>(plan.events[0]);
                    const auto& diverged = std::get<event::SegmentEnded>(plan.events[1]);
                    EXPECT_EQ(error.reason, "Error");
                    EXPECT_EQ(error.output, "loading\nerror: --dataset: no such file");
                    EXPECT_EQ(diverged.reason, "Diverged");
                    EXPECT_EQ(diverged.output, "");
                    StatusOr<Event> read =
                        EventFromJson(json::parse(EventToJson(plan.events[0]).dump()));
                    ASSERT_TRUE(read.ok());
                    EXPECT_EQ(std::get<event::SegmentEnded>(*read).output, error.output)
                        << "journaled with the event";
                    EXPECT_FALSE(EventToJson(plan.events[1]).contains("output"));
                    ASSERT_EQ(h.model().recent_failures().size(), 2u);
                    const FailureRecord& first = h.model().recent_failures().front();
                    EXPECT_EQ(first.trial, 0);
                    EXPECT_EQ(first.message, "exited with code 2");
                    EXPECT_EQ(first.output, "loading\nerror: --dataset: no such file");
                    EXPECT_EQ(h.model().recent_failures().back().reason, "Diverged");
                  }},
        Situation{"MaxTrialsReachedCompletesTheSweepWithTheBest",
                  [](json& j) { j["spec"]["maxTrials"] = 2; },
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    RunBothTo(h, 9, 0.5, 0.7);
                    h.Exit(0);
                    h.Exit(1);
                    Step plan = h.PassAndCarry();
                    const auto* finished = FindEvent<event::SweepFinished>(plan);
                    ASSERT_NE(finished, nullptr);
                    EXPECT_EQ(finished->phase, SweepPhase::kCompleted);
                    EXPECT_EQ(h.model().phase(), SweepPhase::kCompleted);
                    EXPECT_EQ(h.model().count(TrialPhase::kCompleted), 2);
                    ASSERT_TRUE(h.model().best().has_value());
                    EXPECT_EQ(h.model().best()->trial, 1);
                    EXPECT_DOUBLE_EQ(h.model().best()->resource, 9);
                    EXPECT_EQ(FindCondition(plan, "Progressing")->status, "False");
                  }},
        Situation{"BudgetNearlySpentDeniesNewWorkWhileATrialStillRuns",
                  [](json& j) { j["spec"]["budget"]["gpuHours"] = 0.01; },  // 36 GPU-seconds
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.Advance(10);
                    h.Report(0, 1, 0.5);
                    h.Report(1, 1, 0.4);
                    h.PassAndCarry();  // trial 1 is cut at rung 1
                    h.Advance(1);
                    Step plan = h.PassAndCarry();
                    ASSERT_FALSE(plan.denials.empty());
                    const Denial& d = plan.denials.front();
                    EXPECT_EQ(d.reason, Reason::kBudgetExhausted);
                    EXPECT_GT(d.requested_device_seconds, d.remaining_device_seconds);
                    EXPECT_EQ(CountEvents<event::TrialCreated>(plan), 0);
                    EXPECT_EQ(CountEvents<event::SweepFinished>(plan), 0);
                    EXPECT_EQ(FindCondition(plan, "BudgetAvailable")->status, "False");
                    EXPECT_EQ(FindCondition(plan, "Progressing")->status, "True");
                  }},
        Situation{"BudgetNearlySpentExhaustsTheSweepOnceNothingRuns",
                  [](json& j) { j["spec"]["budget"]["gpuHours"] = 0.01; },
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.Advance(10);
                    h.Report(0, 1, 0.5);
                    h.Report(1, 1, 0.4);
                    h.PassAndCarry();
                    h.Advance(10);  // trial 0 reaches its 18 s share: the backend ends it
                    h.End(0, 0, SegmentState::kFailed, 137, Reason::kDeadlineExceeded);
                    Step plan = h.PassAndCarry();
                    const auto* finished = FindEvent<event::SweepFinished>(plan);
                    ASSERT_NE(finished, nullptr);
                    EXPECT_EQ(finished->phase, SweepPhase::kBudgetExhausted);
                    EXPECT_THAT(finished->message, StartsWith("requested "));
                    EXPECT_EQ(h.model().phase(), SweepPhase::kBudgetExhausted);
                    EXPECT_EQ(h.model().trial(0).reason, "DeadlineExceeded");
                    EXPECT_EQ(FindCondition(plan, "Progressing")->reason, "BudgetExhausted");
                  }},
        Situation{"UnmeasuredShareBelowTheGracePeriodIsRaisedOrDeniedNotStartedToBeKilled",
                  [](json& j) {
                    j["spec"]["budget"]["gpuHours"] = 0.01;  // 36 GPU-seconds, 18 per slot
                    j["spec"]["trial"]["template"]["spec"]["terminationGracePeriodSeconds"] = 30;
                  },
                  [](SimulatedSweep& h) {
                    // The supervisor sends SIGTERM 30 s before the deadline: an 18 s share would
                    // stop each trial as it starts. The first trial gets 30 + 5 s; the second
                    // does not fit in what is left.
                    Step plan = h.Pass();
                    ASSERT_EQ(CountActions<Launch>(plan), 1);
                    EXPECT_DOUBLE_EQ(
                        std::get<Launch>(plan.actions.front()).spec.deadline_unix_seconds,
                        h.now() + 35);
                    ASSERT_EQ(plan.denials.size(), 1u);
                    EXPECT_DOUBLE_EQ(plan.denials.front().requested_device_seconds, 35);
                  }},
        Situation{"SpecChangedToALowerBudgetExhaustsTheReplayedSweep", NoEdit,
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    RunBothTo(h, 3, 0.5, 0.7);
                    h.Advance(60);
                    h.Exit(0);
                    h.Exit(1);
                    // The same journal and backend state under a spec whose budget is now spent.
                    SweepSpec lower = h.spec();
                    lower.budget_gpu_hours = 0.05;
                    SimulatedSweep replay(lower);
                    for (const Event& e : h.journal()) replay.Journal(e);
                    replay.observed() = h.observed();
                    replay.Advance(h.now() - replay.now());
                    EXPECT_EQ(replay.model().trial_count(), 2);
                    Step plan = replay.PassAndCarry();
                    EXPECT_EQ(CountActions<Launch>(plan), 0);
                    ASSERT_FALSE(plan.denials.empty());
                    EXPECT_DOUBLE_EQ(plan.denials.front().remaining_device_seconds, 0);
                    EXPECT_EQ(replay.model().phase(), SweepPhase::kBudgetExhausted);
                    // Under the original budget the same state starts new trials.
                    EXPECT_EQ(CountActions<Launch>(h.PassAndCarry()), 2);
                  }},
        Situation{"CrashAfterJournalingReissuesTheStartWithoutANewTrial", NoEdit,
                  [](SimulatedSweep& h) {
                    Step first = h.Pass();  // journaled, then the controller died: no Carry
                    h.Advance(3);
                    Step plan = h.Pass();
                    EXPECT_TRUE(plan.events.empty());
                    ASSERT_EQ(CountActions<Launch>(plan), 2);
                    for (size_t i = 0; i < 2; ++i) {
                      const Launch& again = std::get<Launch>(plan.actions[i]);
                      const Launch& journaled = std::get<Launch>(first.actions[i]);
                      EXPECT_EQ(again.spec.trial, journaled.spec.trial);
                      EXPECT_EQ(again.spec.segment, journaled.spec.segment);
                      EXPECT_DOUBLE_EQ(again.spec.deadline_unix_seconds,
                                       journaled.spec.deadline_unix_seconds);
                    }
                    EXPECT_EQ(h.model().trial_count(), 2);
                  }},
        Situation{"PauseModeRungWithTooFewResultsStartsNewTrialsInsteadOfPromoting",
                  [](json& j) { j["spec"]["scheduler"]["mode"] = "pause"; },
                  [](SimulatedSweep& h) {
                    Step plan = h.PassAndCarry();
                    EXPECT_DOUBLE_EQ(std::get<Launch>(plan.actions[0]).spec.until_resource,
                                     1);  // pause mode runs to a milestone
                    h.Advance(10);
                    h.Report(0, 1, 0.5);
                    h.Report(1, 1, 0.9);
                    h.Exit(0);
                    h.Exit(1);
                    plan = h.PassAndCarry();
                    EXPECT_EQ(CountEvents<event::TrialPromoted>(plan), 0);
                    EXPECT_EQ(CountEvents<event::TrialCreated>(plan), 2);
                    EXPECT_EQ(h.model().count(TrialPhase::kPaused), 2);
                  }},
        Situation{
            "PauseModeResumesTheBestPausedTrialBeforeStartingNewOnes",
            [](json& j) {
              j["spec"]["scheduler"]["mode"] = "pause";
              j["spec"]["parallelism"] = 1;
            },
            [](SimulatedSweep& h) {
              h.PassAndCarry();
              for (int64_t trial = 0; trial < 3; ++trial) {
                h.Advance(10);
                h.Report(trial, 1, std::vector<double>{0.3, 0.9, 0.5}[static_cast<size_t>(trial)]);
                h.Exit(trial);
                h.PassAndCarry();
              }
              // The third pass ended trial 2 and, with 3 values at rung 1, promoted the best.
              const std::vector<Event>& journal = h.journal();
              auto promoted = std::find_if(journal.begin(), journal.end(), [](const Event& e) {
                return std::holds_alternative<event::TrialPromoted>(e);
              });
              ASSERT_NE(promoted, journal.end());
              EXPECT_EQ(std::get<event::TrialPromoted>(*promoted).trial, 1);
              EXPECT_EQ(std::get<event::TrialPromoted>(*promoted).rung, 0);
              ASSERT_TRUE(std::holds_alternative<event::SegmentLaunched>(*(promoted + 1)));
              const auto& launch = std::get<event::SegmentLaunched>(*(promoted + 1));
              EXPECT_EQ(launch.segment, 1);
              EXPECT_DOUBLE_EQ(launch.from, 1);
              EXPECT_DOUBLE_EQ(launch.until, 3);
              EXPECT_EQ(h.model().trial_count(), 3);  // no new trial took the slot
              EXPECT_EQ(h.model().scheduler().promoted(0), 1);
              EXPECT_EQ(h.model().trial(1).phase, TrialPhase::kRunning);
            }},
        Situation{"PauseModeTakesItsLeaderToTheEndBeforeNewTrialsEatWhatThatCosts",
                  [](json& j) {
                    j["spec"]["scheduler"]["mode"] = "pause";
                    j["spec"]["budget"]["gpuHours"] = 0.06;  // 216 GPU-seconds
                  },
                  [](SimulatedSweep& h) {
                    h.FirstTwoReportAtEpochOneAndExit(10, 0.5, 0.9);  // 10 s per epoch
                    // 196 s left. Two results at rung 0 promote nobody, but taking trial 1 from
                    // epoch 1 to 9 costs 8 × 10 × 1.25 + 30 = 130 s. A new trial to epoch 1 asks 1
                    // × 10 × 1.25
                    // + 30 = 42.5 s: the first leaves 153.5, a second would leave 111.
                    // This pass ends both segments; the next one sees trial 1 paused.
                    Step plan = h.PassAndCarry();
                    EXPECT_EQ(CountEvents<event::TrialCreated>(plan), 1);
                    EXPECT_EQ(CountEvents<event::TrialPromoted>(plan), 0);
                    h.Advance(0.25);
                    plan = h.PassAndCarry();
                    EXPECT_EQ(CountEvents<event::TrialCreated>(plan), 0);
                    const auto* promoted = FindEvent<event::TrialPromoted>(plan);
                    ASSERT_NE(promoted, nullptr);
                    EXPECT_EQ(promoted->trial, 1);
                    EXPECT_EQ(promoted->rung, 0);
                    EXPECT_THAT(promoted->message,
                                HasSubstr("to epochs 9 while the budget covers it"));
                    const auto* resume = FindAction<Launch>(plan, 1);
                    ASSERT_NE(resume, nullptr);
                    EXPECT_DOUBLE_EQ(resume->spec.until_resource, 9);
                    EXPECT_DOUBLE_EQ(resume->spec.deadline_unix_seconds,
                                     h.now() + 130);  // its whole run, not one rung
                    EXPECT_TRUE(plan.denials.empty());
                    EXPECT_EQ(h.model().trial_count(), 3);
                    // Once it runs to the end nothing is held back: trial 2's slot goes to a new
                    // trial.
                    h.Advance(10);
                    h.Report(1, 3, 0.95);  // no start-up this time: 5 s per epoch, 45 s given back
                    h.Report(2, 1, 0.7);
                    h.Exit(2);
                    plan = h.PassAndCarry();
                    // It went on from rung 1 without a pause: no candidate there, one promotion.
                    EXPECT_EQ(h.model().scheduler().promoted(1), 1);
                    EXPECT_EQ(CountEvents<event::TrialCreated>(plan), 1);
                    EXPECT_EQ(CountEvents<event::TrialPromoted>(plan), 0);
                  }},
        Situation{"ATrialThatExitsZeroShortOfItsUntilFailsAsExitedShortAndIsNotRetried", NoEdit,
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.Advance(10);
                    h.Report(0, 1, 0.5);
                    h.Report(1, 1, 0.4);
                    h.Exit(0);  // at epoch 1 of the 9 it was asked for
                    Step plan = h.PassAndCarry();
                    const auto* ended = FindEvent<event::SegmentEnded>(plan);
                    ASSERT_NE(ended, nullptr);
                    EXPECT_EQ(ended->trial, 0);
                    EXPECT_EQ(ended->reason, "ExitedShort");
                    EXPECT_EQ(ended->message,
                              "exited 0 at epochs 1 of the 9 it was asked for, without the "
                              "objective at epochs 9");
                    EXPECT_EQ(h.model().trial(0).phase, TrialPhase::kFailed);
                    plan = h.PassAndCarry();
                    EXPECT_EQ(FindAction<Launch>(plan, 0), nullptr);
                    EXPECT_EQ(h.model().count(TrialPhase::kCompleted), 0);
                  }},
        Situation{"ASweepWhoseTrialsAllFailedEndsFailedBelowMaxFailedTrials",
                  [](json& j) { j["spec"]["maxTrials"] = 2; },  // maxFailedTrials 3
                  [](SimulatedSweep& h) {
                    for (int attempt = 0; attempt < 2; ++attempt) {  // one retry each
                      h.PassAndCarry();
                      h.Advance(5);
                      h.Exit(0, 1);
                      h.Exit(1, 1);
                      h.PassAndCarry();
                    }
                    ASSERT_EQ(h.model().count(TrialPhase::kFailed), 2);
                    EXPECT_EQ(h.model().phase(), SweepPhase::kFailed);
                    EXPECT_EQ(h.model().finish_reason(), "AllTrialsFailed");
                    EXPECT_EQ(h.model().finish_message(), "all 2 trials failed");
                  }},
        Situation{"PauseModeTakesItsLeaderToTheEndOnceNothingIsLeftToCreate",
                  [](json& j) {
                    j["spec"]["scheduler"]["mode"] = "pause";
                    j["spec"]["maxTrials"] = 2;
                  },
                  [](SimulatedSweep& h) {
                    h.FirstTwoReportAtEpochOneAndExit(10, 0.5, 0.9);
                    // Two values at rung 0 promote nobody, and maxTrials is reached: the sweep does
                    // not end in the pass that pauses them, and the next one takes the leader to
                    // the end.
                    Step plan = h.PassAndCarry();
                    EXPECT_EQ(FindEvent<event::SweepFinished>(plan), nullptr);
                    h.Advance(0.25);
                    plan = h.PassAndCarry();
                    const auto* promoted = FindEvent<event::TrialPromoted>(plan);
                    ASSERT_NE(promoted, nullptr);
                    EXPECT_EQ(promoted->trial, 1);
                    EXPECT_THAT(promoted->message, HasSubstr("to epochs 9 before the sweep ends"));
                    const auto* resume = FindAction<Launch>(plan, 1);
                    ASSERT_NE(resume, nullptr);
                    EXPECT_DOUBLE_EQ(resume->spec.until_resource, 9);
                    h.Advance(80);
                    h.Report(1, 9, 0.95);
                    h.Exit(1);
                    plan = h.PassAndCarry();
                    const auto* finished = FindEvent<event::SweepFinished>(plan);
                    ASSERT_NE(finished, nullptr);
                    EXPECT_EQ(finished->phase, SweepPhase::kCompleted);
                    EXPECT_EQ(finished->message, "2 trials finished");
                    EXPECT_EQ(h.model().count(TrialPhase::kCompleted), 1);
                  }},
        Situation{"APauseSweepThatCannotAffordItsLeadersEndSaysWhyNoTrialGotThere",
                  [](json& j) {
                    j["spec"]["scheduler"]["mode"] = "pause";
                    j["spec"]["maxTrials"] = 2;
                    j["spec"]["budget"]["gpuHours"] = 0.03;  // 108 GPU-seconds
                  },
                  [](SimulatedSweep& h) {
                    h.FirstTwoReportAtEpochOneAndExit(10, 0.5, 0.9);
                    // 88 s left; taking trial 1 to epoch 9 costs 8 × 10 × 1.25 + 30 = 130 s.
                    Step plan = h.PassAndCarry();
                    const auto* finished = FindEvent<event::SweepFinished>(plan);
                    ASSERT_NE(finished, nullptr);
                    EXPECT_EQ(finished->phase, SweepPhase::kCompleted);
                    EXPECT_EQ(finished->message,
                              "2 trials finished; no trial reached epochs 9: taking the best, " +
                                  h.model().TrialName(1) +
                                  " at epochs 1, there needs 0.0361 GPU-hours and 0.0244 are left");
                  }}),
    [](const ::testing::TestParamInfo<Situation>& row) { return row.param.name; });

TEST(Decide, IsPureSameInputsGiveTheSameStepAndLeaveTheModelAsItWas) {
  SimulatedSweep h(ParseSweep(testing::TableSweep()).value());
  h.PassAndCarry();
  h.Advance(10);
  h.Report(0, 1, 0.5);
  h.Report(1, 1, 0.4);
  Observation observation;
  observation.now = h.now();
  for (const auto& [key, s] : h.observed().segments) observation.segments.push_back(s);
  observation.metrics = h.observed().metrics;
  Ledger ledger(3600);
  ledger.Observe(observation.segments, h.now());
  const size_t before = h.model().trial(0).rung_values.size();
  StatusOr<Step> a = Decide(h.model(), observation, ledger, h.memory(), std::nullopt);
  StatusOr<Step> b = Decide(h.model(), observation, ledger, h.memory(), std::nullopt);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->events.size(), b->events.size());
  for (size_t i = 0; i < a->events.size(); ++i) {
    EXPECT_EQ(EventToJson(a->events[i]), EventToJson(b->events[i]));
  }
  EXPECT_EQ(a->actions.size(), b->actions.size());
  // The values, their verdicts and the decisions are one batch; the model it was given is as it
  // was, and the step's model has the batch applied.
  EXPECT_EQ(CountEvents<event::ValueRecorded>(*a), 2);
  EXPECT_EQ(CountEvents<event::RungVerdict>(*a), 2);
  EXPECT_EQ(h.model().trial(0).rung_values.size(), before);
  EXPECT_EQ(a->model->trial(0).rung_values.size(), before + 1);
}

TEST(NewRungValues, RecordsOnlyMilestonesNotYetRecordedWithTheProgressTheyMeasure) {
  SimulatedSweep h(ParseSweep(testing::TableSweep()).value());
  h.PassAndCarry();
  h.Advance(40);
  h.Report(0, 1, 0.5);
  h.Report(0, 2, 0.55);  // not a milestone
  h.Report(0, 3, 0.6);
  std::vector<Event> events = NewRungValues(h.model(), h.observed(), h.now());
  ASSERT_EQ(events.size(), 2u);
  const auto& recorded = std::get<event::ValueRecorded>(events[1]);
  EXPECT_DOUBLE_EQ(recorded.resource, 3);
  EXPECT_DOUBLE_EQ(recorded.seconds, 40);
  EXPECT_DOUBLE_EQ(recorded.units, 3);
  for (const Event& e : events) h.Journal(e);
  EXPECT_TRUE(NewRungValues(h.model(), h.observed(), h.now()).empty());
}

// On Kubernetes activeDeadlineSeconds can only decrease.
class WhereDeadlinesOnlyShrink : public ::testing::Test {
 protected:
  static PlannerOptions ShrinkOnly() {
    PlannerOptions options;
    options.deadlines_only_shrink = true;
    return options;
  }

  SimulatedSweep h{ParseSweep(testing::TableSweep()).value(), ShrinkOnly()};
};

// A segment reserves its whole run at launch, and its deadline moves only earlier.
TEST_F(WhereDeadlinesOnlyShrink, ASegmentReservesItsWholeRunAndIsNeverExtended) {
  Step plan = h.PassAndCarry();
  ASSERT_EQ(CountActions<Launch>(plan), 2);
  double first_deadline = std::get<Launch>(plan.actions[0]).spec.deadline_unix_seconds;
  EXPECT_DOUBLE_EQ(first_deadline, h.now() + 1800);  // an equal share, as without the option

  // Trial 0 reports epoch 1 after 10 s: its own pace says it needs far less; the deadline shrinks.
  h.Advance(10);
  h.Report(0, 1, 0.8);
  plan = h.PassAndCarry();
  const auto* shrink = FindAction<MoveDeadline>(plan, 0);
  ASSERT_NE(shrink, nullptr);
  EXPECT_LT(shrink->deadline, first_deadline);
  // The whole run to epoch 9 is covered, not just the next rung: 8 epochs at 10 s, with margin.
  EXPECT_GE(shrink->deadline, h.now() + 8 * 10 * 1.25);

  // Trial 0 then stalls: the deadline it needs now lies beyond its own, and it is not extended.
  h.Advance(shrink->deadline - h.now() - 1);
  for (int i = 0; i < 3; ++i) {
    plan = h.PassAndCarry();
    const auto* move = FindAction<MoveDeadline>(plan, 0);
    EXPECT_TRUE(move == nullptr || move->deadline <= shrink->deadline)
        << "deadline moved later, to " << move->deadline;
    h.Advance(0.3);
  }

  // With a measured pace, a new trial reserves its whole run (to epoch 9), not only rung 1.
  h.Report(1, 1, 0.1);  // worse than trial 0 at rung 1: stopped, and its slot refills
  plan = h.PassAndCarry();
  h.Advance(1);
  plan = h.PassAndCarry();
  const auto* start = FindAction<Launch>(plan, 2);
  ASSERT_NE(start, nullptr);
  EXPECT_GE(start->spec.deadline_unix_seconds - h.now(), 9 * 10 * 1.25);
}

// A deadline that cannot grow back is shrunk only on the pace from the segment's start: a rung
// value seen late (Prometheus scrapes at intervals) would make the pace since it look too fast.
TEST_F(WhereDeadlinesOnlyShrink, ThePaceIsTakenFromTheSegmentsStart) {
  h.PassAndCarry();
  h.Advance(10);
  h.Report(0, 1, 0.8);
  h.PassAndCarry();
  // Epoch 2 comes 2 s after epoch 1 was seen: 6 s per epoch from the start, 2 s since the rung.
  h.Advance(2);
  h.observed().metrics[h.model().TrialName(0)].resource_completed = 2;
  const Step plan = h.PassAndCarry();
  const auto* shrink = FindAction<MoveDeadline>(plan, 0);
  ASSERT_NE(shrink, nullptr);
  EXPECT_GE(shrink->deadline - h.now(), 7 * 6 * 1.25 + 30);
}

}  // namespace
}  // namespace bsw
