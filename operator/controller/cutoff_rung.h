#ifndef BSW_CONTROLLER_CUTOFF_RUNG_H_
#define BSW_CONTROLLER_CUTOFF_RUNG_H_

#include <optional>

#include "operator/core/event.h"
#include "operator/core/sweep_model.h"

namespace bsw {

// The rung at which `event` cut a trial off (a TrialStopped for reason RungCutoff): the index of
// the rung milestone the trial's progress is at in `model`, the model the event was applied to
// (the number of rungs when it is at none). nullopt for any other event. The operator counts
// kills by it.
std::optional<int> CutoffRung(const SweepModel& model, const Event& event);

}  // namespace bsw

#endif  // BSW_CONTROLLER_CUTOFF_RUNG_H_
