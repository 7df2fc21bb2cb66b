#include "operator/core/probe.h"

#include <algorithm>
#include <cstdio>

#include "operator/core/parse.h"

namespace bsw {
namespace {

using nlohmann::json;

std::string Format(const char* fmt, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, value);
  return buf;
}

const json* Setting(const Config& settings, const std::string& flag) {
  for (const auto& [name, value] : settings) {
    if (name == flag) return &value;
  }
  return nullptr;
}

// The trainer's default loader workers, for a baseline whose template does not set them.
constexpr int kTrainerDefaultWorkers = 1;

int WorkersOf(const Config& settings, const Config& baseline) {
  const json* workers = Setting(settings, "workers");
  if (workers == nullptr) workers = Setting(baseline, "workers");
  return workers != nullptr && workers->is_number_integer() ? workers->get<int>()
                                                            : kTrainerDefaultWorkers;
}

std::string FiguresText(const ProbeFigures& f) {
  return Format("%.0f samples/s", f.samples_per_second) +
         Format(", utilization %.2f", f.utilization()) +
         Format(" (data wait %.0f%% of step time", 100 * f.data_wait_ratio) +
         Format(", compute %.0f%%)", 100 * (1 - f.data_wait_ratio));
}

}  // namespace

double ProbeFigures::utilization() const {
  return accelerator_utilization.value_or(1 - data_wait_ratio);
}

std::vector<Config> ProbeCandidates(const ThroughputSpec& t) {
  std::vector<Config> out = {Config{}};
  std::vector<std::optional<MicroBatch>> splits(t.micro_batches.begin(), t.micro_batches.end());
  if (splits.empty()) splits.push_back(std::nullopt);
  std::vector<std::optional<std::string>> precisions(t.precision.begin(), t.precision.end());
  if (precisions.empty()) precisions.push_back(std::nullopt);
  std::vector<std::optional<int>> prefetches(t.prefetch.begin(), t.prefetch.end());
  if (prefetches.empty()) prefetches.push_back(std::nullopt);
  std::vector<std::optional<int>> workers(t.workers.begin(), t.workers.end());
  if (workers.empty()) workers.push_back(std::nullopt);
  for (const auto& split : splits) {
    for (const auto& precision : precisions) {
      for (const auto& prefetch : prefetches) {
        for (const auto& w : workers) {
          Config c;
          if (w) c.emplace_back("workers", *w);
          if (prefetch) c.emplace_back("prefetch", *prefetch);
          if (precision) c.emplace_back("precision", *precision);
          if (split) {
            c.emplace_back("batch-size", split->batch_size);
            c.emplace_back("accumulation-steps", split->accumulation_steps);
          }
          out.push_back(std::move(c));
        }
      }
    }
  }
  return out;
}

Config TemplateSettings(const SweepSpec& spec) {
  const std::vector<std::string>& args = spec.container.args;
  Config out;
  for (const char* flag :
       {"workers", "prefetch", "precision", "batch-size", "accumulation-steps"}) {
    const std::string name = std::string("--") + flag;
    std::optional<std::string> value;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].starts_with(name + "=")) value = args[i].substr(name.size() + 1);
      if (args[i] == name && i + 1 < args.size()) value = args[i + 1];
    }
    if (!value) continue;
    int64_t number = 0;
    out.emplace_back(flag, ParsesFully(*value, &number) ? json(number) : json(*value));
  }
  return out;
}

