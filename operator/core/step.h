#ifndef BSW_CORE_STEP_H_
#define BSW_CORE_STEP_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"
#include "nlohmann/json.hpp"
#include "operator/core/ledger.h"
#include "operator/core/planner.h"
#include "operator/core/pool.h"
#include "operator/core/segment.h"
#include "operator/core/sweep_model.h"
#include "operator/core/trial_metrics.h"

namespace bsw {

// What a controller observed in one pass.
struct Observation {
  double now = 0;
  // What the backend lists, and the recorded charge of ended segments it no longer lists
  // (RecordedCharges).
  std::vector<SegmentStatus> segments;
  // This pass's reads of the running trials' (and the probe run's) metrics: those that answered,
  // and why the others failed. A trial in neither is Unknown too.
  std::map<std::string, TrialMetrics> metrics;
  std::map<std::string, Status> read_errors;
};

// What a controller keeps from one pass to the next: the last Step's `next`, handed to the next
// Decide. A new controller starts from an empty one.
struct PassMemory {
  // When each running trial's metrics became Unknown, by name.
  std::map<std::string, double> unknown_since;
  // What each running trial last said: its latest metrics that answered, and why its reads failed
  // since then (the first failure, except that an endpoint that answered with what a read refuses
  // outranks one that gave no answer, since that answer is the reason). ExitedShort's message and
  // the status show them.
  std::map<std::string, TrialMetrics> last_metrics;
  std::map<std::string, Status> read_errors;
  // When each running trial last answered a read (with metrics, or with an answer the read
  // refused): the `now` of that pass.
  std::map<std::string, double> last_read_at;
  // Starts the backend refused for good (InvalidArgument) while the controller carried out the
  // last step, by (trial or probe run name, segment): the controller adds them, and the next
  // Decide ends those segments as Error.
  std::map<std::pair<std::string, int>, std::string> refused_starts;
  // The conditions as published, with their transition times (MergeConditions).
  nlohmann::json conditions = nlohmann::json::array();
};

// The backend calls of a step, by the names the backend knows.
struct Launch {
  SegmentSpec spec;
};
struct Stop {
  std::string name;  // the trial's or the probe run's
  int segment = 0;
  std::string reason;  // why the sweep stops a trial, as the trial records it
};
struct MoveDeadline {
  std::string name;
  int segment = 0;
  double deadline = 0;
};
using StepAction = std::variant<Launch, Stop, MoveDeadline>;

// One pass's decision.
struct Step {
  // Every event of the pass, as one batch to journal: the new rung values, the verdicts on them,
  // then what the planner decided. Any prefix of it replays to a model the next Decide goes on
  // from.
  std::vector<Event> events;
  // The model with `events` applied: the controller's once they are journaled.
  std::shared_ptr<const SweepModel> model;
  // To carry out once `events` are journaled, each launch with its whole spec.
  std::vector<StepAction> actions;
  // With a shared pool's cap: what the sweep holds after the step, to commit before any action
  // (before the batch is journaled, so that no crash leaves a launch the pool does not count).
  std::optional<PoolAccount> account;
  std::vector<Denial> denials;        // admissions refused in this pass
  std::vector<Condition> conditions;  // what this pass reports
  std::vector<std::string> unknown;   // running trials whose metrics are Unknown
  // Device-seconds the sweep holds once the step is carried out (Plan::held_device_seconds).
  double held_device_seconds = 0;
  PassMemory next;  // for the next Decide
};

// The reconcile step, a pure function: from the model (the journal so far), what the controller
// observed, the ledger of that observation, what it kept from the last pass and, for a sweep in
// a shared pool, the pool's cap, the events to journal, the actions to take and what to keep.
// Re-issues what a crash may have left undone (a launched segment the backend does not have, a
// stop not yet carried out). Internal only when the planner contradicts the model, which is a
// bug.
StatusOr<Step> Decide(const SweepModel& model, const Observation& observation, const Ledger& ledger,
                      const PassMemory& memory, const std::optional<PoolCap>& cap,
                      const PlannerOptions& options = {});

}  // namespace bsw

#endif  // BSW_CORE_STEP_H_
