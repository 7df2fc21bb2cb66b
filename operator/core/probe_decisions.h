#ifndef BSW_CORE_PROBE_DECISIONS_H_
#define BSW_CORE_PROBE_DECISIONS_H_

// The probe phase (probe_decisions.cc).

#include <optional>

#include "operator/core/admission.h"
#include "operator/core/decision_part.h"
#include "operator/core/probe.h"

namespace bsw::decisions {

struct ProbePhase {
  Admitted admitted;
  std::optional<ThroughputDecision> decided;  // in this pass
  std::optional<Finish> finish;
};
// One probe at a time (probes measure the machine, so they must not share it), each admitted
// within what spec.throughput.maxBudgetFraction leaves; then the decision.
ProbePhase ReconcileProbes(const PlanInput& in, const Ledger& ledger);
// The ProbeEnded event of probe `p`, whose run ended as `st` shows.
event::ProbeEnded ProbeEndEvent(const PlanInput& in, const ProbeRun& p, const SegmentStatus& st);

}  // namespace bsw::decisions

#endif  // BSW_CORE_PROBE_DECISIONS_H_
