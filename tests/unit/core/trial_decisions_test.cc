// Table tests of the trial lifecycle decisions: how a segment's end is read, whether a trial
// relaunches, when missing metrics stop it, and how a finished sweep ends its trials.
#include "operator/core/trial_decisions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>

#include "tests/unit/core/simulated_sweep.h"

namespace bsw::decisions {
namespace {

using ::testing::HasSubstr;

// The table sweep: rungs 1, 3, 9 epochs, one retry, a 60 s metrics timeout.
SweepSpec Spec() { return ParseSweep(testing::TableSweep()).value(); }

struct EndRow {
  std::string name;
  SegmentState state;
  std::optional<int> exit_code;
  Reason backend_reason;
  bool stop_requested;
  bool reported_at_until;  // the trial's value at the segment's end (epoch 3) is recorded
  Reason want;
  std::string message_has;
};

void PrintTo(const EndRow& row, std::ostream* os) { *os << row.name; }

class EndOfTable : public ::testing::TestWithParam<EndRow> {};

TEST_P(EndOfTable, ReadsTheSegmentsEndAsTheBackendShowsIt) {
  const EndRow& row = GetParam();
  SweepModel model(Spec());
  Trial t;
  t.name = "fmnist-cnn-t0000";
  t.stop_requested = row.stop_requested;
  t.message = "the sweep stopped it";
  if (row.reported_at_until) t.rung_values[3] = 0.5;
  SegmentRecord seg;
  seg.until = 3;
  SegmentStatus st;
  st.state = row.state;
  st.exit_code = row.exit_code;
  st.reason = row.backend_reason;
  Observed observed;
  observed.last_metrics[t.name];  // read just before, with no progress said
  observed.last_read_at[t.name] = 499;
  PlannerOptions options;
  SegmentEnd end = EndOf(PlanInput{model, observed, 500, options}, t, seg, st);
  EXPECT_EQ(ReasonName(end.reason), std::string(ReasonName(row.want)));
  EXPECT_THAT(end.message, HasSubstr(row.message_has));
}

INSTANTIATE_TEST_SUITE_P(
    Rows, EndOfTable,
    ::testing::Values(
        EndRow{"SucceededWithItsValueEndsAsPlanned", SegmentState::kSucceeded, 0, Reason::kNone,
               false, true, Reason::kNone, ""},
        EndRow{"SucceededWithoutItsValueExitedShort", SegmentState::kSucceeded, 0, Reason::kNone,
               false, false, Reason::kExitedShort,
               "exited 0 having reported no epochs of the 3 it was asked for, without the "
               "objective at epochs 3"},
        EndRow{"SucceededWithoutItsValueAfterAStopEndsAsPlanned", SegmentState::kSucceeded, 0,
               Reason::kNone, true, false, Reason::kNone, ""},
        EndRow{"ExitCodeThreeIsDiverged", SegmentState::kFailed, 3, Reason::kError, false, false,
               Reason::kDiverged, "non-finite loss (exit code 3)"},
        EndRow{"DeadlineExceededStaysDeadlineExceeded", SegmentState::kFailed, 137,
               Reason::kDeadlineExceeded, false, false, Reason::kDeadlineExceeded,
               "reserved share of the budget"},
        EndRow{"DeadlineExceededAfterItsValueAndAPlainExitEndsAsPlanned", SegmentState::kFailed, 0,
               Reason::kDeadlineExceeded, false, true, Reason::kNone, ""},
        EndRow{"DeadlineExceededAfterItsValueButKilledStaysDeadlineExceeded", SegmentState::kFailed,
               137, Reason::kDeadlineExceeded, false, true, Reason::kDeadlineExceeded,
               "reserved share of the budget"},
        EndRow{"DeadlineExceededWithAPlainExitButNoValueStaysDeadlineExceeded",
               SegmentState::kFailed, 0, Reason::kDeadlineExceeded, false, false,
               Reason::kDeadlineExceeded, "reserved share of the budget"},
        EndRow{"AnEvictionIsAnInterruption", SegmentState::kFailed, std::nullopt, Reason::kEvicted,
               false, false, Reason::kInterrupted, "refused or evicted"},
        EndRow{"AnEvictionOfAStoppedTrialIsRecordedAsSuch", SegmentState::kFailed, 143,
               Reason::kEvicted, true, false, Reason::kEvicted, "exited with code 143"},
        EndRow{"AStopFromOutsideIsAnInterruption", SegmentState::kFailed, 143, Reason::kStopped,
               false, false, Reason::kInterrupted, "stopped from outside the sweep"},
        EndRow{"AStopTheSweepAskedForIsStoppedWithItsMessage", SegmentState::kFailed, 143,
               Reason::kStopped, true, false, Reason::kStopped, "the sweep stopped it"},
        EndRow{"AnErrorNamesItsExitCode", SegmentState::kFailed, 1, Reason::kError, false, false,
               Reason::kError, "exited with code 1"},
        EndRow{"ALostSegmentStaysLost", SegmentState::kFailed, std::nullopt, Reason::kLost, false,
               false, Reason::kLost, "ended without an exit code"},
        EndRow{"AFailureWithoutAReasonIsAnError", SegmentState::kFailed, 2, Reason::kNone, false,
               false, Reason::kError, "exited with code 2"}),
    [](const ::testing::TestParamInfo<EndRow>& row) { return row.param.name; });

// A segment of trial 0 to epoch 9 that exited 0, and what the planner observed of it.
class ExitZero : public ::testing::Test {
 protected:
  ExitZero() {
    t.name = "fmnist-cnn-t0000";
    seg.until = 9;
    st.state = SegmentState::kSucceeded;
    st.exit_code = 0;
  }

