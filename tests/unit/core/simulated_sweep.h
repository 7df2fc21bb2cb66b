#ifndef BSW_TESTS_UNIT_CORE_SIMULATED_SWEEP_H_
#define BSW_TESTS_UNIT_CORE_SIMULATED_SWEEP_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "base/overloaded.h"
#include "nlohmann/json.hpp"
#include "operator/core/api.h"
#include "operator/core/planner.h"
#include "operator/core/step.h"
#include "operator/core/sweep_model.h"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw::testing {

// One sweep decided by Decide, with a simulated clock and backend: Pass() charges a ledger with
// the segments, decides and takes the step's model and memory as the controller does; Carry()
// plays the backend's part, and the tests change what the backend and the metrics show through
// observed().
class SimulatedSweep {
 public:
  explicit SimulatedSweep(const SweepSpec& spec, PlannerOptions options = {})
      : spec_(spec), model_(std::make_shared<const SweepModel>(spec)), options_(options) {}

  Step Pass() {
    Ledger ledger(spec_.budget_gpu_hours * 3600);
    Observation observation;
    observation.now = now_;
    for (const auto& [key, s] : observed_.segments) observation.segments.push_back(s);
    ledger.Observe(observation.segments, now_);
    observation.metrics = observed_.metrics;
    StatusOr<Step> step = Decide(*model_, observation, ledger, memory_, std::nullopt, options_);
    if (!step.ok()) {
      failures_.push_back(step.status().message());
      return Step{};
    }
    journal_.insert(journal_.end(), step->events.begin(), step->events.end());
    model_ = step->model;
    memory_ = step->next;
    return *std::move(step);
  }

  // Carries out the step's actions: starts run at once, stops end the segment at once.
  void Carry(const Step& step) {
    for (const StepAction& action : step.actions) {
      std::visit(
          Overloaded{
              [&](const Launch& a) {
                if (!Start(a.spec.trial, a.spec.segment, a.spec.deadline_unix_seconds)) {
                  return;
                }
                if (std::optional<int64_t> t = model_->FindTrial(a.spec.trial)) {
                  observed_.metrics[a.spec.trial].resource_completed = model_->trial(*t).progress();
                }
              },
              [&](const Stop& a) {
                EndSegment(a.name, a.segment, SegmentState::kFailed, 143, Reason::kStopped);
              },
              [&](const MoveDeadline& a) {
                observed_.segments.at({a.name, a.segment}).deadline_unix_seconds = a.deadline;
              }},
          action);
    }
  }

  // Starts segment `segment` of `name` at once; false when it was started already.
  bool Start(const std::string& name, int segment, double deadline) {
    auto key = std::make_pair(name, segment);
    if (observed_.segments.contains(key)) return false;
    SegmentStatus s;
    s.trial = name;
    s.segment = segment;
    s.state = SegmentState::kRunning;
    s.started_unix_seconds = now_;
    s.devices = spec_.trial_gpus;
    s.deadline_unix_seconds = deadline;
    observed_.segments[key] = s;
    return true;
  }

  Step PassAndCarry() {
    Step step = Pass();
    Carry(step);
    return step;
  }

  // The trial's trainer reports `value` at `resource` (and has completed that much).
  void Report(int64_t trial, double resource, double value) {
    TrialMetrics& m = observed_.metrics[model_->TrialName(trial)];
    m.objective_by_resource[resource] = value;
    m.resource_completed = resource;
  }

  // A first pass launches trials 0 and 1; `seconds` later they report `value0` and `value1` at
  // epoch 1 and exit.
  void FirstTwoReportAtEpochOneAndExit(double seconds, double value0, double value1) {
    PassAndCarry();
    Advance(seconds);
    Report(0, 1, value0);
    Report(1, 1, value1);
    Exit(0);
    Exit(1);
  }

  // The trial's latest segment exits.
  void Exit(int64_t trial, int exit_code = 0) {
    const Trial& t = model_->trial(trial);
    End(trial, t.segments.back().number,
        exit_code == 0 ? SegmentState::kSucceeded : SegmentState::kFailed, exit_code,
        exit_code == 0 ? Reason::kNone : Reason::kError);
  }

  void End(int64_t trial, int segment, SegmentState state, int exit_code, Reason reason) {
    EndSegment(model_->TrialName(trial), segment, state, exit_code, reason);
  }

