#ifndef BSW_CORE_PLANNER_H_
#define BSW_CORE_PLANNER_H_

#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "operator/core/ledger.h"
#include "operator/core/segment.h"
#include "operator/core/sweep_model.h"
#include "operator/core/trial_metrics.h"

namespace bsw {

// What the controller observed in one pass.
struct Observed {
  // Every segment the backend reports, keyed by (trial name, segment number).
  std::map<std::pair<std::string, int>, SegmentStatus> segments;
  // Metrics of running trials that answered, keyed by trial name. Absent means Unknown.
  std::map<std::string, TrialMetrics> metrics;
  // When each running trial's metrics became Unknown (Plan::unknown of earlier passes), by name.
  std::map<std::string, double> unknown_since;
  // What each active trial last said, across passes, by name: its latest metrics that answered,
  // and the error of its latest read when that read failed. They explain a segment that exited 0
  // short of its `until` (ExitedShort).
  std::map<std::string, TrialMetrics> last_metrics;
  std::map<std::string, std::string> last_read_errors;
  // When each active trial last answered a read, across passes: a short exit needs an answer from
  // the segment's trainer shortly before the pass that finds the segment ended.
  std::map<std::string, double> last_read_at;

  const SegmentStatus* Segment(const std::string& trial, int segment) const;
};

// The backend calls a plan asks for. A trial's segments and the probe runs are distinct kinds, so
// a probe's index is never read as a trial's.

// Starts segment `segment` of trial `trial`, to run until `until`: what SegmentSpec needs beyond
// the sweep spec.
struct StartSegment {
  int64_t trial = 0;
  int segment = 0;
  double until = 0;
  double deadline = 0;
};
// Starts probe run `probe` (SweepModel::probes()): its only segment, 0.
struct StartProbe {
  int probe = 0;
  double deadline = 0;
};
struct StopSegment {
  int64_t trial = 0;
  int segment = 0;
  std::string reason;  // why the sweep stops it, as the trial records it
};
struct StopProbe {
  int probe = 0;
};
struct SetDeadline {
  int64_t trial = 0;
  int segment = 0;
  double deadline = 0;
};
using Action = std::variant<StartSegment, StartProbe, StopSegment, StopProbe, SetDeadline>;

struct Condition {
  std::string type;
  std::string status;  // True, False or Unknown
  std::string reason;  // CamelCase, never empty
  std::string message;
};

struct Plan {
  std::vector<Event> events;    // journal these, then apply them to the model
  std::vector<Action> actions;  // then carry these out
  std::vector<Denial> denials;  // admissions refused in this pass
  std::vector<Condition> conditions;
  // Running trials whose metrics are Unknown in this pass: no answer, or a passed rung without
  // its value. The controller remembers since when and passes it back in Observed::unknown_since.
  std::vector<std::string> unknown;
  // Device-seconds the sweep holds once the plan is carried out: used + reserved after its
  // admissions and releases (what a shared pool records before any segment starts).
  double held_device_seconds = 0;
};

// Tunables of the planner, with the defaults the product uses.
struct PlannerOptions {
  double reservation_margin = 1.25;  // reserve this multiple of the estimated seconds
  double min_reservation_seconds = 5;
  double deadline_slack_seconds = 2;  // ignore deadline moves smaller than this
  // Kubernetes lets a pod's activeDeadlineSeconds only decrease. Set, a segment reserves its
  // whole run (to `until`) at launch, and deadlines only ever move earlier.
  bool deadlines_only_shrink = false;
};

// Turns newly reported objective values at rung milestones into ValueRecorded events, with the
// progress they measure for the cost model. Decide applies these, and their verdicts, before
// ComputePlan. A segment found ended gives the values of its last read that answered: read in a
// pass whose journal write failed (the API server away), they are not lost with that pass.
std::vector<Event> NewRungValues(const SweepModel& model, const Observed& observed, double now);

// The planner's part of a pass (Decide, step.h): from the model with the pass's rung values and
// their verdicts applied, what the backend and metrics show, and the ledger, the events to record
// and the backend actions to take, with the conditions to publish. Pure: the same inputs give the
// same plan. The decisions it is made of are in decision_part.h and the headers it names.
Plan ComputePlan(const SweepModel& model, const Observed& observed, const Ledger& ledger,
                 double now, const PlannerOptions& options = {});

}  // namespace bsw

#endif  // BSW_CORE_PLANNER_H_
