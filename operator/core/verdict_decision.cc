#include "operator/core/verdict_decision.h"

#include <cstdio>
#include <string>

namespace bsw::decisions {
namespace {

// The verdict of a stop-mode rung on `t`'s value at `resource`, as the rung said when the value
// arrived: whether it was in the top 1/η of the values recorded there then.
event::RungVerdict Judge(const SweepModel& model, const Trial& t, double resource, double now) {
  int rung = model.rungs().IndexOf(resource);
  AshaScheduler::Arrival said = model.scheduler().ArrivalOf(t.index, rung).value();
  event::RungVerdict e{.at = now, .trial = t.index};
  e.rung = rung;
  e.resource = resource;
  e.verdict = said.in_top ? Verdict::kContinue : Verdict::kStop;
  if (said.in_top) return e;
  const SweepSpec& spec = model.spec();
  std::string bracket = spec.algorithm == Algorithm::kHyperband
                            ? " in bracket " + std::to_string(model.scheduler().BracketOf(t.index))
                            : "";
  char msg[256];
  std::snprintf(msg, sizeof msg,
                "value %g at rung %d (%s %g) is not in the top 1/%d of the %lld values "
                "recorded there%s",
                t.rung_values.at(resource), rung, spec.resource_unit.c_str(), resource,
                spec.reduction_factor, static_cast<long long>(said.values), bracket.c_str());
  e.message = msg;
  return e;
}

}  // namespace

std::vector<Event> JudgeValues(const SweepModel& model, double now) {
  std::vector<Event> events;
  for (const auto& [index, resource] : model.unjudged()) {
    events.push_back(Judge(model, model.trial(index), resource, now));
  }
  return events;
}

}  // namespace bsw::decisions
