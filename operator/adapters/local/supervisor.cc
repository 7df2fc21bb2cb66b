#include "operator/adapters/local/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include "operator/adapters/local/atomic_file.h"
#include "operator/adapters/local/process.h"
#include "operator/adapters/local/segment_files.h"

namespace bsw::local {
namespace {

// The deadline and stop files are re-read at least this often.
constexpr double kPollSeconds = 0.1;

// The runner's descriptors (sockets, files) must not leak into trainers and keep ports bound.
void CloseInheritedDescriptors() {
  if (close_range(3, ~0U, 0) == 0) return;
  long max_fd = std::min(sysconf(_SC_OPEN_MAX), 65536L);
  for (int fd = 3; fd < max_fd; ++fd) close(fd);
}

// Restores default dispositions (the runner may ignore SIGPIPE or SIGCHLD, and that would be
// inherited) and blocks exactly the signals the supervisor takes with sigtimedwait.
sigset_t TakeOverSignals() {
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    if (signal_number != SIGKILL && signal_number != SIGSTOP) signal(signal_number, SIG_DFL);
  }
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGTERM);
  sigaddset(&waited, SIGINT);
  sigaddset(&waited, SIGCHLD);
  sigaddset(&waited, kDeadlineSignal);
  sigprocmask(SIG_SETMASK, &waited, nullptr);
  return waited;
}

