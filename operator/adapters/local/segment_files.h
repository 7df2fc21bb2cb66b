#ifndef BSW_ADAPTERS_LOCAL_SEGMENT_FILES_H_
#define BSW_ADAPTERS_LOCAL_SEGMENT_FILES_H_

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "operator/ports/trial_backend.h"

namespace bsw::local {

// The files of one segment directory, <state_dir>/trials/<trial>/seg-<n>/. They are the only
// channel between the backend and a segment's supervisor, so that either may restart.
struct SegmentFiles {
  std::filesystem::path dir;

  std::filesystem::path launch() const { return dir / "launch.json"; }  // LaunchRecord
  std::filesystem::path status() const { return dir / "status.json"; }  // StatusRecord
  std::filesystem::path deadline() const { return dir / "deadline"; }   // seconds, text
  std::filesystem::path stop() const { return dir / "stop"; }  // present once a stop was asked
  std::filesystem::path trainer_log() const { return dir / "trainer.log"; }
  std::filesystem::path supervisor_log() const { return dir / "supervisor.log"; }
};

// Everything the supervisor needs to run the trainer, written by LocalBackend::Start.
struct LaunchRecord {
  std::string trial;
  int segment = 0;
  std::vector<std::string> argv;  // the trainer's command line, parameters appended
  std::vector<std::string> env;   // the trainer's whole environment, as NAME=value
  double grace_seconds = 0;
  int devices = 0;
  std::vector<int> gpus;  // device indices in CUDA_VISIBLE_DEVICES; empty without GPUs
  int metrics_port = 0;
  std::string metrics_url;
  double heartbeat_interval_seconds = 1;
  mode_t umask = 022;  // the trainer's file mode creation mask
};

// What the supervisor observed, rewritten atomically on every change and heartbeat. It exists
// from the moment a supervisor claims the segment (state kRunning) and ends in kSucceeded or
// kFailed with finished_unix_seconds set.
struct StatusRecord {
  std::string trial;
  int segment = 0;
  SegmentState state = SegmentState::kRunning;
  Reason reason = Reason::kNone;  // when failed: Error, DeadlineExceeded, Stopped or Lost
  std::optional<int> exit_code;   // 128 + signal number when the trainer was killed by a signal
  pid_t supervisor_pid = 0;
  std::uint64_t supervisor_start_ticks = 0;
  pid_t trainer_pid = 0;  // also the trainer's process group; 0 until forked
  std::uint64_t trainer_start_ticks = 0;
  double started_unix_seconds = 0;
  // The supervisor refreshes the heartbeat at least every heartbeat_interval_seconds / 2, so a
  // supervisor whose heartbeat is older than the interval is gone or was never scheduled.
  double heartbeat_unix_seconds = 0;
  double heartbeat_interval_seconds = 1;
  std::optional<double> finished_unix_seconds;
  double deadline_unix_seconds = 0;
  int devices = 0;
  std::vector<int> gpus;
  std::string metrics_url;
  // The supervisor takes deadlines by kDeadlineSignal; false for a supervisor of an earlier
  // release, which reads the deadline file only (and which the signal would kill).
  bool takes_deadline_signal = false;
};

std::string ToJson(const LaunchRecord& launch);
[[nodiscard]] StatusOr<LaunchRecord> ParseLaunchRecord(std::string_view json);
std::string ToJson(const StatusRecord& status);
[[nodiscard]] StatusOr<StatusRecord> ParseStatusRecord(std::string_view json);

// Reads and parses a segment's records; NotFound when the file does not exist (yet).
[[nodiscard]] StatusOr<LaunchRecord> ReadLaunchRecord(const SegmentFiles& files);
[[nodiscard]] StatusOr<StatusRecord> ReadStatusRecord(const SegmentFiles& files);

// The runner moves the deadline of a claimed segment with this signal, queued (sigqueue) with the
// deadline as its value (DeadlineSignalValue): a channel that no file under the state directory,
// which the trial could write, can reach. The deadline file serves the segment's claim, and after
// it can only bring the deadline forward.
inline constexpr int kDeadlineSignal = SIGUSR1;
sigval DeadlineSignalValue(double deadline_unix_seconds);
// The deadline a value of DeadlineSignalValue carries.
double DeadlineOfSignalValue(sigval value);

// The deadline file holds the hard deadline as decimal seconds since the Unix epoch.
[[nodiscard]] Status WriteDeadline(const SegmentFiles& files, double deadline_unix_seconds);
[[nodiscard]] StatusOr<double> ReadDeadline(const SegmentFiles& files);

}  // namespace bsw::local

#endif  // BSW_ADAPTERS_LOCAL_SEGMENT_FILES_H_