namespace {

// Of `pool`, the fastest within kProbeTieFraction, the one with fewer loader workers on a tie.
const ProbeRun* Fastest(const std::vector<const ProbeRun*>& pool, const Config& baseline_settings) {
  double fastest = 0;
  for (const ProbeRun* p : pool) fastest = std::max(fastest, p->figures->samples_per_second);
  const ProbeRun* winner = nullptr;
  for (const ProbeRun* p : pool) {
    if (p->figures->samples_per_second < fastest * (1 - kProbeTieFraction)) continue;
    if (winner == nullptr || WorkersOf(p->settings, baseline_settings) <
                                 WorkersOf(winner->settings, baseline_settings)) {
      winner = p;
    }
  }
  return winner;
}

// The trials' flags from the winner's settings; with a micro-batch whose effective batch differs
// from the first candidate's, the linear learning-rate scaling to that reference batch.
Config TrialArgs(const ThroughputSpec& t, const Config& settings) {
  Config args = settings;
  const json* batch = Setting(settings, "batch-size");
  const json* steps = Setting(settings, "accumulation-steps");
  if (batch == nullptr || steps == nullptr || t.micro_batches.empty()) return args;
  const MicroBatch& reference = t.micro_batches.front();
  int64_t reference_batch = reference.batch_size * reference.accumulation_steps;
  if (batch->get<int64_t>() * steps->get<int64_t>() != reference_batch) {
    args.emplace_back("lr-scaling", "linear");
    args.emplace_back("reference-batch", reference_batch);
  }
  return args;
}

// The decision's message: the winner, and the baseline's figures beside it; a winner that is the
// baseline says so.
std::string DecisionMessage(const ThroughputDecision& d, const ThroughputSpec& t,
                            const ProbeRun& winner, const ProbeRun* baseline,
                            const Config& baseline_settings, const std::string& suffix) {
  std::string target = Format("%.2f", t.target_utilization);
  std::string chosen = &winner == baseline
                           ? "the baseline (" + SettingsText(baseline_settings) + ")"
                           : SettingsText(winner.settings);
  chosen += ": " + FiguresText(*winner.figures);
  std::string against = baseline == nullptr || baseline == &winner
                            ? ""
                            : "; baseline (" + SettingsText(baseline_settings) +
                                  "): " + FiguresText(*baseline->figures);
  if (d.target_met) return chosen + ", target " + target + against + suffix;
  return "no candidate reached utilization " + target + "; fastest " + chosen + against + suffix;
}

}  // namespace

ThroughputDecision DecideThroughput(const SweepSpec& spec, const std::vector<ProbeRun>& probes,
                                    const std::string& note) {
  const ThroughputSpec& t = spec.throughput;
  const Config baseline_settings = TemplateSettings(spec);
  std::vector<const ProbeRun*> measured;
  const ProbeRun* baseline = nullptr;
  for (const ProbeRun& p : probes) {
    if (!p.figures) continue;
    measured.push_back(&p);
    if (p.settings.empty() && baseline == nullptr) baseline = &p;
  }
  ThroughputDecision d;
  const std::string suffix = note.empty() ? "" : "; " + note;
  if (measured.empty()) {
    d.reason = Reason::kNothingMeasured;
    d.message = "no probe measured its throughput" + suffix;
    return d;
  }
  std::vector<const ProbeRun*> pool;
  for (const ProbeRun* p : measured) {
    if (p->figures->utilization() >= t.target_utilization) pool.push_back(p);
  }
  d.target_met = !pool.empty();
  const ProbeRun* winner = Fastest(d.target_met ? pool : measured, baseline_settings);
  d.chosen = winner->index;
  d.trial_args = TrialArgs(t, winner->settings);
  d.reason = d.target_met ? Reason::kTargetMet : Reason::kBelowTarget;
  d.message = DecisionMessage(d, t, *winner, baseline, baseline_settings, suffix);
  return d;
}

bool StopsBelowTarget(const SweepSpec& spec, const ThroughputDecision& decision) {
  return !decision.target_met && spec.throughput.stop_below_target;
}

std::vector<std::string> FlagArgs(const Config& flags) {
  std::vector<std::string> out;
  for (const auto& [name, value] : flags)
    out.push_back("--" + name + "=" + FormatParamValue(value));
  return out;
}

std::vector<std::string> ProbeArgs(const ThroughputSpec& throughput, const Config& settings) {
  std::vector<std::string> out = FlagArgs(settings);
  out.push_back("--probe-steps=" + std::to_string(throughput.probe_steps));
  out.push_back("--linger-seconds=" + FormatParamValue(kProbeLingerSeconds));
  return out;
}

std::string SettingsText(const Config& settings) {
  if (settings.empty()) return "the template's settings";
  std::string out;
  for (const auto& [name, value] : settings) {
    out += (out.empty() ? "" : " ") + name + "=" + FormatParamValue(value);
  }
  return out;
}

}  // namespace bsw
