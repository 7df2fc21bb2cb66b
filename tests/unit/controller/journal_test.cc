#include "operator/controller/journal.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "operator/core/api.h"
#include "operator/core/step.h"

namespace bsw {
namespace {

namespace fs = std::filesystem;

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "bsw-journal-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::vector<Event> SomeEvents() {
    event::TrialCreated created{.at = 100.5, .trial = 0};
    created.params = {{"batch-size", 64}, {"lr", 0.003}, {"optimizer", "adamw"}};
    event::SegmentLaunched launched{.at = 100.5, .trial = 0, .segment = 0};
    launched.until = 9;
    launched.deadline = 160.25;
    event::ValueRecorded value{.at = 110, .trial = 0};
    value.resource = 1;
    value.value = std::nan("");
    return {created, launched, value};
  }

  std::string dir_;
};

TEST_F(JournalTest, EventsRoundTripThroughTheFile) {
  {
    StatusOr<Journal> j = Journal::Open(dir_);
    ASSERT_TRUE(j.ok()) << j.status().message();
    ASSERT_TRUE(j->Append(SomeEvents()).ok());
  }
  StatusOr<Journal> j = Journal::Open(dir_);
  ASSERT_TRUE(j.ok());
  StatusOr<std::vector<Event>> events = j->ReadAll();
  ASSERT_TRUE(events.ok()) << events.status().message();
  ASSERT_EQ(events->size(), 3u);
  EXPECT_TRUE(std::holds_alternative<event::TrialCreated>((*events)[0]));
  EXPECT_EQ(std::get<event::TrialCreated>((*events)[0]).params,
            std::get<event::TrialCreated>(SomeEvents()[0]).params);
  EXPECT_EQ(std::get<event::SegmentLaunched>((*events)[1]).deadline, 160.25);
  EXPECT_EQ(std::get<event::SegmentLaunched>((*events)[1]).until, 9);
  EXPECT_TRUE(std::isnan(std::get<event::ValueRecorded>((*events)[2]).value))
      << "a diverged value must stay NaN";
}

TEST_F(JournalTest, TornLastRecordIsDroppedAndRepairedOnOpen) {
  {
    StatusOr<Journal> j = Journal::Open(dir_);
    ASSERT_TRUE(j->Append(SomeEvents()).ok());
  }
  {
    std::ofstream out(dir_ + "/journal.jsonl", std::ios::app);
    out << R"({"event":"TrialCreated","at":1,"tri)";
  }
  StatusOr<Journal> j = Journal::Open(dir_);
  ASSERT_TRUE(j.ok());
  event::TrialStopped next{.at = 120, .trial = 0};
  next.reason = "RungCutoff";
  ASSERT_TRUE(j->Append({next}).ok());
  StatusOr<std::vector<Event>> events = j->ReadAll();
  ASSERT_TRUE(events.ok()) << events.status().message();
  ASSERT_EQ(events->size(), 4u);
  EXPECT_EQ(std::get<event::TrialStopped>(events->back()).reason, "RungCutoff");
}

TEST_F(JournalTest, CorruptRecordInTheMiddleIsAnErrorNamingFileAndLine) {
  {
    std::ofstream out(dir_ + "/journal.jsonl");
    out << R"({"event":"TrialCreated","at":1,"trial":0,"params":[]})"
        << "\n"
        << "this is not json\n"
        << R"({"event":"TrialStopped","at":2,"trial":0})"
        << "\n";
  }
  StatusOr<Journal> j = Journal::Open(dir_);
  ASSERT_TRUE(j.ok());
  StatusOr<std::vector<Event>> events = j->ReadAll();
  ASSERT_FALSE(events.ok());
  EXPECT_NE(events.status().message().find("journal.jsonl:2"), std::string::npos)
      << events.status().message();
}

TEST_F(JournalTest, UnknownEventNameIsAnError) {
  {
    std::ofstream out(dir_ + "/journal.jsonl");
    out << R"({"event":"TrialExploded","at":1})"
        << "\n";
  }
  StatusOr<std::vector<Event>> events = Journal::Open(dir_)->ReadAll();
  ASSERT_FALSE(events.ok());
  EXPECT_NE(events.status().message().find("TrialExploded"), std::string::npos);
}

