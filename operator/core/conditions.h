#ifndef BSW_CORE_CONDITIONS_H_
#define BSW_CORE_CONDITIONS_H_

// The conditions a pass publishes (conditions.cc).

#include <optional>
#include <string>
#include <vector>

#include "operator/core/admission.h"
#include "operator/core/decision_part.h"
#include "operator/core/probe.h"

namespace bsw::decisions {

// What a pass decided that the conditions report.
struct PassSummary {
  std::optional<Finish> finish;               // decided in this pass
  std::optional<ThroughputDecision> decided;  // in this pass
  int occupied = 0;
  std::vector<Denial> denials;
  std::vector<std::string> unknown;
};
Condition ProgressingCondition(const SweepModel& model, const PassSummary& pass);
// ThroughputBelowTarget: Unknown while probing, then whether the decision met the gate.
Condition ThroughputCondition(const SweepModel& model, const PassSummary& pass);
// TrialsScheduled: False while a trial (or probe) cannot start for a reason the backend names,
// with the backend's own message: a held-up sweep says why instead of waiting silently.
Condition ScheduledCondition(const Observed& observed);
// BudgetAvailable: False with the first denial of the pass, or once the sweep ended
// BudgetExhausted.
Condition BudgetCondition(const SweepModel& model, const Ledger& ledger, const PassSummary& pass);
Condition MetricsCondition(const PassSummary& pass);
// Every condition of the pass, in the order the status lists them.
std::vector<Condition> Conditions(const PlanInput& in, const Ledger& ledger,
                                  const PassSummary& pass);

}  // namespace bsw::decisions

#endif  // BSW_CORE_CONDITIONS_H_
