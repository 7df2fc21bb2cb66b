#ifndef BSW_CORE_SWEEP_STATUS_H_
#define BSW_CORE_SWEEP_STATUS_H_

#include <set>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "operator/core/ledger.h"
#include "operator/core/planner.h"
#include "operator/core/sweep_model.h"

namespace bsw {

// Carries lastTransitionTime over from `previous` (a status.conditions array) unless a condition's
// status flipped, and stamps every condition with `generation`.
nlohmann::json MergeConditions(const nlohmann::json& previous, const std::vector<Condition>& fresh,
                               double now, int64_t generation);

// pbt and pb2: where trial `t` went on from other trials' checkpoints, oldest first, at most the
// newest kStatusLineage: [{resource, from (the donor), message}].
inline constexpr size_t kStatusLineage = 10;
nlohmann::json LineageJson(const SweepModel& model, const Trial& t);

// The BudgetSweep status object. Bounded whatever the number of trials: aggregates, the rungs,
// the best trial and the running trials (at most spec.parallelism), never one entry per trial.
nlohmann::json BuildStatus(const SweepModel& model, const Ledger& ledger,
                           const nlohmann::json& conditions);

// The status of a run stopped from outside (Ctrl-C), once it stopped its segments: BuildStatus,
// but only the active trials whose segment is still live (`live_trials`, by name) count and are
// listed as running; the others count as interrupted, and the next run on the same state resumes
// them from their checkpoints. Unless the sweep had finished, Progressing is False for reason
// Interrupted.
nlohmann::json InterruptedStatus(const SweepModel& model, const Ledger& ledger,
                                 const nlohmann::json& conditions,
                                 const std::set<std::string>& live_trials, double now);

}  // namespace bsw

#endif  // BSW_CORE_SWEEP_STATUS_H_
