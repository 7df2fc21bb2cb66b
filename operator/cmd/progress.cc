#include "operator/cmd/progress.h"

#include <cmath>
#include <sstream>
#include <variant>

#include "operator/core/reason.h"
#include "operator/core/search_space.h"

namespace bsw {
namespace {

constexpr size_t kRecentEvents = 6;
constexpr double kPlainReportSeconds = 10;

std::string Fmt(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string BudgetLine(const SweepController& c) {
  const Ledger& l = c.ledger();
  constexpr int kWidth = 30;
  double budget = std::max(l.budget(), 1e-9);
  int used = static_cast<int>(std::round(kWidth * std::min(1.0, l.used() / budget)));
  int reserved =
      static_cast<int>(std::round(kWidth * std::min(1.0, (l.used() + l.reserved()) / budget))) -
      used;
  std::string bar = std::string(static_cast<size_t>(used), '#') +
                    std::string(static_cast<size_t>(std::max(0, reserved)), '+');
  bar.resize(kWidth, '.');
  return "budget [" + bar + "] used " + Fmt("%.4f", l.used() / 3600) + " + reserved " +
         Fmt("%.4f", l.reserved() / 3600) + " of " + Fmt("%.4f", l.budget() / 3600) +
         " GPU-h, remaining " + Fmt("%.4f", l.remaining() / 3600);
}

std::string RungsLine(const SweepController& c) {
  const SweepModel& m = c.model();
  const SweepSpec& spec = m.spec();
  if (!EarlyStopping(spec.algorithm)) return "";
  bool pause = spec.mode == AshaMode::kPause;
  std::string out = "rungs";
  for (int r = 0; r < m.scheduler().decision_rungs(); ++r) {
    out += "  " + spec.resource_unit + " " + Fmt("%g", m.rungs().at(r)) + ": " +
           std::to_string(m.scheduler().recorded(r)) + " reached, " +
           std::to_string(pause ? m.scheduler().promoted(r) : m.continued(r)) +
           (pause ? " promoted" : " continued");
  }
  return out;
}

std::string CountsLine(const SweepModel& m) {
  return std::to_string(m.trial_count()) + " created, " +
         std::to_string(m.count(TrialPhase::kRunning)) + " running, " +
         std::to_string(m.count(TrialPhase::kPaused)) + " paused, " +
         std::to_string(m.count(TrialPhase::kCompleted)) + " completed, " +
         std::to_string(m.count(TrialPhase::kStopped)) + " stopped, " +
         std::to_string(m.count(TrialPhase::kFailed)) + " failed";
}

std::string BestLine(const SweepModel& m) {
  std::optional<BestResult> best = m.best();
  if (!best) return "best: none yet";
  const Trial& t = m.trial(best->trial);
  return "best: " + t.name + " " + m.spec().objective_metric + "=" + Fmt("%.4f", best->value) +
         " at " + m.spec().resource_unit + " " + Fmt("%g", best->resource) + "  (" +
         ParamsText(t.params) + ")";
}

// The trainer's last lines under an event's line, indented and marked as its output.
std::string OutputLines(const std::string& output) {
  std::string out;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    out += "\n    | " + output.substr(start, end - start);
    start = end + 1;
  }
  return out;
}

std::string FiguresText(const ProbeFigures& f) {
  return Fmt("%.0f samples/s", f.samples_per_second) + Fmt(", utilization %.2f", f.utilization()) +
         Fmt(", data wait %.0f%%", 100 * f.data_wait_ratio);
}

// The probe phase's outcome, or "" when the sweep has no probe phase or it is still running.
std::string ThroughputLine(const SweepModel& m) {
  const std::optional<ThroughputDecision>& d = m.throughput_decision();
  if (!d) return "";
  std::string line = std::string("throughput: ") + ReasonName(d->reason);
  if (d->chosen >= 0) {
    const ProbeRun& chosen = m.probes().at(static_cast<size_t>(d->chosen));
    line += ", trials run with " + SettingsText(d->trial_args);
    if (chosen.figures) line += " (" + FiguresText(*chosen.figures) + ")";
  }
  for (const ProbeRun& p : m.probes()) {
    if (p.settings.empty() && p.figures && p.index != d->chosen) {
      line += "; baseline " + FiguresText(*p.figures);
      break;
    }
  }
  return line;
}

// The live view's table while probing: one row per probe run.
std::string ProbeTable(const SweepModel& m) {
  char row[512];
  std::snprintf(row, sizeof row, "%-22s %9s %9s %11s %-10s %s\n", "PROBE", "SAMPLES/S", "DATA WAIT",
                "UTILIZATION", "STATE", "SETTINGS");
  std::string out = row;
  for (const ProbeRun& p : m.probes()) {
    auto figure = [&](double v, const char* f) { return p.figures ? Fmt(f, v) : std::string("-"); };
    std::string state =
        !p.ended ? (p.figures ? "measured" : "measuring") : (p.reason.empty() ? "done" : p.reason);
    std::snprintf(row, sizeof row, "%-22s %9s %9s %11s %-10s %s\n", p.name.c_str(),
                  figure(p.figures ? p.figures->samples_per_second : 0, "%.0f").c_str(),
                  figure(p.figures ? p.figures->data_wait_ratio : 0, "%.3f").c_str(),
                  figure(p.figures ? p.figures->utilization() : 0, "%.3f").c_str(), state.c_str(),
                  SettingsText(p.settings).c_str());
    out += row;
  }
  return out;
}

std::string NameOf(const SweepModel& m, int64_t trial) {
  return trial >= 0 && trial < m.trial_count() ? m.trial(trial).name : "";
}

std::string Line(const SweepModel& m, const event::TrialCreated& e) {
  return NameOf(m, e.trial) + " created: " + ParamsText(e.params);
}

std::string Line(const SweepModel& m, const event::SegmentLaunched& e) {
  return NameOf(m, e.trial) + (e.segment == 0 ? " started" : " resumed") + " toward " +
         m.spec().resource_unit + " " + Fmt("%g", e.until);
}

std::string Line(const SweepModel& m, const event::ValueRecorded& e) {
  return NameOf(m, e.trial) + " " + m.spec().objective_metric + "=" + Fmt("%.4f", e.value) +
         " at " + m.spec().resource_unit + " " + Fmt("%g", e.resource);
}

std::string Line(const SweepModel& m, const event::TrialStopped& e) {
  return NameOf(m, e.trial) + " stopped (" + e.reason + "): " + e.message;
}

std::string Line(const SweepModel& m, const event::TrialPromoted& e) {
  return NameOf(m, e.trial) + " promoted from rung " + std::to_string(e.rung) +
         (e.message.empty() ? "" : " " + e.message);
}

std::string Line(const SweepModel& m, const event::TrialExploited& e) {
  return NameOf(m, e.trial) + " " + e.message;
}

std::string Line(const SweepModel& m, const event::SegmentEnded& e) {
  const Trial& t = m.trial(e.trial);
  // Still running after an ended segment: it is relaunched from its checkpoint.
  std::string state = t.phase != TrialPhase::kRunning                ? TrialPhaseName(t.phase)
                      : e.reason == ReasonName(Reason::kInterrupted) ? "Interrupted, resuming"
                                                                     : "Retrying";
  return NameOf(m, e.trial) + " " + state +
         (e.reason.empty() ? ""
                           : " (" + e.reason + (e.message.empty() ? "" : ": " + e.message) + ")") +
         OutputLines(e.output);
}

std::string Line(const SweepModel&, const event::SweepFinished& e) {
  return "sweep " + std::string(SweepPhaseName(e.phase)) + ": " + e.message;
}

std::string Line(const SweepModel& m, const event::ProbeLaunched& e) {
  return m.ProbeName(static_cast<int>(e.probe)) + " probing " + SettingsText(e.params);
}

std::string Line(const SweepModel& m, const event::ProbeMeasured& e) {
  return m.ProbeName(static_cast<int>(e.probe)) + " measured " + FiguresText(e.figures);
}

std::string Line(const SweepModel& m, const event::ProbeEnded& e) {
  return e.reason.empty() ? ""
                          : m.ProbeName(static_cast<int>(e.probe)) + " ended (" + e.reason + ": " +
                                e.message + ")" + OutputLines(e.output);
}

std::string Line(const SweepModel&, const event::ThroughputDecided& e) {
  return "throughput " + e.reason + ": " + e.message;
}

std::string Line(const SweepModel&, const event::DeadlineMoved&) { return ""; }
std::string Line(const SweepModel&, const event::RungVerdict&) { return ""; }

}  // namespace

std::string Progress::Describe(const SweepController& c, const Event& e) const {
  return std::visit([&c](const auto& one) { return Line(c.model(), one); }, e);
}

void Progress::OnEvent(const SweepController& c, const Event& e) {
  std::string line = Describe(c, e);
  if (line.empty()) return;
  if (live_) {
    recent_.push_back(line);
    if (recent_.size() > kRecentEvents) recent_.pop_front();
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
    std::fflush(out_);
  }
}

void Progress::Refresh(const SweepController& c, double now) {
  const SweepModel& m = c.model();
  if (!live_) {
    if (now - last_plain_report_ >= kPlainReportSeconds) {
      last_plain_report_ = now;
      std::fprintf(out_, "%s | %s\n", BudgetLine(c).c_str(), CountsLine(m).c_str());
      std::fflush(out_);
    }
    return;
  }
  std::ostringstream view;
  view << "budgetsweep " << m.spec().name << "  " << SweepPhaseName(m.phase()) << "  ("
       << AlgorithmName(m.spec().algorithm)
       << (EarlyStopping(m.spec().algorithm) ? std::string("/") + AshaModeName(m.spec().mode) : "")
       << ", parallelism " << m.spec().parallelism << ")\n";
  view << BudgetLine(c) << "\n";
  view << "trials: " << CountsLine(m) << "\n";
  if (std::string rungs = RungsLine(c); !rungs.empty()) view << rungs << "\n";
  if (std::string throughput = ThroughputLine(m); !throughput.empty()) view << throughput << "\n";
  view << BestLine(m) << "\n\n";
  if (m.probing()) {
    view << ProbeTable(m) << "\n";
    for (const std::string& line : recent_) view << "  " << line << "\n";
    Redraw(view.str());
    return;
  }
  char header[160];
  std::snprintf(header, sizeof header, "%-22s %8s %10s %9s %9s  %s\n", "TRIAL",
                m.spec().resource_unit.c_str(), "OBJECTIVE", "LOSS", "SAMPLES/S", "PARAMS");
  view << header;
  for (int64_t index : m.active()) {
    const Trial& t = m.trial(index);
    auto it = c.live_metrics().find(t.name);
    const TrialMetrics* lm = it == c.live_metrics().end() ? nullptr : &it->second;
    auto opt = [](const std::optional<double>& v, const char* f) {
      return v ? Fmt(f, *v) : std::string("-");
    };
    std::optional<double> objective;
    if (lm && !lm->objective_by_resource.empty()) {
      objective = lm->objective_by_resource.rbegin()->second;
    }
    char row[512];
    std::snprintf(row, sizeof row, "%-22s %8s %10s %9s %9s  %s\n", t.name.c_str(),
                  opt(lm ? lm->resource_completed : std::nullopt, "%g").c_str(),
                  opt(objective, "%.4f").c_str(), opt(lm ? lm->loss : std::nullopt, "%.4f").c_str(),
                  opt(lm ? lm->samples_per_second : std::nullopt, "%.0f").c_str(),
                  ParamsText(t.params).c_str());
    view << row;
  }
  view << "\n";
  for (const std::string& line : recent_) view << "  " << line << "\n";
  Redraw(view.str());
}

void Progress::Redraw(const std::string& text) {
  if (lines_drawn_ > 0) std::fprintf(out_, "\x1b[%dF\x1b[J", lines_drawn_);
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
  lines_drawn_ = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

std::string Progress::Summary(const SweepController& c, const std::string& state_dir) {
  const SweepModel& m = c.model();
  std::ostringstream out;
  out << "sweep " << m.spec().name << ": " << SweepPhaseName(m.phase());
  if (m.finished()) {
    // A reason that repeats the phase (BudgetExhausted) is written once.
    const bool repeats = m.finish_reason() == SweepPhaseName(m.phase());
    out << " (" << (repeats ? "" : m.finish_reason() + ": ") << m.finish_message() << ")";
  }
  out << "\n" << BestLine(m) << "\n";
  out << BudgetLine(c) << "\n";
  out << "trials: " << CountsLine(m) << "\n";
  if (std::string rungs = RungsLine(c); !rungs.empty()) out << rungs << "\n";
  if (std::string throughput = ThroughputLine(m); !throughput.empty()) out << throughput << "\n";
  out << "state: " << state_dir << " (journal.jsonl, trials/*/seg-*/ logs)\n";
  return out.str();
}

}  // namespace bsw
