#include "operator/core/conditions.h"

namespace bsw::decisions {

Condition ProgressingCondition(const SweepModel& model, const PassSummary& pass) {
  if (pass.finish) {
    return {"Progressing", "False", SweepPhaseName(pass.finish->phase), pass.finish->message};
  }
  if (model.finished()) {
    return {"Progressing", "False", SweepPhaseName(model.phase()), model.finish_message()};
  }
  if (model.probing() && !pass.decided) {
    return {"Progressing", "True", "Probing",
            "probing throughput: " + std::to_string(model.probes().size()) + " probe runs so far"};
  }
  return {"Progressing", "True", "TrialsRunning",
          std::to_string(pass.occupied) + " trials running"};
}

Condition ThroughputCondition(const SweepModel& model, const PassSummary& pass) {
  const std::optional<ThroughputDecision>& d =
      pass.decided ? pass.decided : model.throughput_decision();
  if (!d) {
    return {"ThroughputBelowTarget", "Unknown", "Probing", "the probe phase has not decided yet"};
  }
  return {"ThroughputBelowTarget", d->target_met ? "False" : "True", ReasonName(d->reason),
          d->message};
}

Condition ScheduledCondition(const Observed& observed) {
  const SegmentStatus* first = nullptr;
  int held = 0;
  for (const auto& [key, st] : observed.segments) {
    if (st.state != SegmentState::kPending || st.waiting_reason.empty()) continue;
    if (first == nullptr) first = &st;
    ++held;
  }
  if (first == nullptr) {
    return {"TrialsScheduled", "True", "Scheduled", "no trial is held up before it starts"};
  }
  std::string message = first->trial + ": " + first->waiting_message;
  if (held > 1) message += " (and " + std::to_string(held - 1) + " more held up)";
  return {"TrialsScheduled", "False", first->waiting_reason, message};
}

Condition BudgetCondition(const SweepModel& model, const Ledger& ledger, const PassSummary& pass) {
  const char* exhausted = ReasonName(Reason::kBudgetExhausted);
  if (!pass.denials.empty()) {
    return {"BudgetAvailable", "False", exhausted, pass.denials.front().Message()};
  }
  // A sweep that ended for want of budget says so on every later pass too, such as the one that
  // records its last segments' ends.
  if (model.finished() && model.finish_reason() == exhausted) {
    return {"BudgetAvailable", "False", exhausted, model.finish_message()};
  }
  return {"BudgetAvailable", "True", "WithinBudget",
          Figures("%.4f of %.4f GPU-hours used", ledger.used() / 3600, ledger.budget() / 3600)};
}

Condition MetricsCondition(const PassSummary& pass) {
  if (pass.unknown.empty()) {
    return {"MetricsAvailable", "True", "MetricsReported", "every running trial reports metrics"};
  }
  std::string names;
  for (const std::string& n : pass.unknown) names += (names.empty() ? "" : ", ") + n;
  return {"MetricsAvailable", "False", ReasonName(Reason::kMetricsMissing),
          "waiting for the objective of " + names};
}

std::vector<Condition> Conditions(const PlanInput& in, const Ledger& ledger,
                                  const PassSummary& pass) {
  std::vector<Condition> conditions{ProgressingCondition(in.model, pass)};
  if (in.spec().throughput.enabled) conditions.push_back(ThroughputCondition(in.model, pass));
  conditions.push_back(ScheduledCondition(in.observed));
  conditions.push_back(BudgetCondition(in.model, ledger, pass));
  conditions.push_back(MetricsCondition(pass));
  return conditions;
}

}  // namespace bsw::decisions
