#include "operator/core/reason.h"

#include <iterator>

namespace bsw {
namespace {

constexpr const char* kReasonNames[] = {"",
                                        "Error",
                                        "Lost",
                                        "Diverged",
                                        "DeadlineExceeded",
                                        "Stopped",
                                        "Evicted",
                                        "Interrupted",
                                        "MetricsMissing",
                                        "ExitedShort",
                                        "BudgetExhausted",
                                        "RungCutoff",
                                        "SweepFinished",
                                        "TooManyFailedTrials",
                                        "AllTrialsFailed",
                                        "ThroughputBelowTarget",
                                        "SweepCompleted",
                                        "TargetMet",
                                        "BelowTarget",
                                        "NothingMeasured",
                                        "PoolExhausted",
                                        "PoolMaxPerSweep",
                                        "PoolFairShare"};
static_assert(std::size(kReasonNames) == static_cast<size_t>(Reason::kPoolFairShare) + 1);

}  // namespace

const char* ReasonName(Reason reason) { return kReasonNames[static_cast<size_t>(reason)]; }

std::optional<Reason> ParseReason(std::string_view name) {
  for (size_t i = 0; i < std::size(kReasonNames); ++i) {
    if (name == kReasonNames[i]) return static_cast<Reason>(i);
  }
  return std::nullopt;
}

bool PoolLimit(Reason reason) {
  return reason == Reason::kPoolExhausted || reason == Reason::kPoolMaxPerSweep ||
         reason == Reason::kPoolFairShare;
}

bool TrainerFailed(Reason reason) {
  return reason == Reason::kError || reason == Reason::kLost || reason == Reason::kDiverged ||
         reason == Reason::kExitedShort;
}

bool Retryable(Reason reason) { return reason == Reason::kError || reason == Reason::kLost; }

bool TrainerFailed(std::string_view name) {
  std::optional<Reason> reason = ParseReason(name);
  return reason && TrainerFailed(*reason);
}

bool Retryable(std::string_view name) {
  std::optional<Reason> reason = ParseReason(name);
  return reason && Retryable(*reason);
}

}  // namespace bsw
