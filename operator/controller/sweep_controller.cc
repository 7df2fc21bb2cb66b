#include "operator/controller/sweep_controller.h"

#include <algorithm>
#include <variant>

#include "operator/core/recorded_charges.h"
#include "operator/core/sweep_status.h"

namespace bsw {

SweepController::SweepController(const SweepSpec& spec, TrialBackend* backend,
                                 MetricSource* metrics, EventLog* log, const Clock* clock,
                                 PlannerOptions options, MetricReadOptions metric_reads)
    : model_(std::make_shared<const SweepModel>(spec)),
      ledger_(spec.budget_gpu_hours * 3600.0),
      backend_(backend),
      log_(log),
      clock_(clock),
      options_(options),
      metric_reader_(metrics, clock, metric_reads) {}

Status SweepController::Recover() {
  auto model = std::make_shared<SweepModel>(*model_);
  Status replayed = log_->ForEach([&](const Event& e) {
    Status s = model->Apply(e);
    return s.ok() ? s : InvalidArgumentError(log_->Describe() + ": " + s.message());
  });
  if (replayed.ok()) model_ = std::move(model);
  return replayed;
}

StatusOr<Step> SweepController::Pass() {
  StatusOr<Observation> observation = Observe();
  if (!observation.ok()) return observation.status();
  StatusOr<std::optional<PoolCap>> cap = AcquireGate();
  if (!cap.ok()) return cap.status();
  StatusOr<Step> step = Decide(*model_, *observation, ledger_, memory_, *cap, options_);
  if (!step.ok()) {
    // The gate is held: it is given back with what the sweep held before.
    if (*cap) (void)gate_->Commit(HeldAccount(!model_->finished()));
    return step.status();
  }
  // Before the batch is journaled, so that no crash leaves a launch the pool does not count.
  if (step->account) {
    if (Status s = gate_->Commit(*step->account); !s.ok()) return s;
  }
  if (Status s = Journal(*step); !s.ok()) return s;
  if (Status s = Act(step->actions); !s.ok()) return s;
  if (Status s = ReleaseRecorded(observation->segments); !s.ok()) return s;
  std::erase_if(stops_issued_, [this](const std::pair<std::string, int>& stop) {
    return EndRecorded(stop.first, stop.second);
  });
  return step;
}

StatusOr<Observation> SweepController::Observe() {
  Observation observation;
  observation.now = clock_->NowUnixSeconds();
  StatusOr<std::vector<SegmentStatus>> segments = ChargedSegments();
  if (!segments.ok()) return segments.status();
  ledger_.Observe(*segments, observation.now);
  // The latest segment of each active trial, and the probe run in flight, while running.
  std::set<std::pair<std::string, int>> reporting;
  for (int64_t index : model_->active()) {
    const Trial& t = model_->trial(index);
    if (!t.segments.empty()) reporting.emplace(t.name, t.segments.back().number);
  }
  if (!model_->probes().empty() && !model_->probes().back().ended) {
    reporting.emplace(model_->probes().back().name, 0);
  }
  std::vector<SegmentStatus> readable;
  for (const SegmentStatus& s : *segments) {
    if (reporting.contains({s.trial, s.segment}) && s.state == SegmentState::kRunning &&
        !s.metrics_url.empty()) {
      readable.push_back(s);
    }
  }
  std::vector<StatusOr<TrialMetrics>> read =
      metric_reader_.ReadAll(model_->spec().name, readable, model_->spec().objective_metric);
  for (size_t i = 0; i < readable.size(); ++i) {
    if (read[i].ok()) {
      observation.metrics[readable[i].trial] = *read[i];
      continue;
    }
    observation.read_errors.emplace(readable[i].trial, read[i].status());
    if (on_metrics_error_) on_metrics_error_(read[i].status());  // Unknown: the planner waits
  }
  observation.segments = *std::move(segments);
  return observation;
}

StatusOr<std::optional<PoolCap>> SweepController::AcquireGate() {
  if (gate_ == nullptr) return std::optional<PoolCap>();
  StatusOr<PoolCap> cap = gate_->Acquire(ledger_.used() + ledger_.reserved());
  if (!cap.ok()) return cap.status();
  return std::optional<PoolCap>(*cap);
}

PoolAccount SweepController::HeldAccount(bool active) const {
  PoolAccount account{.sweep = model_->spec().name, .used_device_seconds = ledger_.used()};
  account.reserved_device_seconds = ledger_.reserved();
  account.active = active;
  return account;
}

namespace {

// What a pass read, kept when its journal write failed: `next` (the step's next memory) is
// `memory` updated with the pass's reads, less the trials that ended in the model not adopted.
void KeepReads(PassMemory& memory, PassMemory& next) {
  for (auto& [name, m] : next.last_metrics) {
    if (!next.read_errors.contains(name)) memory.read_errors.erase(name);
    memory.last_metrics[name] = std::move(m);
  }
  for (auto& [name, e] : next.read_errors) memory.read_errors.insert_or_assign(name, std::move(e));
  for (const auto& [name, at] : next.last_read_at) memory.last_read_at[name] = at;
}

}  // namespace

Status SweepController::Journal(Step& step) {
  if (!step.events.empty()) {
    if (Status s = log_->Append(step.events); !s.ok()) {
      KeepReads(memory_, step.next);
      return s;
    }
  }
  model_ = step.model;
  memory_ = std::move(step.next);
  if (on_event_) {
    for (const Event& e : step.events) on_event_(e);
  }
  return OkStatus();
}

Status SweepController::Act(const std::vector<StepAction>& actions) {
  for (const StepAction& action : actions) {
    Status s = std::visit([this](const auto& a) { return Carry(a); }, action);
    if (!s.ok()) return s;
  }
  return OkStatus();
}

Status SweepController::Carry(const Launch& launch) {
  Status started = backend_->Start(launch.spec);
  if (started.code() != StatusCode::kInvalidArgument) return started;
  // Refused for good: the next pass ends the segment without running it.
  memory_.refused_starts[{launch.spec.trial, launch.spec.segment}] = started.message();
  return OkStatus();
}

Status SweepController::Carry(const Stop& stop) {
  if (!stops_issued_.insert({stop.name, stop.segment}).second) return OkStatus();
  return backend_->Stop(stop.name, stop.segment);
}

Status SweepController::Carry(const MoveDeadline& move) {
  return backend_->SetDeadline(move.name, move.segment, move.deadline);
}

StatusOr<std::vector<SegmentStatus>> SweepController::ChargedSegments() {
  StatusOr<std::vector<SegmentStatus>> segments = backend_->List();
  if (!segments.ok()) return segments.status();
  std::set<std::pair<std::string, int>> listed;
  for (const SegmentStatus& s : *segments) listed.insert({s.trial, s.segment});
  for (SegmentStatus& recorded : RecordedCharges(*model_, listed)) {
    segments->push_back(std::move(recorded));
  }
  return segments;
}

bool SweepController::EndRecorded(const std::string& name, int segment) const {
  if (std::optional<int64_t> index = model_->FindTrial(name)) {
    for (const SegmentRecord& seg : model_->trial(*index).segments) {
      if (seg.number == segment) return seg.ended;
    }
    return false;
  }
  for (const ProbeRun& p : model_->probes()) {
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
  return gate_->Commit(HeldAccount(false));
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

StatusOr<bool> SweepController::Done() {
  if (!model_->finished()) return false;
  return AllSegmentsEnded();
}

nlohmann::json SweepController::StatusJson() const {
  if (interrupted_) {
    return InterruptedStatus(*model_, ledger_, memory_.conditions, live_trials_,
                             clock_->NowUnixSeconds());
  }
  return BuildStatus(*model_, ledger_, memory_.conditions);
}

}  // namespace bsw
