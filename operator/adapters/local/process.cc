#include "operator/adapters/local/process.h"

#include <time.h>
#include <unistd.h>

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
