#include "operator/controller/cutoff_rung.h"

#include <algorithm>
#include <variant>
#include <vector>

#include "operator/core/reason.h"

namespace bsw {

std::optional<int> CutoffRung(const SweepModel& model, const Event& event) {
  const auto* stopped = std::get_if<event::TrialStopped>(&event);
  if (stopped == nullptr || stopped->reason != ReasonName(Reason::kRungCutoff)) return std::nullopt;
  const std::vector<double>& rungs = model.rungs().milestones();
  double reached = model.trial(stopped->trial).progress();
  return static_cast<int>(std::find(rungs.begin(), rungs.end(), reached) - rungs.begin());
}

}  // namespace bsw
