#ifndef BSW_TESTS_UNIT_CORE_PLANNER_HARNESS_H_
#define BSW_TESTS_UNIT_CORE_PLANNER_HARNESS_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <ostream>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "base/overloaded.h"
#include "nlohmann/json.hpp"
#include "operator/core/api.h"
#include "operator/core/planner.h"
#include "operator/core/sweep_model.h"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw::testing {

// Drives one sweep the way the controller does, with a simulated clock and a hand-made
// observation: Pass() charges the ledger from the observed segments, records new rung values,
// computes the plan and journals its events into the model. Carry() plays the backend's part.
class PlannerHarness {
 public:
  explicit PlannerHarness(const SweepSpec& spec, PlannerOptions options = {})
      : spec_(spec), model_(spec), options_(options) {}

  Plan Pass() {
    Ledger ledger(spec_.budget_gpu_hours * 3600);
    std::vector<SegmentStatus> segments;
    segments.reserve(observed_.segments.size());
    for (const auto& [key, s] : observed_.segments) segments.push_back(s);
    ledger.Observe(segments, now_);
    for (const Event& e : NewRungValues(model_, observed_, now_)) Journal(e);
    Plan plan = ComputePlan(model_, observed_, ledger, now_, options_);
    for (const Event& e : plan.events) Journal(e);
    std::set<std::string> unknown(plan.unknown.begin(), plan.unknown.end());
    std::erase_if(observed_.unknown_since,
                  [&](const auto& kv) { return !unknown.contains(kv.first); });
    for (const std::string& name : unknown) observed_.unknown_since.emplace(name, now_);
    return plan;
  }

  // Carries out the plan's actions: starts run at once, stops end the segment at once.
  void Carry(const Plan& plan) {
    for (const Action& action : plan.actions) {
      std::visit(
          Overloaded{[&](const StartSegment& a) {
                       const std::string name = model_.TrialName(a.trial);
                       if (!Launch(name, a.segment, a.deadline)) return;
                       observed_.metrics[name].resource_completed =
                           model_.trial(a.trial).progress();
                     },
                     [&](const StartProbe& a) { Launch(model_.ProbeName(a.probe), 0, a.deadline); },
                     [&](const StopSegment& a) {
                       EndSegment(model_.TrialName(a.trial), a.segment, SegmentState::kFailed, 143,
                                  Reason::kStopped);
                     },
                     [&](const StopProbe& a) {
                       EndSegment(model_.ProbeName(a.probe), 0, SegmentState::kFailed, 143,
                                  Reason::kStopped);
                     },
                     [&](const SetDeadline& a) {
                       observed_.segments.at({model_.TrialName(a.trial), a.segment})
                           .deadline_unix_seconds = a.deadline;
                     }},
          action);
    }
  }

  // Starts segment `segment` of `name` at once; false when it was started already.
  bool Launch(const std::string& name, int segment, double deadline) {
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

  Plan PassAndCarry() {
    Plan plan = Pass();
    Carry(plan);
    return plan;
  }

  // The trial's trainer reports `value` at `resource` (and has completed that much).
  void Report(int64_t trial, double resource, double value) {
    TrialMetrics& m = observed_.metrics[model_.TrialName(trial)];
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
    const Trial& t = model_.trial(trial);
    End(trial, t.segments.back().number,
        exit_code == 0 ? SegmentState::kSucceeded : SegmentState::kFailed, exit_code,
        exit_code == 0 ? Reason::kNone : Reason::kError);
  }

  void End(int64_t trial, int segment, SegmentState state, int exit_code, Reason reason) {
    EndSegment(model_.TrialName(trial), segment, state, exit_code, reason);
  }

  // The probe run in flight reports its figures, as the trainer's probe mode does when done.
  void ReportProbe(double samples_per_second, double data_wait_ratio) {
    TrialMetrics& m = observed_.metrics[model_.probes().back().name];
    m.samples_per_second = samples_per_second;
    m.data_wait_ratio = data_wait_ratio;
    m.probe_measured_steps = spec_.throughput.probe_steps;
  }

  // The probe run in flight exits on its own.
  void ExitProbe(SegmentState state, int exit_code, Reason reason) {
    EndSegment(model_.probes().back().name, 0, state, exit_code, reason);
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

  void Journal(const Event& e) {
    Status status = model_.Apply(e);
    if (!status.ok()) failures_.push_back(status.message());
    journal_.push_back(e);
  }

  void Advance(double seconds) { now_ += seconds; }

  double now() const { return now_; }
  const SweepSpec& spec() const { return spec_; }
  const SweepModel& model() const { return model_; }
  Observed& observed() { return observed_; }
  const std::vector<Event>& journal() const { return journal_; }
  // Apply() errors; a correct planner produces none.
  const std::vector<std::string>& apply_failures() const { return failures_; }

 private:
  SweepSpec spec_;
  SweepModel model_;
  PlannerOptions options_;
  Observed observed_;
  std::vector<Event> journal_;
  std::vector<std::string> failures_;
  double now_ = 1'700'000'000;
};

template <class E>
inline int CountEvents(const Plan& plan) {
  return static_cast<int>(std::count_if(plan.events.begin(), plan.events.end(), [](const Event& e) {
    return std::holds_alternative<E>(e);
  }));
}

template <class Kind>
int CountActions(const Plan& plan) {
  return static_cast<int>(
      std::count_if(plan.actions.begin(), plan.actions.end(),
                    [](const Action& a) { return std::holds_alternative<Kind>(a); }));
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
inline const E* FindEvent(const Plan& plan) {
  for (const Event& e : plan.events) {
    if (const E* found = std::get_if<E>(&e)) return found;
  }
  return nullptr;
}

// One situation of a planner table: how to change the table's base sweep, then how to drive the
// sweep into the situation and what the planner must do there.
struct Situation {
  std::string name;
  std::function<void(nlohmann::json&)> edit;
  std::function<void(PlannerHarness&)> run;
};

inline void PrintTo(const Situation& s, std::ostream* os) { *os << s.name; }

inline void NoEdit(nlohmann::json&) {}

// Runs `situation` on `base` edited by it. The edited sweep must be valid, and every event the
// planner produces must apply to the model.
inline void RunSituation(nlohmann::json base, const Situation& situation) {
  situation.edit(base);
  StatusOr<SweepSpec> spec = ParseSweep(base);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  PlannerHarness h(*spec);
  situation.run(h);
  EXPECT_THAT(h.apply_failures(), ::testing::IsEmpty());
}

inline const Condition* FindCondition(const Plan& plan, const std::string& type) {
  for (const Condition& c : plan.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

}  // namespace bsw::testing

#endif  // BSW_TESTS_UNIT_CORE_PLANNER_HARNESS_H_
