#include "operator/core/sweep_status.h"

#include <algorithm>
#include <cmath>

#include "operator/core/gpu_hours.h"
#include "operator/core/rfc3339.h"

namespace bsw {

using nlohmann::json;

json MergeConditions(const json& previous, const std::vector<Condition>& fresh, double now,
                     int64_t generation) {
  json out = json::array();
  for (const Condition& c : fresh) {
    std::string since = Rfc3339(now);
    for (const json& p : previous.is_array() ? previous : json::array()) {
      if (p.value("type", "") == c.type && p.value("status", "") == c.status) {
        since = p.value("lastTransitionTime", since);
      }
    }
    out.push_back({{"type", c.type},
                   {"status", c.status},
                   {"reason", c.reason},
                   {"message", c.message},
                   {"lastTransitionTime", since},
                   {"observedGeneration", generation}});
  }
  return out;
}

namespace {
json Hours(double device_seconds) { return RoundedGpuHours(device_seconds, 3); }
json ParamsObject(const Config& params) {
  json out = json::object();
  for (const auto& [name, value] : params) out[name] = value;
  return out;
}
json FiguresJson(const ProbeRun& p) {
  json out = {{"settings", ParamsObject(p.settings)}};
  if (p.figures) {
    out["samplesPerSecond"] = p.figures->samples_per_second;
    out["dataWaitRatio"] = p.figures->data_wait_ratio;
    out["utilization"] = p.figures->utilization();
  }
  return out;
}

// status.throughput: the probe phase's runs, the baseline, and the choice with its figures.
json ThroughputStatus(const SweepModel& model) {
  const ThroughputSpec& spec = model.spec().throughput;
  const std::vector<ProbeRun>& probes = model.probes();
  const std::optional<ThroughputDecision>& decision = model.throughput_decision();
  double charged = 0;
  bool accelerator = false;
  json runs = json::array();
  for (const ProbeRun& p : probes) {
    charged += p.charged_device_seconds;
    json run = FiguresJson(p);
    run["name"] = p.name;
    if (p.ended && !p.reason.empty()) {
      run["reason"] = p.reason;
      run["message"] = p.message;
    }
    runs.push_back(run);
    if (p.figures && p.figures->accelerator_utilization) accelerator = true;
  }
  json out = {
      {"phase", decision ? "Decided" : "Probing"},
      {"targetUtilization", spec.target_utilization},
      {"utilizationSource",
       accelerator ? "accelerator" : "1 - dataWaitRatio (no accelerator utilization reported)"},
      {"candidates", ProbeCandidates(spec).size()},
      {"budgetLimit", Hours(spec.max_budget_fraction * model.spec().budget_gpu_hours * 3600)},
      {"budgetUsed", Hours(charged)},
      {"probes", runs}};
  for (const ProbeRun& p : probes) {
    if (p.settings.empty() && p.figures) {
      out["baseline"] = FiguresJson(p);
      out["baseline"]["settings"] = ParamsObject(TemplateSettings(model.spec()));
      break;
    }
  }
  if (decision) {
    out["targetMet"] = decision->target_met;
    out["reason"] = ReasonName(decision->reason);
    out["message"] = decision->message;
    json args = json::array();
    for (const std::string& a : FlagArgs(decision->trial_args)) args.push_back(a);
    out["trialArgs"] = args;
    if (decision->chosen >= 0) {
      out["chosen"] = FiguresJson(probes.at(static_cast<size_t>(decision->chosen)));
    }
  }
  return out;
}

}  // namespace

json LineageJson(const SweepModel& model, const Trial& t) {
  json out = json::array();
  size_t first = t.lineage.size() - std::min(t.lineage.size(), kStatusLineage);
  for (size_t i = first; i < t.lineage.size(); ++i) {
    const Exploit& e = t.lineage[i];
    out.push_back(
        {{"resource", e.resource}, {"from", model.trial(e.donor).name}, {"message", e.message}});
  }
  return out;
}

json BuildStatus(const SweepModel& model, const Ledger& ledger, const json& conditions) {
  const SweepSpec& spec = model.spec();
  json status;
  status["observedGeneration"] = spec.generation;
  status["phase"] = SweepPhaseName(model.phase());
  status["conditions"] = conditions;
  status["budget"] = {{"gpuHours", spec.budget_gpu_hours},
                      {"used", Hours(ledger.used())},
                      {"reserved", Hours(ledger.reserved())},
                      {"remaining", Hours(ledger.remaining())}};
  status["trials"] = {{"created", model.trial_count()},
                      {"running", model.count(TrialPhase::kRunning)},
                      {"paused", model.count(TrialPhase::kPaused)},
                      {"completed", model.count(TrialPhase::kCompleted)},
                      {"stopped", model.count(TrialPhase::kStopped)},
                      {"failed", model.count(TrialPhase::kFailed)}};
  json rungs = json::array();
  bool pause = EarlyStopping(spec.algorithm) && spec.mode == AshaMode::kPause;
  const Brackets& scheduler = model.scheduler();
  for (int r = 0; r < model.rungs().size(); ++r) {
    bool decides = r < scheduler.decision_rungs() && EarlyStopping(spec.algorithm);
    json rung = {{"resource", model.rungs().at(r)}};
    if (decides) {
      rung["reached"] = scheduler.recorded(r);
      rung["promoted"] = pause ? scheduler.promoted(r) : model.continued(r);
    }
    if (spec.algorithm == Algorithm::kHyperband) {
      rung["bracketTrials"] = scheduler.TrialsIn(r, model.trial_count());
    }
    rungs.push_back(rung);
  }
  status["rungs"] = rungs;
  if (std::optional<BestResult> best = model.best()) {
    const Trial& t = model.trial(best->trial);
    status["best"] = {{"trial", t.name},
                      {"value", std::isfinite(best->value) ? json(best->value) : json(nullptr)},
                      {"resource", best->resource},
                      {"params", ParamsObject(t.params)}};
    if (!t.lineage.empty()) status["best"]["lineage"] = LineageJson(model, t);
  }
  json running = json::array();
  for (int64_t index : model.active()) running.push_back(model.trial(index).name);
  status["runningTrials"] = running;
  if (!model.recent_failures().empty()) {
    json failures = json::array();
    for (const FailureRecord& f : model.recent_failures()) {
      json failure = {{"trial", model.trial(f.trial).name},
                      {"segment", f.segment},
                      {"reason", f.reason},
                      {"message", f.message}};
      if (!f.output.empty()) failure["output"] = f.output;
      failures.push_back(std::move(failure));
    }
    status["recentFailures"] = std::move(failures);
  }
  if (spec.throughput.enabled) status["throughput"] = ThroughputStatus(model);
  return status;
}

json InterruptedStatus(const SweepModel& model, const Ledger& ledger, const json& conditions,
                       const std::set<std::string>& live_trials, double now) {
  json status = BuildStatus(model, ledger, conditions);
  json running = json::array();
  int64_t interrupted = 0;
  for (int64_t index : model.active()) {
    const std::string& name = model.trial(index).name;
    if (live_trials.contains(name)) {
      running.push_back(name);
    } else {
      ++interrupted;
    }
  }
  status["runningTrials"] = running;
  status["trials"]["running"] = running.size();
  status["trials"]["interrupted"] = interrupted;
  if (model.finished()) return status;
  Condition progressing{
      "Progressing", "False", "Interrupted",
      "interrupted: " + std::to_string(interrupted) +
          " trials stopped; the next run on the same state resumes them from their checkpoints"};
  json merged = MergeConditions(conditions, {progressing}, now, model.spec().generation).at(0);
  json& listed = status["conditions"];
  auto it = std::find_if(listed.begin(), listed.end(),
                         [](const json& c) { return c.value("type", "") == "Progressing"; });
  if (it == listed.end()) {
    listed.insert(listed.begin(), merged);
  } else {
    *it = merged;
  }
  return status;
}

}  // namespace bsw
