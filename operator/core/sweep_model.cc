#include "operator/core/sweep_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace bsw {
namespace {

using nlohmann::json;

constexpr const char* kEventNames[] = {
    "TrialCreated",  "SegmentLaunched",   "ValueRecorded", "DeadlineMoved", "TrialStopped",
    "TrialPromoted", "SegmentEnded",      "SweepFinished", "ProbeLaunched", "ProbeMeasured",
    "ProbeEnded",    "ThroughputDecided", "RungVerdict"};
constexpr const char* kVerdictNames[] = {"Continue", "Stop", "Promote"};
constexpr const char* kTrialPhaseNames[] = {"Running", "Paused", "Completed", "Stopped", "Failed"};
constexpr const char* kSweepPhaseNames[] = {"Pending",   "Probing",         "Running",
                                            "Completed", "BudgetExhausted", "Failed"};

// JSON has no NaN; a diverged trial's value is written as null.
json Number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double NumberOr(const json& j, const char* key, double fallback) {
  if (!j.contains(key)) return fallback;
  const json& v = j.at(key);
  return v.is_number() ? v.get<double>() : std::nan("");
}

bool Better(Goal goal, double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return goal == Goal::kMaximize ? a > b : a < b;
}

std::optional<Verdict> ParseVerdict(const std::string& name) {
  for (size_t i = 0; i < std::size(kVerdictNames); ++i) {
    if (name == kVerdictNames[i]) return static_cast<Verdict>(i);
  }
  return std::nullopt;
}

json ParamsJson(const Config& params) {
  json p = json::array();
  for (const auto& [name, v] : params) p.push_back({name, v});
  return p;
}

}  // namespace

const char* TrialPhaseName(TrialPhase phase) {
  return kTrialPhaseNames[static_cast<size_t>(phase)];
}
const char* SweepPhaseName(SweepPhase phase) {
  return kSweepPhaseNames[static_cast<size_t>(phase)];
}
const char* VerdictName(Verdict verdict) { return kVerdictNames[static_cast<size_t>(verdict)]; }

const RungVerdict* Trial::StopVerdict() const {
  for (const auto& [resource, v] : rung_verdicts) {
    if (v.verdict == Verdict::kStop) return &v;
  }
  return nullptr;
}

json Event::ToJson() const {
  json j = {{"event", kEventNames[static_cast<size_t>(type)]}, {"at", at}};
  switch (type) {
    case Type::kTrialCreated:
      j.update({{"trial", trial}, {"params", ParamsJson(params)}});
      break;
    case Type::kProbeLaunched:
      j.update({{"trial", trial}, {"params", ParamsJson(params)}, {"deadline", deadline}});
      break;
    case Type::kProbeMeasured:
      j.update({{"trial", trial},
                {"samplesPerSecond", figures.samples_per_second},
                {"dataWaitRatio", figures.data_wait_ratio}});
      if (figures.accelerator_utilization) {
        j["acceleratorUtilization"] = *figures.accelerator_utilization;
      }
      break;
    case Type::kProbeEnded:
      j.update({{"trial", trial}, {"reason", reason}, {"message", message}, {"seconds", seconds}});
      if (!output.empty()) j["output"] = output;
      break;
    case Type::kThroughputDecided:
      j.update({{"trial", trial},
                {"reason", reason},
                {"message", message},
                {"params", ParamsJson(params)}});
      break;
    case Type::kSegmentLaunched:
      j.update({{"trial", trial},
                {"segment", segment},
                {"from", from},
                {"until", until},
                {"deadline", deadline}});
      break;
    case Type::kValueRecorded:
      j.update({{"trial", trial},
                {"resource", resource},
                {"value", Number(value)},
                {"seconds", seconds},
                {"units", units}});
      break;
    case Type::kDeadlineMoved:
      j.update({{"trial", trial}, {"segment", segment}, {"deadline", deadline}});
      break;
    case Type::kTrialStopped:
      j.update({{"trial", trial}, {"reason", reason}, {"message", message}});
      break;
    case Type::kTrialPromoted:
      j.update({{"trial", trial}, {"rung", rung}});
      if (!message.empty()) j["message"] = message;
      break;
    case Type::kSegmentEnded:
      j.update({{"trial", trial}, {"segment", segment}, {"reason", reason}, {"message", message}});
      if (!output.empty()) j["output"] = output;
      if (started > 0)
        j.update({{"started", started}, {"finished", finished}, {"devices", devices}});
      break;
    case Type::kSweepFinished:
      j.update({{"phase", SweepPhaseName(phase)}, {"reason", reason}, {"message", message}});
      break;
    case Type::kRungVerdict:
      j.update({{"trial", trial},
                {"rung", rung},
                {"resource", resource},
                {"verdict", VerdictName(verdict)}});
      if (!message.empty()) j["message"] = message;
      break;
  }
  return j;
}

