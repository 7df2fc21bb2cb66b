#ifndef BSW_CORE_REASON_H_
#define BSW_CORE_REASON_H_

#include <optional>
#include <string>
#include <string_view>

namespace bsw {

// The reasons the core decides with: why a segment ended, why a trial stopped, why a sweep
// finished. Events and statuses carry them as their CamelCase names (ReasonName), which the
// journal, the API and the backends share.
enum class Reason {
  kNone,  // "": a segment that ended as planned
  // Why a segment ended, as a backend reports it or the planner records it.
  kError,
  kLost,
  kDiverged,
  kDeadlineExceeded,
  kStopped,
  kEvicted,
  kInterrupted,
  kMetricsMissing,
  // The trainer exited 0 without the objective at the resource it was asked for.
  kExitedShort,
  // Why the sweep stopped a trial or finished.
  kBudgetExhausted,
  kRungCutoff,
  kSweepFinished,
  kTooManyFailedTrials,
  kAllTrialsFailed,
  kThroughputBelowTarget,
  kSweepCompleted,
  // What the probe phase decided (ThroughputDecision::reason).
  kTargetMet,
  kBelowTarget,
  kNothingMeasured,
  // A shared pool's limits: why the pool refused an admission (PoolCap::limit, a Denial's
  // reason).
  kPoolExhausted,
  kPoolMaxPerSweep,
  kPoolFairShare,
};

const char* ReasonName(Reason reason);
// The reason named `name`; nullopt for a name the core does not know (a backend's own word).
std::optional<Reason> ParseReason(std::string_view name);

// Whether a segment that ended for `reason` failed in the trainer itself, so that its output
// explains it: Error, Lost, Diverged or ExitedShort.
bool TrainerFailed(Reason reason);
// Whether a segment that ended for `reason` counts against spec.trial.maxRetries and is retried
// while retries are left: Error or Lost. A diverged trainer would diverge again, and one that
// exited 0 short of its `until` would exit there again (docs/design.md, "Trainer contract").
bool Retryable(Reason reason);

// Whether `reason` is a shared pool's limit rather than the sweep's own budget.
bool PoolLimit(Reason reason);

// The same, for a reason as its name.
bool TrainerFailed(std::string_view name);
bool Retryable(std::string_view name);

}  // namespace bsw

#endif  // BSW_CORE_REASON_H_