// Waits up to `seconds` for a signal of `set`; fills `info` and returns its number, or -1.
int WaitForSignalInfo(const sigset_t& set, double seconds, siginfo_t* info) {
  timespec timeout{};
  timeout.tv_sec = static_cast<time_t>(seconds);
  timeout.tv_nsec = static_cast<long>((seconds - static_cast<double>(timeout.tv_sec)) * 1e9);
  return sigtimedwait(&set, info, &timeout);
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

class Supervisor {
 public:
  explicit Supervisor(SegmentFiles files) : files_(std::move(files)) {}

  Status Run() {
    waited_ = TakeOverSignals();
    StatusOr<LaunchRecord> launch = ReadLaunchRecord(files_);
    if (!launch.ok()) return launch.status();
    launch_ = std::move(launch).value();
    StatusOr<double> deadline = ReadDeadline(files_);
    if (!deadline.ok()) return deadline.status();
    // Orphans of the trial (a daemonized grandchild) become the supervisor's children, so that
    // it sees, charges and kills every process the trial starts.
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    status_.trial = launch_.trial;
    status_.segment = launch_.segment;
    status_.devices = launch_.devices;
    status_.gpus = launch_.gpus;
    status_.metrics_url = launch_.metrics_url;
    status_.heartbeat_interval_seconds = launch_.heartbeat_interval_seconds;
    status_.supervisor_pid = getpid();
    status_.takes_deadline_signal = true;
    status_.supervisor_start_ticks = RunningProcessStartTicks(getpid()).value_or(0);
    status_.deadline_unix_seconds = *deadline;
    status_.started_unix_seconds = status_.heartbeat_unix_seconds = NowUnixSeconds();
    Status claimed = CreateFileExclusively(files_.status(), ToJson(status_));
    if (claimed.code() == StatusCode::kAlreadyExists) {
      std::fprintf(stderr, "segment %s is already supervised; exiting\n", files_.dir.c_str());
      return OkStatus();
    }
    if (!claimed.ok()) return claimed;

    // Claimed: from here on every path ends in a final status. The deadline file is read again:
    // a runner that moved the deadline before the claim signals only a claimed segment. From now
    // on the file, which the trial could reach, can only bring the deadline forward.
    if (StatusOr<double> claimed_deadline = ReadDeadline(files_); claimed_deadline.ok()) {
      status_.deadline_unix_seconds = *claimed_deadline;
    }
    if (StopRequested()) {
      stop_reason_ = Reason::kStopped;
      return Finish();
    }
    if (Status spawned = SpawnTrainer(); !spawned.ok()) {
      std::fprintf(stderr, "%s\n", spawned.message().c_str());
      return Finish();  // Failed, Error
    }
    WriteStatusOrLog();
    Supervise();
    return Finish();
  }

 private:
  bool StopRequested() const {
    std::error_code ec;
    return std::filesystem::exists(files_.stop(), ec);
  }

  Status SpawnTrainer() {
    int log_fd =
        open(files_.trainer_log().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (log_fd < 0 || null_fd < 0) {
      return InternalError("cannot open " + files_.trainer_log().string() + ": " +
                           std::strerror(errno));
    }
    std::vector<char*> argv = CStrings(launch_.argv);
    std::vector<char*> envp = CStrings(launch_.env);
    pid_t supervisor = getpid();
    pid_t pid = fork();
    if (pid == 0) {
      // The supervisor is single-threaded, so the child may call anything before exec.
      setpgid(0, 0);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != supervisor) _exit(128 + SIGKILL);  // it died before the prctl took hold
      dup2(null_fd, STDIN_FILENO);
      dup2(log_fd, STDOUT_FILENO);
      dup2(log_fd, STDERR_FILENO);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      umask(launch_.umask);
      execvpe(argv[0], argv.data(), envp.data());
      std::fprintf(stderr, "budgetsweep: cannot run %s: %s\n", argv[0], std::strerror(errno));
      _exit(127);
    }
    int fork_errno = errno;
    close(log_fd);
    close(null_fd);
    if (pid < 0) return InternalError(std::string("fork: ") + std::strerror(fork_errno));
    setpgid(pid, pid);  // also here, so that no signal can reach the group before it exists
    status_.trainer_pid = pid;
    status_.trainer_start_ticks = RunningProcessStartTicks(pid).value_or(0);
    return OkStatus();
  }

  // Waits until the trainer and every process it started have exited, enforcing the deadline and
  // stop requests. Processes the trainer leaves behind get SIGTERM when it exits and SIGKILL after
  // the grace period or at the deadline, whichever is first; the segment is charged until then.
  void Supervise() {
    const double interval = launch_.heartbeat_interval_seconds;
    double next_heartbeat = status_.heartbeat_unix_seconds + interval / 2;
    while (true) {
      ReapChildren();
      double now = NowUnixSeconds();
      if (status_.exit_code) {
        if (DescendantsOf(getpid()).empty()) return;
        TerminateLeftovers(now);
      }
      EnforceLimits(now);
      if (now >= next_heartbeat) {
        status_.heartbeat_unix_seconds = now;
        WriteStatusOrLog();
        next_heartbeat = now + interval / 2;
      }
      AwaitSignal(now, WakeAt(now, next_heartbeat));
    }
  }

  // Takes a deadline the deadline file brought forward, then stops the trial on a stop request
  // or within the grace period of its deadline, and kills it once its SIGKILL is due.
  void EnforceLimits(double now) {
    if (StatusOr<double> deadline = ReadDeadline(files_);
        deadline.ok() && *deadline < status_.deadline_unix_seconds) {
      MoveDeadline(*deadline);
    }
    const double deadline = status_.deadline_unix_seconds;
    if (StopRequested()) Terminate(Reason::kStopped, now + launch_.grace_seconds);
    if (now >= deadline - launch_.grace_seconds) Terminate(Reason::kDeadlineExceeded, deadline);
    if (!killed_ && now >= kill_at_) {
      SignalTrial(SIGKILL);
      killed_ = true;
    }
  }

  // When Supervise must look again: the next heartbeat or poll, the deadline's SIGTERM unless the
  // trial is stopping already, and its SIGKILL unless sent.
  double WakeAt(double now, double next_heartbeat) const {
    double wake = std::min(next_heartbeat, now + kPollSeconds);
    if (stop_reason_ == Reason::kNone) {
      wake = std::min(wake, status_.deadline_unix_seconds - launch_.grace_seconds);
    }
    if (!killed_) wake = std::min(wake, kill_at_);
    return wake;
  }

  // Sleeps until `wake` or a signal: SIGTERM or SIGINT stops the trial, a queued deadline signal
  // moves its deadline, and a child's exit ends the wait for the next round.
  void AwaitSignal(double now, double wake) {
    siginfo_t info{};
    int signal_number = WaitForSignalInfo(waited_, std::max(wake - now, 0.001), &info);
    if (signal_number == SIGTERM || signal_number == SIGINT) {
      Terminate(Reason::kStopped, NowUnixSeconds() + launch_.grace_seconds);
    } else if (signal_number == kDeadlineSignal && info.si_code == SI_QUEUE) {
      MoveDeadline(DeadlineOfSignalValue(info.si_value));
    }
  }

  // The status record shows the deadline in force at once: the runner reserves by it.
  void MoveDeadline(double deadline) {
    status_.deadline_unix_seconds = deadline;
    WriteStatusOrLog();
  }

  // Sends SIGTERM once, records why, and brings the SIGKILL forward to `kill_at` if earlier.
  void Terminate(Reason reason, double kill_at) {
    if (stop_reason_ == Reason::kNone) {
      stop_reason_ = reason;
      SignalTrial(SIGTERM);
    }
    kill_at_ = std::min(kill_at_, kill_at);
  }

  // After the trainer's exit: SIGTERM once to what it left running, SIGKILL after the grace.
  void TerminateLeftovers(double now) {
    if (!leftovers_signalled_) {
      leftovers_signalled_ = true;
      std::fprintf(stderr, "the trainer exited and left processes running; stopping them\n");
      SignalTrial(SIGTERM);
    }
    kill_at_ = std::min(kill_at_, now + launch_.grace_seconds);
  }

  // `signal_number` to the trainer's process group and to every process descended from the
  // supervisor, those that left the group (setsid) and were orphaned included.
  void SignalTrial(int signal_number) {
    kill(-status_.trainer_pid, signal_number);
    for (pid_t pid : DescendantsOf(getpid())) kill(pid, signal_number);
  }

  // Reaps every child that exited: the trainer, whose exit code it records, and the orphans of
  // the trial that the supervisor inherited as their subreaper.
  void ReapChildren() {
    int wait_status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &wait_status, WNOHANG)) > 0 || (pid < 0 && errno == EINTR)) {
      if (pid == status_.trainer_pid) {
        status_.exit_code =
            WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
      }
    }
  }

  Status Finish() {
    status_.finished_unix_seconds = NowUnixSeconds();
    status_.heartbeat_unix_seconds = *status_.finished_unix_seconds;
    if (status_.trainer_pid > 0) SignalTrial(SIGKILL);  // none is left unless spawning failed
    if (stop_reason_ != Reason::kNone) {
      status_.state = SegmentState::kFailed;
      status_.reason = stop_reason_;
    } else if (status_.exit_code == 0) {
      status_.state = SegmentState::kSucceeded;
    } else {
      status_.state = SegmentState::kFailed;
      status_.reason = Reason::kError;
    }
    // The final status is what the runner charges: on a full disk it waits for space.
    Status written = WriteFileAtomically(files_.status(), ToJson(status_));
    for (bool told = false; IsDiskFull(written); told = true) {
      if (!told) std::fprintf(stderr, "%s; waiting for space\n", written.message().c_str());
      WaitForSignalInfo(waited_, kPollSeconds * 5, nullptr);
      written = WriteFileAtomically(files_.status(), ToJson(status_));
    }
    return written;
  }

  void WriteStatusOrLog() {
    Status written = WriteFileAtomically(files_.status(), ToJson(status_));
    if (!written.ok()) std::fprintf(stderr, "%s\n", written.message().c_str());
  }

  SegmentFiles files_;
  LaunchRecord launch_;
  StatusRecord status_;
  sigset_t waited_{};
  Reason stop_reason_ = Reason::kNone;  // why the supervisor ended the trainer
  double kill_at_ = std::numeric_limits<double>::infinity();
  bool killed_ = false;
  bool leftovers_signalled_ = false;
};

}  // namespace

int RunSupervisor(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s SEGMENT_DIR\n", argc > 0 ? argv[0] : "supervisor");
    return 2;
  }
  CloseInheritedDescriptors();
  Supervisor supervisor(SegmentFiles{argv[argc - 1]});
  Status status = supervisor.Run();
  if (!status.ok()) {
    std::fprintf(stderr, "budgetsweep supervisor: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace bsw::local
