#include "operator/core/probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>

#include "operator/core/sweep_status.h"
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

// The planner table's sweep (one GPU hour, one device per trial) with the default probe phase:
// 5% of it (180 s) for probing, the baseline and workers 0, 1, 2, 4, from a template that loads
// on the training thread.
json ProbeSweep() {
  json j = testing::TableSweep();
  j["spec"]["trial"]["template"]["spec"]["containers"][0]["args"] = {"--dataset=image-folder",
                                                                     "--workers=0"};
  j["spec"]["throughput"] = {{"enabled", true}};
  return j;
}

ProbeFigures Figures(double samples_per_second, double data_wait_ratio) {
  return ProbeFigures{samples_per_second, data_wait_ratio, std::nullopt};
}

// Drives one probe run through launch, measurement after `seconds`, stop and end. Returns the
// plan that launched it.
Step ProbeOnce(SimulatedSweep& h, double samples_per_second, double data_wait_ratio,
               double seconds = 4) {
  Step launch = h.PassAndCarry();
  EXPECT_EQ(CountEvents<event::ProbeLaunched>(launch), 1);
  h.Advance(seconds);
  h.ReportProbe(samples_per_second, data_wait_ratio);
  Step measured = h.PassAndCarry();
  EXPECT_EQ(CountEvents<event::ProbeMeasured>(measured), 1);
  EXPECT_EQ(CountActions<Stop>(measured), 1);
  h.Advance(0.5);
  Step ended = h.PassAndCarry();
  EXPECT_EQ(CountEvents<event::ProbeEnded>(ended), 1);
  return launch;
}

// Probes the baseline and the four candidates at `rates` samples/s, each with a data wait of 30%
// (below the 0.85 gate), then plans once more: the plan after the decision.
Step ProbeAllBelowTheGate(SimulatedSweep& h, const std::vector<double>& rates) {
  for (double rate : rates) ProbeOnce(h, rate, 0.30);
  return h.PassAndCarry();
}

class ProbePhase : public ::testing::TestWithParam<testing::Situation> {};

