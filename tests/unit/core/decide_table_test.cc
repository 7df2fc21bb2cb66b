// Decide as a table: each row is the journal so far, what the backend and the metrics show, what
// the controller kept from the last pass, and the events and actions the pass must decide, in
// order. Rows are data; the one function under test is Decide.
#include <gtest/gtest.h>

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "base/overloaded.h"
#include "operator/core/event.h"
#include "operator/core/step.h"
#include "tests/unit/core/simulated_sweep.h"

namespace bsw {
namespace {

constexpr double kT0 = 1'700'000'000;
constexpr char kSweep[] = "fmnist-cnn";

std::string Name(int64_t trial) { return TrialName(kSweep, trial); }

Event Created(int64_t trial) {
  event::TrialCreated e{.at = kT0, .trial = trial};
  e.params = {{"lr", 0.01}};
  return e;
}

// A segment launched at kT0 from `from` to `until`, with ten minutes of deadline.
Event Launched(int64_t trial, int segment, double from, double until) {
  event::SegmentLaunched e{.at = kT0, .trial = trial, .segment = segment};
  e.from = from;
  e.until = until;
  e.deadline = kT0 + 600;
  return e;
}

Event Value(int64_t trial, double resource, double value) {
  event::ValueRecorded e{.at = kT0 + 10, .trial = trial};
  e.resource = resource;
  e.value = value;
  return e;
}

Event Judged(int64_t trial, int rung, double resource, Verdict verdict) {
  event::RungVerdict e{.at = kT0 + 10, .trial = trial};
  e.rung = rung;
  e.resource = resource;
  e.verdict = verdict;
  return e;
}

Event Ended(int64_t trial, int segment, Reason reason) {
  event::SegmentEnded e{.at = kT0 + 20, .trial = trial, .segment = segment};
  e.reason = ReasonName(reason);
  e.started = kT0 + 1;
  e.finished = kT0 + 20;
  e.devices = 1;
  return e;
}

// A segment the backend shows, started at kT0 + 1: running, or exited with `exit_code`.
SegmentStatus Shown(int64_t trial, int segment, std::optional<int> exit_code = std::nullopt) {
  SegmentStatus s;
  s.trial = Name(trial);
  s.segment = segment;
  s.devices = 1;
  s.started_unix_seconds = kT0 + 1;
  s.deadline_unix_seconds = kT0 + 600;
  s.metrics_url = "http://127.0.0.1:1/metrics";
  s.state = SegmentState::kRunning;
  if (exit_code) {
    s.state = *exit_code == 0 ? SegmentState::kSucceeded : SegmentState::kFailed;
    s.exit_code = exit_code;
    s.finished_unix_seconds = kT0 + 30;
  }
  return s;
}

struct Row {
  std::string name{};
  std::vector<Event> journal{};
  std::vector<SegmentStatus> shown{};
  // Each reporting trial's objective by resource (its metrics answered this pass).
  std::map<int64_t, std::map<double, double>> reports{};
  PassMemory memory{};
  double now = kT0 + 30;
  // The step's events as "Kind" or "Kind:Reason" (a verdict's reason is the verdict), and its
  // actions as "Launch|Stop|MoveDeadline name/segment", in order.
  std::vector<std::string> events{};
  std::vector<std::string> actions{};
};

void PrintTo(const Row& row, std::ostream* os) { *os << row.name; }

std::string Describe(const Event& e) {
  nlohmann::json j = EventToJson(e);
  std::string kind = j["event"];
  if (j.contains("verdict")) return kind + ":" + j["verdict"].get<std::string>();
  if (j.contains("reason") && !j["reason"].get<std::string>().empty()) {
    return kind + ":" + j["reason"].get<std::string>();
  }
  return kind;
}

std::string Describe(const StepAction& action) {
  return std::visit(
      Overloaded{[](const Launch& a) {
                   return "Launch " + a.spec.trial + "/" + std::to_string(a.spec.segment);
                 },
                 [](const Stop& a) { return "Stop " + a.name + "/" + std::to_string(a.segment); },
                 [](const MoveDeadline& a) {
                   return "MoveDeadline " + a.name + "/" + std::to_string(a.segment);
                 }},
      action);
}

class DecideTable : public ::testing::TestWithParam<Row> {};

TEST_P(DecideTable, DecidesTheRowsEventsAndActions) {
  const Row& row = GetParam();
  SweepModel model(ParseSweep(testing::TableSweep()).value());
  for (const Event& e : row.journal) ASSERT_TRUE(model.Apply(e).ok());
  Observation observation;
  observation.now = row.now;
  observation.segments = row.shown;
  for (const auto& [trial, values] : row.reports) {
    TrialMetrics& m = observation.metrics[Name(trial)];
    m.objective_by_resource = values;
    m.resource_completed = values.rbegin()->first;
  }
  Ledger ledger(3600);
  ledger.Observe(observation.segments, row.now);
  StatusOr<Step> step = Decide(model, observation, ledger, row.memory, std::nullopt);
  ASSERT_TRUE(step.ok()) << step.status().message();
  std::vector<std::string> events;
  for (const Event& e : step->events) events.push_back(Describe(e));
  std::vector<std::string> actions;
  for (const StepAction& a : step->actions) actions.push_back(Describe(a));
  EXPECT_EQ(events, row.events);
  EXPECT_EQ(actions, row.actions);
}

// The journal of two trials launched at kT0 toward the full resource (stop mode), running.
std::vector<Event> TwoRunning() {
  return {Created(0), Launched(0, 0, 0, 9), Created(1), Launched(1, 0, 0, 9)};
}

template <class... Rest>
std::vector<Event> TwoRunningThen(Rest... more) {
  std::vector<Event> journal = TwoRunning();
  (journal.push_back(more), ...);
  return journal;
}

PassMemory Refused(int64_t trial, int segment) {
  PassMemory memory;
  memory.refused_starts[{Name(trial), segment}] = "forbidden: violates PodSecurity";
  return memory;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, DecideTable,
    ::testing::Values(
        Row{.name = "AFreshSweepCreatesAndLaunchesAsManyTrialsAsRunAtOnce",
            .events = {"TrialCreated", "SegmentLaunched", "TrialCreated", "SegmentLaunched"},
            .actions = {"Launch fmnist-cnn-t0000/0", "Launch fmnist-cnn-t0001/0"}},
        Row{.name = "ValuesAndTheirVerdictsComeFirstThenWhatTheVerdictsCause",
            .journal = TwoRunning(),
            .shown = {Shown(0, 0), Shown(1, 0)},
            .reports = {{0, {{1, 0.5}}}, {1, {{1, 0.4}}}},
            // The continued trial's deadline follows the pace its value measured.
            .events = {"ValueRecorded", "ValueRecorded", "RungVerdict:Continue", "RungVerdict:Stop",
                       "DeadlineMoved", "TrialStopped:RungCutoff"},
            .actions = {"MoveDeadline fmnist-cnn-t0000/0", "Stop fmnist-cnn-t0001/0"}},
        Row{.name = "AValueOfAnEarlierPassWithoutItsVerdictIsJudgedNow",
            .journal = TwoRunningThen(Value(0, 1, 0.5)),
            .shown = {Shown(0, 0), Shown(1, 0)},
            .reports = {{0, {{1, 0.5}}}},
            .events = {"RungVerdict:Continue", "DeadlineMoved"},
            .actions = {"MoveDeadline fmnist-cnn-t0000/0"}},
        Row{.name = "AVerdictAlreadyJournaledIsNotJudgedAgain",
            .journal = TwoRunningThen(Value(0, 1, 0.5), Judged(0, 0, 1, Verdict::kContinue)),
            .shown = {Shown(0, 0), Shown(1, 0)},
            .reports = {{0, {{1, 0.5}}}},
            .events = {"DeadlineMoved"},
            .actions = {"MoveDeadline fmnist-cnn-t0000/0"}},
        Row{.name = "ALaunchTheBackendDoesNotShowIsStartedAgainUnderItsName",
            .journal = TwoRunning(),
            .shown = {Shown(0, 0)},
            .actions = {"Launch fmnist-cnn-t0001/0"}},
        // Recorded before anything else is decided, as a failure the backend reported: the
        // retry is launched in the same pass.
        Row{.name = "AStartRefusedForGoodEndsTheSegmentAsErrorAndItsRetryIsLaunched",
            .journal = TwoRunning(),
            .shown = {Shown(0, 0)},
            .memory = Refused(1, 0),
            .events = {"SegmentEnded:Error", "SegmentLaunched"},
            .actions = {"Launch fmnist-cnn-t0001/1"}},
        Row{.name = "ARetryIsLaunchedAsTheNextSegment",
            .journal = TwoRunningThen(Ended(1, 0, Reason::kError)),
            .shown = {Shown(0, 0), Shown(1, 0, 1)},
            .events = {"SegmentLaunched"},
            .actions = {"Launch fmnist-cnn-t0001/1"}},
        Row{.name = "ACrashedTrainerEndsAsErrorAndKeepsItsSlot",
            .journal = TwoRunning(),
            .shown = {Shown(0, 0), Shown(1, 0, 1)},
            .events = {"SegmentEnded:Error"}},
        Row{.name = "ATrainerThatReachedTheFullResourceCompletes",
            .journal = TwoRunningThen(Value(1, 1, 0.5), Judged(1, 0, 1, Verdict::kContinue),
                                      Value(1, 3, 0.6), Judged(1, 1, 3, Verdict::kContinue)),
            .shown = {Shown(0, 0), Shown(1, 0, 0)},
            .reports = {{1, {{1, 0.5}, {3, 0.6}, {9, 0.7}}}},
            .events = {"ValueRecorded", "SegmentEnded", "TrialCreated", "SegmentLaunched"},
            .actions = {"Launch fmnist-cnn-t0002/0"}},
        Row{.name = "MetricsUnknownPastTheTimeoutStopTheTrial",
            .journal = TwoRunning(),
            .shown = {Shown(0, 0), Shown(1, 0)},
            .reports = {{0, {{1, 0.5}}}},
            .memory =
                [] {
                  PassMemory memory;
                  memory.unknown_since[Name(1)] = kT0 + 1;
                  return memory;
                }(),
            .now = kT0 + 100,
            .events = {"ValueRecorded", "RungVerdict:Continue", "DeadlineMoved",
                       "TrialStopped:MetricsMissing"},
            .actions = {"MoveDeadline fmnist-cnn-t0000/0", "Stop fmnist-cnn-t0001/0"}}),
    [](const ::testing::TestParamInfo<Row>& row) { return row.param.name; });

}  // namespace
}  // namespace bsw
