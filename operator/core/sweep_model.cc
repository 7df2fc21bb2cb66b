#include "operator/core/sweep_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <variant>

namespace bsw {
namespace {

constexpr const char* kTrialPhaseNames[] = {"Running", "Paused", "Completed", "Stopped", "Failed"};

bool Better(Goal goal, double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return goal == Goal::kMaximize ? a > b : a < b;
}

Status UnknownTrial(int64_t index) {
  return InvalidArgumentError("event for unknown trial " + std::to_string(index));
}

Status UnknownProbe(int64_t index) {
  return InvalidArgumentError("event for unknown probe " + std::to_string(index));
}

ProbeRun* ProbeFor(std::vector<ProbeRun>& probes, int64_t index) {
  if (index < 0 || index >= static_cast<int64_t>(probes.size())) return nullptr;
  return &probes[static_cast<size_t>(index)];
}

}  // namespace

const char* TrialPhaseName(TrialPhase phase) {
  return kTrialPhaseNames[static_cast<size_t>(phase)];
}

const RungVerdict* Trial::StopVerdict() const {
  for (const auto& [resource, v] : rung_verdicts) {
    if (v.verdict == Verdict::kStop) return &v;
  }
  return nullptr;
}

SweepModel::SweepModel(const SweepSpec& spec)
    : spec_(spec),
      rungs_(spec),
      space_(spec.search_space, spec.algorithm, spec.seed),
      scheduler_(spec, rungs_.size() - 1),
      continued_(static_cast<size_t>(rungs_.size()), 0) {}

std::string SweepModel::ProbeName(int index) const {
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "-p%04d", index);
  return spec_.name + suffix;
}

std::string TrialName(const std::string& sweep, int64_t index) {
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "-t%04lld", static_cast<long long>(index));
  return sweep + suffix;
}

std::string SweepModel::TrialName(int64_t index) const { return bsw::TrialName(spec_.name, index); }

std::optional<int64_t> SweepModel::FindTrial(const std::string& name) const {
  // Names are TrialName's: the sweep's name, "-t" and the index in at least four digits, with no
  // zero before a fifth.
  const size_t digits = name.size() - std::min(name.size(), spec_.name.size() + 2);
  if (digits < 4 || digits > 18 || !name.starts_with(spec_.name) ||
      name.compare(spec_.name.size(), 2, "-t") != 0) {
    return std::nullopt;
  }
  const size_t first = spec_.name.size() + 2;
  if (digits > 4 && name[first] == '0') return std::nullopt;
  int64_t index = 0;
  for (size_t i = first; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    index = index * 10 + (name[i] - '0');
  }
  if (index >= trial_count()) return std::nullopt;
  return index;
}

void SweepModel::LeaveProbePhase() {
  if (phase_ == SweepPhase::kPending || phase_ == SweepPhase::kProbing) {
    phase_ = SweepPhase::kRunning;
  }
}

Trial* SweepModel::TrialFor(int64_t index) {
  if (index < 0 || index >= trial_count()) return nullptr;
  LeaveProbePhase();
  std::shared_ptr<Trial>& t = trials_[static_cast<size_t>(index)];
  // Another copy of the model holds it too: this one changes its own. A trial held by this model
  // alone is not reachable from another thread (copies are made by the thread that owns the model).
  if (t.use_count() > 1) t = std::make_shared<Trial>(*t);
  return t.get();
}

void SweepModel::SetPhase(Trial& t, TrialPhase phase) {
  --counts_[static_cast<size_t>(t.phase)];
  ++counts_[static_cast<size_t>(phase)];
  t.phase = phase;
  if (phase == TrialPhase::kRunning) {
    active_.insert(t.index);
  } else {
    active_.erase(t.index);
  }
  // A stopped or failed trial never resumes: it must not hold a promotion nobody can take.
  if (phase == TrialPhase::kStopped || phase == TrialPhase::kFailed) scheduler_.Withdraw(t.index);
}

