// Rung verdicts are recorded, never recomputed: each is a RungVerdict event that replay applies,
// so a journal replays to the same history whatever the code or the spec now says about ASHA.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "operator/core/decisions.h"
#include "tests/unit/core/planner_harness.h"

namespace bsw {
namespace {

using nlohmann::json;
using testing::CountEvents;
using testing::PlannerHarness;

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
std::vector<Event> RecordedSweep(PlannerHarness& h) {
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
  PlannerHarness h(TwoRungSweep(3));
  h.PassAndCarry();
  h.Advance(10);
  h.Report(0, 1, 0.5);
  h.Report(1, 1, 0.4);
  h.Report(2, 1, 0.3);
  Plan plan = h.PassAndCarry();
  ASSERT_EQ(CountEvents<event::RungVerdict>(plan), 3);
  EXPECT_TRUE(std::holds_alternative<event::RungVerdict>(plan.events[0]));
  EXPECT_EQ(std::get<event::RungVerdict>(plan.events[0]).verdict, Verdict::kContinue);
  EXPECT_EQ(std::get<event::RungVerdict>(plan.events[1]).verdict, Verdict::kStop);
  EXPECT_EQ(std::get<event::RungVerdict>(plan.events[1]).rung, 0);
  EXPECT_DOUBLE_EQ(std::get<event::RungVerdict>(plan.events[1]).resource, 1);
  const auto* stopped = testing::FindEvent<event::TrialStopped>(plan);
  ASSERT_NE(stopped, nullptr);
  EXPECT_EQ(stopped->trial, 1);
  EXPECT_EQ(stopped->message, std::get<event::RungVerdict>(plan.events[1]).message);
  EXPECT_TRUE(h.model().unrecorded_verdicts().empty());
  EXPECT_TRUE(h.model().trial(1).rung_verdicts.at(1).recorded);
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
  PlannerHarness h(TwoRungSweep(3));
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
    EXPECT_TRUE(replayed->unrecorded_verdicts().empty());
  }
  // Recomputed under the other factor, the same values would have decided otherwise: the test
  // would catch a replay that re-decides.
  EXPECT_NE(History(Replay(TwoRungSweep(6), WithoutVerdicts(journal))), History(h.model()));
}

TEST(RungVerdicts, AJournalWrittenBeforeVerdictsWereJournaledReplaysToTheSameHistory) {
  PlannerHarness h(TwoRungSweep(3));
  std::vector<Event> journal = RecordedSweep(h);
  SweepModel old = Replay(TwoRungSweep(3), WithoutVerdicts(journal));
  EXPECT_EQ(History(old), History(h.model()));
  EXPECT_EQ(old.continued(0), h.model().continued(0));
  // Its verdicts are derived until the first pass records them, once.
  const size_t derived = old.unrecorded_verdicts().size();
  EXPECT_EQ(derived, static_cast<size_t>(h.model().trial_count()));
  std::vector<Event> recorded = decisions::RecordVerdicts(old, h.now());
  ASSERT_EQ(recorded.size(), derived);
  for (const Event& e : recorded) ASSERT_TRUE(old.Apply(e).ok());
  EXPECT_TRUE(old.unrecorded_verdicts().empty());
  EXPECT_EQ(History(old), History(h.model()));
  EXPECT_EQ(old.continued(0), h.model().continued(0));
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
  EXPECT_TRUE(model.unrecorded_verdicts().empty()) << "pause mode decides at promotion";
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
