// SweepModel::Apply, one event kind at a time: what each changes, the counts and phases it keeps,
// the best result, the recent failures, and the events it rejects. How a rung's verdict is derived
// from a recorded value is the planner's (verdicts_test.cc); these sweeps use random search,
// which derives none.
#include "operator/core/sweep_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw {
namespace {

using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ValidSweepJson under random search: rungs at 1, 3, 9 and 27 epochs, one retry.
SweepSpec RandomSpec(const char* goal = "maximize") {
  return testing::SpecWith([goal](json& j) {
    j["spec"]["scheduler"]["algorithm"] = "random";
    j["spec"]["objective"]["goal"] = goal;
  });
}

// What the model shows of itself, to tell whether an event changed it.
json Shown(const SweepModel& m) {
  json j = {{"phase", SweepPhaseName(m.phase())},
            {"finish", m.finish_reason()},
            {"active", m.active()},
            {"failures", m.recent_failures().size()},
            {"decided", m.throughput_decision().has_value()}};
  for (TrialPhase phase : {TrialPhase::kRunning, TrialPhase::kPaused, TrialPhase::kCompleted,
                           TrialPhase::kStopped, TrialPhase::kFailed}) {
    j["counts"].push_back(m.count(phase));
  }
  if (m.best()) j["best"] = {m.best()->trial, m.best()->value, m.best()->resource};
  for (int64_t i = 0; i < m.trial_count(); ++i) {
    const Trial& t = m.trial(i);
    json trial = {{"phase", TrialPhaseName(t.phase)},
                  {"reason", t.reason},
                  {"message", t.message},
                  {"params", t.params},
                  {"values", t.rung_values},
                  {"verdicts", t.rung_verdicts.size()},
                  {"failures", t.failures},
                  {"stop", t.stop_requested},
                  {"lineage", t.lineage.size()}};
    for (const SegmentRecord& s : t.segments) {
      trial["segments"].push_back({s.number, s.from, s.until, s.deadline, s.ended, s.started,
                                   s.finished, s.devices, s.measured.size()});
    }
    j["trials"].push_back(trial);
  }
  for (const ProbeRun& p : m.probes()) {
    j["probes"].push_back({p.index, p.ended, p.reason, p.figures.has_value()});
  }
  return j;
}

class SweepModelTest : public ::testing::Test {
 protected:
  void Apply(const Event& e) {
    Status applied = model_.Apply(e);
    ASSERT_TRUE(applied.ok()) << EventToJson(e).dump() << ": " << applied.message();
  }
  void Create(int64_t trial) {
    Apply(event::TrialCreated{.at = 1, .trial = trial, .params = {{"lr", 0.01}}});
  }
  void Launch(int64_t trial, int segment, double from, double until) {
    Apply(event::SegmentLaunched{.at = 2,
                                 .trial = trial,
                                 .segment = segment,
                                 .from = from,
                                 .until = until,
                                 .deadline = 500});
  }
  void Value(int64_t trial, double resource, double value) {
    Apply(event::ValueRecorded{.at = 3, .trial = trial, .resource = resource, .value = value});
  }
  void End(int64_t trial, int segment, const std::string& reason) {
    Apply(event::SegmentEnded{.at = 4, .trial = trial, .segment = segment, .reason = reason});
  }

