#include "operator/adapters/local/state_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <system_error>
#include <vector>

#include "operator/adapters/local/atomic_file.h"

namespace bsw::local {
namespace {

namespace fs = std::filesystem;

// What a budgetsweep run of an earlier release left in a state directory before the marker.
const std::set<std::string>& EarlierReleaseFiles() {
  static const std::set<std::string> files = {"journal.jsonl", "sweep.json"};
  return files;
}

std::string ErrnoText(const std::string& what, const fs::path& path) {
  return what + " " + path.string() + ": " + std::strerror(errno);
}

// "DIR", or "DIR (a symlink to TARGET)".
std::string Named(const std::string& given, const fs::path& resolved) {
  std::error_code ec;
  fs::path absolute = fs::absolute(given, ec);
  if (ec || absolute.lexically_normal() == resolved) return given;
  return given + " (which resolves to " + resolved.string() + ")";
}

StatusOr<std::vector<std::string>> EntryNames(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) return FailedPreconditionError("cannot list " + dir.string() + ": " + ec.message());
  std::sort(names.begin(), names.end());
  return names;
}

Status CheckEntries(const std::string& given, const fs::path& dir) {
  StatusOr<std::vector<std::string>> names = EntryNames(dir);
  if (!names.ok()) return names.status();
  std::vector<std::string> others;
  for (const std::string& name : *names) {
    if (name == kStateMarker || EarlierReleaseFiles().contains(name)) return OkStatus();
    if (name != kRunnerLock) others.push_back(name);
  }
  if (others.empty()) return OkStatus();
  std::string listed;
  for (size_t i = 0; i < others.size() && i < 3; ++i) {
    listed += (i == 0 ? "" : ", ") + others[i];
  }
  if (others.size() > 3) listed += " and " + std::to_string(others.size() - 3) + " more";
  return FailedPreconditionError("--state-dir " + Named(given, dir) +
                                 " is not a budgetsweep state directory: it holds " + listed +
                                 " and no " + kStateMarker +
                                 "; give a new or empty directory, or the --state-dir of an "
                                 "earlier budgetsweep run");
}

// The PID the holder of `fd`'s lock wrote into it, or "unknown" before it did.
std::string HolderPid(int fd) {
  char text[32] = {};
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  std::string pid(text, n > 0 ? static_cast<size_t>(n) : 0);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "unknown" : pid;
}

Status WritePid(int fd, const fs::path& lock_path) {
  std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    return InternalError(ErrnoText("cannot write", lock_path));
  }
  return OkStatus();
}

}  // namespace

StatusOr<fs::path> RecognizeStateDir(const std::string& dir) {
  std::error_code ec;
  fs::path resolved = fs::canonical(dir, ec);
  if (ec) return NotFoundError(dir + ": " + ec.message());
  if (!fs::is_directory(resolved, ec)) {
    return FailedPreconditionError("--state-dir " + Named(dir, resolved) + ": not a directory");
  }
  if (Status s = CheckEntries(dir, resolved); !s.ok()) return s;
  return resolved;
}

StatusOr<StateDirLock> StateDirLock::Acquire(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec) && !fs::is_symlink(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) return FailedPreconditionError("--state-dir " + dir + ": " + ec.message());
  }
  StatusOr<fs::path> path = RecognizeStateDir(dir);
  if (!path.ok()) {
    return path.status().code() == StatusCode::kNotFound
               ? FailedPreconditionError("--state-dir " + path.status().message())
               : path.status();
  }
  fs::permissions(*path, fs::perms::owner_all, fs::perm_options::replace, ec);
  if (ec) return FailedPreconditionError("--state-dir " + dir + ": " + ec.message());
  fs::path lock_path = *path / kRunnerLock;
  int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return FailedPreconditionError(ErrnoText("--state-dir: cannot open", lock_path));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    Status error =
        errno == EWOULDBLOCK
            ? FailedPreconditionError("--state-dir " + Named(dir, *path) +
                                      ": another budgetsweep run (PID " + HolderPid(fd) +
                                      ") is running this sweep; wait for it to end, or stop it")
            : InternalError(ErrnoText("cannot lock", lock_path));
    close(fd);
    return error;
  }
  StateDirLock held(*path, fd);
  if (Status s = WritePid(fd, lock_path); !s.ok()) return s;
  if (!fs::exists(*path / kStateMarker, ec)) {
    Status marked = WriteFileAtomically(*path / kStateMarker, "budgetsweep state directory\n");
    if (!marked.ok()) return marked;
  }
  return held;
}

StateDirLock::~StateDirLock() {
  if (fd_ >= 0) close(fd_);
}

StateDirLock::StateDirLock(StateDirLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

bool RunnerHoldsStateDir(const fs::path& dir) {
  int fd = open((dir / kRunnerLock).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);  // drops the shared lock if it took one
  return held;
}

}  // namespace bsw::local
