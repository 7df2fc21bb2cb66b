#include "operator/collect/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace bsw::collect {
namespace {

// Runs in the forked child: never returns.
[[noreturn]] void ExecInOwnGroup(const std::vector<std::string>& command, const int* out,
                                 const int* err, const sigset_t& mask) {
  setpgid(0, 0);
  if (out != nullptr) {
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
  }
  for (int signal : {SIGTERM, SIGINT, SIGCHLD, SIGPIPE}) std::signal(signal, SIG_DFL);
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  std::vector<char*> argv;
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::string message =
      "budgetsweep-collect: cannot run " + command[0] + ": " + std::strerror(errno) + "\n";
  (void)!write(STDERR_FILENO, message.data(), message.size());
  _exit(127);
}

void CloseAll(std::initializer_list<int> fds) {
  for (int fd : fds) {
    if (fd >= 0) close(fd);
  }
}

}  // namespace

std::optional<Child> SpawnInOwnGroup(const std::vector<std::string>& command, bool capture,
                                     std::string* error) {
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  if (capture && (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)) {
    *error = std::string("cannot make pipes: ") + std::strerror(errno);
    CloseAll({out[0], out[1], err[0], err[1]});
    return std::nullopt;
  }
  // Signals wait until the child has reset its handlers: until then they are the collector's.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &previous);
  pid_t pid = fork();
  if (pid == 0) ExecInOwnGroup(command, capture ? out : nullptr, err, previous);
  int fork_errno = errno;
  // Both sides set the group, so that it exists before the collector may signal it.
  if (pid > 0) setpgid(pid, pid);
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  CloseAll({out[1], err[1]});
  if (pid < 0) {
    CloseAll({out[0], err[0]});
    *error = std::string("cannot fork: ") + std::strerror(fork_errno);
    return std::nullopt;
  }
  for (int fd : {out[0], err[0]}) {
    if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  return Child{pid, out[0], err[0]};
}

int ExitCodeOf(int wait_status) {
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return WEXITSTATUS(wait_status);
}

}  // namespace bsw::collect
