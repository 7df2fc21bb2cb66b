#include "tests/cluster/node-agent/shim.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "operator/adapters/local/atomic_file.h"
#include "operator/adapters/local/process.h"

namespace bsw::node_agent {
namespace {

constexpr int kIgnoredByShim[] = {SIGHUP, SIGINT, SIGTERM, SIGPIPE, SIGQUIT};

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

int ShimMain(int argc, char** argv) {
  // argv: <self> __shim <state-dir> <working-dir> -- <command...>
  if (argc < 6 || std::strcmp(argv[4], "--") != 0) {
    WriteAll(2, "usage: __shim <state-dir> <working-dir> -- <command...>\n");
    return 2;
  }
  const std::filesystem::path state_dir = argv[2];
  const char* working_dir = argv[3];
  char** command = argv + 5;
  setsid();  // already a session leader when spawned by the agent; harmless otherwise
  // The shim must outlive the agent and terminal signals; the agent signals the workload's group.
  // They stay blocked across the fork: a signal sent to the group before the command has its
  // default handlers back waits, pending, instead of falling on the shim's SIG_IGN.
  sigset_t terminal;
  sigemptyset(&terminal);
  for (int signal : kIgnoredByShim) sigaddset(&terminal, signal);
  sigset_t previous;
  sigprocmask(SIG_BLOCK, &terminal, &previous);

  pid_t child = fork();
  if (child < 0) {
    WriteAll(2, std::string("shim: fork: ") + std::strerror(errno) + "\n");
    return 1;
  }
  if (child == 0) {
    setpgid(0, 0);
    for (int signal : kIgnoredByShim) ::signal(signal, SIG_DFL);
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    if (*working_dir != '\0' && chdir(working_dir) != 0) {
      WriteAll(2, std::string("chdir ") + working_dir + ": " + std::strerror(errno) + "\n");
      _exit(127);
    }
    execvp(command[0], command);
    WriteAll(2, std::string("exec ") + command[0] + ": " + std::strerror(errno) + "\n");
    _exit(127);
  }
  for (int signal : kIgnoredByShim) ::signal(signal, SIG_IGN);
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  setpgid(child, child);  // also here, so that the group exists before the pid file names it
  std::uint64_t ticks = local::RunningProcessStartTicks(child).value_or(0);
  Status written = local::WriteFileAtomically(
      state_dir / "pid", std::to_string(child) + " " + std::to_string(ticks) + "\n");
  if (!written.ok()) WriteAll(2, "shim: " + written.message() + "\n");

  int wait_status = 0;
  while (waitpid(child, &wait_status, 0) < 0 && errno == EINTR) {
  }
  double finished_at = local::NowUnixSeconds();
  kill(-child, SIGKILL);  // what the command left behind in its group goes with it
  nlohmann::json exit_record = {{"exitCode", 0}, {"signal", 0}, {"finishedAt", finished_at}};
  if (WIFEXITED(wait_status)) {
    exit_record["exitCode"] = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    exit_record["exitCode"] = 128 + WTERMSIG(wait_status);
    exit_record["signal"] = WTERMSIG(wait_status);
  }
  written = local::WriteFileAtomically(state_dir / "exit", exit_record.dump() + "\n");
  if (!written.ok()) {
    WriteAll(2, "shim: " + written.message() + "\n");
    return 1;
  }
  return 0;
}

StatusOr<pid_t> SpawnShim(const std::string& self_exe, const std::filesystem::path& state_dir,
                          const std::string& log_file, const std::string& working_dir,
                          const LaunchSpec& spec) {
  std::vector<std::string> args = {self_exe, kShimArg, state_dir.string(), working_dir, "--"};
  args.insert(args.end(), spec.argv.begin(), spec.argv.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = spec.env;
  std::vector<char*> envp;
  for (std::string& var : env) envp.push_back(var.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  sigset_t empty;
  sigemptyset(&empty);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int signal : {SIGHUP, SIGINT, SIGTERM, SIGPIPE, SIGQUIT, SIGCHLD}) {
    sigaddset(&defaults, signal);
  }
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  int error = posix_spawn(&pid, self_exe.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (error != 0) {
    return InternalError("posix_spawn " + self_exe + ": " + std::strerror(error));
  }
  return pid;
}

std::optional<WorkloadProcess> ReadWorkloadProcess(const std::filesystem::path& state_dir) {
  StatusOr<std::string> text = local::ReadFile(state_dir / "pid");
  if (!text.ok()) return std::nullopt;
  std::istringstream in(*text);
  WorkloadProcess process;
  if (!(in >> process.pid >> process.start_ticks) || process.pid <= 0) return std::nullopt;
  return process;
}

std::optional<WorkloadExit> ReadWorkloadExit(const std::filesystem::path& state_dir) {
  StatusOr<std::string> text = local::ReadFile(state_dir / "exit");
  if (!text.ok()) return std::nullopt;
  nlohmann::json record = nlohmann::json::parse(*text, nullptr, false);
  if (!record.is_object()) return std::nullopt;
  return WorkloadExit{record.value("exitCode", 0), record.value("signal", 0),
                      record.value("finishedAt", 0.0)};
}

bool SignalWorkload(const std::filesystem::path& state_dir, int signal) {
  std::optional<WorkloadProcess> process = ReadWorkloadProcess(state_dir);
  if (!process || !local::IsSameProcessRunning(process->pid, process->start_ticks)) return false;
  return kill(-process->pid, signal) == 0;
}

}  // namespace bsw::node_agent
