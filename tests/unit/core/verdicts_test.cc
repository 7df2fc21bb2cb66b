// Rung verdicts are recorded, never recomputed: each is a RungVerdict event that replay applies,
// so a journal replays to the same history whatever the code or the spec now says about ASHA.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "operator/core/verdict_decision.h"
#include "tests/unit/core/simulated_sweep.h"

namespace bsw {
namespace {

using nlohmann::json;
using testing::CountEvents;
using testing::SimulatedSweep;

// A stop-mode sweep with rungs 1 and 3 epochs: the same rungs for every reductionFactor from 3
// up, so a journal of one factor applies under another.
SweepSpec TwoRungSweep(int reduction_factor) {
  json j = testing::TableSweep();
  j["spec"]["resource"] = {
      {"unit", "epochs"}, {"min", 1}, {"max", 3}, {"reductionFactor", reduction_factor}};
  j["spec"]["parallelism"] = 3;
  j["spec"]["maxTrials"] = 9;
  return ParseSweep(j).value();
}

// Runs the sweep to its end: every trial reports a value at epoch 1 that rises with its index
// (so each new value is the best so far and the early ones are cut as better ones arrive), and
// exits at epoch 3 when it gets there.
std::vector<Event> RecordedSweep(SimulatedSweep& h) {
  for (int pass = 0; pass < 100 && !h.model().finished(); ++pass) {
    h.PassAndCarry();
    h.Advance(10);
    for (int64_t index : h.model().active()) {
      const Trial& t = h.model().trial(index);
      if (t.segments.empty()) continue;
      if (!t.rung_values.contains(1)) {
        h.Report(index, 1, 0.1 * static_cast<double>(index % 4) + 0.01 * index);
      } else {
        h.Report(index, 3, 0.5);
        h.Exit(index);
      }
    }
  }
  EXPECT_TRUE(h.model().finished());
  return h.journal();
}

SweepModel Replay(const SweepSpec& spec, const std::vector<Event>& journal) {
  SweepModel model(spec);
  for (const Event& e : journal) {
    StatusOr<Event> read = EventFromJson(json::parse(EventToJson(e).dump()));
    EXPECT_TRUE(read.ok());
    EXPECT_TRUE(model.Apply(*read).ok());
  }
  return model;
}

std::vector<Event> WithoutVerdicts(std::vector<Event> journal) {
  std::erase_if(journal,
                [](const Event& e) { return std::holds_alternative<event::RungVerdict>(e); });
  return journal;
}

// Each trial's phase and its verdict at rung 1, one string per trial.
std::vector<std::string> History(const SweepModel& model) {
  std::vector<std::string> history;
  for (int64_t i = 0; i < model.trial_count(); ++i) {
    const Trial& t = model.trial(i);
    auto v = t.rung_verdicts.find(1);
    history.push_back(std::string(TrialPhaseName(t.phase)) + " " +
                      (v == t.rung_verdicts.end() ? "-" : VerdictName(v->second.verdict)));
  }
  return history;
}

TEST(RungVerdicts, EachStopModeVerdictIsJournaledOnceBeforeTheStopItCauses) {
  SimulatedSweep h(TwoRungSweep(3));
  h.PassAndCarry();
  h.Advance(10);
  h.Report(0, 1, 0.5);
  h.Report(1, 1, 0.4);
  h.Report(2, 1, 0.3);
  Step plan = h.PassAndCarry();
  // One batch: the values first, then their verdicts, then what the verdicts cause.
  std::vector<event::RungVerdict> verdicts;
  for (size_t i = 0; i < plan.events.size(); ++i) {
    if (const auto* v = std::get_if<event::RungVerdict>(&plan.events[i])) {
      EXPECT_TRUE(std::holds_alternative<event::ValueRecorded>(plan.events.at(i - 3)));
      verdicts.push_back(*v);
    }
  }
  ASSERT_EQ(verdicts.size(), 3u);
  EXPECT_EQ(verdicts[0].verdict, Verdict::kContinue);
  EXPECT_EQ(verdicts[1].verdict, Verdict::kStop);
  EXPECT_EQ(verdicts[1].rung, 0);
  EXPECT_DOUBLE_EQ(verdicts[1].resource, 1);
  const auto* stopped = testing::FindEvent<event::TrialStopped>(plan);
  ASSERT_NE(stopped, nullptr);
  EXPECT_EQ(stopped->trial, 1);
  EXPECT_EQ(stopped->message, verdicts[1].message);
  EXPECT_TRUE(h.model().unjudged().empty());
  EXPECT_EQ(h.model().trial(1).rung_verdicts.at(1).verdict, Verdict::kStop);
  EXPECT_EQ(h.model().continued(0), 1);
  EXPECT_EQ(CountEvents<event::RungVerdict>(h.PassAndCarry()), 0);
}

TEST(RungVerdicts, RoundTripThroughTheJournalsJson) {
  event::RungVerdict e{.at = 12.5, .trial = 3};
  e.rung = 1;
  e.resource = 3;
  e.verdict = Verdict::kStop;
  e.message = "value 0.4 at rung 1 is not in the top 1/3";
  EXPECT_EQ(EventToJson(e).dump(),
            R"({"at":12.5,"event":"RungVerdict","message":"value 0.4 at rung 1 is not in the )"
            R"(top 1/3","resource":3.0,"rung":1,"trial":3,"verdict":"Stop"})");
  StatusOr<Event> read = EventFromJson(EventToJson(e));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(std::get<event::RungVerdict>(*read).verdict, Verdict::kStop);
  EXPECT_EQ(EventToJson(*read), EventToJson(e));
  json unknown = EventToJson(e);
  unknown["verdict"] = "Maybe";
  EXPECT_FALSE(EventFromJson(unknown).ok());
}

