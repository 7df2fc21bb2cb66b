#include "operator/adapters/local/segment_files.h"

#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>
#include <system_error>

#include "operator/adapters/local/atomic_file.h"

namespace bsw::local {
namespace {

using nlohmann::json;

const char* StateName(SegmentState state) {
  switch (state) {
    case SegmentState::kPending:
      return "pending";
    case SegmentState::kRunning:
      return "running";
    case SegmentState::kSucceeded:
      return "succeeded";
    case SegmentState::kFailed:
      return "failed";
  }
  return "unknown";
}

StatusOr<SegmentState> ParseState(const std::string& name) {
  for (SegmentState state : {SegmentState::kPending, SegmentState::kRunning,
                             SegmentState::kSucceeded, SegmentState::kFailed}) {
    if (name == StateName(state)) return state;
  }
  return InvalidArgumentError("unknown segment state '" + name + "'");
}

StatusOr<Reason> ParseStatusReason(const std::string& name) {
  std::optional<Reason> reason = ParseReason(name);
  if (!reason) return InvalidArgumentError("unknown segment reason '" + name + "'");
  return *reason;
}

template <typename T>
json Nullable(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

template <typename T>
std::optional<T> GetNullable(const json& object, const char* key) {
  const json& value = object.at(key);
  if (value.is_null()) return std::nullopt;
  return value.get<T>();
}

// Parses `text` and hands the object to `read`, turning every nlohmann error into a Status.
template <typename T, typename Read>
StatusOr<T> ParseWith(std::string_view text, const char* what, Read read) {
  json object = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded() || !object.is_object()) {
    return InvalidArgumentError(std::string(what) + " is not a JSON object");
  }
  try {
    return read(object);
  } catch (const json::exception& e) {
    return InvalidArgumentError(std::string(what) + ": " + e.what());
  }
}

}  // namespace

// Text that is not UTF-8 (an odd environment variable) is written with U+FFFD replacements
// rather than making dump() throw.
std::string ToJson(const LaunchRecord& launch) {
  return json{{"trial", launch.trial},
              {"segment", launch.segment},
              {"argv", launch.argv},
              {"env", launch.env},
              {"grace_seconds", launch.grace_seconds},
              {"devices", launch.devices},
              {"gpus", launch.gpus},
              {"metrics_port", launch.metrics_port},
              {"metrics_url", launch.metrics_url},
              {"heartbeat_interval_seconds", launch.heartbeat_interval_seconds},
              {"umask", launch.umask}}
      .dump(2, ' ', false, json::error_handler_t::replace);
}

StatusOr<LaunchRecord> ParseLaunchRecord(std::string_view text) {
  return ParseWith<LaunchRecord>(text, "launch record", [](const json& object) {
    LaunchRecord launch;
    object.at("trial").get_to(launch.trial);
    object.at("segment").get_to(launch.segment);
    object.at("argv").get_to(launch.argv);
    object.at("env").get_to(launch.env);
    object.at("grace_seconds").get_to(launch.grace_seconds);
    object.at("devices").get_to(launch.devices);
    object.at("gpus").get_to(launch.gpus);
    object.at("metrics_port").get_to(launch.metrics_port);
    object.at("metrics_url").get_to(launch.metrics_url);
    object.at("heartbeat_interval_seconds").get_to(launch.heartbeat_interval_seconds);
    launch.umask = object.value("umask", launch.umask);  // absent in earlier releases' records
    return StatusOr<LaunchRecord>(std::move(launch));
  });
}

std::string ToJson(const StatusRecord& status) {
  return json{{"trial", status.trial},
              {"segment", status.segment},
              {"state", StateName(status.state)},
              {"reason", ReasonName(status.reason)},
              {"exit_code", Nullable(status.exit_code)},
              {"supervisor_pid", status.supervisor_pid},
              {"supervisor_start_ticks", status.supervisor_start_ticks},
              {"trainer_pid", status.trainer_pid},
              {"trainer_start_ticks", status.trainer_start_ticks},
              {"started_unix_seconds", status.started_unix_seconds},
              {"heartbeat_unix_seconds", status.heartbeat_unix_seconds},
              {"heartbeat_interval_seconds", status.heartbeat_interval_seconds},
              {"finished_unix_seconds", Nullable(status.finished_unix_seconds)},
              {"deadline_unix_seconds", status.deadline_unix_seconds},
              {"devices", status.devices},
              {"gpus", status.gpus},
              {"metrics_url", status.metrics_url},
              {"deadline_signal", status.takes_deadline_signal}}
      .dump(2, ' ', false, json::error_handler_t::replace);
}

StatusOr<StatusRecord> ParseStatusRecord(std::string_view text) {
  return ParseWith<StatusRecord>(text, "status record", [](const json& object) {
    StatusRecord status;
    StatusOr<SegmentState> state = ParseState(object.at("state").get<std::string>());
    if (!state.ok()) return StatusOr<StatusRecord>(state.status());
    status.state = *state;
    object.at("trial").get_to(status.trial);
    object.at("segment").get_to(status.segment);
    StatusOr<Reason> reason = ParseStatusReason(object.at("reason").get<std::string>());
    if (!reason.ok()) return StatusOr<StatusRecord>(reason.status());
    status.reason = *reason;
    status.exit_code = GetNullable<int>(object, "exit_code");
    object.at("supervisor_pid").get_to(status.supervisor_pid);
    object.at("supervisor_start_ticks").get_to(status.supervisor_start_ticks);
    object.at("trainer_pid").get_to(status.trainer_pid);
    object.at("trainer_start_ticks").get_to(status.trainer_start_ticks);
    object.at("started_unix_seconds").get_to(status.started_unix_seconds);
    object.at("heartbeat_unix_seconds").get_to(status.heartbeat_unix_seconds);
    object.at("heartbeat_interval_seconds").get_to(status.heartbeat_interval_seconds);
    status.finished_unix_seconds = GetNullable<double>(object, "finished_unix_seconds");
    // null: written by a release that took a budget with no finite deadline (issue 39); read as
    // long past, so that the state directory resumes once the sweep file is fixed.
    status.deadline_unix_seconds = GetNullable<double>(object, "deadline_unix_seconds").value_or(0);
    object.at("devices").get_to(status.devices);
    object.at("gpus").get_to(status.gpus);
    object.at("metrics_url").get_to(status.metrics_url);
    status.takes_deadline_signal = object.value("deadline_signal", false);
    return StatusOr<StatusRecord>(std::move(status));
  });
}

StatusOr<LaunchRecord> ReadLaunchRecord(const SegmentFiles& files) {
  StatusOr<std::string> text = ReadFile(files.launch());
  if (!text.ok()) return text.status();
  StatusOr<LaunchRecord> launch = ParseLaunchRecord(*text);
  if (!launch.ok())
    return InternalError(files.launch().string() + ": " + launch.status().message());
  return launch;
}

StatusOr<StatusRecord> ReadStatusRecord(const SegmentFiles& files) {
  StatusOr<std::string> text = ReadFile(files.status());
  if (!text.ok()) return text.status();
  StatusOr<StatusRecord> status = ParseStatusRecord(*text);
  if (!status.ok())
    return InternalError(files.status().string() + ": " + status.status().message());
  return status;
}

sigval DeadlineSignalValue(double deadline_unix_seconds) {
  static_assert(sizeof(void*) == sizeof(double), "sigval carries the double's bits");
  sigval value{};
  std::memcpy(&value.sival_ptr, &deadline_unix_seconds, sizeof deadline_unix_seconds);
  return value;
}

double DeadlineOfSignalValue(sigval value) {
  double deadline = 0;
  std::memcpy(&deadline, &value.sival_ptr, sizeof deadline);
  return deadline;
}

Status WriteDeadline(const SegmentFiles& files, double deadline_unix_seconds) {
  char text[64];
  // The shortest text that reads back as the same double.
  char* end = std::to_chars(text, text + sizeof(text) - 1, deadline_unix_seconds).ptr;
  *end++ = '\n';
  return WriteFileAtomically(files.deadline(), std::string_view(text, end - text));
}

StatusOr<double> ReadDeadline(const SegmentFiles& files) {
  StatusOr<std::string> text = ReadFile(files.deadline());
  if (!text.ok()) return text.status();
  std::string_view digits = *text;
  while (!digits.empty() && (digits.back() == '\n' || digits.back() == ' '))
    digits.remove_suffix(1);
  double deadline = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), deadline);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    return InternalError(files.deadline().string() + " does not hold a number");
  }
  return deadline;
}

}  // namespace bsw::local
