#ifndef BSW_TESTS_UNIT_CORE_PLANNER_HARNESS_H_
#define BSW_TESTS_UNIT_CORE_PLANNER_HARNESS_H_

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "operator/core/planner.h"
#include "operator/core/sweep_model.h"

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
    for (const Action& a : plan.actions) {
      const std::string name = model_.TrialName(a.trial);
      auto key = std::make_pair(name, a.segment);
      if (a.kind == Action::Kind::kStart) {
        if (observed_.segments.contains(key)) continue;
        SegmentStatus s;
        s.trial = name;
        s.segment = a.segment;
        s.state = SegmentState::kRunning;
        s.started_unix_seconds = now_;
        s.devices = spec_.trial_gpus;
        s.deadline_unix_seconds = a.deadline;
        observed_.segments[key] = s;
        observed_.metrics[name].resource_completed = model_.trial(a.trial).progress();
      } else if (a.kind == Action::Kind::kStop) {
        End(a.trial, a.segment, SegmentState::kFailed, 143, "Stopped");
      } else {
        observed_.segments.at(key).deadline_unix_seconds = a.deadline;
      }
    }
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

  // The trial's latest segment exits.
  void Exit(int64_t trial, int exit_code = 0) {
    const Trial& t = model_.trial(trial);
    End(trial, t.segments.back().number,
        exit_code == 0 ? SegmentState::kSucceeded : SegmentState::kFailed, exit_code,
        exit_code == 0 ? "" : "Error");
  }

  void End(int64_t trial, int segment, SegmentState state, int exit_code,
           const std::string& reason) {
    SegmentStatus& s = observed_.segments.at({model_.TrialName(trial), segment});
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

inline int CountEvents(const Plan& plan, Event::Type type) {
  return static_cast<int>(std::count_if(plan.events.begin(), plan.events.end(),
                                        [&](const Event& e) { return e.type == type; }));
}

inline int CountActions(const Plan& plan, Action::Kind kind) {
  return static_cast<int>(std::count_if(plan.actions.begin(), plan.actions.end(),
                                        [&](const Action& a) { return a.kind == kind; }));
}

inline const Condition* FindCondition(const Plan& plan, const std::string& type) {
  for (const Condition& c : plan.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

}  // namespace bsw::testing

#endif  // BSW_TESTS_UNIT_CORE_PLANNER_HARNESS_H_
