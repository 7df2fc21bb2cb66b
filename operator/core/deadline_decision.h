#ifndef BSW_CORE_DEADLINE_DECISION_H_
#define BSW_CORE_DEADLINE_DECISION_H_

// Deadlines (deadline_decision.cc).

#include "operator/core/decision_part.h"
#include "operator/core/trial_metrics.h"

namespace bsw::decisions {

// What share of their reservations the running segments may keep: 1 while used + reserved fits
// the budget (within the deadline slack), else what is left after `used` over what is reserved,
// down to 0 when the budget is below what was used.
double ReservationFit(const Ledger& ledger, const PlannerOptions& options);

// Keeps the deadline of running segment `seg` at what its next milestone needs: later when the
// ledger admits the extra, earlier when the trial's own pace shows it needs less. After a budget
// cut (in.reservation_fit < 1) it brings the deadline in to keep only that share of what the
// segment holds, so every running segment gives up the same share and the sweep fits again.
Admitted AdjustDeadline(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                        const SegmentStatus& st, const TrialMetrics* metrics, const Ledger& ledger);

}  // namespace bsw::decisions

#endif  // BSW_CORE_DEADLINE_DECISION_H_
