#ifndef BSW_CORE_TRIAL_DECISIONS_H_
#define BSW_CORE_TRIAL_DECISIONS_H_

// The trial lifecycle (trial_decisions.cc).

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "operator/core/decision_part.h"
#include "operator/core/reason.h"

namespace bsw::decisions {

// The ends of the segments whose start the backend refused for good (`refused`, by trial or probe
// run name and segment, with the backend's message): each ends as Error without running, so that
// the trial's retries and spec.maxFailedTrials end it rather than a start retried on every pass.
// Recorded before anything else is decided, as a failure the backend reported.
std::vector<Event> RefusedEnds(const SweepModel& model,
                               const std::map<std::pair<std::string, int>, std::string>& refused,
                               double now);

// Why segment `seg` of trial `t` ended, as `st` shows it, and the message saying so. A segment
// that exited 0 without the objective at its `until` (unless the sweep stopped it) is ExitedShort
// when what the trial last reported (Observed::last_metrics, its rung values) is short of `until`
// or nothing, explained by that and its last read error (Observed::last_read_errors); one that
// reported reaching `until` lost only the read of its value there, and ends MetricsMissing below
// the full resource and as planned at it.
struct SegmentEnd {
  Reason reason = Reason::kNone;
  std::string message;
};
SegmentEnd EndOf(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                 const SegmentStatus& st);
// The SegmentEnded event of a segment that ended as `st` shows: EndOf, the trainer's output when
// it failed, and the charge.
event::SegmentEnded SegmentEndEvent(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                                    const SegmentStatus& st);
// Whether a trial whose segment ended for `reason` stays active for another segment: a resume
// after an interruption, or a retry while retries are left.
bool Relaunches(const SweepSpec& spec, const Trial& t, Reason reason);

// Whether a running trial's metrics are Unknown (no answer, or a passed rung without its value),
// and the stop once they have been for longer than spec.metrics.missingTimeoutSeconds.
struct MetricsCheck {
  bool unknown = false;
  std::optional<std::string> stop_message;
};
MetricsCheck CheckMetrics(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                          const TrialMetrics* metrics);

// The sweep decides to stop trial `t`: the event, and the stop of its live segment if it has one.
Part StopTrial(const PlanInput& in, const Trial& t, Reason reason, const std::string& message,
               bool live);

// Every active trial in index order: launches the ones waiting for a segment, records ended
// segments, stops what must stop, keeps deadlines at what the next milestone needs.
Admitted ReconcileTrials(const PlanInput& in, const Ledger& ledger);

// Ends every active trial of a finished sweep, so that none is left Running: a live segment is
// stopped, an ended one recorded (its charge too), and a trial with nothing running (not
// launched yet, or waiting for a retry or a resume) is stopped at once.
Part StopEverything(const PlanInput& in);

}  // namespace bsw::decisions

#endif  // BSW_CORE_TRIAL_DECISIONS_H_
