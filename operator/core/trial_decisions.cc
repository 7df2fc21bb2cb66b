#include "operator/core/trial_decisions.h"

#include <algorithm>

#include "contract/trainer_exit_codes.h"
#include "operator/core/admission.h"
#include "operator/core/deadline_decision.h"
#include "operator/core/pricing.h"

namespace bsw::decisions {
namespace {

StopSegment StopAction(const Trial& t, const std::string& reason) {
  return StopSegment{t.index, t.segments.back().number, reason};
}

// How a segment that failed ended, by the backend's reason: a stop, an eviction or a deadline,
// else the trainer's failure.
SegmentEnd FailedEnd(const Trial& t, const SegmentStatus& st) {
  Reason backend = st.reason;
  if (backend == Reason::kDeadlineExceeded) {
    return {backend, "stopped at its reserved share of the budget, which could not be extended"};
  }
  if (backend == Reason::kEvicted && !t.stop_requested) {
    return {Reason::kInterrupted,
            "the node refused or evicted its pod; it resumes from its checkpoint"};
  }
  if (backend == Reason::kStopped) {
    if (t.stop_requested) return {Reason::kStopped, t.message};
    return {Reason::kInterrupted, "stopped from outside the sweep; it resumes from its checkpoint"};
  }
  return {backend == Reason::kNone ? Reason::kError : backend,
          st.exit_code ? "exited with code " + std::to_string(*st.exit_code)
                       : "ended without an exit code"};
}

// Whether a segment that never started has waited away half of what it was admitted for, or
// would get SIGTERM at once: the runner died between journaling and starting it and was down a
// while, or its start kept failing (a full disk).
bool ReservationLapsed(const PlanInput& in, const SegmentRecord& seg) {
  double admitted = seg.deadline - seg.launched_at;
  double left = seg.deadline - in.now;
  return left < admitted / 2 || left <= in.spec().grace_seconds;
}

// A trial whose segment the backend does not show: stopped before it started, or journaled but
// never started (a crash between the two). It is started again (Start is idempotent) while its
// reservation lasts; after that it ends uncharged as Interrupted, which spends no retry, and the
// trial is admitted again with a fresh reservation and deadline: never ended unstarted.
Part UnseenSegment(const PlanInput& in, const Trial& t, const SegmentRecord& seg) {
  Part part;
  event::SegmentEnded e{.at = in.now, .trial = t.index, .segment = seg.number};
  if (t.stop_requested) {
    e.reason = ReasonName(Reason::kStopped);
    e.message = "stopped before it started";
    part.events.push_back(e);
    return part;
  }
  part.occupied = 1;
  if (ReservationLapsed(in, seg)) {
    e.reason = ReasonName(Reason::kInterrupted);
    e.message = "never started while its reservation lasted; it is admitted again";
    part.events.push_back(e);
    return part;
  }
  part.actions.push_back(StartSegment{t.index, seg.number, seg.until, seg.deadline});
  return part;
}

// A trial waiting for a segment: created but not launched, or ended with a retry or a resume
// due. It is launched from its checkpoint, or stopped when the budget says no.
Admitted LaunchWaiting(const PlanInput& in, const Trial& t, const Ledger& ledger, int free_slots) {
  int next = t.segments.empty() ? 0 : t.segments.back().number + 1;
  double until = t.segments.empty() ? FirstUntil(in.model, t.index) : t.segments.back().until;
  Admitted launch = Launch(in, ledger, t.index, next, t.progress(), until, free_slots);
  // A pool's fair share refused it: it waits, launched on a later pass.
  if (launch.part.events.empty() && !launch.part.denials.front().waits) {
    event::TrialStopped e{.at = in.now, .trial = t.index};
    e.reason = ReasonName(Reason::kBudgetExhausted);
    e.message = launch.part.denials.front().Message();
    launch.part.events.push_back(e);
  }
  return launch;
}

// A trial whose segment the backend shows pending or running.
Admitted LiveSegment(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                     const SegmentStatus& st, const Ledger& ledger) {
  Part part;
  part.occupied = 1;
  if (t.stop_requested) {
    part.actions.push_back(StopAction(t, t.reason));
    return {part, ledger};
  }
  if (const RungVerdict* verdict = t.StopVerdict()) {
    part.Add(StopTrial(in, t, Reason::kRungCutoff, verdict->message, true));
    return {part, ledger};
  }
  auto m = in.observed.metrics.find(t.name);
  const TrialMetrics* metrics = m == in.observed.metrics.end() ? nullptr : &m->second;
  // A pending segment costs nothing and cannot report yet: only running ones are checked.
  if (st.state == SegmentState::kRunning) {
    MetricsCheck check = CheckMetrics(in, t, seg, metrics);
    if (check.unknown) part.unknown.push_back(t.name);
    if (check.stop_message) {
      part.Add(StopTrial(in, t, Reason::kMetricsMissing, *check.stop_message, true));
      return {part, ledger};
    }
  }
  Admitted deadline = AdjustDeadline(in, t, seg, st, metrics, ledger);
  part.Add(std::move(deadline.part));
  return {part, deadline.ledger};
}

// One active trial.
Admitted ReconcileTrial(const PlanInput& in, const Trial& t, const Ledger& ledger, int free_slots) {
  if (t.segments.empty() || t.segments.back().ended) {
    return LaunchWaiting(in, t, ledger, free_slots);
  }
  const SegmentRecord& seg = t.segments.back();
  const SegmentStatus* st = in.observed.Segment(t.name, seg.number);
  if (st == nullptr) {
    // Journaled, so admitted, but not started yet: started again, it still holds what it was
    // admitted for.
    Part part = UnseenSegment(in, t, seg);
    Ledger held = ledger;
    if (!part.actions.empty()) {
      held.Hold(ChargedDevices(in.spec().trial_gpus) * std::max(0.0, seg.deadline - in.now));
    }
    return {std::move(part), held};
  }
  if (st->state == SegmentState::kSucceeded || st->state == SegmentState::kFailed) {
    Part part;
    part.events.push_back(SegmentEndEvent(in, t, seg, *st));
    // A trial that stays active is relaunched on the next pass: it still holds its slot.
    part.occupied = Relaunches(in.spec(), t, EndOf(in, t, seg, *st).reason) ? 1 : 0;
    return {part, ledger};
  }
  return LiveSegment(in, t, seg, *st, ledger);
}

// How far trial `t` said it got: its latest resource_completed, or its last rung value.
std::optional<double> LastReported(const PlanInput& in, const Trial& t) {
  std::optional<double> reached;
  if (!t.rung_values.empty()) reached = t.progress();
  auto m = in.observed.last_metrics.find(t.name);
  if (m != in.observed.last_metrics.end() && m->second.resource_completed) {
    reached = std::max(reached.value_or(0), *m->second.resource_completed);
  }
  return reached;
}

// A segment that exited 0 short of its `until` (`reached`, what it last reported, below it or
// unknown): how far it said it got, and, when no read of its metrics ever answered, why
// (Observed::last_read_errors: the controller keeps the telling failure, not a refused connect
// after the trainer exited).
SegmentEnd ExitedShort(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                       std::optional<double> reached) {
  const std::string& unit = in.spec().resource_unit;
  std::string message = reached ? "exited 0 at " + unit +
                                      Figures(" %g of the %g it was asked for", *reached, seg.until)
                                : "exited 0 having reported no " + unit +
                                      Figures(" of the %g it was asked for", seg.until);
  message += ", without the objective at " + unit + Figures(" %g", seg.until);
  auto error = in.observed.last_read_errors.find(t.name);
  if (!in.observed.last_metrics.contains(t.name) && error != in.observed.last_read_errors.end()) {
    message += "; its metrics could not be read: " + error->second;
  }
  return {Reason::kExitedShort, message};
}

// How long before the pass that finds a segment ended its trainer must have answered a read of
// this controller's for a short exit to count. Passes read running trials about every second; a
// longer gap means the controller was away when the trial ended (down, failing over, or its passes
// failing while the API server was), and what it read last says nothing of where the trial stopped.
constexpr double kShortExitEvidenceSeconds = 10;

// How a segment that exited 0 ended: as planned when it reported `until` or the sweep stopped it;
// else ExitedShort when it was seen short of `until`, or MetricsMissing (at any resource).
SegmentEnd SucceededEnd(const PlanInput& in, const Trial& t, const SegmentRecord& seg) {
  if (t.rung_values.contains(seg.until) || t.stop_requested) return {};
  // A short exit needs evidence: the segment's trainer answered a read of this controller's
  // shortly before. A segment that ended while the controller was away, or before it ever
  // answered, was not seen to end, and what was read or journaled before says nothing of where it
  // ended: it ends as below, as an unread one does.
  auto read_at = in.observed.last_read_at.find(t.name);
  const bool watched = read_at != in.observed.last_read_at.end() &&
                       read_at->second >= seg.launched_at &&
                       in.now - read_at->second <= kShortExitEvidenceSeconds;
  std::optional<double> reached = LastReported(in, t);
  if (watched && (!reached || *reached < seg.until)) {
    return ExitedShort(in, t, seg, reached);
  }
  // It said it reached `until`, but its objective there went unread (a Ctrl-C during its linger,
  // then a resume from its checkpoint at `until`, whose trainer evaluates nothing again), or it
  // ended unseen: not a failure of the trainer's, and not done either, at the full resource too
  // (a trial counted Completed has its objective there).
  return {Reason::kMetricsMissing, "exited at " + in.spec().resource_unit +
                                       Figures(" %g", seg.until) +
                                       " without reporting the objective there"};
}

}  // namespace

std::vector<Event> RefusedEnds(const SweepModel& model,
                               const std::map<std::pair<std::string, int>, std::string>& refused,
                               double now) {
  std::vector<Event> events;
  for (const auto& [segment, message] : refused) {
    const auto& [name, number] = segment;
    if (std::optional<int64_t> index = model.FindTrial(name)) {
      const Trial& t = model.trial(*index);
      if (t.segments.empty() || t.segments.back().number != number || t.segments.back().ended) {
        continue;
      }
      event::SegmentEnded e{.at = now, .trial = *index, .segment = number};
      e.reason = ReasonName(Reason::kError);
      e.message = "not started: " + message;
      events.push_back(e);
      continue;
    }
    for (const ProbeRun& p : model.probes()) {
      if (p.name != name || p.ended) continue;
      event::ProbeEnded e{.at = now, .probe = p.index};
      e.reason = ReasonName(Reason::kError);
      e.message = "not started: " + message;
      events.push_back(e);
    }
  }
  return events;
}

SegmentEnd EndOf(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                 const SegmentStatus& st) {
  if (st.state == SegmentState::kSucceeded) return SucceededEnd(in, t, seg);
  // Stopped at its deadline after it reported the objective at `until` and exited cleanly (exit 0
  // after a reported `until` means its checkpoint there was written): its work was done, and only
  // the trainer's exit after its last value (checkpoint, snapshot, linger), which a reservation
  // does not price, ran into the grace period. It ends as if it had exited first; its charge is
  // what it ran, as for any end.
  if (st.reason == Reason::kDeadlineExceeded && st.exit_code == kExitOk &&
      t.rung_values.contains(seg.until) && !t.stop_requested) {
    return {};
  }
  if (st.exit_code && *st.exit_code == kExitDiverged) {
    return {Reason::kDiverged, "the trainer reported a non-finite loss (exit code " +
                                   std::to_string(kExitDiverged) + ")"};
  }
  return FailedEnd(t, st);
}

event::SegmentEnded SegmentEndEvent(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                                    const SegmentStatus& st) {
  SegmentEnd end = EndOf(in, t, seg, st);
  event::SegmentEnded e{.at = in.now, .trial = t.index, .segment = seg.number};
  e.reason = ReasonName(end.reason);
  e.message = std::move(end.message);
  if (TrainerFailed(end.reason)) e.output = st.output_tail;
  if (st.started_unix_seconds && st.finished_unix_seconds) {
    e.started = *st.started_unix_seconds;
    e.finished = *st.finished_unix_seconds;
    e.devices = ChargedDevices(st.devices);
  }
  return e;
}

bool Relaunches(const SweepSpec& spec, const Trial& t, Reason reason) {
  bool retry = Retryable(reason) && t.failures < spec.max_retries;
  return reason == Reason::kInterrupted || (retry && !t.stop_requested);
}

MetricsCheck CheckMetrics(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                          const TrialMetrics* metrics) {
  MetricsCheck check;
  check.unknown = metrics == nullptr;
  if (metrics && metrics->resource_completed) {
    for (double milestone : in.model.rungs().milestones()) {
      if (milestone > seg.from && milestone <= *metrics->resource_completed &&
          !t.rung_values.contains(milestone)) {
        check.unknown = true;
      }
    }
  }
  if (!check.unknown) return check;
  auto since = in.observed.unknown_since.find(t.name);
  double timeout = in.spec().metrics_missing_timeout_seconds;
  if (since != in.observed.unknown_since.end() && in.now - since->second > timeout) {
    check.stop_message =
        Figures("no objective reported for %.0f s (spec.metrics.missingTimeoutSeconds is %g)",
                in.now - since->second, timeout);
  }
  return check;
}

Part StopTrial(const PlanInput& in, const Trial& t, Reason reason, const std::string& message,
               bool live) {
  Part part;
  event::TrialStopped e{.at = in.now, .trial = t.index};
  e.reason = ReasonName(reason);
  e.message = message;
  part.events.push_back(e);
  if (live) part.actions.push_back(StopAction(t, e.reason));
  return part;
}

Admitted ReconcileTrials(const PlanInput& in, const Ledger& ledger) {
  Admitted all{Part{}, ledger};
  for (int64_t index : in.model.active()) {
    int free_slots = std::max(0, in.spec().parallelism - all.part.occupied);
    Admitted one = ReconcileTrial(in, in.model.trial(index), all.ledger, free_slots);
    all.part.Add(std::move(one.part));
    all.ledger = one.ledger;
  }
  return all;
}

Part StopEverything(const PlanInput& in) {
  const std::string message = "the sweep finished";
  Part part;
  for (int64_t index : in.model.active()) {
    const Trial& t = in.model.trial(index);
    if (t.segments.empty() || t.segments.back().ended) {
      if (!t.stop_requested) part.Add(StopTrial(in, t, Reason::kSweepFinished, message, false));
      continue;
    }
    const SegmentRecord& seg = t.segments.back();
    const SegmentStatus* st = in.observed.Segment(t.name, seg.number);
    // Journaled but not seen by the backend (a crash between the two, or a pod the informer
    // has not shown yet): nothing to stop or charge until it shows.
    if (st == nullptr) continue;
    if (st->state == SegmentState::kSucceeded || st->state == SegmentState::kFailed) {
      part.events.push_back(SegmentEndEvent(in, t, seg, *st));
      if (Relaunches(in.spec(), t, EndOf(in, t, seg, *st).reason)) {
        part.Add(StopTrial(in, t, Reason::kSweepFinished, message, false));
      }
    } else if (t.stop_requested) {
      part.actions.push_back(StopAction(t, t.reason));
    } else {
      part.Add(StopTrial(in, t, Reason::kSweepFinished, message, true));
    }
  }
  return part;
}

}  // namespace bsw::decisions
