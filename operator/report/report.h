#ifndef BSW_REPORT_REPORT_H_
#define BSW_REPORT_REPORT_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "nlohmann/json.hpp"
#include "operator/adapters/kube/client.h"
#include "operator/core/api.h"
#include "operator/core/sweep_model.h"

namespace bsw {

// What `budgetsweep report` draws: a sweep's spec, its events in journal order, its status object
// (the headline figures are the status's own) and the time the report describes. A segment still
// running counts up to `now_unix_seconds`, or up to its deadline once that has passed (its
// supervisor has killed it by then).
struct ReportInput {
  SweepSpec spec;
  std::vector<Event> events;
  nlohmann::json status;
  double now_unix_seconds = 0;
};

// The status object rebuilt from the events alone, as `budgetsweep run -o json` prints it (without
// conditions): the model replayed, and the ledger over every segment the events record.
// InvalidArgument when an event does not apply to the spec.
[[nodiscard]] StatusOr<nlohmann::json> StatusFromEvents(const SweepSpec& spec,
                                                        const std::vector<Event>& events,
                                                        double now_unix_seconds);

// The report as one self-contained HTML page: the headline figures, best objective against
// device-hours spent, the rung ladder, the budget burn-down, objective against each parameter,
// the throughput probe's candidates and a sortable table with one row per trial. Charts are inline
// SVG, and a little inline JavaScript sorts the table; the page loads nothing from anywhere.
// InvalidArgument when an event does not apply to the spec.
[[nodiscard]] StatusOr<std::string> RenderReportHtml(const ReportInput& input);

// The main chart (best objective against device-hours spent) as PNG bytes, kPngWidth ×
// kPngHeight pixels, drawn without a browser.
inline constexpr int kPngWidth = 1200;
inline constexpr int kPngHeight = 675;
[[nodiscard]] StatusOr<std::string> RenderBestChartPng(const ReportInput& input);

// Renders the report and writes it to `html_path` (the -o flag), and the main chart to
// `png_path` (--png) unless that is empty. InvalidArgument naming the flag and file that cannot
// be written.
[[nodiscard]] Status WriteReport(const ReportInput& input, const std::string& html_path,
                                 const std::string& png_path);

// The BudgetPool a pooled sweep's last `budgetsweep run --pool` was bound to, in its state
// directory: the pool's object as JSON.
inline constexpr char kPoolRecord[] = "pool.json";

// Reads the state directory of `budgetsweep run`: the sweep in sweep.json and the events in
// journal.jsonl; the status is rebuilt from them, a pooled sweep bound to its kPoolRecord. The
// directory is only read (a sweep may be running there). InvalidArgument naming the directory or
// file that is missing or invalid.
[[nodiscard]] StatusOr<ReportInput> LoadStateDir(const std::string& dir, double now_unix_seconds);

// Reads a sweep on a cluster: the BudgetSweep object, its status, and the events of its
// BudgetSweepTrial records (kube::TrialLog). A sweep with no status yet gets one rebuilt from its
// events. Errors are the client's (NotFound for a missing sweep).
[[nodiscard]] StatusOr<ReportInput> LoadClusterSweep(kube::Client& client, const std::string& ns,
                                                     const std::string& name,
                                                     double now_unix_seconds);

}  // namespace bsw

#endif  // BSW_REPORT_REPORT_H_
