#include "operator/report/report.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "operator/core/ledger.h"
#include "operator/core/rfc3339.h"
#include "operator/core/search_space.h"
#include "operator/core/sweep_status.h"
#include "operator/report/canvas.h"
#include "operator/report/charts.h"
#include "operator/report/history.h"
#include "operator/report/text.h"

namespace bsw {
namespace report {
namespace {

using nlohmann::json;

std::string ParamText(const nlohmann::json& value) {
  return value.is_number_float() ? Num(value.get<double>()) : FormatParamValue(value);
}

constexpr int kWideChart = 1160;
constexpr int kParamChartWidth = 570;

// A status figure under an id the tests read: a number as the status has it (its JSON text).
std::string Figure(const std::string& id, const json& value) {
  std::string text = value.is_null()     ? "-"
                     : value.is_string() ? value.get<std::string>()
                                         : value.dump();
  return "<span class=\"figure\" id=\"" + id + "\">" + Escape(text) + "</span>";
}

std::string BestCard(const SweepSpec& spec, const json& status) {
  std::string out = "<div class=\"card\"><h3>Best " + Escape(spec.objective_metric) + "</h3>";
  if (!status.contains("best")) {
    return out + Figure("best-value", json()) + "<p>no value recorded yet</p></div>\n";
  }
  const json& best = status["best"];
  json best_value = best.value("value", json());
  std::string value_text = best_value.is_number() ? Fmt("%.6g", best_value.get<double>()) : "NaN";
  out += Figure("best-value", value_text) + "<p>" + Figure("best-trial", best.value("trial", "")) +
         " at " + Escape(ResourceText(spec, best.value("resource", 0.0))) +
         "</p><p class=\"params\">";
  json params = best.value("params", json::object());
  for (const auto& [name, value] : params.items()) {
    out += Escape(name) + "=" + Escape(ParamText(value)) + " ";
  }
  out += "</p>";
  // pbt and pb2: where the best trial went on from other trials' checkpoints.
  if (best.contains("lineage")) {
    out += "<ol class=\"params\" id=\"best-lineage\">";
    for (const json& step : best["lineage"]) {
      out += "<li>" + Escape(ResourceText(spec, step.value("resource", 0.0))) + ": " +
             Escape(step.value("message", "")) + "</li>";
    }
    out += "</ol>";
  }
  return out + "</div>\n";
}

// pbt and pb2: "t0002@3 t0000@5", the trials a trial went on from and where.
std::string LineageText(const History& h, const Trial& t) {
  std::string out;
  for (const Exploit& e : t.lineage) {
    out += (out.empty() ? "" : " ") + h.model.trial(e.donor).name + "@" + Num(e.resource);
  }
  return out;
}

// A card of status figures: one row per (key, label) of `rows`, its figure `figures[key]` under
// the id `<prefix>-<key>`.
std::string FiguresCard(const std::string& title, const std::string& prefix, const json& figures,
                        const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string out = "<div class=\"card\"><h3>" + title + "</h3><table class=\"figures\">";
  for (const auto& [key, label] : rows) {
    out += "<tr><td>" + label + "</td><td>" +
           Figure(prefix + "-" + key, figures.value(key, json())) + "</td></tr>";
  }
  return out + "</table></div>\n";
}

std::string Headline(const History& h) {
  const SweepSpec& spec = h.spec();
  const json& s = h.status;
  return "<h1>Sweep " + Escape(spec.name) + "</h1>\n<p class=\"meta\">" +
         Escape(s.value("phase", "")) + " &middot; " + Escape(spec.objective_metric) + " (" +
         GoalName(spec.goal) + ") &middot; " + AlgorithmName(spec.algorithm) + ", " +
         AshaModeName(spec.mode) + " mode &middot; as of " + Rfc3339(h.end) +
         "</p>\n<div class=\"cards\">\n" + BestCard(spec, s) +
         FiguresCard("Budget, GPU-hours", "budget", s.value("budget", json::object()),
                     {{"used", "used"},
                      {"reserved", "reserved"},
                      {"remaining", "remaining"},
                      {"gpuHours", "cap"}}) +
         FiguresCard("Trials", "trials", s.value("trials", json::object()),
                     {{"created", "created"},
                      {"running", "running"},
                      {"paused", "paused"},
                      {"completed", "completed"},
                      {"stopped", "stopped"},
                      {"failed", "failed"}}) +
         "</div>\n";
}

// A table cell with `sort_key` as its sort key (numbers sort as numbers).
std::string Cell(const std::string& text, const std::string& sort_key) {
  return "<td data-v=\"" + Escape(sort_key) + "\">" + Escape(text) + "</td>";
}
// A cell sorted by its own text.
std::string TextCell(const std::string& text) { return Cell(text, text); }
std::string NumberCell(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return Cell("", "");
  return Cell(Num(*v), Fmt("%.17g", *v));
}

std::string TrialRow(const History& h, const Trial& t) {
  const SweepSpec& spec = h.spec();
  std::string row = "<tr class=\"trial\">" + TextCell(t.name) + TextCell(TrialPhaseName(t.phase)) +
                    TextCell(t.reason);
  for (const ParamSpec& p : spec.search_space) {
    std::string text;
    for (const auto& [name, value] : t.params) {
      if (name == p.name) text = ParamText(value);
    }
    std::optional<double> number = ParamPosition(p, t.params);
    bool numeric = p.type != ParamType::kChoice && p.type != ParamType::kGrid;
    row += numeric && number ? Cell(text, Fmt("%.17g", *number)) : TextCell(text);
  }
  std::optional<double> latest, best;
  for (const auto& [resource, value] : t.rung_values) {
    latest = value;
    if (std::isfinite(value) && (!best || Better(spec.goal, value, *best))) best = value;
  }
  std::vector<SegmentSpan> own;
  for (const SegmentSpan& s : h.spans) {
    if (!s.probe && s.trial == t.index) own.push_back(s);
  }
  double charged = LedgerAt(own, 0, h.end).used() / 3600;
  row += NumberCell(t.progress()) + NumberCell(latest) + NumberCell(best) +
         NumberCell(static_cast<double>(t.segments.size())) +
         Cell(Fmt("%.6f", charged), Fmt("%.17g", charged));
  if (Population(spec.algorithm)) row += TextCell(LineageText(h, t));
  return row + "</tr>\n";
}

std::string TrialTable(const History& h) {
  const SweepSpec& spec = h.spec();
  std::string out =
      "<table class=\"sortable\" id=\"trials\"><thead><tr><th>trial</th>"
      "<th>phase</th><th>reason</th>";
  for (const ParamSpec& p : spec.search_space) out += "<th>" + Escape(p.name) + "</th>";
  out += "<th>" + Escape(spec.resource_unit) + " reached</th><th>latest " +
         Escape(spec.objective_metric) + "</th><th id=\"best-column\" data-initial=\"" +
         (spec.goal == Goal::kMaximize ? "desc" : "asc") + "\">best " +
         Escape(spec.objective_metric) + "</th><th>segments</th><th>GPU-h charged</th>" +
         (Population(spec.algorithm) ? "<th>went on from</th>" : "") + "</tr></thead>\n<tbody>\n";
  for (int64_t i = 0; i < h.model.trial_count(); ++i) out += TrialRow(h, h.model.trial(i));
  return out + "</tbody></table>\n";
}

// Sorts the trial table by the clicked column (numbers as numbers, empty cells last); on load, by
// the best objective, best first.
constexpr const char* kScript = R"(<script>
(function () {
  const table = document.getElementById('trials');
  const headers = Array.from(table.tHead.rows[0].cells);
  function sortBy(column, order) {
    const body = table.tBodies[0];
    const key = (row) => row.cells[column].dataset.v;
    const rows = Array.from(body.rows).sort((a, b) => {
      const x = key(a), y = key(b);
      if (x === '' || y === '') return (x === '') - (y === '');
      const nx = Number(x), ny = Number(y);
      const c = isNaN(nx) || isNaN(ny) ? x.localeCompare(y) : nx - ny;
      return order === 'asc' ? c : -c;
    });
    rows.forEach((row) => body.appendChild(row));
    headers.forEach((h) => h.removeAttribute('data-order'));
    headers[column].setAttribute('data-order', order);
  }
  headers.forEach((h, column) => h.addEventListener('click', () =>
    sortBy(column, h.getAttribute('data-order') === 'asc' ? 'desc' : 'asc')));
  const best = document.getElementById('best-column');
  sortBy(headers.indexOf(best), best.dataset.initial);
})();
</script>
)";

constexpr const char* kStyle = R"(<style>
body { font-family: sans-serif; color: #222; margin: 24px 40px; max-width: 1180px; }
h1 { margin: 0 0 4px; font-size: 26px; }
h2 { margin: 32px 0 8px; font-size: 20px; }
.meta { color: #5f6368; margin: 0 0 16px; }
.cards { display: flex; gap: 16px; flex-wrap: wrap; }
.card { border: 1px solid #dadce0; border-radius: 8px; padding: 12px 16px; min-width: 300px; }
.card h3 { margin: 0 0 8px; font-size: 15px; color: #5f6368; }
.card > .figure { font-size: 30px; font-weight: bold; }
.card p { margin: 4px 0; }
.params { color: #5f6368; font-size: 13px; }
table.figures td { padding: 1px 12px 1px 0; }
table.figures .figure { font-weight: bold; }
svg.chart { display: block; margin: 16px 0; border: 1px solid #eceff1; border-radius: 6px; }
.grid { display: flex; flex-wrap: wrap; gap: 0 18px; }
.note { color: #5f6368; }
table.sortable { border-collapse: collapse; font-size: 13px; margin-top: 8px; }
table.sortable th { cursor: pointer; background: #f1f3f4; text-align: left; padding: 6px 8px; }
table.sortable th[data-order=asc]::after { content: " \25B2"; }
table.sortable th[data-order=desc]::after { content: " \25BC"; }
table.sortable td { padding: 4px 8px; border-top: 1px solid #eceff1; }
table.sortable tbody tr:nth-child(odd) { background: #fafbfc; }
</style>
)";

std::string ProbeSection(const History& h) {
  if (h.model.probes().empty()) {
    return std::string("<h2>Throughput probe</h2>\n<p class=\"note\">") +
           (h.spec().throughput.enabled ? "No probe run recorded yet."
                                        : "No probe phase: spec.throughput.enabled is false.") +
           "</p>\n";
  }
  int height = 150 + 34 * static_cast<int>(h.model.probes().size());
  return RenderSvg(kWideChart, height, "throughput probe",
                   [&h, height](Canvas& c) { DrawProbeChart(c, h, kWideChart, height); });
}

std::string ParamSection(const History& h) {
  std::string out = "<h2>Objective against each parameter</h2>\n<div class=\"grid\">\n";
  for (const ParamSpec& p : h.spec().search_space) {
    out += RenderSvg(kParamChartWidth, 330, h.spec().objective_metric + " against " + p.name,
                     [&h, &p](Canvas& c) { DrawParamChart(c, h, p, kParamChartWidth, 330); });
  }
  return out + "</div>\n";
}

// The page for `h`; `events` are the ones `h` was built from.
std::string PageHtml(const History& h, const std::vector<Event>& events) {
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>budgetsweep report: " +
      Escape(h.spec().name) + "</title>\n" + kStyle + "</head><body>\n" + Headline(h);
  page += RenderSvg(kWideChart, 560, "best objective against device-hours spent",
                    [&h](Canvas& c) { DrawBestChart(c, h, kWideChart, 560); });
  page += RenderSvg(kWideChart, 520, "rung ladder",
                    [&h](Canvas& c) { DrawLadderChart(c, h, kWideChart, 520); });
  page += RenderSvg(kWideChart, 440, "budget burn-down",
                    [&h, &events](Canvas& c) { DrawBurnDownChart(c, h, events, kWideChart, 440); });
  page += ParamSection(h) + ProbeSection(h) + "<h2>Trials</h2>\n" + TrialTable(h);
  return page + kScript + "</body></html>\n";
}

}  // namespace
}  // namespace report

StatusOr<nlohmann::json> StatusFromEvents(const SweepSpec& spec, const std::vector<Event>& events,
                                          double now_unix_seconds) {
  StatusOr<SweepModel> model = report::Replay(spec, events);
  if (!model.ok()) return model.status();
  std::vector<report::SegmentSpan> spans = report::SegmentSpans(spec, events);
  Ledger ledger = report::LedgerAt(spans, spec.budget_gpu_hours,
                                   report::EndTime(spans, events, now_unix_seconds));
  return BuildStatus(*model, ledger, nlohmann::json::array());
}

StatusOr<std::string> RenderReportHtml(const ReportInput& input) {
  StatusOr<report::History> history = report::BuildHistory(input);
  if (!history.ok()) return history.status();
  return report::PageHtml(*history, input.events);
}

StatusOr<std::string> RenderBestChartPng(const ReportInput& input) {
  StatusOr<report::History> history = report::BuildHistory(input);
  if (!history.ok()) return history.status();
  return report::RenderPng(kPngWidth, kPngHeight, [&history](report::Canvas& c) {
    report::DrawBestChart(c, *history, kPngWidth, kPngHeight);
  });
}

}  // namespace bsw
