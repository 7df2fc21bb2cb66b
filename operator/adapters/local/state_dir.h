#ifndef BSW_ADAPTERS_LOCAL_STATE_DIR_H_
#define BSW_ADAPTERS_LOCAL_STATE_DIR_H_

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "base/status.h"

namespace bsw::local {

// The marker file that makes a directory a budgetsweep state directory.
inline constexpr char kStateMarker[] = ".budgetsweep-state";
// The runner lock: an flock held by the one runner of a state directory for as long as it lives,
// the file holding that runner's PID.
inline constexpr char kRunnerLock[] = "runner.lock";

// Whether `dir` (symlinks resolved) may serve as a state directory: empty, or holding what a
// budgetsweep run writes (the marker, or the journal and sweep record of releases before it).
// FailedPrecondition names the directory and what is wrong; NotFound when it does not exist.
[[nodiscard]] StatusOr<std::filesystem::path> RecognizeStateDir(const std::string& dir);

// A state directory held by this process's runner: created if missing (mode 0700), recognized,
// locked before anything in it is read, and marked. The lock is released when this is destroyed
// or the process exits, a kill -9 included.
class StateDirLock {
 public:
  // FailedPrecondition when another runner holds the directory (the message names it and the
  // holder's PID) or it is not a state directory (RecognizeStateDir).
  [[nodiscard]] static StatusOr<StateDirLock> Acquire(const std::string& dir);
  ~StateDirLock();
  StateDirLock(StateDirLock&& other) noexcept;
  StateDirLock& operator=(StateDirLock&&) = delete;
  StateDirLock(const StateDirLock&) = delete;

  // The directory, absolute, symlinks resolved.
  const std::filesystem::path& path() const { return path_; }

 private:
  StateDirLock(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}

  std::filesystem::path path_;
  int fd_ = -1;
};

// Whether a runner holds the lock of state directory `dir`.
bool RunnerHoldsStateDir(const std::filesystem::path& dir);

}  // namespace bsw::local

#endif  // BSW_ADAPTERS_LOCAL_STATE_DIR_H_
