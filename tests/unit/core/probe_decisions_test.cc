// Table tests of the probe phase's decisions: how a probe run's end is read, and when the phase
// launches the next probe or decides.
#include "operator/core/probe_decisions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>

#include "tests/unit/core/simulated_sweep.h"

namespace bsw::decisions {
namespace {

using ::testing::HasSubstr;

SweepSpec ProbingSpec() {
  nlohmann::json j = testing::TableSweep();
  j["spec"]["throughput"] = {{"enabled", true}};
  return ParseSweep(j).value();
}

struct ProbeEndRow {
  std::string name;
  bool measured;
  SegmentState state;
  Reason backend_reason;
  std::string want_reason;
  std::string message_has;
};

void PrintTo(const ProbeEndRow& row, std::ostream* os) { *os << row.name; }

class ProbeEndTable : public ::testing::TestWithParam<ProbeEndRow> {};

TEST_P(ProbeEndTable, ReadsTheProbesEndAndChargesItsRun) {
  const ProbeEndRow& row = GetParam();
  SweepModel model(ProbingSpec());
  Observed observed;
  PlannerOptions options;
  PlanInput in{model, observed, 1000, options};
  ProbeRun p;
  p.index = 2;
  if (row.measured) p.figures = ProbeFigures{100, 0.1, std::nullopt};
  SegmentStatus st;
  st.state = row.state;
  st.reason = row.backend_reason;
  st.exit_code = row.state == SegmentState::kSucceeded ? 0 : 1;
  st.started_unix_seconds = 900;
  st.finished_unix_seconds = 960;
  st.devices = 2;
  st.output_tail = "the end of its output";
  event::ProbeEnded e = ProbeEndEvent(in, p, st);
  EXPECT_EQ(e.probe, 2);
  EXPECT_EQ(e.reason, row.want_reason);
  EXPECT_THAT(e.message, HasSubstr(row.message_has));
  EXPECT_DOUBLE_EQ(e.seconds, 120);
  EXPECT_EQ(e.output.empty(), row.want_reason != "Error");
}

INSTANTIATE_TEST_SUITE_P(
    Rows, ProbeEndTable,
    ::testing::Values(
        ProbeEndRow{"MeasuredEndsAsPlanned", true, SegmentState::kFailed, Reason::kStopped, "", ""},
        ProbeEndRow{"StoppedBeforeMeasuringIsInterrupted", false, SegmentState::kFailed,
                    Reason::kStopped, "Interrupted", "probed again"},
        ProbeEndRow{"EvictedBeforeMeasuringIsInterrupted", false, SegmentState::kFailed,
                    Reason::kEvicted, "Interrupted", "probed again"},
        ProbeEndRow{"DeadlineFirstIsDeadlineExceeded", false, SegmentState::kFailed,
                    Reason::kDeadlineExceeded, "DeadlineExceeded", "maxBudgetFraction"},
        ProbeEndRow{"ExitedWithoutFiguresIsMetricsMissing", false, SegmentState::kSucceeded,
                    Reason::kNone, "MetricsMissing", "without reporting its probe figures"},
        ProbeEndRow{"AFailureIsAnErrorWithItsOutput", false, SegmentState::kFailed, Reason::kError,
                    "Error", "exited with code 1"}),
    [](const ::testing::TestParamInfo<ProbeEndRow>& row) { return row.param.name; });

TEST(ReconcileProbes, LaunchesTheFirstProbeWithinItsShareOfTheBudget) {
  SweepModel model(ProbingSpec());
  Observed observed;
  PlannerOptions options;
  PlanInput in{model, observed, 1000, options};
  ProbePhase phase = ReconcileProbes(in, Ledger(3600));
  ASSERT_EQ(phase.admitted.part.events.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<event::ProbeLaunched>(phase.admitted.part.events[0]));
  const auto& launched = std::get<event::ProbeLaunched>(phase.admitted.part.events[0]);
  EXPECT_EQ(launched.probe, 0);
  // spec.throughput.maxBudgetFraction 0.05 of one GPU-hour: 180 device-seconds.
  EXPECT_DOUBLE_EQ(launched.deadline, 1000 + 180);
  EXPECT_DOUBLE_EQ(phase.admitted.ledger.reserved(), 180);
  ASSERT_EQ(phase.admitted.part.actions.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<StartProbe>(phase.admitted.part.actions[0]));
  EXPECT_FALSE(phase.decided.has_value());
  EXPECT_FALSE(phase.finish.has_value());
}

TEST(ReconcileProbes, DecidesWhenThePhaseBudgetCannotCoverTheNextProbe) {
  SweepModel model(ProbingSpec());
  Observed observed;
  PlannerOptions options;
  PlanInput in{model, observed, 1000, options};
  Ledger spent(3600);
  ASSERT_FALSE(spent.Admit(3600 - 4).has_value());  // less than the 5 s minimum left
  ProbePhase phase = ReconcileProbes(in, spent);
  ASSERT_EQ(phase.admitted.part.events.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<event::ThroughputDecided>(phase.admitted.part.events[0]));
  EXPECT_THAT(std::get<event::ThroughputDecided>(phase.admitted.part.events[0]).message,
              HasSubstr("probed 0 of"));
  ASSERT_TRUE(phase.decided.has_value());
  EXPECT_FALSE(phase.decided->target_met);
  EXPECT_FALSE(phase.finish.has_value()) << "spec.throughput.onBelowTarget is continue";
}

}  // namespace
}  // namespace bsw::decisions