TEST(RungVerdicts, AJournalReplaysToTheSameHistoryUnderAnotherReductionFactor) {
  SimulatedSweep h(TwoRungSweep(3));
  std::vector<Event> journal = RecordedSweep(h);
  ASSERT_THAT(h.apply_failures(), ::testing::IsEmpty());
  ASSERT_GT(h.model().count(TrialPhase::kStopped), 0);
  ASSERT_GT(h.model().count(TrialPhase::kCompleted), 0);

  SweepModel same = Replay(TwoRungSweep(3), journal);
  SweepModel changed = Replay(TwoRungSweep(6), journal);
  for (const SweepModel* replayed : {&same, &changed}) {
    EXPECT_EQ(History(*replayed), History(h.model()));
    EXPECT_EQ(replayed->continued(0), h.model().continued(0));
    for (TrialPhase phase : {TrialPhase::kCompleted, TrialPhase::kStopped}) {
      EXPECT_EQ(replayed->count(phase), h.model().count(phase));
    }
    EXPECT_TRUE(replayed->unjudged().empty());
  }
  // Judged under the other factor, the same values would have decided otherwise: the test would
  // catch a replay that re-decides.
  SweepModel rejudged = Replay(TwoRungSweep(6), WithoutVerdicts(journal));
  for (const Event& e : decisions::JudgeValues(rejudged, h.now())) {
    ASSERT_TRUE(rejudged.Apply(e).ok());
  }
  EXPECT_NE(History(rejudged), History(h.model()));
}

TEST(RungVerdicts, AJournalWrittenBeforeVerdictsWereJournaledReplaysToTheSameHistory) {
  SimulatedSweep h(TwoRungSweep(3));
  std::vector<Event> journal = RecordedSweep(h);
  SweepModel old = Replay(TwoRungSweep(3), WithoutVerdicts(journal));
  // Its values wait for their verdicts, which the first pass records once: each as its rung said
  // when the value arrived, so the history is the one the sweep had.
  const size_t unjudged = old.unjudged().size();
  EXPECT_EQ(unjudged, static_cast<size_t>(h.model().trial_count()));
  std::vector<Event> recorded = decisions::JudgeValues(old, h.now());
  ASSERT_EQ(recorded.size(), unjudged);
  for (const Event& e : recorded) ASSERT_TRUE(old.Apply(e).ok());
  EXPECT_TRUE(old.unjudged().empty());
  EXPECT_TRUE(decisions::JudgeValues(old, h.now()).empty());
  EXPECT_EQ(History(old), History(h.model()));
  EXPECT_EQ(old.continued(0), h.model().continued(0));
  // The messages too, word for word.
  for (const Event& e : recorded) {
    const auto& v = std::get<event::RungVerdict>(e);
    EXPECT_EQ(v.message, h.model().trial(v.trial).rung_verdicts.at(v.resource).message);
  }
}

// A pass's batch is one append, but a crash may leave any prefix of it journaled (the local
// journal writes record by record; the cluster's trial log spans several objects). Cut after
// every event, the journal replays, and the next pass's Decide goes on from it: a verdict it
// records for a value the cut left unjudged is the one the whole journal has.
TEST(RungVerdicts, AJournalCutAfterAnyEventReplaysAndTheNextPassJudgesAsTheWholeOneDid) {
  SimulatedSweep h(TwoRungSweep(3));
  std::vector<Event> journal = RecordedSweep(h);
  for (size_t cut = 0; cut <= journal.size(); ++cut) {
    SweepModel prefix = Replay(TwoRungSweep(3), {journal.begin(), journal.begin() + cut});
    Observation nothing;
    nothing.now = h.now();
    StatusOr<Step> step = Decide(prefix, nothing, Ledger(3600), PassMemory{}, std::nullopt);
    ASSERT_TRUE(step.ok()) << "cut after event " << cut << ": " << step.status().message();
    for (const Event& e : step->events) {
      const auto* v = std::get_if<event::RungVerdict>(&e);
      if (v == nullptr) continue;
      const RungVerdict& whole = h.model().trial(v->trial).rung_verdicts.at(v->resource);
      EXPECT_EQ(v->verdict, whole.verdict) << "cut after event " << cut;
      EXPECT_EQ(v->message, whole.message) << "cut after event " << cut;
    }
  }
}

TEST(RungVerdicts, APromotionIsTheVerdictOfAPausedTrialsRecord) {
  json j = testing::TableSweep();
  j["spec"]["scheduler"]["mode"] = "pause";
  SweepModel model(ParseSweep(j).value());
  ASSERT_TRUE(model.Apply(event::TrialCreated{.at = 0, .trial = 0}).ok());
  event::SegmentLaunched launched{.at = 0, .trial = 0, .segment = 0};
  launched.until = 1;
  ASSERT_TRUE(model.Apply(launched).ok());
  event::ValueRecorded value{.at = 1, .trial = 0};
  value.resource = 1;
  value.value = 0.5;
  ASSERT_TRUE(model.Apply(value).ok());
  EXPECT_TRUE(model.unjudged().empty()) << "pause mode decides at promotion";
  event::TrialPromoted promoted{.at = 2, .trial = 0};
  promoted.rung = 0;
  ASSERT_TRUE(model.Apply(promoted).ok());
  ASSERT_TRUE(model.trial(0).rung_verdicts.contains(1));
  EXPECT_EQ(model.trial(0).rung_verdicts.at(1).verdict, Verdict::kPromote);
  promoted.rung = 5;
  EXPECT_FALSE(model.Apply(promoted).ok()) << "a promotion from a rung that decides nothing";
}

}  // namespace
}  // namespace bsw
