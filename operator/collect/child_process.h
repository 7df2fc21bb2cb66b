#ifndef BSW_OPERATOR_COLLECT_CHILD_PROCESS_H_
#define BSW_OPERATOR_COLLECT_CHILD_PROCESS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace bsw::collect {

// The command, running in a process group of its own (its id is the command's pid).
struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;  // with capture: non-blocking read ends of its stdout and stderr
  int stderr_fd = -1;
};

// Starts `command` (looked up in PATH) with default signal dispositions and an empty signal mask.
// With `capture` its stdout and stderr are pipes, else the collector's own. A command that cannot
// be executed exits 127 after saying why on its stderr. Nothing, with *error, when it cannot fork.
[[nodiscard]] std::optional<Child> SpawnInOwnGroup(const std::vector<std::string>& command,
                                                   bool capture, std::string* error);

// The code a wrapper exits with for a wait status: the exit code, or 128 + the killing signal.
[[nodiscard]] int ExitCodeOf(int wait_status);

}  // namespace bsw::collect

#endif  // BSW_OPERATOR_COLLECT_CHILD_PROCESS_H_
