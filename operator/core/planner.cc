#include "operator/core/planner.h"

#include <algorithm>
#include <cstdio>

#include "operator/core/admission.h"
#include "operator/core/conditions.h"
#include "operator/core/deadline_decision.h"
#include "operator/core/probe_decisions.h"
#include "operator/core/trial_decisions.h"

namespace bsw {
namespace decisions {

void Part::Add(Part other) {
  events.insert(events.end(), other.events.begin(), other.events.end());
  actions.insert(actions.end(), other.actions.begin(), other.actions.end());
  denials.insert(denials.end(), other.denials.begin(), other.denials.end());
  unknown.insert(unknown.end(), other.unknown.begin(), other.unknown.end());
  occupied += other.occupied;
}

std::string Figures(const char* fmt, double a, double b) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b);
  return buf;
}

namespace {

// The decisions of one pass, with its own events in journal order (a finish among them), the
// account after its admissions, and what the conditions report.
struct Pass {
  Part part;
  Ledger ledger;
  std::optional<Finish> finish;
  std::optional<ThroughputDecision> decided;
};

Pass SearchPass(const PlanInput& in, const Ledger& ledger) {
  Admitted trials = ReconcileTrials(in, ledger);
  bool denied = !trials.part.denials.empty();
  Admitted filled = FillSlots(in, trials.ledger, trials.part.occupied, denied);
  Part part = std::move(trials.part);
  part.Add(std::move(filled.part));
  std::optional<Finish> finish = FinishOf(in.model, part.occupied, part.denials);
  if (finish && finish->phase == SweepPhase::kCompleted) {
    // The segments that ended in this pass count as they ended.
    SweepModel after = in.model;
    for (const Event& e : part.events) {
      if (Status applied = after.Apply(e); !applied.ok()) break;
    }
    finish = Completion(PlanInput{after, in.observed, in.now, in.options, in.reservation_fit},
                        filled.ledger, *finish);
  }
  if (finish) part.events.push_back(finish->ToEvent(in.now));
  return {std::move(part), filled.ledger, finish, std::nullopt};
}

Pass DecidePass(const PlanInput& in, const Ledger& ledger) {
  if (in.model.finished()) return {StopEverything(in), ledger, std::nullopt, std::nullopt};
  // Checked first, so that a failed sweep launches no retry in its last pass.
  if (std::optional<Finish> failed = TooManyFailures(in.model)) {
    Part part;
    part.events.push_back(failed->ToEvent(in.now));
    part.Add(StopEverything(in));
    return {std::move(part), ledger, failed, std::nullopt};
  }
  if (!in.model.probing()) return SearchPass(in, ledger);
  ProbePhase probes = ReconcileProbes(in, ledger);
  Part part = std::move(probes.admitted.part);
  if (probes.finish) part.events.push_back(probes.finish->ToEvent(in.now));
  return {std::move(part), probes.admitted.ledger, probes.finish, std::move(probes.decided)};
}

}  // namespace
}  // namespace decisions

const SegmentStatus* Observed::Segment(const std::string& trial, int segment) const {
  auto it = segments.find({trial, segment});
  return it == segments.end() ? nullptr : &it->second;
}

namespace {

// What trial `t` reported that a pass may record, and when it had reached it at the latest: this
// pass's read, now; or, once its segment `st` has ended, its last read that answered, by the end.
struct Reported {
  const TrialMetrics* metrics = nullptr;
  double by = 0;
};
Reported ReportedValues(const Observed& observed, const Trial& t, const SegmentStatus* st,
                        double now) {
  if (auto m = observed.metrics.find(t.name); m != observed.metrics.end()) return {&m->second, now};
  const bool ended = st != nullptr &&
                     (st->state == SegmentState::kSucceeded || st->state == SegmentState::kFailed);
  auto last = observed.last_metrics.find(t.name);
  if (!ended || last == observed.last_metrics.end()) return {};
  return {&last->second, std::min(now, st->finished_unix_seconds.value_or(now))};
}

}  // namespace

std::vector<Event> NewRungValues(const SweepModel& model, const Observed& observed, double now) {
  std::vector<Event> events;
  for (int64_t index : model.active()) {
    const Trial& t = model.trial(index);
    if (t.segments.empty()) continue;
    const SegmentRecord& seg = t.segments.back();
    const SegmentStatus* st = observed.Segment(t.name, seg.number);
    const Reported reported = ReportedValues(observed, t, st, now);
    if (reported.metrics == nullptr) continue;
    for (const auto& [resource, value] : reported.metrics->objective_by_resource) {
      if (model.rungs().IndexOf(resource) < 0 || t.rung_values.contains(resource)) continue;
      event::ValueRecorded e{.at = now, .trial = index};
      e.resource = resource;
      e.value = value;
      if (st && st->started_unix_seconds && resource > seg.from) {
        e.seconds = reported.by - *st->started_unix_seconds;
        e.units = resource - seg.from;
      }
      events.push_back(e);
    }
  }
  return events;
}

Plan ComputePlan(const SweepModel& model, const Observed& observed, const Ledger& ledger,
                 double now, const PlannerOptions& options) {
  using namespace decisions;
  const PlanInput in{model, observed, now, options, ReservationFit(ledger, options)};
  Pass pass = DecidePass(in, ledger);
  Plan plan;
  plan.events = std::move(pass.part.events);
  plan.actions = std::move(pass.part.actions);
  plan.denials = std::move(pass.part.denials);
  plan.unknown = std::move(pass.part.unknown);
  plan.held_device_seconds = pass.ledger.used() + pass.ledger.reserved();
  PassSummary summary{pass.finish, pass.decided, pass.part.occupied, plan.denials, plan.unknown};
  plan.conditions = Conditions(in, pass.ledger, summary);
  return plan;
}

}  // namespace bsw
