#include "operator/adapters/local/process.h"

#include <time.h>
#include <unistd.h>

#include <charconv>
#include <deque>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <system_error>

namespace bsw::local {

double NowUnixSeconds() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

int WaitForSignal(const sigset_t& set, double seconds) {
  timespec timeout{};
  timeout.tv_sec = static_cast<time_t>(seconds);
  timeout.tv_nsec = static_cast<long>((seconds - static_cast<double>(timeout.tv_sec)) * 1e9);
  return sigtimedwait(&set, nullptr, &timeout);
}

namespace {

// What /proc/<pid>/stat says of a process that has not exited (a zombie has).
struct LiveStat {
  pid_t parent = 0;               // field 4
  std::uint64_t start_ticks = 0;  // field 22
};

std::optional<LiveStat> ReadLiveStat(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
  size_t comm_end = stat.rfind(')');
  if (comm_end == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(comm_end + 1));
  std::string state;
  LiveStat live;
  if (!(fields >> state >> live.parent) || state == "Z" || state == "X" || state == "x") {
    return std::nullopt;
  }
  std::string field;
  for (int index = 5; index <= 22 && fields >> field; ++index) {
    if (index != 22) continue;
    auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), live.start_ticks);
    if (ec != std::errc() || end != field.data() + field.size()) return std::nullopt;
    return live;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> RunningProcessStartTicks(pid_t pid) {
  std::optional<LiveStat> live = ReadLiveStat(pid);
  if (!live) return std::nullopt;
  return live->start_ticks;
}

bool IsSameProcessRunning(pid_t pid, std::uint64_t start_ticks) {
  std::optional<std::uint64_t> ticks = RunningProcessStartTicks(pid);
  return ticks.has_value() && *ticks == start_ticks;
}

namespace {

// The pid of every entry of /proc.
std::vector<pid_t> ProcessIds() {
  std::vector<pid_t> pids;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    pid_t pid = 0;
    auto [last, parse_ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (parse_ec == std::errc() && last == name.data() + name.size()) pids.push_back(pid);
  }
  return pids;
}

}  // namespace

std::vector<pid_t> DescendantsOf(pid_t ancestor) {
  std::multimap<pid_t, pid_t> children;
  for (pid_t pid : ProcessIds()) {
    if (std::optional<LiveStat> live = ReadLiveStat(pid)) children.emplace(live->parent, pid);
  }
  std::vector<pid_t> descendants;
  std::deque<pid_t> next = {ancestor};
  while (!next.empty()) {
    auto [first, last] = children.equal_range(next.front());
    next.pop_front();
    for (auto it = first; it != last; ++it) {
      descendants.push_back(it->second);
      next.push_back(it->second);
    }
  }
  return descendants;
}

std::vector<pid_t> ProcessesWithEnvironment(std::string_view entry) {
  // Bounded: an environment larger than this is not read whole (ARG_MAX is 2 MiB by default).
  constexpr std::streamsize kMaxEnvironmentBytes = 4 << 20;
  std::vector<pid_t> found;
  std::string environment;
  for (pid_t pid : ProcessIds()) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
    if (!in || !ReadLiveStat(pid)) continue;
    environment.resize(kMaxEnvironmentBytes);
    in.read(environment.data(), kMaxEnvironmentBytes);
    environment.resize(static_cast<size_t>(in.gcount()));
    std::string_view rest = environment;
    while (!rest.empty()) {
      size_t end = rest.find('\0');
      if (rest.substr(0, end) == entry) {
        found.push_back(pid);
        break;
      }
      if (end == std::string_view::npos) break;
      rest.remove_prefix(end + 1);
    }
  }
  return found;
}

namespace {

bool IsExecutableFile(const std::filesystem::path& file) {
  std::error_code ec;
  return std::filesystem::is_regular_file(file, ec) && access(file.c_str(), X_OK) == 0;
}

}  // namespace

StatusOr<std::filesystem::path> ResolveProgram(const std::string& program,
                                               const std::string& path) {
  if (program.find('/') != std::string::npos) {
    std::error_code ec;
    if (!std::filesystem::exists(program, ec)) return NotFoundError(program + ": no such file");
    if (!IsExecutableFile(program)) {
      return FailedPreconditionError(program + ": not an executable file");
    }
    return std::filesystem::path(program);
  }
  std::string_view rest = path;
  while (true) {
    size_t colon = rest.find(':');
    std::string_view dir = rest.substr(0, colon);
    std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / program;
    if (IsExecutableFile(candidate)) return candidate;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return NotFoundError(program + " not found on PATH");
}

}  // namespace bsw::local
