// The sources `budgetsweep report` reads (the state directory of `budgetsweep run`, or a sweep on
// a cluster) and the files it writes.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "operator/adapters/kube/pod_backend.h"
#include "operator/adapters/kube/resources.h"
#include "operator/adapters/kube/trial_log.h"
#include "operator/adapters/yaml/sweep_file.h"
#include "operator/controller/journal.h"
#include "operator/report/report.h"

namespace bsw {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

}  // namespace

StatusOr<ReportInput> LoadStateDir(const std::string& dir, double now_unix_seconds) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return InvalidArgumentError(
        dir + (fs::exists(dir, ec) ? ": not a directory" : ": no such directory"));
  }
  fs::path sweep_file = fs::path(dir) / "sweep.json", journal = fs::path(dir) / "journal.jsonl";
  for (const fs::path& p : {sweep_file, journal}) {
    if (!fs::exists(p, ec)) {
      return InvalidArgumentError(p.string() +
                                  ": not found (give the --state-dir of a budgetsweep run)");
    }
  }
  StatusOr<json> object = ReadSweepFile(sweep_file.string());
  if (!object.ok()) return InvalidArgumentError(object.status().message());
  StatusOr<SweepSpec> spec = ParseSweep(*object);
  if (!spec.ok()) {
    return InvalidArgumentError(sweep_file.string() +
                                ": not a valid BudgetSweep: " + spec.status().message());
  }
  if (fs::path pool_file = fs::path(dir) / kPoolRecord;
      !spec->pool_name.empty() && fs::exists(pool_file, ec)) {
    StatusOr<json> pool_object = ReadSweepFile(pool_file.string());
    StatusOr<PoolSpec> pool =
        pool_object.ok() ? ParsePool(*pool_object) : StatusOr<PoolSpec>(pool_object.status());
    if (!pool.ok()) {
      return InvalidArgumentError(pool_file.string() + ": not a valid BudgetPool:\n" +
                                  pool.status().message());
    }
    BindPool(*pool, &*spec);
  }
  StatusOr<std::vector<Event>> events = Journal::Read(journal.string());
  if (!events.ok()) return InvalidArgumentError(events.status().message());
  StatusOr<json> status = StatusFromEvents(*spec, *events, now_unix_seconds);
  if (!status.ok())
    return InvalidArgumentError(journal.string() + ": " + status.status().message());
  return ReportInput{*spec, std::move(*events), std::move(*status), now_unix_seconds};
}

StatusOr<ReportInput> LoadClusterSweep(kube::Client& client, const std::string& ns,
                                       const std::string& name, double now_unix_seconds) {
  StatusOr<json> sweep = client.Get(kube::kBudgetSweeps, ns, name);
  if (!sweep.ok()) return sweep.status();
  StatusOr<SweepSpec> spec = ParseSweep(*sweep);
  if (!spec.ok()) {
    return InvalidArgumentError(ns + "/" + name +
                                ": not a valid BudgetSweep: " + spec.status().message());
  }
  kube::SweepOwner owner;
  owner.name = name;
  owner.uid = sweep->value("/metadata/uid"_json_pointer, "");
  kube::TrialLog log(client, ns, owner, 1);
  StatusOr<std::vector<Event>> events = log.ReadWithoutCollecting();
  if (!events.ok()) return events.status();
  json status = sweep->value("status", json::object());
  status.erase("sweepEvents");
  // A pooled sweep without its own gpuHours: the operator's status has the cap it was bound to.
  if (spec->budget_gpu_hours <= 0) {
    spec->budget_gpu_hours = status.value("/budget/gpuHours"_json_pointer, 0.0);
  }
  if (!status.contains("budget")) {
    StatusOr<json> rebuilt = StatusFromEvents(*spec, *events, now_unix_seconds);
    if (!rebuilt.ok()) return rebuilt.status();
    status = std::move(*rebuilt);
  }
  return ReportInput{*spec, std::move(*events), std::move(status), now_unix_seconds};
}

namespace {

Status WriteFile(const std::string& flag, const std::string& path, const std::string& bytes) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  out.close();
  if (!out) {
    return InvalidArgumentError(flag + " " + path + ": cannot write (" + std::strerror(errno) +
                                ")");
  }
  return OkStatus();
}

}  // namespace

Status WriteReport(const ReportInput& input, const std::string& html_path,
                   const std::string& png_path) {
  StatusOr<std::string> html = RenderReportHtml(input);
  if (!html.ok()) return html.status();
  if (Status written = WriteFile("-o", html_path, *html); !written.ok()) return written;
  if (png_path.empty()) return OkStatus();
  StatusOr<std::string> png = RenderBestChartPng(input);
  if (!png.ok()) return png.status();
  return WriteFile("--png", png_path, *png);
}

}  // namespace bsw