  SweepModel model_{RandomSpec()};
};

TEST_F(SweepModelTest, ATrialIsCreatedRunningUnderItsName) {
  EXPECT_EQ(model_.phase(), SweepPhase::kPending);
  Create(0);
  ASSERT_EQ(model_.trial_count(), 1);
  const Trial& t = model_.trial(0);
  EXPECT_EQ(t.name, "fmnist-cnn-t0000");
  EXPECT_EQ(model_.FindTrial("fmnist-cnn-t0000"), 0);
  EXPECT_EQ(model_.FindTrial("fmnist-cnn-t0001"), std::nullopt);
  EXPECT_EQ(t.params, (Config{{"lr", 0.01}}));
  EXPECT_EQ(t.phase, TrialPhase::kRunning);
  EXPECT_EQ(model_.count(TrialPhase::kRunning), 1);
  EXPECT_EQ(model_.active(), (std::set<int64_t>{0}));
  EXPECT_EQ(model_.phase(), SweepPhase::kRunning);
}

TEST_F(SweepModelTest, ALaunchRecordsItsSegmentAndRunsAPausedTrialAgain) {
  Create(0);
  Launch(0, 0, 0, 1);
  End(0, 0, "");
  ASSERT_EQ(model_.trial(0).phase, TrialPhase::kPaused);
  EXPECT_TRUE(model_.active().empty());
  Apply(event::SegmentLaunched{
      .at = 20, .trial = 0, .segment = 1, .from = 1, .until = 3, .deadline = 80});
  const Trial& t = model_.trial(0);
  EXPECT_EQ(t.phase, TrialPhase::kRunning);
  EXPECT_EQ(model_.active(), (std::set<int64_t>{0}));
  ASSERT_EQ(t.segments.size(), 2u);
  const SegmentRecord& seg = t.segments.back();
  EXPECT_EQ(seg.number, 1);
  EXPECT_EQ(seg.from, 1);
  EXPECT_EQ(seg.until, 3);
  EXPECT_EQ(seg.deadline, 80);
  EXPECT_EQ(seg.launched_at, 20);
  EXPECT_FALSE(seg.ended);
}

TEST_F(SweepModelTest, AValueIsRecordedOnceAtEachRungAndOnlyThere) {
  Create(0);
  Launch(0, 0, 0, 9);
  struct Row {
    double resource;
    double value;
    std::map<double, double> after;
  };
  const Row rows[] = {
      {1, 0.5, {{1, 0.5}}},
      {2, 0.6, {{1, 0.5}}},  // no rung
      {1, 0.9, {{1, 0.5}}},  // the first value stays
      {3, 0.7, {{1, 0.5}, {3, 0.7}}},
  };
  for (const Row& row : rows) {
    Value(0, row.resource, row.value);
    EXPECT_EQ(model_.trial(0).rung_values, row.after) << "after a value at " << row.resource;
  }
  EXPECT_EQ(model_.trial(0).progress(), 3);
}

TEST_F(SweepModelTest, AValueWithItsTimingIsMeasuredForTheCostModel) {
  Create(0);
  Launch(0, 0, 0, 9);
  Apply(event::ValueRecorded{.at = 3, .trial = 0, .resource = 1, .value = 0.5});
  EXPECT_TRUE(model_.trial(0).segments.back().measured.empty()) << "no seconds, no units";
  Apply(event::ValueRecorded{
      .at = 3, .trial = 0, .resource = 3, .value = 0.6, .seconds = 40, .units = 3});
  const std::vector<CostPoint>& measured = model_.trial(0).segments.back().measured;
  ASSERT_EQ(measured.size(), 1u);
  EXPECT_EQ(measured[0].units, 3);
  EXPECT_EQ(measured[0].seconds, 40);
  EXPECT_TRUE(model_.cost_model().SecondsPerUnit().has_value());
}

TEST_F(SweepModelTest, ADeadlineMovedMovesTheLatestSegments) {
  Create(0);
  Launch(0, 0, 0, 1);
  Apply(event::DeadlineMoved{.at = 5, .trial = 0, .segment = 0, .deadline = 90});
  EXPECT_EQ(model_.trial(0).segments.back().deadline, 90);
}

TEST_F(SweepModelTest, AStopWaitsForTheLiveSegmentToEnd) {
  Create(0);
  Launch(0, 0, 0, 9);
  Apply(event::TrialStopped{.at = 5, .trial = 0, .reason = "RungCutoff", .message = "cut"});
  EXPECT_TRUE(model_.trial(0).stop_requested);
  EXPECT_EQ(model_.trial(0).phase, TrialPhase::kRunning);
  EXPECT_EQ(model_.trial(0).reason, "RungCutoff");
  EXPECT_EQ(model_.trial(0).message, "cut");
  End(0, 0, "Stopped");
  EXPECT_EQ(model_.trial(0).phase, TrialPhase::kStopped);
  EXPECT_EQ(model_.count(TrialPhase::kStopped), 1);
}

TEST_F(SweepModelTest, AStopWithoutALiveSegmentStopsAtOnce) {
  Create(0);  // never launched
  Create(1);
  Launch(1, 0, 0, 1);
  End(1, 0, "");  // paused
  for (int64_t trial : {0, 1}) {
    Apply(event::TrialStopped{.at = 5, .trial = trial, .reason = "BudgetExhausted"});
    EXPECT_EQ(model_.trial(trial).phase, TrialPhase::kStopped) << "trial " << trial;
  }
  EXPECT_TRUE(model_.active().empty());
}

// A segment's end decides its trial's phase: rows of how it ended, and what then holds.
TEST_F(SweepModelTest, ASegmentsEndDecidesItsTrialsPhase) {
  struct Row {
    const char* reason;
    double until;
    bool value_at_until;
    bool failed_before;
    TrialPhase phase;
    int failures;
    const char* trial_reason;
  };
  const Row rows[] = {
      {"", 9, true, false, TrialPhase::kPaused, 0, ""},
      {"", 9, false, false, TrialPhase::kPaused, 0, ""},
      {"", 27, true, false, TrialPhase::kCompleted, 0, ""},
      {"Interrupted", 9, false, false, TrialPhase::kRunning, 0, ""},
      {"Error", 9, false, false, TrialPhase::kRunning, 1, "Error"},
      {"Lost", 9, false, true, TrialPhase::kFailed, 2, "Lost"},  // past maxRetries 1
      {"Diverged", 9, false, false, TrialPhase::kStopped, 0, "Diverged"},
      {"ExitedShort", 9, false, false, TrialPhase::kFailed, 0, "ExitedShort"},
      {"DeadlineExceeded", 9, false, false, TrialPhase::kStopped, 0, "DeadlineExceeded"},
      {"ImagePullBackOff", 9, false, false, TrialPhase::kStopped, 0, "ImagePullBackOff"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(std::string("ended \"") + row.reason + "\" at " + std::to_string(row.until));
    SweepModel model(RandomSpec());
    ASSERT_TRUE(model.Apply(event::TrialCreated{.at = 1, .trial = 0}).ok());
    int segment = 0;
    if (row.failed_before) {
      ASSERT_TRUE(model.Apply(event::SegmentLaunched{.trial = 0, .until = row.until}).ok());
      ASSERT_TRUE(model.Apply(event::SegmentEnded{.trial = 0, .reason = "Error"}).ok());
      segment = 1;
    }
    ASSERT_TRUE(
        model.Apply(event::SegmentLaunched{.trial = 0, .segment = segment, .until = row.until})
            .ok());
    if (row.value_at_until) {
      ASSERT_TRUE(
          model.Apply(event::ValueRecorded{.trial = 0, .resource = row.until, .value = 0.5}).ok());
    }
    ASSERT_TRUE(model
                    .Apply(event::SegmentEnded{.at = 50,
                                               .trial = 0,
                                               .segment = segment,
                                               .reason = row.reason,
                                               .message = "why",
                                               .started = 10,
                                               .finished = 40,
                                               .devices = 2})
                    .ok());
    const Trial& t = model.trial(0);
    EXPECT_EQ(t.phase, row.phase) << TrialPhaseName(t.phase);
    EXPECT_EQ(model.active().contains(0), row.phase == TrialPhase::kRunning);
    EXPECT_EQ(t.failures, row.failures);
    EXPECT_EQ(t.reason, row.trial_reason);
    const SegmentRecord& seg = t.segments.back();
    EXPECT_TRUE(seg.ended);
    EXPECT_EQ(seg.reached_until, std::string(row.reason).empty() && row.value_at_until);
    EXPECT_EQ(seg.started, 10);
    EXPECT_EQ(seg.finished, 40);
    EXPECT_EQ(seg.devices, 2);
  }
}

// Only the trainer's own failures are kept, the newest kRecentFailures of them.
TEST_F(SweepModelTest, TheTrainersFailuresAreKeptNewestLast) {
  const char* reasons[] = {"Error",       "Stopped",     "Lost",  "DeadlineExceeded", "Diverged",
                           "Interrupted", "ExitedShort", "Error", "Evicted",          "Lost"};
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < static_cast<int64_t>(std::size(reasons)); ++i) {
    Create(i);
    Launch(i, 0, 0, 9);
    Apply(event::SegmentEnded{.at = 4,
                              .trial = i,
                              .segment = 0,
                              .reason = reasons[i],
                              .message = "failed",
                              .output = "out " + std::to_string(i)});
    if (TrainerFailed(std::string_view(reasons[i]))) kept.push_back(i);
  }
  ASSERT_EQ(kept.size(), 6u);
  kept.erase(kept.begin());  // the oldest of six
  const std::deque<FailureRecord>& failures = model_.recent_failures();
  ASSERT_EQ(failures.size(), kRecentFailures);
  for (size_t k = 0; k < kept.size(); ++k) {
    EXPECT_EQ(failures[k].trial, kept[k]);
    EXPECT_EQ(failures[k].reason, reasons[kept[k]]);
    EXPECT_EQ(failures[k].message, "failed");
    EXPECT_EQ(failures[k].output, "out " + std::to_string(kept[k]));
  }
}

// After every event, each phase's count is the number of trials in it, and the active trials are
// the running ones.
TEST_F(SweepModelTest, TheCountsFollowEveryTrialsPhase) {
  const std::vector<Event> events = {
      event::TrialCreated{.trial = 0},
      event::SegmentLaunched{.trial = 0, .until = 1},
      event::TrialCreated{.trial = 1},
      event::SegmentLaunched{.trial = 1, .until = 27},
      event::TrialCreated{.trial = 2},
      event::SegmentLaunched{.trial = 2, .until = 1},
      event::SegmentEnded{.trial = 0},  // paused
      event::SegmentEnded{.trial = 2, .reason = "Error"},
      event::SegmentLaunched{.trial = 2, .segment = 1, .until = 1},
      event::SegmentEnded{.trial = 2, .segment = 1, .reason = "Error"},  // failed
      event::ValueRecorded{.trial = 1, .resource = 27, .value = 0.9},
      event::SegmentEnded{.trial = 1},  // completed
      event::SegmentLaunched{.trial = 0, .segment = 1, .from = 1, .until = 3},
      event::TrialStopped{.trial = 0, .reason = "RungCutoff"},
      event::SegmentEnded{.trial = 0, .segment = 1, .reason = "Stopped"},  // stopped
      event::TrialCreated{.trial = 3},
  };
  for (const Event& e : events) {
    Apply(e);
    std::vector<int64_t> counted(5, 0);
    std::set<int64_t> running;
    for (int64_t i = 0; i < model_.trial_count(); ++i) {
      ++counted[static_cast<size_t>(model_.trial(i).phase)];
      if (model_.trial(i).phase == TrialPhase::kRunning) running.insert(i);
    }
    for (size_t p = 0; p < counted.size(); ++p) {
      EXPECT_EQ(model_.count(static_cast<TrialPhase>(p)), counted[p])
          << TrialPhaseName(static_cast<TrialPhase>(p)) << " after " << EventToJson(e).dump();
    }
    EXPECT_EQ(model_.active(), running) << "after " << EventToJson(e).dump();
  }
  EXPECT_EQ(model_.count(TrialPhase::kRunning), 1);
  EXPECT_EQ(model_.count(TrialPhase::kPaused), 0);
  EXPECT_EQ(model_.count(TrialPhase::kCompleted), 1);
  EXPECT_EQ(model_.count(TrialPhase::kStopped), 1);
  EXPECT_EQ(model_.count(TrialPhase::kFailed), 1);
}

TEST(SweepModelBest, IsTheBestValueForTheGoalAtAnyRung) {
  struct Recorded {
    int64_t trial;
    double resource;
    double value;
  };
  struct Row {
    const char* name;
    const char* goal;
    std::vector<Recorded> values;
    BestResult best;
  };
  const Row rows[] = {
      {"highest", "maximize", {{0, 1, 0.5}, {1, 1, 0.9}, {2, 1, 0.7}}, {1, 0.9, 1}},
      {"lowest", "minimize", {{0, 1, 0.5}, {1, 1, 0.9}, {2, 1, 0.7}}, {0, 0.5, 1}},
      {"a NaN gives way", "maximize", {{0, 1, kNaN}, {1, 1, 0.3}}, {1, 0.3, 1}},
      {"a NaN never wins", "maximize", {{0, 1, 0.3}, {1, 1, kNaN}}, {0, 0.3, 1}},
      {"the first of equals", "maximize", {{0, 1, 0.5}, {1, 1, 0.5}}, {0, 0.5, 1}},
      {"at a higher rung", "maximize", {{0, 1, 0.6}, {1, 1, 0.7}, {0, 3, 0.8}}, {0, 0.8, 3}},
      {"at a lower rung", "minimize", {{0, 3, 0.2}, {1, 1, 0.1}}, {1, 0.1, 1}},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    SweepModel model(RandomSpec(row.goal));
    EXPECT_FALSE(model.best().has_value());
    for (int64_t i = 0; i < 3; ++i) {
      ASSERT_TRUE(model.Apply(event::TrialCreated{.trial = i}).ok());
      ASSERT_TRUE(model.Apply(event::SegmentLaunched{.trial = i, .until = 27}).ok());
    }
    for (const Recorded& r : row.values) {
      ASSERT_TRUE(model
                      .Apply(event::ValueRecorded{
                          .trial = r.trial, .resource = r.resource, .value = r.value})
                      .ok());
    }
    ASSERT_TRUE(model.best().has_value());
    EXPECT_EQ(model.best()->trial, row.best.trial);
    EXPECT_EQ(model.best()->value, row.best.value);
    EXPECT_EQ(model.best()->resource, row.best.resource);
  }
}

TEST_F(SweepModelTest, RecordedVerdictsAndPromotionsApplyAsRecorded) {
  Create(0);
  Apply(event::TrialPromoted{.at = 5, .trial = 0, .rung = 1, .message = "the last one"});
  Apply(event::RungVerdict{
      .at = 6, .trial = 0, .rung = 0, .resource = 1, .verdict = Verdict::kStop, .message = "cut"});
  const Trial& t = model_.trial(0);
  EXPECT_EQ(t.rung_verdicts.at(3).verdict, Verdict::kPromote);
  EXPECT_EQ(t.rung_verdicts.at(3).message, "the last one");
  EXPECT_EQ(t.rung_verdicts.at(1).verdict, Verdict::kStop);
  ASSERT_NE(t.StopVerdict(), nullptr);
  EXPECT_EQ(t.StopVerdict()->message, "cut");
}

TEST_F(SweepModelTest, AnExploitGoesOnWithTheDonorsParamsAndKeepsTheLineage) {
  Create(0);
  Create(1);
  Launch(1, 0, 0, 3);
  Apply(event::TrialExploited{
      .at = 9, .trial = 1, .rung = 1, .donor = 0, .params = {{"lr", 0.02}}, .message = "m"});
  const Trial& t = model_.trial(1);
  EXPECT_EQ(t.params, (Config{{"lr", 0.02}}));
  ASSERT_EQ(t.lineage.size(), 1u);
  EXPECT_EQ(t.lineage[0].resource, 3);
  EXPECT_EQ(t.lineage[0].donor, 0);
  EXPECT_EQ(t.lineage[0].segments_before, 1u);
  EXPECT_EQ(t.lineage[0].previous, (Config{{"lr", 0.01}}));
  EXPECT_EQ(t.lineage[0].message, "m");
}

TEST(SweepModelProbes, TheProbePhaseRecordsEachProbeThenTheDecision) {
  SweepModel model(testing::SpecWith([](json& j) {
    j["spec"]["scheduler"]["algorithm"] = "random";
    j["spec"]["throughput"] = {{"enabled", true}, {"candidates", {{"workers", {2}}}}};
  }));
  EXPECT_TRUE(model.probing());
  ASSERT_TRUE(model
                  .Apply(event::ProbeLaunched{
                      .at = 1, .probe = 0, .params = {{"workers", 2}}, .deadline = 60})
                  .ok());
  EXPECT_EQ(model.phase(), SweepPhase::kProbing);
  ASSERT_EQ(model.probes().size(), 1u);
  EXPECT_EQ(model.probes()[0].name, "fmnist-cnn-p0000");
  EXPECT_EQ(model.probes()[0].settings, (Config{{"workers", 2}}));
  EXPECT_EQ(model.probes()[0].launched_at, 1);
  EXPECT_EQ(model.probes()[0].deadline, 60);
  ASSERT_TRUE(model
                  .Apply(event::ProbeMeasured{.probe = 0,
                                              .figures = {.samples_per_second = 800,
                                                          .data_wait_ratio = 0.1,
                                                          .accelerator_utilization = std::nullopt}})
                  .ok());
  ASSERT_TRUE(model.probes()[0].figures.has_value());
  EXPECT_EQ(model.probes()[0].figures->samples_per_second, 800);
  ASSERT_TRUE(
      model.Apply(event::ProbeEnded{.probe = 0, .reason = "", .message = "m", .seconds = 30}).ok());
  EXPECT_TRUE(model.probes()[0].ended);
  EXPECT_EQ(model.probes()[0].charged_device_seconds, 30);
  ASSERT_TRUE(
      model
          .Apply(event::ThroughputDecided{
              .probe = 0, .reason = "TargetMet", .message = "met", .params = {{"workers", 2}}})
          .ok());
  ASSERT_TRUE(model.throughput_decision().has_value());
  EXPECT_EQ(model.throughput_decision()->chosen, 0);
  EXPECT_TRUE(model.throughput_decision()->target_met);
  EXPECT_EQ(model.throughput_decision()->trial_args, (Config{{"workers", 2}}));
  EXPECT_EQ(model.phase(), SweepPhase::kRunning);
  EXPECT_FALSE(model.probing());
}

TEST_F(SweepModelTest, ASweepFinishesWithItsPhaseAndReasonForGood) {
  Create(0);
  Apply(event::SweepFinished{
      .at = 9, .phase = SweepPhase::kBudgetExhausted, .reason = "BudgetExhausted", .message = "m"});
  EXPECT_TRUE(model_.finished());
  EXPECT_EQ(model_.phase(), SweepPhase::kBudgetExhausted);
  EXPECT_EQ(model_.finish_reason(), "BudgetExhausted");
  EXPECT_EQ(model_.finish_message(), "m");
  Apply(event::ThroughputDecided{.probe = -1, .reason = "NothingMeasured"});
  EXPECT_EQ(model_.phase(), SweepPhase::kBudgetExhausted) << "a late decision does not revive it";
}

// Events about trials or probes the model does not know are rejected, and change nothing.
TEST_F(SweepModelTest, EventsItCannotPlaceAreRejectedAndChangeNothing) {
  Create(0);
  Create(1);
  Launch(0, 0, 0, 9);
  Value(0, 1, 0.5);
  Apply(event::ProbeLaunched{.probe = 0});
  struct Row {
    const char* name;
    Event event;
    const char* error;
  };
  const Row rows[] = {
      {"a trial out of order", event::TrialCreated{.trial = 5}, "trial 5 created out of order"},
      {"a launch", event::SegmentLaunched{.trial = 5, .until = 1}, "unknown trial 5"},
      {"a value", event::ValueRecorded{.trial = 5, .resource = 1, .value = 0.9}, "unknown trial 5"},
      {"a deadline", event::DeadlineMoved{.trial = 5, .deadline = 9}, "unknown trial 5"},
      {"a stop", event::TrialStopped{.trial = 5, .reason = "RungCutoff"}, "unknown trial 5"},
      {"a promotion", event::TrialPromoted{.trial = 5, .rung = 0}, "unknown trial 5"},
      {"a promotion at the last rung", event::TrialPromoted{.trial = 0, .rung = 3},
       "decides nothing"},
      {"an end", event::SegmentEnded{.trial = 5, .reason = "Error"}, "unknown trial 5"},
      {"a verdict", event::RungVerdict{.trial = -1, .resource = 1}, "unknown trial -1"},
      {"an exploit", event::TrialExploited{.trial = 5, .rung = 0, .donor = 0}, "unknown trial 5"},
      {"an exploit of itself", event::TrialExploited{.trial = 0, .rung = 0, .donor = 0},
       "no other trial"},
      {"an exploit at the last rung", event::TrialExploited{.trial = 0, .rung = 3, .donor = 1},
       "no next rung"},
      {"a probe out of order", event::ProbeLaunched{.probe = 2}, "probe 2 launched out of order"},
      {"a measurement", event::ProbeMeasured{.probe = 1}, "unknown probe 1"},
      {"a probe's end", event::ProbeEnded{.probe = 1}, "unknown probe 1"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    const json before = Shown(model_);
    Status rejected = model_.Apply(row.event);
    EXPECT_EQ(rejected.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(rejected.message().find(row.error), std::string::npos) << rejected.message();
    EXPECT_EQ(Shown(model_), before);
  }
}

}  // namespace
}  // namespace bsw
