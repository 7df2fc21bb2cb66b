#ifndef BSW_CORE_PROBE_H_
#define BSW_CORE_PROBE_H_

#include <optional>
#include <string>
#include <vector>

#include "operator/core/api.h"
#include "operator/core/reason.h"
#include "operator/core/search_space.h"

namespace bsw {

// The probe phase (spec.throughput): before the search, short runs of the trainer measure each
// candidate's loader and precision settings, one run at a time, and the fastest candidate that
// keeps the accelerator busy enough becomes every trial's settings.

// A probe's SIGTERM comes this long (at most) before its deadline: it writes no checkpoint.
inline constexpr double kProbeGraceSeconds = 2;
// A probe keeps its metrics up this long after measuring, so that a Prometheus scrape sees them;
// the sweep stops it as soon as it has read them.
inline constexpr double kProbeLingerSeconds = 30;
// Candidates within this fraction of the fastest rate tie; ties go to fewer loader workers.
inline constexpr double kProbeTieFraction = 0.05;

// What one probe run measured over its probe steps.
struct ProbeFigures {
  double samples_per_second = 0;
  double data_wait_ratio = 0;
  std::optional<double> accelerator_utilization;  // absent where no accelerator reports it

  // The gate's figure: the accelerator's utilization, or 1 − data-wait ratio where none is
  // reported (on CPU).
  double utilization() const;
};

// One probe run: a single segment of the trainer with one candidate's settings.
struct ProbeRun {
  int index = 0;
  std::string name;  // the segment's trial name, e.g. "fmnist-p0003"
  Config settings;   // the flags added to the template; empty for the naive baseline
  double launched_at = 0;
  double deadline = 0;
  std::optional<ProbeFigures> figures;
  bool ended = false;
  std::string reason;  // "" when it ended measured; else why it measured nothing
  std::string message;
  double charged_device_seconds = 0;  // set when it ended, from the backend's times
};

// The outcome of the probe phase.
struct ThroughputDecision {
  int chosen = -1;  // the winning probe's index; -1: nothing measured, the template as it is
  bool target_met = false;
  Reason reason = Reason::kNothingMeasured;  // TargetMet, BelowTarget or NothingMeasured
  std::string message;
  Config trial_args;  // the flags every trial gets after the template's args
};

// The candidates in probing order: the naive baseline (the template as it is, no flags added)
// first, then the product of the candidate lists, micro-batch splits outermost and workers
// innermost.
std::vector<Config> ProbeCandidates(const ThroughputSpec& throughput);

// The values the template's own args give the flags a probe varies (`--flag=value` or `--flag
// value`, the last one winning, as the trainer reads them). Describes the baseline.
Config TemplateSettings(const SweepSpec& spec);

// Picks the winner among the measured probes: the fastest that meets the target utilization, or
// the fastest of all when none does; rates within kProbeTieFraction of the fastest tie, and ties
// go to fewer workers (the baseline counts with its TemplateSettings), then to the earlier probe.
// `note` says why probing ended before every candidate was measured ("" when it did not).
ThroughputDecision DecideThroughput(const SweepSpec& spec, const std::vector<ProbeRun>& probes,
                                    const std::string& note);

// Whether a decision went below the target and the spec says to stop then.
bool StopsBelowTarget(const SweepSpec& spec, const ThroughputDecision& decision);

// `--name=value` for each entry.
std::vector<std::string> FlagArgs(const Config& flags);

// What a probe run adds to the template's args: its settings, then the trainer's probe mode
// (--probe-steps) and a linger of kProbeLingerSeconds.
std::vector<std::string> ProbeArgs(const ThroughputSpec& throughput, const Config& settings);

// "workers=2 prefetch=4", or "the template's settings" for none.
std::string SettingsText(const Config& settings);

}  // namespace bsw

#endif  // BSW_CORE_PROBE_H_