StatusOr<Event> Event::FromJson(const json& j) {
  if (!j.is_object() || !j.contains("event") || !j.at("event").is_string()) {
    return InvalidArgumentError("journal record has no \"event\" name");
  }
  Event e;
  const std::string name = j.at("event").get<std::string>();
  bool known = false;
  for (size_t i = 0; i < std::size(kEventNames); ++i) {
    if (name == kEventNames[i]) {
      e.type = static_cast<Type>(i);
      known = true;
    }
  }
  if (!known) return InvalidArgumentError("journal record has unknown event \"" + name + "\"");
  auto str = [&](const char* key) {
    return j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : "";
  };
  auto integer = [&](const char* key) {
    return j.contains(key) && j.at(key).is_number_integer() ? j.at(key).get<int64_t>() : -1;
  };
  e.at = NumberOr(j, "at", 0);
  e.trial = integer("trial");
  e.segment = static_cast<int>(integer("segment"));
  e.from = NumberOr(j, "from", 0);
  e.until = NumberOr(j, "until", 0);
  e.deadline = NumberOr(j, "deadline", 0);
  e.resource = NumberOr(j, "resource", 0);
  e.value = NumberOr(j, "value", 0);
  e.seconds = NumberOr(j, "seconds", 0);
  e.units = NumberOr(j, "units", 0);
  e.rung = static_cast<int>(integer("rung"));
  e.reason = str("reason");
  e.message = str("message");
  e.output = str("output");
  e.started = NumberOr(j, "started", 0);
  e.finished = NumberOr(j, "finished", 0);
  e.devices = std::max(0, static_cast<int>(integer("devices")));
  e.figures.samples_per_second = NumberOr(j, "samplesPerSecond", 0);
  e.figures.data_wait_ratio = NumberOr(j, "dataWaitRatio", 0);
  if (j.contains("acceleratorUtilization")) {
    e.figures.accelerator_utilization = NumberOr(j, "acceleratorUtilization", 0);
  }
  if (e.type == Type::kSweepFinished) {
    std::string phase = str("phase");
    for (size_t i = 0; i < std::size(kSweepPhaseNames); ++i) {
      if (phase == kSweepPhaseNames[i]) e.phase = static_cast<SweepPhase>(i);
    }
  }
  if (e.type == Type::kRungVerdict) {
    std::optional<Verdict> verdict = ParseVerdict(str("verdict"));
    if (!verdict) {
      return InvalidArgumentError("journal record has unknown verdict \"" + str("verdict") + "\"");
    }
    e.verdict = *verdict;
  }
  if (j.contains("params") && j.at("params").is_array()) {
    for (const json& p : j.at("params")) {
      if (p.is_array() && p.size() == 2 && p[0].is_string()) {
        e.params.emplace_back(p[0].get<std::string>(), p[1]);
      }
    }
  }
  return e;
}

SweepModel::SweepModel(const SweepSpec& spec)
    : spec_(spec),
      rungs_(spec),
      space_(spec.search_space, spec.algorithm, spec.seed),
      scheduler_(rungs_.size() - 1, spec.reduction_factor, spec.goal, spec.mode),
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
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

