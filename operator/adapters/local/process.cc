#include "operator/adapters/local/process.h"

#include <time.h>

#include <charconv>
#include <fstream>
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

std::optional<std::uint64_t> RunningProcessStartTicks(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
  size_t comm_end = stat.rfind(')');
  if (comm_end == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(comm_end + 1));
  std::string field;
  fields >> field;  // field 3: state
  if (field == "Z" || field == "X" || field == "x") return std::nullopt;
  for (int index = 4; index <= 22 && fields >> field; ++index) {
    if (index != 22) continue;
    std::uint64_t ticks = 0;
    auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), ticks);
    if (ec != std::errc() || end != field.data() + field.size()) return std::nullopt;
    return ticks;
  }
  return std::nullopt;
}

bool IsSameProcessRunning(pid_t pid, std::uint64_t start_ticks) {
  std::optional<std::uint64_t> ticks = RunningProcessStartTicks(pid);
  return ticks.has_value() && *ticks == start_ticks;
}

}  // namespace bsw::local
