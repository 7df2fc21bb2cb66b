#include "operator/controller/sweep_controller.h"

#include <algorithm>
#include <variant>

#include "operator/core/recorded_charges.h"
#include "operator/core/search_space.h"
#include "operator/core/sweep_status.h"

namespace bsw {

SweepController::SweepController(const SweepSpec& spec, TrialBackend* backend,
                                 MetricSource* metrics, EventLog* log, const Clock* clock,
                                 PlannerOptions options, MetricReadOptions metric_reads)
    : model_(spec),
      ledger_(spec.budget_gpu_hours * 3600.0),
      backend_(backend),
      log_(log),
      clock_(clock),
      options_(options),
      metric_reader_(metrics, clock, metric_reads) {}

Status SweepController::Recover() {
  return log_->ForEach([this](const Event& e) {
    Status s = model_.Apply(e);
    return s.ok() ? s : InvalidArgumentError(log_->Describe() + ": " + s.message());
  });
}

Status SweepController::Record(const std::vector<Event>& events) {
  if (events.empty()) return OkStatus();
  if (Status s = log_->Append(events); !s.ok()) return s;
  for (const Event& e : events) {
    if (Status s = model_.Apply(e); !s.ok()) return InternalError("planner event: " + s.message());
    if (on_event_) on_event_(e);
  }
  return OkStatus();
}

StatusOr<Plan> SweepController::Pass() {
  double now = clock_->NowUnixSeconds();
  StatusOr<std::vector<SegmentStatus>> segments = ChargedSegments();
  if (!segments.ok()) return segments.status();
  ledger_.Observe(*segments, now);

  Observed observed;
  for (const SegmentStatus& s : *segments) observed.segments[{s.trial, s.segment}] = s;
  std::map<std::string, TrialMetrics> live;
  // The latest segment of each active trial, and the probe run in flight.
  std::vector<std::pair<std::string, int>> reporting;
  for (int64_t index : model_.active()) {
    const Trial& t = model_.trial(index);
    if (!t.segments.empty()) reporting.emplace_back(t.name, t.segments.back().number);
  }
  if (!model_.probes().empty() && !model_.probes().back().ended) {
    reporting.emplace_back(model_.probes().back().name, 0);
  }
  std::vector<SegmentStatus> readable;
  for (const auto& [name, segment] : reporting) {
    const SegmentStatus* s = observed.Segment(name, segment);
    if (s != nullptr && s->state == SegmentState::kRunning && !s->metrics_url.empty()) {
      readable.push_back(*s);
    }
  }
  std::vector<StatusOr<TrialMetrics>> read =
      metric_reader_.ReadAll(model_.spec().name, readable, model_.spec().objective_metric);
  for (size_t i = 0; i < readable.size(); ++i) {
    if (read[i].ok()) {
      live[readable[i].trial] = *read[i];
      read_errors_.erase(readable[i].trial);
      continue;
    }
    NoteReadError(readable[i].trial, read[i].status());
    if (on_metrics_error_) on_metrics_error_(read[i].status());  // Unknown: the planner waits
  }
  observed.metrics = live;
  observed.unknown_since = unknown_since_;
  for (auto& [name, m] : live) live_[name] = m;
  observed.last_metrics = live_;
  for (const auto& [trial, error] : read_errors_)
    observed.last_read_errors[trial] = error.message();

  if (Status s = Record(NewRungValues(model_, observed, now)); !s.ok()) return s;
  StatusOr<Plan> decided = Decide(observed, now);
  if (!decided.ok()) return decided.status();
  Plan& plan = *decided;
  if (Status s = Record(plan.events); !s.ok()) return s;
  for (const Action& a : plan.actions) {
    if (Status s = Carry(a); !s.ok()) return s;
  }
  if (Status s = ReleaseRecorded(*segments); !s.ok()) return s;

  std::map<std::string, double> unknown_since;
  for (const std::string& name : plan.unknown) {
    auto it = unknown_since_.find(name);
    unknown_since[name] = it == unknown_since_.end() ? now : it->second;
  }
  unknown_since_ = std::move(unknown_since);
  auto not_running = [this](const auto& entry) {
    std::optional<int64_t> index = model_.FindTrial(entry.first);
    return !index || model_.trial(*index).phase != TrialPhase::kRunning;
  };
  std::erase_if(live_, not_running);
  std::erase_if(read_errors_, not_running);
  // A stop is remembered until the trial's segment has ended: memory stays with the live trials.
  std::erase_if(stops_issued_, [this](const std::pair<std::string, int>& stop) {
    return EndRecorded(stop.first, stop.second);
  });
  conditions_ = MergeConditions(conditions_, plan.conditions, now, model_.spec().generation);
  return plan;
}

StatusOr<Plan> SweepController::Decide(const Observed& observed, double now) {
  if (gate_ == nullptr) return ComputePlan(model_, observed, ledger_, now, options_);
  double held = ledger_.used() + ledger_.reserved();
  StatusOr<PoolCap> cap = gate_->Acquire(held);
  if (!cap.ok()) return cap.status();
  Ledger capped = ledger_;
  capped.Limit(cap->cap_device_seconds, cap->limit, cap->waits);
  Plan plan = ComputePlan(model_, observed, capped, now, options_);
  // Before the plan is journaled, so that no crash leaves a launch the pool does not count; a
  // deadline the plan moves earlier is released only once it was moved.
  PoolAccount account{.sweep = model_.spec().name, .used_device_seconds = ledger_.used()};
  account.reserved_device_seconds = std::max(held, plan.held_device_seconds) - ledger_.used();
  account.active = !model_.finished() &&
                   std::none_of(plan.events.begin(), plan.events.end(), [](const Event& e) {
                     return std::holds_alternative<event::SweepFinished>(e);
                   });
  account.starved = std::any_of(plan.denials.begin(), plan.denials.end(),
                                [](const Denial& d) { return d.waits; });
  if (Status s = gate_->Commit(account); !s.ok()) return s;
  return plan;
}

StatusOr<std::vector<SegmentStatus>> SweepController::ChargedSegments() {
  StatusOr<std::vector<SegmentStatus>> segments = backend_->List();
  if (!segments.ok()) return segments.status();
  std::set<std::pair<std::string, int>> listed;
  for (const SegmentStatus& s : *segments) listed.insert({s.trial, s.segment});
  for (SegmentStatus& recorded : RecordedCharges(model_, listed)) {
    segments->push_back(std::move(recorded));
  }
  return segments;
}

bool SweepController::EndRecorded(const std::string& name, int segment) const {
  if (std::optional<int64_t> index = model_.FindTrial(name)) {
    for (const SegmentRecord& seg : model_.trial(*index).segments) {
      if (seg.number == segment) return seg.ended;
    }
    return false;
  }
  for (const ProbeRun& p : model_.probes()) {
    if (p.name == name) return segment == 0 && p.ended;
  }
  return false;
}

Status SweepController::ReleaseRecorded(const std::vector<SegmentStatus>& segments) {
  for (const SegmentStatus& s : segments) {
    if (!s.charge_held || !EndRecorded(s.trial, s.segment)) continue;
    if (Status st = backend_->ReleaseCharge(s.trial, s.segment); !st.ok()) return st;
  }
  return OkStatus();
}

Status SweepController::Carry(const Action& action) {
  return std::visit([this](const auto& a) { return CarryOut(a); }, action);
}

Status SweepController::CarryOut(const StartSegment& a) {
  return Start(SpecOf(a), event::SegmentEnded{.at = 0, .trial = a.trial, .segment = a.segment});
}

Status SweepController::CarryOut(const StartProbe& a) {
  return Start(SpecOf(a), event::ProbeEnded{.at = 0, .probe = a.probe});
}

Status SweepController::CarryOut(const StopSegment& a) {
  return StopOnce(model_.trial(a.trial).name, a.segment);
}

Status SweepController::CarryOut(const StopProbe& a) {
  return StopOnce(model_.probes().at(static_cast<size_t>(a.probe)).name, 0);
}

Status SweepController::CarryOut(const SetDeadline& a) {
  return backend_->SetDeadline(model_.trial(a.trial).name, a.segment, a.deadline);
}

void SweepController::NoteReadError(const std::string& trial, const Status& error) {
  auto [known, added] = read_errors_.try_emplace(trial, error);
  if (!added && AnswerRefused(error) && !AnswerRefused(known->second)) known->second = error;
}

Status SweepController::Start(const SegmentSpec& spec, RefusedEnd refused) {
  Status started = backend_->Start(spec);
  if (started.code() != StatusCode::kInvalidArgument) return started;
  // Refused for good: the segment fails without running, so the trial's retries and
  // spec.maxFailedTrials end it, rather than a start retried on every pass.
  return std::visit(
      [&](auto& end) {
        end.at = clock_->NowUnixSeconds();
        end.reason = ReasonName(Reason::kError);
        end.message = "not started: " + started.message();
        return Record({end});
      },
      refused);
}

Status SweepController::StopOnce(const std::string& name, int segment) {
  // Stop once per controller run; a restarted controller asks again, which is harmless.
  if (!stops_issued_.insert({name, segment}).second) return OkStatus();
  return backend_->Stop(name, segment);
}

SegmentSpec SweepController::BaseSpec(int segment, double until, double deadline) const {
  const SweepSpec& spec = model_.spec();
  SegmentSpec s;
  s.sweep = spec.name;
  s.segment = segment;
  s.command = spec.container.command;
  s.command.insert(s.command.end(), spec.container.args.begin(), spec.container.args.end());
  s.env = spec.container.env;
  s.until_resource = until;
  s.max_resource = model_.rungs().max();
  s.milestones = model_.rungs().milestones();
  s.devices = spec.trial_gpus;
  s.deadline_unix_seconds = deadline;
  s.grace_seconds = spec.grace_seconds;
  return s;
}

// A trial gets the probe phase's choice after the template's args, and its parameters after that.
SegmentSpec SweepController::SpecOf(const StartSegment& a) const {
  SegmentSpec s = BaseSpec(a.segment, a.until, a.deadline);
  const Trial& t = model_.trial(a.trial);
  s.trial = t.name;
  for (const auto& [name, value] : t.params) s.params.emplace_back(name, FormatParamValue(value));
  if (model_.throughput_decision()) {
    s.extra_args = FlagArgs(model_.throughput_decision()->trial_args);
  }
  if (Population(model_.spec().algorithm)) {
    s.snapshots = true;
    for (const ParamSpec& p : model_.spec().search_space) {
      if (p.mutable_) s.mutable_flags.push_back(p.name);
    }
    if (!t.lineage.empty()) {
      s.exploit_trial = model_.trial(t.lineage.back().donor).name;
      s.exploit_at = t.lineage.back().resource;
    }
  }
  return s;
}

// A probe runs the template with its candidate's settings, towards the full resource.
SegmentSpec SweepController::SpecOf(const StartProbe& a) const {
  SegmentSpec s = BaseSpec(0, model_.rungs().max(), a.deadline);
  const ProbeRun& p = model_.probes().at(static_cast<size_t>(a.probe));
  s.trial = p.name;
  s.extra_args = ProbeArgs(model_.spec().throughput, p.settings);
  s.grace_seconds = std::min(s.grace_seconds, kProbeGraceSeconds);
  return s;
}

Status SweepController::Refresh() {
  StatusOr<std::vector<SegmentStatus>> segments = ChargedSegments();
  if (!segments.ok()) return segments.status();
  ledger_.Observe(*segments, clock_->NowUnixSeconds());
  live_trials_.clear();
  for (const SegmentStatus& s : *segments) {
    if (s.state == SegmentState::kPending || s.state == SegmentState::kRunning) {
      live_trials_.insert(s.trial);
    }
  }
  return OkStatus();
}

Status SweepController::SettleGate() {
  if (gate_ == nullptr) return OkStatus();
  StatusOr<PoolCap> cap = gate_->Acquire(ledger_.used() + ledger_.reserved());
  if (!cap.ok()) return cap.status();
  PoolAccount account{.sweep = model_.spec().name, .used_device_seconds = ledger_.used()};
  account.reserved_device_seconds = ledger_.reserved();
  account.active = false;
  return gate_->Commit(account);
}

Status SweepController::Interrupt() {
  interrupted_ = true;
  StatusOr<std::vector<SegmentStatus>> segments = backend_->List();
  if (!segments.ok()) return segments.status();
  for (const SegmentStatus& s : *segments) {
    if (s.state == SegmentState::kPending || s.state == SegmentState::kRunning) {
      if (Status st = backend_->Stop(s.trial, s.segment); !st.ok()) return st;
    }
  }
  return OkStatus();
}

StatusOr<bool> SweepController::AllSegmentsEnded() {
  StatusOr<std::vector<SegmentStatus>> segments = backend_->List();
  if (!segments.ok()) return segments.status();
  for (const SegmentStatus& s : *segments) {
    if (s.state == SegmentState::kPending || s.state == SegmentState::kRunning) return false;
  }
  return true;
}

nlohmann::json SweepController::StatusJson() const {
  if (interrupted_) {
    return InterruptedStatus(model_, ledger_, conditions_, live_trials_, clock_->NowUnixSeconds());
  }
  return BuildStatus(model_, ledger_, conditions_);
}

}  // namespace bsw
