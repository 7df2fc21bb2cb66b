#include "operator/core/step.h"

#include <algorithm>
#include <set>

#include "base/overloaded.h"
#include "operator/core/placeholders.h"
#include "operator/core/read_error.h"
#include "operator/core/sweep_status.h"
#include "operator/core/trial_decisions.h"
#include "operator/core/verdict_decision.h"

namespace bsw {
namespace {

// Applies `events` to `model` and appends them to `batch`.
Status ApplyAll(SweepModel& model, std::vector<Event> events, std::vector<Event>& batch) {
  for (Event& e : events) {
    if (Status s = model.Apply(e); !s.ok()) return InternalError("planner event: " + s.message());
    batch.push_back(std::move(e));
  }
  return OkStatus();
}

// The read errors to keep: the kept ones of trials whose reads failed again, then this pass's,
// where a refused answer outranks a kept error that was no answer.
std::map<std::string, Status> ReadErrors(const Observation& observation, const PassMemory& memory) {
  std::map<std::string, Status> errors = memory.read_errors;
  for (const auto& [trial, m] : observation.metrics) errors.erase(trial);
  for (const auto& [trial, error] : observation.read_errors) {
    auto [known, added] = errors.try_emplace(trial, error);
    if (!added && AnswerRefused(error) && !AnswerRefused(known->second)) known->second = error;
  }
  return errors;
}

// Whether the planner looks at segment `s`: one of an active trial or of a probe run, or one that
// is live. The others (the recorded charges of ended trials, most of a long sweep's segments)
// only charge the ledger.
bool Decides(const SweepModel& model, const SegmentStatus& s) {
  if (s.state == SegmentState::kPending || s.state == SegmentState::kRunning) return true;
  if (std::optional<int64_t> index = model.FindTrial(s.trial)) {
    return model.trial(*index).phase == TrialPhase::kRunning;
  }
  return std::any_of(model.probes().begin(), model.probes().end(),
                     [&s](const ProbeRun& p) { return p.name == s.trial; });
}

// What the planner reads: the observation with what the controller kept.
Observed ObservedOf(const SweepModel& model, const Observation& observation,
                    const PassMemory& memory, const std::map<std::string, Status>& read_errors) {
  Observed observed;
  for (const SegmentStatus& s : observation.segments) {
    if (Decides(model, s)) observed.segments.emplace(std::make_pair(s.trial, s.segment), s);
  }
  observed.metrics = observation.metrics;
  observed.unknown_since = memory.unknown_since;
  observed.last_metrics = memory.last_metrics;
  for (const auto& [name, m] : observation.metrics) observed.last_metrics[name] = m;
  for (const auto& [trial, error] : read_errors) observed.last_read_errors[trial] = error.message();
  observed.last_read_at = memory.last_read_at;
  // Only reads that the trainer answered: a read that found nothing listening says nothing of
  // where it stopped (it may have reached `until` and gone since the last answer).
  for (const auto& [name, m] : observation.metrics) observed.last_read_at[name] = observation.now;
  for (const auto& [name, error] : observation.read_errors) {
    if (AnswerRefused(error)) observed.last_read_at[name] = observation.now;
  }
  return observed;
}

// What every segment's spec takes from the sweep spec.
SegmentSpec BaseSpec(const SweepModel& model, int segment, double until, double deadline) {
  const SweepSpec& spec = model.spec();
  SegmentSpec s;
  s.sweep = spec.name;
  s.segment = segment;
  s.command = spec.container.command;
  s.command.insert(s.command.end(), spec.container.args.begin(), spec.container.args.end());
  s.env = spec.container.env;
  s.until_resource = until;
  s.max_resource = model.rungs().max();
  s.milestones = model.rungs().milestones();
  s.devices = spec.trial_gpus;
  s.deadline_unix_seconds = deadline;
  s.grace_seconds = spec.grace_seconds;
  return s;
}

// Fills the template's placeholders with the trial's values; a parameter placed so is not also
// appended as a flag.
void PlaceTrialParams(SegmentSpec* s) {
  std::vector<std::string> texts = s->command;
  for (const auto& [name, value] : s->env) texts.push_back(value);
  const std::set<std::string> placed = PlacedNames(texts);
  for (std::string& arg : s->command) arg = PlaceParams(arg, s->params);
  for (auto& [name, value] : s->env) value = PlaceParams(value, s->params);
  for (const auto& [name, value] : s->params) {
    if (!placed.contains(name)) s->param_args.push_back("--" + name + "=" + value);
  }
}

// budgetsweep-collect's options for a trainer whose metrics come from what it prints or writes;
// none for one that serves them itself.
std::vector<std::string> CollectorArgs(const SweepSpec& spec) {
  const CollectorSpec& c = spec.collector;
  if (c.kind == CollectorKind::kPrometheus) return {};
  const bool file = c.kind == CollectorKind::kFile;
  std::vector<std::string> args = {file ? "--source=file" : "--source=stdout",
                                   "--objective=" + spec.objective_metric};
  if (!c.resource_key.empty()) args.push_back("--resource-key=" + c.resource_key);
  if (!c.filter.empty()) args.push_back("--filter=" + c.filter);
  if (file) {
    args.push_back("--path=" + c.file_path);
    args.push_back(c.file_format == CollectorFormat::kJson ? "--format=json" : "--format=text");
  }
  return args;
}

// A trial gets the probe phase's choice after the template's args, and its parameters after that.
SegmentSpec SpecOf(const SweepModel& model, const StartSegment& a) {
  SegmentSpec s = BaseSpec(model, a.segment, a.until, a.deadline);
  const Trial& t = model.trial(a.trial);
  s.trial = t.name;
  for (const auto& [name, value] : t.params) s.params.emplace_back(name, FormatParamValue(value));
  PlaceTrialParams(&s);
  s.collector_args = CollectorArgs(model.spec());
  if (model.throughput_decision()) s.extra_args = FlagArgs(model.throughput_decision()->trial_args);
  if (Population(model.spec().algorithm)) {
    s.snapshots = true;
    for (const ParamSpec& p : model.spec().search_space) {
      if (p.mutable_) s.mutable_flags.push_back(p.name);
    }
    if (!t.lineage.empty()) {
      s.exploit_trial = model.trial(t.lineage.back().donor).name;
      s.exploit_at = t.lineage.back().resource;
    }
  }
  return s;
}

// A probe runs the template with its candidate's settings, towards the full resource.
SegmentSpec SpecOf(const SweepModel& model, const StartProbe& a) {
  SegmentSpec s = BaseSpec(model, 0, model.rungs().max(), a.deadline);
  const ProbeRun& p = model.probes().at(static_cast<size_t>(a.probe));
  s.trial = p.name;
  s.extra_args = ProbeArgs(model.spec().throughput, p.settings);
  s.grace_seconds = std::min(s.grace_seconds, kProbeGraceSeconds);
  return s;
}

// The plan's actions by the backend's names, read from the model with the plan applied (a trial
// launched in this pass was created in it).
std::vector<StepAction> ActionsOf(const SweepModel& model, const std::vector<Action>& actions) {
  std::vector<StepAction> out;
  out.reserve(actions.size());
  for (const Action& action : actions) {
    out.push_back(std::visit(
        Overloaded{[&](const StartSegment& a) -> StepAction { return Launch{SpecOf(model, a)}; },
                   [&](const StartProbe& a) -> StepAction { return Launch{SpecOf(model, a)}; },
                   [&](const StopSegment& a) -> StepAction {
                     return Stop{model.trial(a.trial).name, a.segment, a.reason};
                   },
                   [&](const StopProbe& a) -> StepAction {
                     return Stop{model.probes().at(static_cast<size_t>(a.probe)).name, 0, ""};
                   },
                   [&](const SetDeadline& a) -> StepAction {
                     return MoveDeadline{model.trial(a.trial).name, a.segment, a.deadline};
                   }},
        action));
  }
  return out;
}

// What the sweep holds in its pool after `plan`: a deadline the plan moves earlier is released
// only once it was moved, so the account keeps the larger of before and after.
PoolAccount AccountOf(const SweepModel& model, const Ledger& ledger, const Plan& plan) {
  double held = ledger.used() + ledger.reserved();
  PoolAccount account{.sweep = model.spec().name, .used_device_seconds = ledger.used()};
  account.reserved_device_seconds = std::max(held, plan.held_device_seconds) - ledger.used();
  account.active =
      !model.finished() && std::none_of(plan.events.begin(), plan.events.end(), [](const Event& e) {
        return std::holds_alternative<event::SweepFinished>(e);
      });
  account.starved = std::any_of(plan.denials.begin(), plan.denials.end(),
                                [](const Denial& d) { return d.waits; });
  return account;
}

// What the next pass needs to know: kept only for the trials still running.
PassMemory NextMemory(const SweepModel& after, const Observed& observed,
                      std::map<std::string, Status> read_errors, const Plan& plan,
                      const PassMemory& memory, double now) {
  PassMemory next;
  for (const std::string& name : plan.unknown) {
    auto it = memory.unknown_since.find(name);
    next.unknown_since[name] = it == memory.unknown_since.end() ? now : it->second;
  }
  next.last_metrics = observed.last_metrics;
  next.read_errors = std::move(read_errors);
  next.last_read_at = observed.last_read_at;
  auto not_running = [&after](const auto& entry) {
    std::optional<int64_t> index = after.FindTrial(entry.first);
    return !index || after.trial(*index).phase != TrialPhase::kRunning;
  };
  std::erase_if(next.last_metrics, not_running);
  std::erase_if(next.read_errors, not_running);
  std::erase_if(next.last_read_at, not_running);
  next.conditions =
      MergeConditions(memory.conditions, plan.conditions, now, after.spec().generation);
  return next;
}

}  // namespace

StatusOr<Step> Decide(const SweepModel& model, const Observation& observation, const Ledger& ledger,
                      const PassMemory& memory, const std::optional<PoolCap>& cap,
                      const PlannerOptions& options) {
  const double now = observation.now;
  std::map<std::string, Status> read_errors = ReadErrors(observation, memory);
  const Observed observed = ObservedOf(model, observation, memory, read_errors);
  auto next = std::make_shared<SweepModel>(model);
  Step step;
  if (Status s = ApplyAll(*next, NewRungValues(*next, observed, now), step.events); !s.ok()) {
    return s;
  }
  if (Status s = ApplyAll(*next, decisions::JudgeValues(*next, now), step.events); !s.ok()) {
    return s;
  }
  std::vector<Event> refused = decisions::RefusedEnds(*next, memory.refused_starts, now);
  if (Status s = ApplyAll(*next, std::move(refused), step.events); !s.ok()) return s;
  Ledger capped = ledger;
  if (cap) capped.Limit(cap->cap_device_seconds, cap->limit, cap->waits);
  Plan plan = ComputePlan(*next, observed, capped, now, options);
  if (cap) step.account = AccountOf(*next, ledger, plan);
  if (Status s = ApplyAll(*next, plan.events, step.events); !s.ok()) return s;
  step.actions = ActionsOf(*next, plan.actions);
  step.next = NextMemory(*next, observed, std::move(read_errors), plan, memory, now);
  step.denials = std::move(plan.denials);
  step.conditions = std::move(plan.conditions);
  step.unknown = std::move(plan.unknown);
  step.held_device_seconds = plan.held_device_seconds;
  step.model = std::move(next);
  return step;
}

}  // namespace bsw