// Lines as the release before rung verdicts were journaled wrote them: they still read, replay,
// and write back byte for byte.
TEST_F(JournalTest, AJournalOfThePreviousReleaseReadsAndWritesBackByteForByte) {
  const std::vector<std::string> lines = {
      R"({"at":1700000000.0,"event":"TrialCreated","params":[["batch-size",128],["lr",0.00012676317851359858]],"trial":0})",
      R"({"at":1700000000.0,"deadline":1700009000.0,"event":"SegmentLaunched","from":0.0,"segment":0,"trial":0,"until":27.0})",
      R"({"at":1700000008.0,"event":"ValueRecorded","resource":1.0,"seconds":6.0,"trial":0,"units":1.0,"value":0.43022533512015176})",
      R"({"at":1700000008.0,"deadline":1700000040.0,"event":"DeadlineMoved","segment":0,"trial":0})",
      R"({"at":1700000008.0,"event":"TrialStopped","message":"value 0.495491 at rung 0 (epochs 1) is not in the top 1/3 of the 4 values recorded there","reason":"RungCutoff","trial":0})",
      R"({"at":1700000010.0,"devices":1,"event":"SegmentEnded","finished":1700000009.0,"message":"stopped","reason":"Stopped","segment":0,"started":1700000002.0,"trial":0})",
      R"({"at":1700002946.0,"event":"SweepFinished","message":"1 trials finished","phase":"Completed","reason":"SweepCompleted"})"};
  {
    std::ofstream out(dir_ + "/journal.jsonl");
    for (const std::string& line : lines) out << line << "\n";
  }
  StatusOr<std::vector<Event>> events = Journal::Read(dir_ + "/journal.jsonl");
  ASSERT_TRUE(events.ok()) << events.status().message();
  ASSERT_EQ(events->size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(EventToJson((*events)[i]).dump(), lines[i]);
  SweepSpec spec = ParseSweep(nlohmann::json::parse(R"({
    "apiVersion": "budgetsweep.dev/v1alpha1", "kind": "BudgetSweep",
    "metadata": {"name": "s"},
    "spec": {"budget": {"gpuHours": 4}, "objective": {"metric": "acc"},
             "resource": {"min": 1, "max": 27, "reductionFactor": 3},
             "searchSpace": {"lr": {"type": "logUniform", "min": 1.0e-4, "max": 1.0e-1}},
             "trial": {"template": {"spec": {"containers": [{"name": "t", "image": "i"}]}}}}
  })"))
                       .value();
  SweepModel model(spec);
  for (const Event& e : *events) ASSERT_TRUE(model.Apply(e).ok());
  EXPECT_EQ(model.trial(0).phase, TrialPhase::kStopped);
  EXPECT_EQ(model.trial(0).reason, "RungCutoff");
  EXPECT_EQ(model.phase(), SweepPhase::kCompleted);
}

// The sweep the compatibility fixture (testdata/journal_every_event.jsonl) was written for.
SweepSpec EveryEventSpec() {
  return ParseSweep(nlohmann::json::parse(R"({
    "apiVersion": "budgetsweep.dev/v1alpha1", "kind": "BudgetSweep",
    "metadata": {"name": "s"},
    "spec": {"budget": {"gpuHours": 0.02}, "objective": {"metric": "acc"},
             "resource": {"min": 1, "max": 9, "reductionFactor": 3},
             "searchSpace": {"lr": {"type": "logUniform", "min": 1.0e-4, "max": 1.0e-1}},
             "throughput": {"enabled": true, "candidates": {"workers": [1, 2]}},
             "trial": {"template": {"spec": {"containers": [{"name": "t", "image": "i"}]}}}}
  })"))
      .value();
}

// A journal written by the release before events were typed, with every kind of event and each
// optional field both present and absent: it reads, replays, and writes back byte for byte.
TEST_F(JournalTest, AJournalWithEveryKindOfEventReadsAndWritesBackByteForByte) {
  const std::string path = "tests/unit/controller/testdata/journal_every_event.jsonl";
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 29u) << path;
  StatusOr<std::vector<Event>> events = Journal::Read(path);
  ASSERT_TRUE(events.ok()) << events.status().message();
  ASSERT_EQ(events->size(), lines.size());
  // Line 15's diverged value, null, reads as NaN and is written back as "NaN" (issue 40).
  ASSERT_NE(lines[14].find(R"("value":null)"), std::string::npos);
  lines[14].replace(lines[14].find(R"("value":null)"), 12, R"("value":"NaN")");
  EXPECT_TRUE(std::isnan(std::get<event::ValueRecorded>((*events)[14]).value));
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(EventToJson((*events)[i]).dump(), lines[i]);
  SweepSpec spec = EveryEventSpec();
  SweepModel model(spec);
  for (const Event& e : *events) ASSERT_TRUE(model.Apply(e).ok());
  ASSERT_EQ(model.probes().size(), 3u);
  EXPECT_EQ(model.probes()[1].figures->accelerator_utilization, 0.91);
  EXPECT_EQ(model.probes()[2].reason, "Error");
  EXPECT_EQ(model.throughput_decision()->chosen, 1);
  EXPECT_TRUE(model.throughput_decision()->target_met);
  EXPECT_EQ(model.trial(0).phase, TrialPhase::kStopped);
  EXPECT_EQ(model.trial(0).reason, "BudgetExhausted");
  EXPECT_EQ(model.trial(0).failures, 1);
  EXPECT_EQ(model.trial(0).rung_verdicts.at(3).verdict, Verdict::kPromote);
  EXPECT_EQ(model.trial(1).phase, TrialPhase::kStopped);
  EXPECT_EQ(model.trial(1).rung_verdicts.at(1).verdict, Verdict::kStop);
  ASSERT_EQ(model.recent_failures().size(), 2u);
  EXPECT_EQ(model.recent_failures()[0].output, "step 40 loss nan\n");
  EXPECT_EQ(model.phase(), SweepPhase::kBudgetExhausted);
}