Trial* SweepModel::Mutable(int64_t index) {
  if (index < 0 || index >= trial_count()) return nullptr;
  return &trials_[static_cast<size_t>(index)];
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

void SweepModel::RecordValue(Trial& t, const Event& e) {
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
  bool decides = spec_.algorithm == Algorithm::kAsha && rung < scheduler_.decision_rungs();
  if (!decides) return;
  bool keep = scheduler_.Record(t.index, rung, e.value);
  if (spec_.mode != AshaMode::kStop) {
    // A segment that runs on past this rung (a leader taken to the end) has gone on from it: it
    // is no candidate there, and it counts among the rung's promotions.
    double until = t.segments.empty() ? 0 : t.segments.back().until;
    if (until > rungs_.at(rung) && rungs_.IndexOf(until) != rung) {
      scheduler_.MarkPromoted(t.index, rung);
    }
    return;
  }
  // Derived, not yet recorded: the planner records it (RungVerdict), and replay applies the
  // recorded one over it. A journal written before verdicts were journaled keeps this one.
  if (keep) {
    SetVerdict(t, e.resource, RungVerdict{Verdict::kContinue, "", false});
    return;
  }
  char msg[256];
  std::snprintf(msg, sizeof msg,
                "value %g at rung %d (%s %g) is not in the top 1/%d of the %lld values "
                "recorded there",
                e.value, rung, spec_.resource_unit.c_str(), e.resource, spec_.reduction_factor,
                static_cast<long long>(scheduler_.recorded(rung)));
  SetVerdict(t, e.resource, RungVerdict{Verdict::kStop, msg, false});
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
  if (it->second.recorded) {
    unrecorded_verdicts_.erase({t.index, resource});
  } else {
    unrecorded_verdicts_.insert({t.index, resource});
  }
}

Status SweepModel::Apply(const Event& e) {
  using Type = Event::Type;
  if (e.type == Type::kSweepFinished) {
    phase_ = e.phase;
    finish_reason_ = e.reason;
    finish_message_ = e.message;
    return OkStatus();
  }
  if (e.type == Type::kProbeLaunched || e.type == Type::kProbeMeasured ||
      e.type == Type::kProbeEnded || e.type == Type::kThroughputDecided) {
    return ApplyProbeEvent(e);
  }
  if (phase_ == SweepPhase::kPending || phase_ == SweepPhase::kProbing) {
    phase_ = SweepPhase::kRunning;
  }
  if (e.type == Type::kTrialCreated) {
    if (e.trial != trial_count()) {
      return InvalidArgumentError("trial " + std::to_string(e.trial) + " created out of order");
    }
    Trial t;
    t.index = e.trial;
    t.name = TrialName(e.trial);
    t.params = e.params;
    by_name_[t.name] = t.index;
    trials_.push_back(std::move(t));
    ++counts_[static_cast<size_t>(TrialPhase::kRunning)];
    active_.insert(e.trial);
    return OkStatus();
  }
  Trial* t = Mutable(e.trial);
  if (t == nullptr)
    return InvalidArgumentError("event for unknown trial " + std::to_string(e.trial));
  switch (e.type) {
    case Type::kSegmentLaunched: {
      SegmentRecord& seg = t->segments.emplace_back();
      seg.number = e.segment;
      seg.from = e.from;
      seg.until = e.until;
      seg.deadline = e.deadline;
      seg.launched_at = e.at;
      SetPhase(*t, TrialPhase::kRunning);
      break;
    }
    case Type::kValueRecorded:
      RecordValue(*t, e);
      break;
    case Type::kDeadlineMoved:
      if (!t->segments.empty()) t->segments.back().deadline = e.deadline;
      break;
    case Type::kTrialStopped:
      t->stop_requested = true;
      t->reason = e.reason;
      t->message = e.message;
      if (t->segments.empty() || t->segments.back().ended) SetPhase(*t, TrialPhase::kStopped);
      break;
    case Type::kTrialPromoted:
      if (e.rung < 0 || e.rung >= scheduler_.decision_rungs()) {
        return InvalidArgumentError("trial " + std::to_string(e.trial) + " promoted from rung " +
                                    std::to_string(e.rung) + ", which decides nothing");
      }
      scheduler_.MarkPromoted(e.trial, e.rung);
      SetVerdict(*t, rungs_.at(e.rung), RungVerdict{Verdict::kPromote, e.message, true});
      break;
    case Type::kSegmentEnded:
      EndSegment(*t, e);
      break;
    case Type::kRungVerdict:
      SetVerdict(*t, e.resource, RungVerdict{e.verdict, e.message, true});
      break;
    case Type::kTrialCreated:
    case Type::kSweepFinished:
    case Type::kProbeLaunched:
    case Type::kProbeMeasured:
    case Type::kProbeEnded:
    case Type::kThroughputDecided:
      break;
  }
  return OkStatus();
}

void SweepModel::EndSegment(Trial& t, const Event& e) {
  if (t.segments.empty()) return;
  SegmentRecord& seg = t.segments.back();
  seg.ended = true;
  seg.started = e.started;
  seg.finished = e.finished;
  seg.devices = e.devices;
  std::optional<Reason> reason = ParseReason(e.reason);
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
    SetPhase(t, TrialPhase::kStopped);
  }
}

Status SweepModel::ApplyProbeEvent(const Event& e) {
  using Type = Event::Type;
  if (e.type == Type::kThroughputDecided) {
    ThroughputDecision d;
    d.chosen = static_cast<int>(e.trial);
    d.reason = ParseReason(e.reason).value_or(Reason::kNothingMeasured);
    d.target_met = d.reason == Reason::kTargetMet;
    d.message = e.message;
    d.trial_args = e.params;
    decision_ = std::move(d);
    if (!finished()) phase_ = SweepPhase::kRunning;
    return OkStatus();
  }
  if (e.type == Type::kProbeLaunched) {
    if (e.trial != static_cast<int64_t>(probes_.size())) {
      return InvalidArgumentError("probe " + std::to_string(e.trial) + " launched out of order");
    }
    ProbeRun p;
    p.index = static_cast<int>(e.trial);
    p.name = ProbeName(p.index);
    p.settings = e.params;
    p.launched_at = e.at;
    p.deadline = e.deadline;
    probes_.push_back(std::move(p));
    if (phase_ == SweepPhase::kPending) phase_ = SweepPhase::kProbing;
    return OkStatus();
  }
  if (e.trial < 0 || e.trial >= static_cast<int64_t>(probes_.size())) {
    return InvalidArgumentError("event for unknown probe " + std::to_string(e.trial));
  }
  ProbeRun& p = probes_[static_cast<size_t>(e.trial)];
  if (e.type == Type::kProbeMeasured) {
    p.figures = e.figures;
  } else {
    p.ended = true;
    p.reason = e.reason;
    p.message = e.message;
    p.charged_device_seconds = e.seconds;
  }
  return OkStatus();
}

}  // namespace bsw
