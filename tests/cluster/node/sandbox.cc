// The first process of every pod on the test node (the role of registry.k8s.io/pause, which
// cannot be pulled here): it holds the pod's namespaces while the pod lives, reaps the orphans a
// shared PID namespace hands it, and exits 0 on SIGTERM or SIGINT.
#include <sys/wait.h>

#include <csignal>
#include <initializer_list>

int main() {
  sigset_t wanted;
  sigemptyset(&wanted);
  for (int signal : {SIGTERM, SIGINT, SIGCHLD}) {
    sigaddset(&wanted, signal);
  }
  // Blocked signals wait in sigwait; as PID 1 no default action would end the process anyway.
  if (sigprocmask(SIG_BLOCK, &wanted, nullptr) != 0) {
    return 1;
  }
  for (;;) {
    int signal = 0;
    if (sigwait(&wanted, &signal) != 0) {
      return 1;
    }
    if (signal != SIGCHLD) {
      return 0;
    }
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  }
}