  // The probe run in flight reports its figures, as the trainer's probe mode does when done.
  void ReportProbe(double samples_per_second, double data_wait_ratio) {
    TrialMetrics& m = observed_.metrics[model_->probes().back().name];
    m.samples_per_second = samples_per_second;
    m.data_wait_ratio = data_wait_ratio;
    m.probe_measured_steps = spec_.throughput.probe_steps;
  }

  // The probe run in flight exits on its own.
  void ExitProbe(SegmentState state, int exit_code, Reason reason) {
    EndSegment(model_->probes().back().name, 0, state, exit_code, reason);
  }

  void EndSegment(const std::string& name, int segment, SegmentState state, int exit_code,
                  Reason reason) {
    SegmentStatus& s = observed_.segments.at({name, segment});
    if (s.finished_unix_seconds) return;
    s.state = state;
    s.exit_code = exit_code;
    s.reason = reason;
    if (!s.started_unix_seconds) s.started_unix_seconds = now_;
    s.finished_unix_seconds = now_;
  }

  // Journals an event of the test's own, as a controller's earlier pass would have.
  void Journal(const Event& e) {
    auto model = std::make_shared<SweepModel>(*model_);
    Status status = model->Apply(e);
    if (!status.ok()) failures_.push_back(status.message());
    model_ = std::move(model);
    journal_.push_back(e);
  }

  void Advance(double seconds) { now_ += seconds; }

  double now() const { return now_; }
  const SweepSpec& spec() const { return spec_; }
  const SweepModel& model() const { return *model_; }
  // What the backend and the metrics show: segments and metrics (the rest of Observed is the
  // memory Decide keeps).
  Observed& observed() { return observed_; }
  const PassMemory& memory() const { return memory_; }
  const std::vector<Event>& journal() const { return journal_; }
  // Apply() errors; a correct planner produces none.
  const std::vector<std::string>& apply_failures() const { return failures_; }

 private:
  SweepSpec spec_;
  std::shared_ptr<const SweepModel> model_;
  PlannerOptions options_;
  Observed observed_;
  PassMemory memory_;
  std::vector<Event> journal_;
  std::vector<std::string> failures_;
  double now_ = 1'700'000'000;
};

template <class E>
inline int CountEvents(const Step& step) {
  return static_cast<int>(std::count_if(step.events.begin(), step.events.end(), [](const Event& e) {
    return std::holds_alternative<E>(e);
  }));
}

template <class Kind>
int CountActions(const Step& step) {
  return static_cast<int>(
      std::count_if(step.actions.begin(), step.actions.end(),
                    [](const StepAction& a) { return std::holds_alternative<Kind>(a); }));
}

// The sweep every row starts from: rungs 1, 3, 9 epochs (η = 3), two trials at a time, one GPU
// hour, one retry, a 60 s metrics timeout and a 30 s grace period.
inline nlohmann::json TableSweep() {
  nlohmann::json j = ValidSweepJson();
  j["spec"]["resource"] = {{"unit", "epochs"}, {"min", 1}, {"max", 9}, {"reductionFactor", 3}};
  j["spec"]["parallelism"] = 2;
  j["spec"]["maxTrials"] = 20;
  j["spec"]["budget"]["gpuHours"] = 1;
  j["spec"]["metrics"] = {{"missingTimeoutSeconds", 60}};
  return j;
}

template <class E>
inline const E* FindEvent(const Step& step) {
  for (const Event& e : step.events) {
    if (const E* found = std::get_if<E>(&e)) return found;
  }
  return nullptr;
}

// One situation of a planner table: how to change the table's base sweep, then how to drive the
// sweep into the situation and what the planner must do there.
struct Situation {
  std::string name;
  std::function<void(nlohmann::json&)> edit;
  std::function<void(SimulatedSweep&)> run;
};

inline void PrintTo(const Situation& s, std::ostream* os) { *os << s.name; }

inline void NoEdit(nlohmann::json&) {}

// Runs `situation` on `base` edited by it. The edited sweep must be valid, and every event the
// planner produces must apply to the model.
inline void RunSituation(nlohmann::json base, const Situation& situation) {
  situation.edit(base);
  StatusOr<SweepSpec> spec = ParseSweep(base);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  SimulatedSweep h(*spec);
  situation.run(h);
  EXPECT_THAT(h.apply_failures(), ::testing::IsEmpty());
}

inline const Condition* FindCondition(const Step& step, const std::string& type) {
  for (const Condition& c : step.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

}  // namespace bsw::testing

#endif  // BSW_TESTS_UNIT_CORE_SIMULATED_SWEEP_H_