void SweepModel::RecordValue(Trial& t, const event::ValueRecorded& e) {
  int rung = rungs_.IndexOf(e.resource);
  if (rung < 0 || t.rung_values.contains(e.resource)) return;
  t.rung_values[e.resource] = e.value;
  if (e.units > 0 && e.seconds > 0 && !t.segments.empty()) {
    std::vector<CostPoint>& measured = t.segments.back().measured;
    CostPoint point{e.units, e.seconds};
    cost_.Measure(point, measured.empty() ? std::nullopt : std::optional(measured.back()));
    measured.push_back(point);
  }
  if (!best_ || Better(spec_.goal, e.value, best_->value)) {
    best_ = BestResult{t.index, e.value, e.resource};
  }
  if (!EarlyStopping(spec_.algorithm)) return;
  std::optional<bool> keep = scheduler_.Record(t.index, rung, e.value);
  if (!keep) return;  // a rung its bracket does not judge
  if (spec_.mode == AshaMode::kStop) {
    // Its verdict is the planner's to record (JudgeValues); replay applies the recorded one.
    unjudged_.insert({t.index, e.resource});
    return;
  }
  // A segment that runs on past this rung (a leader taken to the end) has gone on from it: it is
  // no candidate there, and it counts among the rung's promotions.
  double until = t.segments.empty() ? 0 : t.segments.back().until;
  if (until > rungs_.at(rung) && rungs_.IndexOf(until) != rung) {
    scheduler_.MarkPromoted(t.index, rung);
  }
}

void SweepModel::SetVerdict(Trial& t, double resource, RungVerdict verdict) {
  int rung = rungs_.IndexOf(resource);
  auto counted = [&](const RungVerdict& v) {
    return v.verdict == Verdict::kContinue && rung >= 0 && rung < scheduler_.decision_rungs();
  };
  auto [it, added] = t.rung_verdicts.try_emplace(resource, verdict);
  if (!added) {
    if (counted(it->second)) --continued_[static_cast<size_t>(rung)];
    it->second = std::move(verdict);
  }
  if (counted(it->second)) ++continued_[static_cast<size_t>(rung)];
  unjudged_.erase({t.index, resource});
}

Status SweepModel::Apply(const Event& event) {
  return std::visit([this](const auto& e) { return On(e); }, event);
}

Status SweepModel::On(const event::TrialCreated& e) {
  if (e.trial != trial_count()) {
    return InvalidArgumentError("trial " + std::to_string(e.trial) + " created out of order");
  }
  LeaveProbePhase();
  Trial t;
  t.index = e.trial;
  t.name = TrialName(e.trial);
  t.params = e.params;
  trials_.push_back(std::make_shared<Trial>(std::move(t)));
  ++counts_[static_cast<size_t>(TrialPhase::kRunning)];
  active_.insert(e.trial);
  return OkStatus();
}

Status SweepModel::On(const event::SegmentLaunched& e) {
  Trial* t = TrialFor(e.trial);
  if (t == nullptr) return UnknownTrial(e.trial);
  SegmentRecord& seg = t->segments.emplace_back();
  seg.number = e.segment;
  seg.from = e.from;
  seg.until = e.until;
  seg.deadline = e.deadline;
  seg.launched_at = e.at;
  SetPhase(*t, TrialPhase::kRunning);
  return OkStatus();
}

Status SweepModel::On(const event::ValueRecorded& e) {
  Trial* t = TrialFor(e.trial);
  if (t == nullptr) return UnknownTrial(e.trial);
  RecordValue(*t, e);
  return OkStatus();
}

Status SweepModel::On(const event::DeadlineMoved& e) {
  Trial* t = TrialFor(e.trial);
  if (t == nullptr) return UnknownTrial(e.trial);
  if (!t->segments.empty()) t->segments.back().deadline = e.deadline;
  return OkStatus();
}

Status SweepModel::On(const event::TrialStopped& e) {
  Trial* t = TrialFor(e.trial);
  if (t == nullptr) return UnknownTrial(e.trial);
  t->stop_requested = true;
  t->reason = e.reason;
  t->message = e.message;
  if (t->segments.empty() || t->segments.back().ended) SetPhase(*t, TrialPhase::kStopped);
  return OkStatus();
}

Status SweepModel::On(const event::TrialPromoted& e) {
  Trial* t = TrialFor(e.trial);
  if (t == nullptr) return UnknownTrial(e.trial);
  if (e.rung < 0 || e.rung >= scheduler_.decision_rungs()) {
    return InvalidArgumentError("trial " + std::to_string(e.trial) + " promoted from rung " +
                                std::to_string(e.rung) + ", which decides nothing");
  }
  scheduler_.MarkPromoted(e.trial, e.rung);
  SetVerdict(*t, rungs_.at(e.rung), RungVerdict{Verdict::kPromote, e.message});
  return OkStatus();
}

