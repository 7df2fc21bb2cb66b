#ifndef BSW_CMD_KUBECTL_VIEWS_H_
#define BSW_CMD_KUBECTL_VIEWS_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "nlohmann/json.hpp"
#include "operator/core/api.h"
#include "operator/core/sweep_model.h"
#include "operator/report/report.h"

namespace bsw::kubectl {

// `kubectl bsw ls`: a header and one row per BudgetSweep object of `sweeps`, in the order given:
// [NAMESPACE] NAME PHASE BUDGET BEST TRIALS AGE. BUDGET is a BudgetBar of status.budget (of
// spec.budget.gpuHours before the operator wrote a status), BEST the best value and its trial,
// TRIALS running/created. "-" marks what the status does not hold yet.
std::string SweepListTable(const nlohmann::json& sweeps, bool all_namespaces,
                           double now_unix_seconds);

// `kubectl bsw trials`: one row per trial (TRIAL PHASE RESOURCE VALUE PARAMS), the phase with its
// reason, the resource and objective of the highest rung it reached; then, for each failed or
// diverged trial, the last lines of its trainer's output, indented under its name.
// InvalidArgument when an event does not apply to the spec.
[[nodiscard]] StatusOr<std::string> TrialsView(const SweepSpec& spec,
                                               const std::vector<Event>& events);

// `kubectl bsw top`: one frame of the live view. Phase, budget, trial counts, rungs, throughput
// probe and best trial from the status; the running trials (segment, resource, value, running
// time, time to the deadline) from the events; the status's recent failures with their output.
// InvalidArgument when an event does not apply to the spec.
[[nodiscard]] StatusOr<std::string> TopFrame(const ReportInput& input);

// Whether the sweep's status says that it has ended (Completed, BudgetExhausted or Failed).
bool SweepEnded(const nlohmann::json& status);

}  // namespace bsw::kubectl

#endif  // BSW_CMD_KUBECTL_VIEWS_H_