// A pass's batch is one append, but the local journal writes record by record and the cluster's
// trial log spans several objects: a crash leaves a prefix. The compatibility fixture cut after
// each of its events replays, and the next pass decides from it a step whose events apply.
TEST_F(JournalTest, TheCompatibilityFixtureCutAfterAnyEventReplaysAndTheNextPassGoesOn) {
  StatusOr<std::vector<Event>> events =
      Journal::Read("tests/unit/controller/testdata/journal_every_event.jsonl");
  ASSERT_TRUE(events.ok()) << events.status().message();
  SweepSpec spec = EveryEventSpec();
  for (size_t cut = 0; cut <= events->size(); ++cut) {
    SweepModel model(spec);
    for (size_t i = 0; i < cut; ++i) ASSERT_TRUE(model.Apply((*events)[i]).ok()) << i;
    Observation observation;
    observation.now = 1700000200;
    Ledger ledger(spec.budget_gpu_hours * 3600);
    StatusOr<Step> step = Decide(model, observation, ledger, PassMemory{}, std::nullopt);
    ASSERT_TRUE(step.ok()) << "cut after event " << cut << ": " << step.status().message();
    SweepModel replayed = model;
    for (const Event& e : step->events) {
      ASSERT_TRUE(replayed.Apply(e).ok()) << "cut after event " << cut;
    }
    EXPECT_EQ(replayed.trial_count(), step->model->trial_count()) << "cut after event " << cut;
    EXPECT_EQ(replayed.phase(), step->model->phase()) << "cut after event " << cut;
  }
}

// Issue 40: ±Inf were journaled as null and read back as NaN.
TEST(EventCodec, NonFiniteNumbersRoundTripAsPrometheusSpellsThem) {
  const double inf = std::numeric_limits<double>::infinity();
  for (double value : {inf, -inf, std::numeric_limits<double>::quiet_NaN(), 0.25}) {
    event::ValueRecorded recorded{.at = 110, .trial = 0, .resource = 1, .value = value};
    event::ProbeMeasured measured{.at = 120, .probe = 0};
    measured.figures.samples_per_second = value;
    measured.figures.data_wait_ratio = value;
    measured.figures.accelerator_utilization = value;
    for (const Event& written : std::vector<Event>{recorded, measured}) {
      const std::string line = EventToJson(written).dump();
      if (!std::isfinite(value)) {
        EXPECT_NE(line.find(std::isnan(value) ? R"("NaN")"
                            : value > 0       ? R"("+Inf")"
                                              : R"("-Inf")"),
                  std::string::npos)
            << line;
      }
      StatusOr<Event> read = EventFromJson(nlohmann::json::parse(line));
      ASSERT_TRUE(read.ok()) << read.status().message();
      EXPECT_EQ(EventToJson(*read).dump(), line);
    }
    StatusOr<Event> read = EventFromJson(EventToJson(recorded));
    ASSERT_TRUE(read.ok());
    const double read_value = std::get<event::ValueRecorded>(*read).value;
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(read_value));
    } else {
      EXPECT_EQ(read_value, value);
    }
  }
}

