#ifndef BSW_ADAPTERS_LOCAL_PROCESS_H_
#define BSW_ADAPTERS_LOCAL_PROCESS_H_

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace bsw::local {

// CLOCK_REALTIME as seconds since the Unix epoch: the clock of every time the backend records.
double NowUnixSeconds();

// Waits up to `seconds` for one of the signals in `set`, which the calling thread must block;
// returns its number, or -1 when none came in time (or another signal's handler ran).
int WaitForSignal(const sigset_t& set, double seconds);

// The start time of process `pid` in clock ticks since boot (field 22 of /proc/<pid>/stat), or
// nullopt when no such process runs. A zombie counts as not running. Together with the pid it
// identifies one process: a reused pid has a different start time.
std::optional<std::uint64_t> RunningProcessStartTicks(pid_t pid);

// True when `pid` is still the process that started at `start_ticks`, and has not exited.
bool IsSameProcessRunning(pid_t pid, std::uint64_t start_ticks);

// The live processes descended from `ancestor` (its children, theirs, and so on; zombies left
// out), from one pass over /proc: processes may start or end meanwhile.
std::vector<pid_t> DescendantsOf(pid_t ancestor);

// The live processes whose environment, as it was when they exec'd, holds the entry `entry`
// ("NAME=value"). Only processes this one may read the environment of are seen.
std::vector<pid_t> ProcessesWithEnvironment(std::string_view entry);

// The file execvp would run for `program` with `path` as PATH: a name with a slash is that path
// (relative to the working directory), any other the first executable regular file of that name
// in a directory of `path` (an empty entry is the working directory). NotFound: no such file, or
// no PATH directory holds one; FailedPrecondition: the file is not an executable regular file.
StatusOr<std::filesystem::path> ResolveProgram(const std::string& program, const std::string& path);

}  // namespace bsw::local

#endif  // BSW_ADAPTERS_LOCAL_PROCESS_H_