Status SweepModel::On(const event::TrialExploited& e) {
  Trial* t = TrialFor(e.trial);
  if (t == nullptr) return UnknownTrial(e.trial);
  if (e.donor < 0 || e.donor >= trial_count() || e.donor == e.trial) {
    return InvalidArgumentError("trial " + std::to_string(e.trial) + " exploited trial " +
                                std::to_string(e.donor) + ", which is no other trial");
  }
  if (e.rung < 0 || e.rung >= rungs_.size() - 1) {
    return InvalidArgumentError("trial " + std::to_string(e.trial) + " exploited at rung " +
                                std::to_string(e.rung) + ", which has no next rung");
  }
  t->lineage.push_back(
      Exploit{rungs_.at(e.rung), e.donor, t->segments.size(), t->params, e.message});
  t->params = e.params;
  return OkStatus();
}

Status SweepModel::On(const event::SegmentEnded& e) {
  Trial* t = TrialFor(e.trial);
  if (t == nullptr) return UnknownTrial(e.trial);
  EndSegment(*t, e);
  return OkStatus();
}

Status SweepModel::On(const event::RungVerdict& e) {
  Trial* t = TrialFor(e.trial);
  if (t == nullptr) return UnknownTrial(e.trial);
  SetVerdict(*t, e.resource, RungVerdict{e.verdict, e.message});
  return OkStatus();
}

Status SweepModel::On(const event::SweepFinished& e) {
  phase_ = e.phase;
  finish_reason_ = e.reason;
  finish_message_ = e.message;
  return OkStatus();
}

void SweepModel::EndSegment(Trial& t, const event::SegmentEnded& e) {
  if (t.segments.empty()) return;
  SegmentRecord& seg = t.segments.back();
  seg.ended = true;
  seg.started = e.started;
  seg.finished = e.finished;
  seg.devices = e.devices;
  std::optional<Reason> reason = ParseReason(e.reason);
  seg.reached_until = reason == Reason::kNone && t.rung_values.contains(seg.until);
  if (reason && TrainerFailed(*reason)) {
    recent_failures_.push_back({e.trial, e.segment, e.reason, e.message, e.output});
    if (recent_failures_.size() > kRecentFailures) recent_failures_.pop_front();
  }
  if (t.stop_requested) {
    SetPhase(t, TrialPhase::kStopped);
  } else if (reason == Reason::kNone) {
    SetPhase(t, seg.until >= rungs_.max() ? TrialPhase::kCompleted : TrialPhase::kPaused);
  } else if (reason == Reason::kInterrupted) {
    // Still active: the planner launches its next segment from the checkpoint.
  } else if (reason && Retryable(*reason)) {
    ++t.failures;
    t.reason = e.reason;
    t.message = e.message;
    if (t.failures > spec_.max_retries) SetPhase(t, TrialPhase::kFailed);
  } else {
    t.reason = e.reason;
    t.message = e.message;
    // A trainer that exited 0 short of its `until` broke the contract, and is not retried: it
    // fails, and counts against spec.maxFailedTrials (docs/design.md, "Trainer contract").
    SetPhase(t, reason == Reason::kExitedShort ? TrialPhase::kFailed : TrialPhase::kStopped);
  }
}

Status SweepModel::On(const event::ThroughputDecided& e) {
  ThroughputDecision d;
  d.chosen = static_cast<int>(e.probe);
  d.reason = ParseReason(e.reason).value_or(Reason::kNothingMeasured);
  d.target_met = d.reason == Reason::kTargetMet;
  d.message = e.message;
  d.trial_args = e.params;
  decision_ = std::move(d);
  if (!finished()) phase_ = SweepPhase::kRunning;
  return OkStatus();
}

Status SweepModel::On(const event::ProbeLaunched& e) {
  if (e.probe != static_cast<int64_t>(probes_.size())) {
    return InvalidArgumentError("probe " + std::to_string(e.probe) + " launched out of order");
  }
  ProbeRun p;
  p.index = static_cast<int>(e.probe);
  p.name = ProbeName(p.index);
  p.settings = e.params;
  p.launched_at = e.at;
  p.deadline = e.deadline;
  probes_.push_back(std::move(p));
  if (phase_ == SweepPhase::kPending) phase_ = SweepPhase::kProbing;
  return OkStatus();
}

Status SweepModel::On(const event::ProbeMeasured& e) {
  ProbeRun* p = ProbeFor(probes_, e.probe);
  if (p == nullptr) return UnknownProbe(e.probe);
  p->figures = e.figures;
  return OkStatus();
}

Status SweepModel::On(const event::ProbeEnded& e) {
  ProbeRun* p = ProbeFor(probes_, e.probe);
  if (p == nullptr) return UnknownProbe(e.probe);
  p->ended = true;
  p->reason = e.reason;
  p->message = e.message;
  p->charged_device_seconds = e.seconds;
  return OkStatus();
}

}  // namespace bsw