TEST(EventCodec, ANullValueOfTheReleaseBeforeReadsAsNaN) {
  StatusOr<Event> read = EventFromJson(nlohmann::json::parse(
      R"({"at":1700000101.0,"event":"ValueRecorded","resource":1.0,"seconds":39.0,"trial":1,"units":1.0,"value":null})"));
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_TRUE(std::isnan(std::get<event::ValueRecorded>(*read).value));
  EXPECT_EQ(std::get<event::ValueRecorded>(*read).resource, 1.0);
}

// Issue 40: a rerun of a finished sweep named another best trial.
TEST_F(JournalTest, AReplayedHistoryKeepsItsBestTrial) {
  SweepSpec spec = ParseSweep(nlohmann::json::parse(R"({
    "apiVersion": "budgetsweep.dev/v1alpha1", "kind": "BudgetSweep",
    "metadata": {"name": "s"},
    "spec": {"budget": {"gpuHours": 4}, "objective": {"metric": "acc", "goal": "maximize"},
             "resource": {"min": 1, "max": 9, "reductionFactor": 3},
             "searchSpace": {"lr": {"type": "logUniform", "min": 1.0e-4, "max": 1.0e-1}},
             "trial": {"template": {"spec": {"containers": [{"name": "t", "image": "i"}]}}}}
  })"))
                       .value();
  // Trial 1 reached +Inf (the best) in one history and -Inf (the worst) in the other.
  const double inf = std::numeric_limits<double>::infinity();
  auto history = [](double trial_1_value) {
    const double values[] = {0.5, trial_1_value, std::nan(""), 0.9};
    std::vector<Event> events;
    for (int64_t trial = 0; trial < 4; ++trial) {
      events.push_back(event::TrialCreated{.at = 100, .trial = trial, .params = {{"lr", 0.01}}});
      events.push_back(event::SegmentLaunched{
          .at = 100, .trial = trial, .segment = 0, .from = 0, .until = 1, .deadline = 200});
    }
    for (int64_t trial = 0; trial < 4; ++trial) {
      events.push_back(
          event::ValueRecorded{.at = 110, .trial = trial, .resource = 1, .value = values[trial]});
    }
    return events;
  };

  for (const std::vector<Event>& events : {history(inf), history(-inf)}) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    SweepModel live(spec);
    for (const Event& e : events) ASSERT_TRUE(live.Apply(e).ok());
    {
      StatusOr<Journal> j = Journal::Open(dir_);
      ASSERT_TRUE(j.ok());
      ASSERT_TRUE(j->Append(events).ok());
    }
    StatusOr<std::vector<Event>> replayed = Journal::Read(dir_ + "/journal.jsonl");
    ASSERT_TRUE(replayed.ok()) << replayed.status().message();
    SweepModel rerun(spec);
    for (const Event& e : *replayed) ASSERT_TRUE(rerun.Apply(e).ok());
    ASSERT_TRUE(live.best().has_value());
    ASSERT_TRUE(rerun.best().has_value());
    EXPECT_EQ(rerun.best()->trial, live.best()->trial);
    EXPECT_EQ(rerun.best()->value, live.best()->value);
    EXPECT_EQ(rerun.trial(1).rung_values.at(1), live.trial(1).rung_values.at(1));
  }
}

TEST_F(JournalTest, UnwritableDirectoryIsAnErrorNamingThePath) {
  StatusOr<Journal> j = Journal::Open(dir_ + "/missing/sub");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("missing/sub/journal.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace bsw
