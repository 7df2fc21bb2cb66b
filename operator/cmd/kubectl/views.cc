#include "operator/cmd/kubectl/views.h"

#include <map>
#include <optional>
#include <sstream>
#include <variant>

#include "operator/cmd/kubectl/format.h"
#include "operator/core/reason.h"
#include "operator/core/rfc3339.h"
#include "operator/core/search_space.h"

namespace bsw::kubectl {
namespace {

using nlohmann::json;

constexpr int kListBarWidth = 10;
constexpr int kTopBarWidth = 30;

// The value at `pointer`, null where it is absent: what the API server returns is read without
// exceptions, whatever its shape.
json At(const json& object, const char* pointer) {
  json::json_pointer p(pointer);
  return object.contains(p) ? object.at(p) : json();
}

double NumberAt(const json& object, const char* pointer, double fallback) {
  json v = At(object, pointer);
  return v.is_number() ? v.get<double>() : fallback;
}

std::string StringAt(const json& object, const char* pointer, const std::string& fallback) {
  json v = At(object, pointer);
  return v.is_string() && !v.get<std::string>().empty() ? v.get<std::string>() : fallback;
}

// status.best.value: null when the value was not finite.
std::string ObjectiveText(const json& value) {
  return value.is_number() ? FormatNumber("%.4g", value.get<double>()) : "nan";
}

std::string Budget(const json& sweep, int width) {
  double total =
      NumberAt(sweep, "/status/budget/gpuHours", NumberAt(sweep, "/spec/budget/gpuHours", 0));
  return BudgetBar(NumberAt(sweep, "/status/budget/used", 0),
                   NumberAt(sweep, "/status/budget/reserved", 0), total, width);
}

std::string TrialPhaseText(const Trial& t) {
  switch (t.phase) {
    case TrialPhase::kRunning:
      return t.failures > 0 ? "Running (retrying after " + t.reason + ")" : "Running";
    case TrialPhase::kStopped:
    case TrialPhase::kFailed:
      return std::string(TrialPhaseName(t.phase)) + (t.reason.empty() ? "" : " (" + t.reason + ")");
    case TrialPhase::kPaused:
    case TrialPhase::kCompleted:
      break;
  }
  return TrialPhaseName(t.phase);
}

std::string LatestResource(const Trial& t) {
  return t.rung_values.empty() ? "-" : FormatNumber("%g", t.rung_values.rbegin()->first);
}

std::string LatestValue(const Trial& t) {
  return t.rung_values.empty() ? "-" : FormatNumber("%.4g", t.rung_values.rbegin()->second);
}

// The model after every event, and each trial's last segment that its trainer ended badly.
struct Replay {
  explicit Replay(const SweepSpec& spec) : model(spec) {}
  SweepModel model;
  std::map<int64_t, event::SegmentEnded> last_failure;
};

StatusOr<Replay> ReplayEvents(const SweepSpec& spec, const std::vector<Event>& events) {
  Replay replay(spec);
  for (const Event& e : events) {
    Status applied = replay.model.Apply(e);
    if (!applied.ok()) {
      return InvalidArgumentError(spec.namespace_name + "/" + spec.name +
                                  ": its records do not replay: " + applied.message());
    }
    const auto* ended = std::get_if<event::SegmentEnded>(&e);
    if (ended && TrainerFailed(ended->reason)) replay.last_failure[ended->trial] = *ended;
  }
  return replay;
}

Config ParamsOf(const json& object) {
  Config params;
  if (object.is_object()) {
    for (const auto& [name, value] : object.items()) params.emplace_back(name, value);
  }
  return params;
}

std::string RungsLine(const SweepSpec& spec, const json& status) {
  std::string out;
  const char* verb = spec.mode == AshaMode::kPause ? " promoted" : " continued";
  for (const json& rung : At(status, "/rungs")) {
    if (!rung.contains("reached")) continue;
    out += (out.empty() ? "rungs: " : "; ") + spec.resource_unit + " " +
           FormatNumber("%g", NumberAt(rung, "/resource", 0)) + ": " +
           FormatNumber("%.0f", NumberAt(rung, "/reached", 0)) + " reached, " +
           FormatNumber("%.0f", NumberAt(rung, "/promoted", 0)) + verb;
  }
  return out;
}

std::string ThroughputLine(const json& status) {
  json t = At(status, "/throughput");
  if (t.is_null()) return "";
  if (StringAt(t, "/phase", "") == "Decided") {
    return "throughput: " + StringAt(t, "/reason", "-") + ": " + StringAt(t, "/message", "");
  }
  return "throughput: probing, " + std::to_string(At(t, "/probes").size()) + " of " +
         FormatNumber("%.0f", NumberAt(t, "/candidates", 0)) + " candidates launched";
}

std::string BestLine(const SweepSpec& spec, const json& status) {
  json best = At(status, "/best");
  if (best.is_null()) return "best: none yet";
  return "best: " + StringAt(best, "/trial", "-") + " " + spec.objective_metric + "=" +
         ObjectiveText(At(best, "/value")) + " at " + spec.resource_unit + " " +
         FormatNumber("%g", NumberAt(best, "/resource", 0)) + "  (" +
         ParamsText(ParamsOf(At(best, "/params"))) + ")";
}

std::string CountsLine(const json& status) {
  std::string out;
  for (const char* state : {"created", "running", "paused", "completed", "stopped", "failed"}) {
    out += (out.empty() ? "trials: " : ", ") +
           FormatNumber("%.0f", NumberAt(status, ("/trials/" + std::string(state)).c_str(), 0)) +
           " " + state;
  }
  return out;
}

Row RunningTrialRow(const Trial& t, double now) {
  Row row = {t.name, "-", LatestResource(t), LatestValue(t), "waiting", "-", ParamsText(t.params)};
  if (t.segments.empty() || t.segments.back().ended) return row;
  const SegmentRecord& seg = t.segments.back();
  row[1] = std::to_string(seg.number);
  row[4] = HumanDuration(now - seg.launched_at);
  row[5] = seg.deadline > now ? "in " + HumanDuration(seg.deadline - now) : "passed";
  return row;
}

std::string RecentFailures(const json& status) {
  std::string out;
  for (const json& f : At(status, "/recentFailures")) {
    std::string message = StringAt(f, "/message", "");
    out += "  " + StringAt(f, "/trial", "-") + " segment " +
           FormatNumber("%.0f", NumberAt(f, "/segment", 0)) + " " + StringAt(f, "/reason", "-") +
           (message.empty() ? "" : ": " + message) + "\n" +
           IndentedLines(StringAt(f, "/output", ""), "      ");
  }
  return out.empty() ? "" : "recent failures:\n" + out;
}

}  // namespace

std::string SweepListTable(const json& sweeps, bool all_namespaces, double now_unix_seconds) {
  std::vector<Row> rows = {{"NAME", "PHASE", "BUDGET", "BEST", "TRIALS", "AGE"}};
  if (all_namespaces) rows[0].insert(rows[0].begin(), "NAMESPACE");
  for (const json& sweep : sweeps) {
    std::string best = "-";
    if (!At(sweep, "/status/best").is_null()) {
      best = ObjectiveText(At(sweep, "/status/best/value")) + " (" +
             StringAt(sweep, "/status/best/trial", "-") + ")";
    }
    std::string trials = "-";
    if (!At(sweep, "/status/trials").is_null()) {
      trials = FormatNumber("%.0f", NumberAt(sweep, "/status/trials/running", 0)) + "/" +
               FormatNumber("%.0f", NumberAt(sweep, "/status/trials/created", 0));
    }
    std::optional<double> created =
        ParseRfc3339(StringAt(sweep, "/metadata/creationTimestamp", ""));
    Row row = {StringAt(sweep, "/metadata/name", "-"),
               StringAt(sweep, "/status/phase", "-"),
               Budget(sweep, kListBarWidth),
               best,
               trials,
               created ? HumanDuration(now_unix_seconds - *created) : "-"};
    if (all_namespaces) row.insert(row.begin(), StringAt(sweep, "/metadata/namespace", "-"));
    rows.push_back(std::move(row));
  }
  return AlignedTable(rows);
}

StatusOr<std::string> TrialsView(const SweepSpec& spec, const std::vector<Event>& events) {
  StatusOr<Replay> replay = ReplayEvents(spec, events);
  if (!replay.ok()) return replay.status();
  const SweepModel& model = replay->model;
  if (model.trial_count() == 0) return std::string("no trials yet\n");
  std::vector<Row> rows = {{"TRIAL", "PHASE", "RESOURCE", "VALUE", "PARAMS"}};
  std::string failures;
  for (int64_t i = 0; i < model.trial_count(); ++i) {
    const Trial& t = model.trial(i);
    rows.push_back(
        {t.name, TrialPhaseText(t), LatestResource(t), LatestValue(t), ParamsText(t.params)});
    auto failure = replay->last_failure.find(i);
    bool shown = t.phase == TrialPhase::kFailed || t.reason == ReasonName(Reason::kDiverged);
    if (!shown || failure == replay->last_failure.end()) continue;
    const event::SegmentEnded& e = failure->second;
    failures += "\n" + t.name + ": " + e.reason + " in segment " + std::to_string(e.segment) +
                (e.message.empty() ? "" : ": " + e.message) + "\n" +
                (e.output.empty() ? "    (no output recorded)\n" : IndentedLines(e.output, "    "));
  }
  return AlignedTable(rows) + failures;
}

StatusOr<std::string> TopFrame(const ReportInput& input) {
  StatusOr<Replay> replay = ReplayEvents(input.spec, input.events);
  if (!replay.ok()) return replay.status();
  const SweepModel& model = replay->model;
  const SweepSpec& spec = input.spec;
  const json& status = input.status;
  json sweep = {{"spec", {{"budget", {{"gpuHours", spec.budget_gpu_hours}}}}}, {"status", status}};

  std::ostringstream view;
  view << "budgetsweep " << spec.namespace_name << "/" << spec.name << "  "
       << StringAt(status, "/phase", SweepPhaseName(model.phase())) << "  ("
       << AlgorithmName(spec.algorithm)
       << (EarlyStopping(spec.algorithm) ? std::string("/") + AshaModeName(spec.mode) : "")
       << ", parallelism " << spec.parallelism << ")\n";
  view << "budget " << Budget(sweep, kTopBarWidth) << ", "
       << FormatNumber("%.2f", NumberAt(status, "/budget/remaining", spec.budget_gpu_hours))
       << " remaining\n";
  view << CountsLine(status) << "\n";
  if (std::string rungs = RungsLine(spec, status); !rungs.empty()) view << rungs << "\n";
  if (std::string throughput = ThroughputLine(status); !throughput.empty()) {
    view << throughput << "\n";
  }
  view << BestLine(spec, status) << "\n";
  if (model.finished()) {
    view << "ended: " << model.finish_reason() << ": " << model.finish_message() << "\n";
  }
  view << "\n";
  if (model.active().empty()) {
    view << "no trials running\n";
  } else {
    std::vector<Row> rows = {
        {"TRIAL", "SEGMENT", "RESOURCE", "VALUE", "RUNNING", "DEADLINE", "PARAMS"}};
    for (int64_t index : model.active()) {
      rows.push_back(RunningTrialRow(model.trial(index), input.now_unix_seconds));
    }
    view << AlignedTable(rows);
  }
  if (std::string failures = RecentFailures(status); !failures.empty()) {
    view << "\n" << failures;
  }
  return view.str();
}

bool SweepEnded(const json& status) {
  std::string phase = StringAt(status, "/phase", "");
  return phase == "Completed" || phase == "BudgetExhausted" || phase == "Failed";
}

}  // namespace bsw::kubectl
