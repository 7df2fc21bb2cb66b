#ifndef BSW_CORE_VERDICT_DECISION_H_
#define BSW_CORE_VERDICT_DECISION_H_

// Rung verdicts (verdict_decision.cc).

#include <vector>

#include "operator/core/event.h"
#include "operator/core/sweep_model.h"

namespace bsw::decisions {

// Stop mode: the RungVerdict of each value a rung judges that has none yet
// (SweepModel::unjudged): continue when the rung had it in its top 1/η as it arrived, else stop.
std::vector<Event> JudgeValues(const SweepModel& model, double now);

}  // namespace bsw::decisions

#endif  // BSW_CORE_VERDICT_DECISION_H_
