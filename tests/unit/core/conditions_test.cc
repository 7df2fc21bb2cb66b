// Table tests of the conditions a pass publishes.
#include "operator/core/conditions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/core/simulated_sweep.h"

namespace bsw::decisions {
namespace {

using ::testing::HasSubstr;

SweepSpec Spec() { return ParseSweep(testing::TableSweep()).value(); }

TEST(ProgressingCondition, SaysWhereTheSweepStands) {
  SweepModel model(Spec());
  PassSummary running;
  running.occupied = 2;
  Condition c = ProgressingCondition(model, running);
  EXPECT_EQ(c.status, "True");
  EXPECT_EQ(c.reason, "TrialsRunning");
  EXPECT_EQ(c.message, "2 trials running");

  PassSummary finishing;
  finishing.finish = Finish{SweepPhase::kBudgetExhausted, Reason::kBudgetExhausted, "spent"};
  c = ProgressingCondition(model, finishing);
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.reason, "BudgetExhausted");
  EXPECT_EQ(c.message, "spent");

  event::SweepFinished finished{.at = 0};
  finished.phase = SweepPhase::kCompleted;
  finished.message = "20 trials finished";
  ASSERT_TRUE(model.Apply(finished).ok());
  c = ProgressingCondition(model, running);
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.reason, "Completed");
  EXPECT_EQ(c.message, "20 trials finished");
}

TEST(ProgressingCondition, ProbingUntilThePhaseDecides) {
  nlohmann::json j = testing::TableSweep();
  j["spec"]["throughput"] = {{"enabled", true}};
  SweepModel model(ParseSweep(j).value());
  PassSummary probing;
  EXPECT_EQ(ProgressingCondition(model, probing).reason, "Probing");
  EXPECT_EQ(ThroughputCondition(model, probing).status, "Unknown");
  PassSummary decided;
  decided.decided = ThroughputDecision{};
  decided.decided->target_met = true;
  decided.decided->reason = Reason::kTargetMet;
  EXPECT_EQ(ProgressingCondition(model, decided).reason, "TrialsRunning");
  Condition throughput = ThroughputCondition(model, decided);
  EXPECT_EQ(throughput.status, "False");
  EXPECT_EQ(throughput.reason, "TargetMet");
}

TEST(ScheduledCondition, NamesTheFirstHeldUpTrialAndCountsTheOthers) {
  Observed observed;
  EXPECT_EQ(ScheduledCondition(observed).status, "True");
  for (int i = 0; i < 3; ++i) {
    SegmentStatus& s = observed.segments[{"t" + std::to_string(i), 0}];
    s.trial = "t" + std::to_string(i);
    s.state = SegmentState::kPending;
    if (i > 0) {
      s.waiting_reason = "Unschedulable";
      s.waiting_message = "0/1 nodes have a free GPU";
    }
  }
  Condition c = ScheduledCondition(observed);
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.reason, "Unschedulable");
  EXPECT_EQ(c.message, "t1: 0/1 nodes have a free GPU (and 1 more held up)");
}

TEST(BudgetCondition, ReportsTheFirstDenialOrWhatIsUsed) {
  SweepModel model(Spec());
  Ledger ledger(7200);
  PassSummary pass;
  Condition c = BudgetCondition(model, ledger, pass);
  EXPECT_EQ(c.status, "True");
  EXPECT_EQ(c.message, "0.0000 of 2.0000 GPU-hours used");
  pass.denials = {Denial{Reason::kBudgetExhausted, 3600, 1800},
                  Denial{Reason::kBudgetExhausted, 1, 1}};
  c = BudgetCondition(model, ledger, pass);
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.reason, "BudgetExhausted");
  EXPECT_THAT(c.message, HasSubstr("requested 1.0000 GPU-hours, remaining 0.5000"));
}

TEST(BudgetCondition, StaysFalseOnThePassesAfterTheSweepEndedBudgetExhausted) {
  for (SweepPhase phase : {SweepPhase::kBudgetExhausted, SweepPhase::kCompleted}) {
    SweepModel model(Spec());
    Event finished =
        Finish{phase,
               phase == SweepPhase::kCompleted ? Reason::kSweepCompleted : Reason::kBudgetExhausted,
               "the end"}
            .ToEvent(0);
    ASSERT_TRUE(model.Apply(finished).ok());
    Condition c = BudgetCondition(model, Ledger(7200), PassSummary{});
    bool exhausted = phase == SweepPhase::kBudgetExhausted;
    EXPECT_EQ(c.status, exhausted ? "False" : "True") << SweepPhaseName(phase);
    EXPECT_EQ(c.message, exhausted ? "the end" : "0.0000 of 2.0000 GPU-hours used");
  }
}

TEST(MetricsCondition, ListsTheTrialsWaitedFor) {
  PassSummary pass;
  EXPECT_EQ(MetricsCondition(pass).status, "True");
  pass.unknown = {"a", "b"};
  Condition c = MetricsCondition(pass);
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.reason, "MetricsMissing");
  EXPECT_EQ(c.message, "waiting for the objective of a, b");
}

TEST(Conditions, ListsThroughputOnlyWhenTheSpecProbes) {
  SweepModel model(Spec());
  Observed observed;
  PlannerOptions options;
  PlanInput in{model, observed, 0, options};
  std::vector<std::string> types;
  for (const Condition& c : Conditions(in, Ledger(3600), PassSummary{})) types.push_back(c.type);
  EXPECT_THAT(types, ::testing::ElementsAre("Progressing", "TrialsScheduled", "BudgetAvailable",
                                            "MetricsAvailable"));
}

}  // namespace
}  // namespace bsw::decisions