  SweepModel model{Spec()};
  Observed observed;
  PlannerOptions options;
  PlanInput in{model, observed, 500, options};
  Trial t;
  SegmentRecord seg;
  SegmentStatus st;
};

TEST_F(ExitZero, AShortExitNamesWhereItStoppedWhatItWasAskedForAndWhyItsMetricsWentUnread) {
  observed.last_read_errors[t.name] = "scraping http://127.0.0.1:9/metrics: metrics line 1: bad";
  observed.last_read_at[t.name] = 499;
  SegmentEnd end = EndOf(in, t, seg, st);
  EXPECT_EQ(end.reason, Reason::kExitedShort);
  EXPECT_EQ(end.message,
            "exited 0 having reported no epochs of the 9 it was asked for, without the objective "
            "at epochs 9; its metrics could not be read: scraping http://127.0.0.1:9/metrics: "
            "metrics line 1: bad");
  // A read that answered: where it said it got, and no error from a read after it exited.
  t.rung_values[1] = 0.5;
  observed.last_metrics[t.name].resource_completed = 2;
  EXPECT_EQ(EndOf(in, t, seg, st).message,
            "exited 0 at epochs 2 of the 9 it was asked for, without the objective at epochs 9");
  // It said it reached `until`: only the read of its value was lost (a Ctrl-C during its linger,
  // then a resume from its checkpoint there), which is no short exit, and at the full resource
  // (epoch 9) no completion either: a Completed trial has its objective there.
  observed.last_metrics[t.name].resource_completed = 9;
  SegmentEnd at_max = EndOf(in, t, seg, st);
  EXPECT_EQ(at_max.reason, Reason::kMetricsMissing);
  EXPECT_EQ(at_max.message, "exited at epochs 9 without reporting the objective there");
  seg.until = 3;
  observed.last_metrics[t.name].resource_completed = 3;
  EXPECT_EQ(EndOf(in, t, seg, st).reason, Reason::kMetricsMissing);
}

TEST_F(ExitZero, ASegmentThatEndedUnseenIsNoShortExit) {
  // It ran and exited 0 while the operator was down (a leader failover): the new process never
  // read it, and the rung value journaled before says nothing of where it ended.
  t.rung_values[1] = 0.5;
  EXPECT_EQ(EndOf(in, t, seg, st).reason, Reason::kMetricsMissing);
  seg.until = 3;
  EXPECT_EQ(EndOf(in, t, seg, st).reason, Reason::kMetricsMissing);
  // Read while it ran, the same end is a short exit.
  observed.last_metrics[t.name].resource_completed = 1;
  observed.last_read_at[t.name] = 490;
  EXPECT_EQ(EndOf(in, t, seg, st).reason, Reason::kExitedShort);
  // Read last more than 10 s before the pass that finds it ended (this controller's passes failed
  // while the API server was away, or it was down), it ended unseen again.
  observed.last_read_at[t.name] = 489;
  EXPECT_EQ(EndOf(in, t, seg, st).reason, Reason::kMetricsMissing);
  // An answer from before this segment launched (its trial's last segment) says nothing of it.
  seg.launched_at = 496;
  observed.last_read_at[t.name] = 495;
  EXPECT_EQ(EndOf(in, t, seg, st).reason, Reason::kMetricsMissing);
  observed.last_read_at[t.name] = 496;
  EXPECT_EQ(EndOf(in, t, seg, st).reason, Reason::kExitedShort);
}

TEST(SegmentEndEvent, KeepsTheTrainersOutputOnlyWhenTheTrainerFailed) {
  SweepModel model(Spec());
  Observed observed;
  PlannerOptions options;
  PlanInput in{model, observed, 500, options};
  Trial t;
  t.index = 4;
  SegmentRecord seg;
  seg.number = 2;
  seg.until = 3;
  SegmentStatus st;
  st.state = SegmentState::kFailed;
  st.exit_code = 1;
  st.reason = Reason::kError;
  st.output_tail = "Traceback: out of memory";
  st.started_unix_seconds = 100;
  st.finished_unix_seconds = 400;
  st.devices = 0;
  event::SegmentEnded e = SegmentEndEvent(in, t, seg, st);
  EXPECT_EQ(e.trial, 4);
  EXPECT_EQ(e.segment, 2);
  EXPECT_EQ(e.reason, "Error");
  EXPECT_EQ(e.output, st.output_tail);
  EXPECT_DOUBLE_EQ(e.started, 100);
  EXPECT_DOUBLE_EQ(e.finished, 400);
  EXPECT_EQ(e.devices, 1) << "a CPU segment is charged one device";

  st.reason = Reason::kDeadlineExceeded;
  EXPECT_EQ(SegmentEndEvent(in, t, seg, st).output, "");

  st.state = SegmentState::kSucceeded;  // exit 0 short of `until`: the output explains it
  st.exit_code = 0;
  observed.last_metrics[t.name];  // read just before
  observed.last_read_at[t.name] = 500;
  st.reason = Reason::kNone;
  e = SegmentEndEvent(in, t, seg, st);
  EXPECT_EQ(e.reason, "ExitedShort");
  EXPECT_EQ(e.output, st.output_tail);
}

struct RelaunchRow {
  std::string name;
  Reason reason;
  int failures;
  bool stop_requested;
  bool relaunches;
};

void PrintTo(const RelaunchRow& row, std::ostream* os) { *os << row.name; }

class RelaunchesTable : public ::testing::TestWithParam<RelaunchRow> {};

TEST_P(RelaunchesTable, RelaunchesOnlyAResumeOrARetryThatIsLeft) {
  const RelaunchRow& row = GetParam();
  Trial t;
  t.failures = row.failures;
  t.stop_requested = row.stop_requested;
  EXPECT_EQ(Relaunches(Spec(), t, row.reason), row.relaunches);
}

// The table sweep allows one retry: a trial that failed once has used it (the failure being
// recorded comes with the event that is being decided on here).
INSTANTIATE_TEST_SUITE_P(
    Rows, RelaunchesTable,
    ::testing::Values(
        RelaunchRow{"AnInterruptionResumes", Reason::kInterrupted, 5, false, true},
        RelaunchRow{"AnInterruptionResumesEvenWhenStopped", Reason::kInterrupted, 0, true, true},
        RelaunchRow{"AFirstErrorIsRetried", Reason::kError, 0, false, true},
        RelaunchRow{"AFirstLossIsRetried", Reason::kLost, 0, false, true},
        RelaunchRow{"AnErrorPastTheRetriesIsNot", Reason::kError, 1, false, false},
        RelaunchRow{"AStoppedTrialIsNotRetried", Reason::kError, 0, true, false},
        RelaunchRow{"ADivergedTrialIsNotRetried", Reason::kDiverged, 0, false, false},
        RelaunchRow{"AShortExitIsNotRetried", Reason::kExitedShort, 0, false, false},
        RelaunchRow{"AnEndAsPlannedIsNoRelaunch", Reason::kNone, 0, false, false},
        RelaunchRow{"ADeadlineIsNoRelaunch", Reason::kDeadlineExceeded, 0, false, false}),
    [](const ::testing::TestParamInfo<RelaunchRow>& row) { return row.param.name; });

struct MetricsRow {
  std::string name;
  bool answered;
  std::optional<double> resource_completed;
  std::optional<double> unknown_since;  // seconds before now
  bool unknown;
  bool stops;
};

void PrintTo(const MetricsRow& row, std::ostream* os) { *os << row.name; }

class CheckMetricsTable : public ::testing::TestWithParam<MetricsRow> {};

TEST_P(CheckMetricsTable, WaitsOnUnknownMetricsAndStopsOnlyAfterTheTimeout) {
  const MetricsRow& row = GetParam();
  SweepModel model(Spec());
  Observed observed;
  const double now = 1000;
  if (row.unknown_since) observed.unknown_since["t"] = now - *row.unknown_since;
  PlannerOptions options;
  PlanInput in{model, observed, now, options};
  Trial t;
  t.name = "t";
  t.rung_values[1] = 0.5;
  SegmentRecord seg;  // from 0 toward 9
  seg.until = 9;
  TrialMetrics metrics;
  metrics.resource_completed = row.resource_completed;
  MetricsCheck check = CheckMetrics(in, t, seg, row.answered ? &metrics : nullptr);
  EXPECT_EQ(check.unknown, row.unknown);
  EXPECT_EQ(check.stop_message.has_value(), row.stops);
  if (row.stops) {
    EXPECT_THAT(*check.stop_message, HasSubstr("missingTimeoutSeconds is 60"));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, CheckMetricsTable,
    ::testing::Values(
        MetricsRow{"AnAnswerWithEveryPassedRungsValueIsKnown", true, 2, std::nullopt, false, false},
        MetricsRow{"NoAnswerIsUnknown", false, std::nullopt, std::nullopt, true, false},
        MetricsRow{"APassedRungWithoutItsValueIsUnknown", true, 3, std::nullopt, true, false},
        MetricsRow{"UnknownWithinTheTimeoutWaits", false, std::nullopt, 60, true, false},
        MetricsRow{"UnknownPastTheTimeoutStops", false, std::nullopt, 61, true, true}),
    [](const ::testing::TestParamInfo<MetricsRow>& row) { return row.param.name; });

TEST(StopTrial, RecordsTheStopAndStopsALiveSegmentWithTheSameReason) {
  SweepModel model(Spec());
  Observed observed;
  PlannerOptions options;
  PlanInput in{model, observed, 10, options};
  Trial t;
  t.index = 3;
  t.segments.emplace_back().number = 1;
  Part live = StopTrial(in, t, Reason::kRungCutoff, "not in the top 1/3", true);
  ASSERT_EQ(live.events.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<event::TrialStopped>(live.events[0]));
  EXPECT_EQ(std::get<event::TrialStopped>(live.events[0]).reason, "RungCutoff");
  ASSERT_EQ(live.actions.size(), 1u);
  const auto* stop = std::get_if<StopSegment>(&live.actions[0]);
  ASSERT_NE(stop, nullptr);
  EXPECT_EQ(stop->segment, 1);
  EXPECT_EQ(stop->reason, "RungCutoff");
  EXPECT_TRUE(StopTrial(in, t, Reason::kSweepFinished, "", false).actions.empty());
}

TEST(ReconcileTrials, ATrialTheBudgetCannotLaunchIsStoppedWithTheDenial) {
  SweepModel model(Spec());
  for (int64_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(model.Apply(event::TrialCreated{.at = 0, .trial = i}).ok());
  }
  Observed observed;
  PlannerOptions options;
  PlanInput in{model, observed, 10, options};
  Ledger ledger(3600);
  ASSERT_FALSE(ledger.Admit(3590).has_value());
  Admitted a = ReconcileTrials(in, ledger);
  // Each asks at least the grace period plus 5 s, more than the 10 s left: both are refused.
  ASSERT_EQ(a.part.denials.size(), 2u);
  EXPECT_EQ(a.part.occupied, 0);
  ASSERT_EQ(a.part.events.size(), 2u);
  for (const Event& e : a.part.events) {
    EXPECT_TRUE(std::holds_alternative<event::TrialStopped>(e));
    EXPECT_EQ(std::get<event::TrialStopped>(e).reason, "BudgetExhausted");
  }
  EXPECT_THAT(std::get<event::TrialStopped>(a.part.events[0]).message, HasSubstr("GPU-hours"));
  EXPECT_DOUBLE_EQ(a.ledger.reserved(), 3590) << "a refused launch reserves nothing";
}

TEST(ReconcileTrials, JournaledSegmentsTheBackendLostAreStartedAgainAndHoldTheirSlots) {
  testing::SimulatedSweep h(Spec());
  h.Pass();  // two trials created and launched, not started by the backend
  Observed observed = h.observed();
  PlannerOptions options;
  PlanInput in{h.model(), observed, h.now(), options};
  Admitted started = ReconcileTrials(in, Ledger(3600));
  EXPECT_EQ(started.part.occupied, 2);
  EXPECT_EQ(started.part.actions.size(), 2u);
  EXPECT_TRUE(started.part.events.empty());
}

// Issue 39: a launch journaled before a crash and started after its deadline was killed at once,
// and its trial ended for good as Stopped (DeadlineExceeded) without having trained.
TEST(ReconcileTrials, JournaledSegmentsWhoseReservationLapsedEndUnchargedAndAreAdmittedAgain) {
  testing::SimulatedSweep h(Spec());
  h.Pass();  // two trials created and launched, not started by the backend
  Observed observed = h.observed();
  PlannerOptions options;
  const SegmentRecord& seg = h.model().trial(0).segments.back();
  const double admitted = seg.deadline - seg.launched_at;
  for (double down : {admitted / 2 + 1, admitted + 3600}) {
    PlanInput in{h.model(), observed, seg.launched_at + down, options};
    Admitted ended = ReconcileTrials(in, Ledger(3600));
    EXPECT_TRUE(ended.part.actions.empty()) << "down " << down << " s: started with what is left";
    EXPECT_EQ(ended.part.occupied, 2) << "each keeps its slot for its next launch";
    EXPECT_DOUBLE_EQ(ended.ledger.reserved(), 0) << "nothing held for a lapsed reservation";
    ASSERT_EQ(ended.part.events.size(), 2u);
    const auto& e = std::get<event::SegmentEnded>(ended.part.events[0]);
    EXPECT_EQ(e.reason, "Interrupted");
    EXPECT_EQ(e.started, 0) << "never ran, never charged";
  }
  // Applied, the trials stay active with no retry spent, and the next pass admits them anew.
  SweepModel model = h.model();
  const double now = seg.launched_at + admitted + 3600;
  for (const Event& e :
       ReconcileTrials({model, observed, now, options}, Ledger(3600)).part.events) {
    ASSERT_TRUE(model.Apply(e).ok());
  }
  EXPECT_EQ(model.trial(0).failures, 0);
  EXPECT_EQ(model.trial(0).phase, TrialPhase::kRunning);
  PlanInput late{model, observed, now, options};
  Admitted relaunched = ReconcileTrials(late, Ledger(3600));
  ASSERT_EQ(relaunched.part.events.size(), 2u);
  const auto& launch = std::get<event::SegmentLaunched>(relaunched.part.events[0]);
  EXPECT_EQ(launch.segment, seg.number + 1);
  EXPECT_GT(launch.deadline, late.now + options.deadline_slack_seconds) << "a fresh deadline";
}

TEST(StopEverything, StopsLiveSegmentsAndTrialsWaitingForOne) {
  testing::SimulatedSweep h(Spec());
  h.PassAndCarry();  // trials 0 and 1 run
  h.Advance(10);
  h.Exit(1, 1);  // trial 1 fails with a retry left
  PlannerOptions options;
  PlanInput in{h.model(), h.observed(), h.now(), options};
  Part part = StopEverything(in);
  // Trial 0: stopped live. Trial 1: its end recorded, then stopped since it would relaunch.
  ASSERT_EQ(part.events.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<event::TrialStopped>(part.events[0]));
  EXPECT_EQ(std::get<event::TrialStopped>(part.events[0]).trial, 0);
  EXPECT_TRUE(std::holds_alternative<event::SegmentEnded>(part.events[1]));
  EXPECT_EQ(std::get<event::SegmentEnded>(part.events[1]).reason, "Error");
  EXPECT_TRUE(std::holds_alternative<event::TrialStopped>(part.events[2]));
  EXPECT_EQ(std::get<event::TrialStopped>(part.events[2]).reason, "SweepFinished");
  ASSERT_EQ(part.actions.size(), 1u);
  EXPECT_EQ(std::get<StopSegment>(part.actions[0]).trial, 0);
  EXPECT_EQ(part.occupied, 0);
}

}  // namespace
}  // namespace bsw::decisions
