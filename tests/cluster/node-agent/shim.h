#ifndef BSW_TESTS_CLUSTER_NODE_AGENT_SHIM_H_
#define BSW_TESTS_CLUSTER_NODE_AGENT_SHIM_H_

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "operator/core/status.h"
#include "tests/cluster/node-agent/pod_spec.h"

namespace bsw::node_agent {

// A pod's process runs under a shim, as a container runs under containerd-shim: a copy of this
// binary started as `<self> __shim <state-dir> <working-dir> -- <argv...>` in a session of its
// own, so that it outlives the agent. The shim starts the command as the leader of a new process
// group (stdin /dev/null, stdout and stderr appended to the log the shim was started with), writes
// `<state-dir>/pid` ("<pid> <start-ticks>"), waits for it, kills what is left of its process
// group, and writes `<state-dir>/exit` ({"exitCode", "signal", "finishedAt"}). Both files are
// written atomically. A restarted agent thus learns the exit code of a process its previous
// incarnation started. A command that cannot be executed exits with 127.
inline constexpr char kShimArg[] = "__shim";
int ShimMain(int argc, char** argv);

// Starts the shim for `spec` with `spec.env` as its (and the command's) environment, its output
// going to `log_file`. Returns the shim's pid. Async-signal-safe in the child (posix_spawn).
[[nodiscard]] StatusOr<pid_t> SpawnShim(const std::string& self_exe,
                                        const std::filesystem::path& state_dir,
                                        const std::string& log_file, const std::string& working_dir,
                                        const LaunchSpec& spec);

struct WorkloadProcess {
  pid_t pid = 0;
  std::uint64_t start_ticks = 0;
};
std::optional<WorkloadProcess> ReadWorkloadProcess(const std::filesystem::path& state_dir);

struct WorkloadExit {
  int exit_code = 0;  // 128 + signal when killed by a signal
  int signal = 0;
  double finished_at = 0;  // Unix seconds
};
std::optional<WorkloadExit> ReadWorkloadExit(const std::filesystem::path& state_dir);

// Sends `signal` to the process group of the workload, if the process the shim recorded still
// runs. False when there is no such process (not started yet, or gone).
bool SignalWorkload(const std::filesystem::path& state_dir, int signal);

}  // namespace bsw::node_agent

#endif  // BSW_TESTS_CLUSTER_NODE_AGENT_SHIM_H_
