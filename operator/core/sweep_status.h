#ifndef BSW_CORE_SWEEP_STATUS_H_
#define BSW_CORE_SWEEP_STATUS_H_

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

}  // namespace bsw

#endif  // BSW_CORE_SWEEP_STATUS_H_