TEST_P(ProbePhase, DecidesAsTheSituationRequires) {
  testing::RunSituation(ProbeSweep(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Probing, ProbePhase,
    ::testing::Values(
        Situation{"FirstPassProbesTheBaselineAloneWithAllTheProbeBudget", NoEdit,
                  [](SimulatedSweep& h) {
                    Step plan = h.PassAndCarry();
                    EXPECT_EQ(h.model().phase(), SweepPhase::kProbing);
                    EXPECT_EQ(CountEvents<event::TrialCreated>(plan), 0);
                    ASSERT_EQ(plan.actions.size(), 1u);
                    const auto* start = std::get_if<Launch>(&plan.actions[0]);
                    ASSERT_NE(start, nullptr);
                    EXPECT_EQ(start->spec.trial, h.model().ProbeName(0));
                    EXPECT_DOUBLE_EQ(start->spec.deadline_unix_seconds, h.now() + 180);
                    EXPECT_TRUE(h.model().probes().at(0).settings.empty());
                    EXPECT_EQ(FindCondition(plan, "Progressing")->reason, "Probing");
                    EXPECT_EQ(FindCondition(plan, "ThroughputBelowTarget")->status, "Unknown");
                    // No figures yet: the probe keeps running, nothing else starts.
                    h.Advance(2);
                    plan = h.PassAndCarry();
                    EXPECT_TRUE(plan.events.empty());
                    EXPECT_TRUE(plan.actions.empty());
                  }},
        Situation{"GateMetPicksTheFastestAboveTargetAndTiesGoToFewerWorkers", NoEdit,
                  [](SimulatedSweep& h) {
                    ProbeOnce(h, 1000, 0.40);  // baseline (workers 0 in the template)
                    ProbeOnce(h, 1010, 0.40);  // workers 0
                    ProbeOnce(h, 1800, 0.05);  // workers 1
                    ProbeOnce(h, 1850, 0.10);  // workers 2: fastest, but within 5% of workers 1
                    ProbeOnce(h, 1500, 0.20);  // workers 4: below the gate
                    Step plan = h.PassAndCarry();
                    const auto* decided = FindEvent<event::ThroughputDecided>(plan);
                    ASSERT_NE(decided, nullptr);
                    EXPECT_EQ(decided->reason, "TargetMet");
                    EXPECT_EQ(decided->probe, 2);
                    EXPECT_EQ(decided->params, (Config{{"workers", 1}}));
                    EXPECT_THAT(decided->message, HasSubstr("workers=1: 1800 samples/s"));
                    EXPECT_THAT(decided->message,
                                HasSubstr("baseline (workers=0): 1000 samples/s"));
                    const Condition* gate = FindCondition(plan, "ThroughputBelowTarget");
                    EXPECT_EQ(gate->status, "False");
                    EXPECT_EQ(gate->reason, "TargetMet");
                    EXPECT_EQ(h.model().phase(), SweepPhase::kRunning);
                    plan = h.PassAndCarry();
                    EXPECT_EQ(CountEvents<event::TrialCreated>(plan), 2);
                    ASSERT_EQ(CountActions<Launch>(plan), 2);
                    for (const StepAction& a : plan.actions) {
                      EXPECT_TRUE(h.model().FindTrial(std::get<Launch>(a).spec.trial))
                          << "a trial's launch, no probe's";
                    }
                    // Probing was charged: 4 s per probe (measured, then stopped), five probes.
                    json status = BuildStatus(h.model(), Ledger(3600), json::array());
                    EXPECT_EQ(status["phase"], "Running");
                    EXPECT_EQ(status["throughput"]["chosen"]["settings"], json({{"workers", 1}}));
                    EXPECT_DOUBLE_EQ(status["throughput"]["chosen"]["samplesPerSecond"], 1800);
                    EXPECT_DOUBLE_EQ(status["throughput"]["baseline"]["dataWaitRatio"], 0.40);
                    EXPECT_EQ(status["throughput"]["baseline"]["settings"], json({{"workers", 0}}));
                    EXPECT_EQ(status["throughput"]["trialArgs"], json({"--workers=1"}));
                    EXPECT_DOUBLE_EQ(status["throughput"]["budgetUsed"], 0.006);  // 20 s
                    EXPECT_THAT(status["throughput"]["utilizationSource"].get<std::string>(),
                                HasSubstr("1 - dataWaitRatio"));
                  }},
        Situation{
            "NothingMeetsTheGateContinuesWithTheFastestAndSaysWhereTimeGoes", NoEdit,
            [](SimulatedSweep& h) {
              Step plan = ProbeAllBelowTheGate(h, {900, 950, 1300, 1250, 1100});
              const Condition* gate = FindCondition(plan, "ThroughputBelowTarget");
              ASSERT_NE(gate, nullptr);
              EXPECT_EQ(gate->status, "True");
              EXPECT_EQ(gate->reason, "BelowTarget");
              EXPECT_THAT(gate->message, HasSubstr("no candidate reached utilization 0.85"));
              EXPECT_THAT(gate->message, HasSubstr("workers=1: 1300 samples/s"));
              EXPECT_THAT(gate->message, HasSubstr("data wait 30% of step time, compute 70%"));
              EXPECT_EQ(h.model().throughput_decision()->trial_args, (Config{{"workers", 1}}));
              plan = h.PassAndCarry();
              EXPECT_EQ(CountEvents<event::TrialCreated>(plan), 2);
              // The condition stays, published from the journaled decision.
              EXPECT_EQ(FindCondition(plan, "ThroughputBelowTarget")->status, "True");
            }},
        Situation{"NothingMeetsTheGateAndTheBaselineIsFastestSaysTheBaselineWins", NoEdit,
                  [](SimulatedSweep& h) {
                    Step plan = ProbeAllBelowTheGate(h, {1300, 950, 900, 1000, 1100});
                    const Condition* gate = FindCondition(plan, "ThroughputBelowTarget");
                    ASSERT_NE(gate, nullptr);
                    EXPECT_EQ(gate->reason, "BelowTarget");
                    EXPECT_THAT(gate->message,
                                HasSubstr("fastest the baseline (workers=0): 1300 samples/s"));
                    EXPECT_EQ(h.model().throughput_decision()->trial_args, Config{});
                  }},
        Situation{"NothingMeetsTheGateWithOnBelowTargetStopFailsTheSweep",
                  [](json& j) { j["spec"]["throughput"]["onBelowTarget"] = "stop"; },
                  [](SimulatedSweep& h) {
                    for (int i = 0; i < 5; ++i) ProbeOnce(h, 1000, 0.5);
                    Step plan = h.PassAndCarry();
                    const auto* finished = FindEvent<event::SweepFinished>(plan);
                    ASSERT_NE(finished, nullptr);
                    EXPECT_EQ(finished->phase, SweepPhase::kFailed);
                    EXPECT_EQ(finished->reason, "ThroughputBelowTarget");
                    EXPECT_THAT(finished->message, HasSubstr("onBelowTarget is stop"));
                    EXPECT_EQ(h.model().phase(), SweepPhase::kFailed);
                    plan = h.PassAndCarry();
                    EXPECT_EQ(CountEvents<event::TrialCreated>(plan), 0);
                    EXPECT_EQ(h.model().trial_count(), 0);
                  }},
        Situation{"BudgetFractionHitDecidesOnWhatWasMeasuredAndNeverExceedsIt", NoEdit,
                  [](SimulatedSweep& h) {
                    // 180 s for probing; each probe runs 80 s, so a third (needing 100 s) does not
                    // fit.
                    ProbeOnce(h, 1000, 0.4, 80);
                    Step second = ProbeOnce(h, 1500, 0.1, 80);
                    // What the first left: 100 s from its launch (80.5 s ago).
                    EXPECT_DOUBLE_EQ(
                        std::get<Launch>(second.actions.at(0)).spec.deadline_unix_seconds,
                        h.now() - 80.5 + 100);
                    Step plan = h.PassAndCarry();
                    const auto* decided = FindEvent<event::ThroughputDecided>(plan);
                    ASSERT_NE(decided, nullptr);
                    EXPECT_EQ(decided->probe, 1);
                    EXPECT_THAT(decided->message, HasSubstr("probed 2 of 5 candidates"));
                    EXPECT_THAT(decided->message, HasSubstr("maxBudgetFraction 0.05"));
                    double charged = 0;
                    for (const ProbeRun& p : h.model().probes()) {
                      charged += p.charged_device_seconds;
                      EXPECT_LE(p.deadline - p.launched_at, 180);
                    }
                    EXPECT_DOUBLE_EQ(charged, 160);
                  }},
        Situation{"ProbeThatFailsIsSkippedAndTheNextCandidateIsProbed", NoEdit,
                  [](SimulatedSweep& h) {
                    ProbeOnce(h, 1000, 0.4);
                    h.PassAndCarry();  // workers 0
                    h.Advance(3);
                    h.ExitProbe(SegmentState::kFailed, 2, Reason::kError);
                    Step plan = h.PassAndCarry();
                    const auto* ended = FindEvent<event::ProbeEnded>(plan);
                    ASSERT_NE(ended, nullptr);
                    EXPECT_EQ(ended->reason, "Error");
                    EXPECT_EQ(ended->message, "exited with code 2");
                    EXPECT_DOUBLE_EQ(ended->seconds, 3);
                    plan = h.PassAndCarry();
                    const auto* next = FindEvent<event::ProbeLaunched>(plan);
                    ASSERT_NE(next, nullptr);
                    EXPECT_EQ(next->params, (Config{{"workers", 1}}));
                    h.Advance(4);
                    h.ReportProbe(1900, 0.02);
                    h.PassAndCarry();
                    h.PassAndCarry();
                    ProbeOnce(h, 1700, 0.05);
                    ProbeOnce(h, 1600, 0.05);
                    plan = h.PassAndCarry();
                    EXPECT_EQ(FindEvent<event::ThroughputDecided>(plan)->probe, 2);
                    EXPECT_EQ(h.model().probes().at(1).reason, "Error");
                  }},
        Situation{"ProbeThatExitsWithoutFiguresIsMetricsMissing", NoEdit,
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.Advance(3);
                    h.ExitProbe(SegmentState::kSucceeded, 0, Reason::kNone);
                    Step plan = h.PassAndCarry();
                    EXPECT_EQ(FindEvent<event::ProbeEnded>(plan)->reason, "MetricsMissing");
                  }},
        Situation{"ProbeStoppedFromOutsideIsProbedAgain", NoEdit,
                  [](SimulatedSweep& h) {
                    h.PassAndCarry();
                    h.Advance(2);
                    h.ExitProbe(SegmentState::kFailed, 143, Reason::kStopped);
                    Step plan = h.PassAndCarry();
                    EXPECT_EQ(FindEvent<event::ProbeEnded>(plan)->reason, "Interrupted");
                    plan = h.PassAndCarry();
                    const auto* again = FindEvent<event::ProbeLaunched>(plan);
                    ASSERT_NE(again, nullptr);
                    EXPECT_EQ(again->probe, 1);
                    EXPECT_TRUE(again->params.empty());  // the baseline again
                  }},
        Situation{"CrashBeforeTheStartOrTheStopReissuesThemWithoutNewEvents", NoEdit,
                  [](SimulatedSweep& h) {
                    Step plan = h.Pass();  // journaled, then the controller died before Start
                    ASSERT_EQ(CountEvents<event::ProbeLaunched>(plan), 1);
                    plan = h.PassAndCarry();
                    EXPECT_TRUE(plan.events.empty());
                    ASSERT_EQ(plan.actions.size(), 1u);
                    EXPECT_TRUE(std::holds_alternative<Launch>(plan.actions[0]));
                    h.Advance(4);
                    h.ReportProbe(1000, 0.3);
                    plan = h.Pass();  // measured and journaled; the stop was lost
                    EXPECT_EQ(CountEvents<event::ProbeMeasured>(plan), 1);
                    plan = h.PassAndCarry();
                    EXPECT_TRUE(plan.events.empty());
                    EXPECT_EQ(CountActions<Stop>(plan), 1);
                  }},
        Situation{"TooLittleBudgetForAnyProbeDecidesNothingMeasured",
                  [](json& j) { j["spec"]["throughput"]["maxBudgetFraction"] = 0.001; },
                  [](SimulatedSweep& h) {
                    Step plan = h.PassAndCarry();  // 3.6 s < the 5 s minimum reservation
                    const auto* decided = FindEvent<event::ThroughputDecided>(plan);
                    ASSERT_NE(decided, nullptr);
                    EXPECT_EQ(decided->reason, "NothingMeasured");
                    EXPECT_EQ(decided->probe, -1);
                    EXPECT_TRUE(decided->params.empty());
                    EXPECT_THAT(decided->message, HasSubstr("probed 0 of 5 candidates"));
                    EXPECT_EQ(FindCondition(plan, "ThroughputBelowTarget")->status, "True");
                    plan = h.PassAndCarry();
                    EXPECT_EQ(CountEvents<event::TrialCreated>(plan), 2);
                  }}),
    [](const ::testing::TestParamInfo<Situation>& row) { return row.param.name; });

TEST(ProbePhase, JournalReplayRebuildsTheSameProbesAndDecision) {
  SweepSpec spec = ParseSweep(ProbeSweep()).value();
  SimulatedSweep h(spec);
  for (double rate : {1000.0, 1000.0, 1800.0, 1700.0, 1600.0}) ProbeOnce(h, rate, 0.1);
  h.PassAndCarry();
  SweepModel replayed(spec);
  for (const Event& e : h.journal()) {
    StatusOr<Event> round_trip = EventFromJson(json::parse(EventToJson(e).dump()));
    ASSERT_TRUE(round_trip.ok()) << round_trip.status().message();
    ASSERT_TRUE(replayed.Apply(*round_trip).ok());
  }
  EXPECT_EQ(replayed.phase(), SweepPhase::kRunning);
  ASSERT_EQ(replayed.probes().size(), 5u);
  EXPECT_EQ(replayed.probes()[2].figures->samples_per_second, 1800);
  EXPECT_DOUBLE_EQ(replayed.probes()[2].charged_device_seconds, 4);
  ASSERT_TRUE(replayed.throughput_decision().has_value());
  EXPECT_EQ(replayed.throughput_decision()->chosen, 2);
  EXPECT_EQ(replayed.throughput_decision()->trial_args, (Config{{"workers", 1}}));
  EXPECT_FALSE(replayed.probing());
}

TEST(ProbePhase, EnablingItMidSweepDoesNotStopTheSearchToProbe) {
  SweepModel model(ParseSweep(ProbeSweep()).value());
  EXPECT_TRUE(model.probing());
  event::TrialCreated created{.at = 1, .trial = 0};
  ASSERT_TRUE(model.Apply(created).ok());
  EXPECT_FALSE(model.probing());
  EXPECT_EQ(model.phase(), SweepPhase::kRunning);
}

TEST(ProbeCandidates, BaselineFirstThenTheProductWithWorkersInnermost) {
  ThroughputSpec t;
  t.workers = {0, 2};
  t.precision = {"bf16", "fp32"};
  t.micro_batches = {{128, 1}, {64, 2}};
  std::vector<Config> c = ProbeCandidates(t);
  ASSERT_EQ(c.size(), 9u);
  EXPECT_TRUE(c[0].empty());
  EXPECT_EQ(
      c[1],
      (Config{
          {"workers", 0}, {"precision", "bf16"}, {"batch-size", 128}, {"accumulation-steps", 1}}));
  EXPECT_EQ(c[2][0], (std::pair<std::string, json>{"workers", 2}));
  EXPECT_EQ(c[3][1], (std::pair<std::string, json>{"precision", "fp32"}));
  EXPECT_EQ(c[5][2], (std::pair<std::string, json>{"batch-size", 64}));
}

TEST(DecideThroughput, ScalesTheLearningRateWhenTheEffectiveBatchChanges) {
  json j = ProbeSweep();
  j["spec"]["searchSpace"].erase("batch-size");
  j["spec"]["throughput"]["candidates"] = {{"workers", {1}},
                                           {"microBatches",
                                            {{{"batchSize", 128}},
                                             {{"batchSize", 64}, {"accumulationSteps", 2}},
                                             {{"batchSize", 256}}}}};
  SweepSpec spec = ParseSweep(j).value();
  std::vector<ProbeRun> probes(4);
  for (int i = 0; i < 4; ++i) {
    probes[static_cast<size_t>(i)].index = i;
    probes[static_cast<size_t>(i)].settings =
        ProbeCandidates(spec.throughput)[static_cast<size_t>(i)];
  }
  probes[0].figures = Figures(1000, 0.3);
  probes[1].figures = Figures(1500, 0.05);
  probes[2].figures = Figures(1400, 0.05);
  ThroughputDecision same = DecideThroughput(spec, probes, "");
  EXPECT_EQ(same.chosen, 1);
  EXPECT_EQ(FlagArgs(same.trial_args), (std::vector<std::string>{"--workers=1", "--batch-size=128",
                                                                 "--accumulation-steps=1"}));
  probes[3].figures = Figures(2400, 0.05);  // batch 256: twice the effective batch
  ThroughputDecision larger = DecideThroughput(spec, probes, "");
  EXPECT_EQ(larger.chosen, 3);
  EXPECT_EQ(FlagArgs(larger.trial_args),
            (std::vector<std::string>{"--workers=1", "--batch-size=256", "--accumulation-steps=1",
                                      "--lr-scaling=linear", "--reference-batch=128"}));
}

TEST(DecideThroughput, AcceleratorUtilizationIsTheGateWhereReported) {
  SweepSpec spec = ParseSweep(ProbeSweep()).value();
  std::vector<ProbeRun> probes(2);
  probes[0].index = 0;
  probes[0].figures = ProbeFigures{1000, 0.01, 0.5};  // no data wait, yet the GPU idles
  probes[1].index = 1;
  probes[1].settings = {{"workers", 2}};
  probes[1].figures = ProbeFigures{900, 0.10, 0.9};
  ThroughputDecision d = DecideThroughput(spec, probes, "");
  EXPECT_TRUE(d.target_met);
  EXPECT_EQ(d.chosen, 1);
}

TEST(TemplateSettings, ReadsTheLastValueOfEachProbedFlagInEitherSpelling) {
  json j = ProbeSweep();
  j["spec"]["trial"]["template"]["spec"]["containers"][0]["args"] = {
      "--workers=3", "--precision", "fp32", "--lr=0.1", "--workers", "0"};
  SweepSpec spec = ParseSweep(j).value();
  EXPECT_EQ(TemplateSettings(spec), (Config{{"workers", 0}, {"precision", "fp32"}}));
}

TEST(ProbeArgs, AddsTheSettingsThenTheTrainersProbeMode) {
  ThroughputSpec t;
  t.probe_steps = 12;
  EXPECT_EQ(ProbeArgs(t, {{"workers", 2}, {"precision", "bf16"}}),
            (std::vector<std::string>{"--workers=2", "--precision=bf16", "--probe-steps=12",
                                      "--linger-seconds=30"}));
}

}  // namespace
}  // namespace bsw
