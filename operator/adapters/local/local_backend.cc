#include "operator/adapters/local/local_backend.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>
#include <tuple>

#include "contract/trainer_contract.h"
#include "operator/adapters/local/atomic_file.h"
#include "operator/adapters/local/loopback_port.h"
#include "operator/adapters/local/process.h"
#include "operator/adapters/local/segment_files.h"
#include "operator/adapters/system_clock.h"
#include "operator/core/output_tail.h"
#include "operator/core/parse.h"
#include "operator/core/reason.h"
#include "operator/ports/trial_contract.h"

extern char** environ;

namespace bsw::local {
namespace {

namespace fs = std::filesystem;

constexpr double kClaimTimeoutSeconds = 5;
constexpr double kAcknowledgeTimeoutSeconds = 0.5;
constexpr int kPortAttempts = 20;

bool IsSafeName(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

Status CheckSegmentName(const std::string& trial, int segment) {
  if (!IsSafeName(trial)) {
    return InvalidArgumentError("trial name '" + trial +
                                "' must be non-empty and use only letters, digits, '-', '_', '.'");
  }
  if (segment < 0) return InvalidArgumentError("segment must be >= 0");
  return OkStatus();
}

// A trial's checkpoints, shared by its segments, under the backend's trials directory.
fs::path CheckpointDir(const fs::path& trials_dir, const std::string& trial) {
  return trials_dir / trial / "checkpoint";
}

// The trainer's environment: what it inherits of the runner's, then spec.env, then the contract,
// later ones winning. When the backend hands out GPUs, CUDA_VISIBLE_DEVICES is `gpus`, or unset
// for a CPU trial.
std::vector<std::string> TrainerEnvironment(const SegmentSpec& spec, const fs::path& trials_dir,
                                            int port, const LocalBackendOptions& options,
                                            const std::vector<int>& gpus) {
  std::map<std::string, std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string_view var = *entry;
    size_t eq = var.find('=');
    if (eq == std::string_view::npos) continue;
    std::string name(var.substr(0, eq));
    if (InheritsVariable(name, options.pass_env)) env[name] = var.substr(eq + 1);
  }
  for (const auto& [name, value] : spec.env) env[name] = value;
  auto checkpoint_dir_of = [&](const std::string& trial) {
    return CheckpointDir(trials_dir, trial).string();
  };
  for (const auto& [name, value] : TrialContractEnv(spec, checkpoint_dir_of, port)) {
    env[name] = value;
  }
  env[kEnvMetricsHost] = "127.0.0.1";
  env[kEnvTrialDir] = (trials_dir / spec.trial).string();
  if (!gpus.empty()) {
    std::string devices;
    for (int gpu : gpus) devices += (devices.empty() ? "" : ",") + std::to_string(gpu);
    env["CUDA_VISIBLE_DEVICES"] = devices;
  } else if (options.gpu_count > 0) {
    env.erase("CUDA_VISIBLE_DEVICES");
  }
  std::vector<std::string> vars;
  for (const auto& [name, value] : env) vars.push_back(name + "=" + value);
  return vars;
}

// What is on disk for one segment directory.
struct Observed {
  std::string trial;
  int segment = 0;
  SegmentFiles files;
  std::optional<SegmentStatus> finished;  // from the cache; then launch and status are not read
  std::optional<LaunchRecord> launch;
  std::optional<StatusRecord> status;

  // Pending or running: holds its GPUs and metrics port.
  bool Active() const {
    if (finished) return false;
    return status ? status->state == SegmentState::kRunning : launch.has_value();
  }
};

template <typename T>
Status Keep(StatusOr<T> record, std::optional<T>* into) {
  if (record.ok()) {
    *into = std::move(record).value();
    return OkStatus();
  }
  return record.status().code() == StatusCode::kNotFound ? OkStatus() : record.status();
}

// The entries of `dir`. Never throws, unlike iterating a std::filesystem::directory_iterator.
StatusOr<std::vector<fs::path>> ListDirectory(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (ec) return InternalError("cannot list " + dir.string() + ": " + ec.message());
  return entries;
}

// Every segment directory under `trials_dir`, sorted by trial and segment. Those in `finished`
// are taken from it; the records of the others are read.
StatusOr<std::vector<Observed>> Scan(const fs::path& trials_dir,
                                     const std::map<fs::path, SegmentStatus>& finished) {
  StatusOr<std::vector<fs::path>> trial_dirs = ListDirectory(trials_dir);
  if (!trial_dirs.ok()) return trial_dirs.status();
  std::vector<Observed> segments;
  for (const fs::path& trial_dir : *trial_dirs) {
    StatusOr<std::vector<fs::path>> segment_dirs = ListDirectory(trial_dir);
    if (!segment_dirs.ok()) continue;  // not a directory, or removed meanwhile
    for (const fs::path& dir : *segment_dirs) {
      std::string name = dir.filename().string();
      Observed observed;
      if (!name.starts_with("seg-") || !ParsesFully(name.substr(4), &observed.segment)) continue;
      observed.trial = trial_dir.filename().string();
      observed.files = SegmentFiles{dir};
      if (auto it = finished.find(dir); it != finished.end()) {
        observed.finished = it->second;
        segments.push_back(std::move(observed));
        continue;
      }
      if (Status s = Keep(ReadLaunchRecord(observed.files), &observed.launch); !s.ok()) return s;
      if (Status s = Keep(ReadStatusRecord(observed.files), &observed.status); !s.ok()) return s;
      if (observed.launch || observed.status) segments.push_back(std::move(observed));
    }
  }
  std::sort(segments.begin(), segments.end(), [](const Observed& a, const Observed& b) {
    return std::tie(a.trial, a.segment) < std::tie(b.trial, b.segment);
  });
  return segments;
}

// Whether the segment of `status` has ended. A final record counts once its supervisor has
// exited: the supervisor writes that record last, when every process of the trial is gone, so one
// the trial wrote before (ended early, say) is not taken.
bool Ended(const StatusRecord& status) {
  return status.state != SegmentState::kRunning &&
         !IsSameProcessRunning(status.supervisor_pid, status.supervisor_start_ticks);
}

// The processes of a segment whose supervisor is gone: those whose environment holds the launch's
// checkpoint directory (every process of the trial inherits it unless it clears its environment).
std::vector<pid_t> LeftProcesses(const SegmentFiles& files) {
  StatusOr<LaunchRecord> launch = ReadLaunchRecord(files);
  if (!launch.ok()) return {};
  auto entry = std::find_if(launch->env.begin(), launch->env.end(), [](const std::string& var) {
    return var.starts_with(std::string(kEnvCheckpointDir) + "=");
  });
  return entry == launch->env.end() ? std::vector<pid_t>() : ProcessesWithEnvironment(*entry);
}

// Settles a running record whose supervisor is gone: Failed, Lost, finished one heartbeat
// interval after its last heartbeat (the latest it can have ended). Persisted, so it is final.
Status SettleIfLost(const SegmentFiles& files, StatusRecord* status) {
  if (status->state != SegmentState::kRunning ||
      IsSameProcessRunning(status->supervisor_pid, status->supervisor_start_ticks)) {
    return OkStatus();
  }
  // The supervisor may have written its final status between our read and its exit.
  StatusOr<StatusRecord> reread = ReadStatusRecord(files);
  if (!reread.ok()) return reread.status();
  *status = std::move(reread).value();
  if (status->state != SegmentState::kRunning) return OkStatus();

  double finished = status->heartbeat_unix_seconds + status->heartbeat_interval_seconds;
  // PR_SET_PDEATHSIG should have killed the trainer already, but not what it started in a session
  // of its own: kill every process that still carries the segment's environment, and charge
  // until now.
  std::vector<pid_t> left = LeftProcesses(files);
  if (status->trainer_pid > 0 &&
      IsSameProcessRunning(status->trainer_pid, status->trainer_start_ticks)) {
    left.push_back(-status->trainer_pid);
  }
  for (pid_t pid : left) kill(pid, SIGKILL);
  if (!left.empty()) finished = std::max(finished, NowUnixSeconds());
  status->state = SegmentState::kFailed;
  status->reason = Reason::kLost;
  status->finished_unix_seconds = finished;
  return WriteFileAtomically(files.status(), ToJson(*status));
}

// The end of a log file (OutputTail), read from its last kOutputTailReadBytes; "" when it cannot
// be read, since the output only explains a failure that is recorded either way.
std::string LogTail(const fs::path& log) {
  std::FILE* file = std::fopen(log.c_str(), "rb");
  if (file == nullptr) return "";
  std::string text(kOutputTailReadBytes, '\0');
  bool mid_file = std::fseek(file, -static_cast<long>(text.size()), SEEK_END) == 0;
  if (!mid_file) std::rewind(file);
  text.resize(std::fread(text.data(), 1, text.size(), file));
  std::fclose(file);
  // Read from the middle of the file, the first line is only the end of one.
  if (size_t newline = text.find('\n'); mid_file && newline != std::string::npos) {
    text.erase(0, newline + 1);
  }
  return OutputTail(text);
}

StatusOr<SegmentStatus> ToSegmentStatus(Observed& observed) {
  SegmentStatus segment;
  segment.trial = observed.trial;
  segment.segment = observed.segment;
  StatusOr<double> deadline = ReadDeadline(observed.files);
  if (!observed.status) {
    segment.state = SegmentState::kPending;
    segment.devices = observed.launch->devices;
    segment.metrics_url = observed.launch->metrics_url;
    segment.deadline_unix_seconds = deadline.ok() ? *deadline : 0;
    return segment;
  }
  StatusRecord& status = *observed.status;
  if (Status settled = SettleIfLost(observed.files, &status); !settled.ok()) return settled;
  if (!Ended(status)) {
    status.state = SegmentState::kRunning;
    status.finished_unix_seconds.reset();
  }
  segment.state = status.state;
  segment.started_unix_seconds = status.started_unix_seconds;
  segment.finished_unix_seconds = status.finished_unix_seconds;
  segment.exit_code = status.exit_code;
  segment.reason = status.reason;
  // A clean exit too: one short of its `until` is explained by what the trainer wrote.
  if (TrainerFailed(status.reason) || status.state == SegmentState::kSucceeded) {
    segment.output_tail = LogTail(observed.files.trainer_log());
  }
  segment.devices = status.devices;
  segment.metrics_url = status.metrics_url;
  // The supervisor's deadline, not the file's, which the trial could have rewritten.
  segment.deadline_unix_seconds = status.deadline_unix_seconds;
  return segment;
}

// What Start refuses before it touches the state directory.
Status CheckSpec(const SegmentSpec& spec) {
  if (Status valid = CheckSegmentName(spec.trial, spec.segment); !valid.ok()) return valid;
  if (spec.command.empty()) return InvalidArgumentError("trial " + spec.trial + " has no command");
  if (!(spec.deadline_unix_seconds > 0)) {
    return InvalidArgumentError("trial " + spec.trial + " has no deadline");
  }
  if (!(spec.grace_seconds >= 0)) return InvalidArgumentError("grace_seconds must be >= 0");
  return OkStatus();
}

// The GPUs and metrics ports that segments still running hold.
struct Busy {
  std::set<int> gpus;
  std::set<int> ports;
};

Busy BusyOf(const std::vector<Observed>& segments) {
  Busy busy;
  for (const Observed& observed : segments) {
    if (!observed.Active() || !observed.launch) continue;
    busy.gpus.insert(observed.launch->gpus.begin(), observed.launch->gpus.end());
    busy.ports.insert(observed.launch->metrics_port);
  }
  return busy;
}

// The lowest-numbered spec.devices GPUs of 0..gpu_count-1 not in `busy`; none on a machine
// without GPUs (gpu_count 0). ResourceExhausted when too few are free.
StatusOr<std::vector<int>> PickGpus(const SegmentSpec& spec, int gpu_count,
                                    const std::set<int>& busy) {
  std::vector<int> gpus;
  if (gpu_count <= 0) return gpus;
  for (int gpu = 0; gpu < gpu_count && static_cast<int>(gpus.size()) < spec.devices; ++gpu) {
    if (!busy.contains(gpu)) gpus.push_back(gpu);
  }
  if (static_cast<int>(gpus.size()) < spec.devices) {
    return Status(StatusCode::kResourceExhausted, "trial " + spec.trial + " needs " +
                                                      std::to_string(spec.devices) + " GPUs; " +
                                                      std::to_string(gpus.size()) + " of " +
                                                      std::to_string(gpu_count) + " are free");
  }
  return gpus;
}

// A free loopback port for the trainer's metrics, avoiding those running segments hold (a port
// they hold may look free while their trainer has not bound it yet).
StatusOr<int> PickPort(const std::set<int>& busy) {
  int port = 0;
  for (int attempt = 0; attempt < kPortAttempts && (port == 0 || busy.contains(port)); ++attempt) {
    StatusOr<int> picked = PickFreeLoopbackPort();
    if (!picked.ok()) return picked.status();
    port = *picked;
  }
  return port;
}

// What the supervisor of `spec` runs: the trainer's argv (command, extra args, then each param as
// --name=value), its environment, its GPUs and metrics port, and how it is stopped.
LaunchRecord LaunchOf(const SegmentSpec& spec, const std::vector<int>& gpus, int port,
                      const LocalBackendOptions& options) {
  LaunchRecord launch;
  launch.trial = spec.trial;
  launch.segment = spec.segment;
  launch.argv = spec.command;
  launch.argv.insert(launch.argv.end(), spec.extra_args.begin(), spec.extra_args.end());
  launch.argv.insert(launch.argv.end(), spec.param_args.begin(), spec.param_args.end());
  if (!spec.collector_args.empty()) {
    std::vector<std::string> wrapped = {options.collect_program};
    wrapped.insert(wrapped.end(), spec.collector_args.begin(), spec.collector_args.end());
    wrapped.push_back("--");
    launch.argv.insert(launch.argv.begin(), wrapped.begin(), wrapped.end());
  }
  launch.env = TrainerEnvironment(spec, options.state_dir / "trials", port, options, gpus);
  launch.umask = options.trial_umask;
  launch.grace_seconds = spec.grace_seconds;
  launch.devices = spec.devices;
  launch.gpus = gpus;
  launch.metrics_port = port;
  launch.metrics_url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  launch.heartbeat_interval_seconds = options.heartbeat_interval_seconds;
  return launch;
}

// Forks and execs the supervisor `args` in a session of its own, its output appended to
// `log_path`; returns its pid once the exec succeeded, or why it failed.
StatusOr<pid_t> ForkSupervisor(std::vector<std::string> args, const std::string& log_path) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  // The child reports a failed exec through this pipe; a successful exec closes it.
  int exec_errors[2];
  if (pipe2(exec_errors, O_CLOEXEC) != 0) {
    return InternalError(std::string("pipe: ") + std::strerror(errno));
  }
  pid_t pid = fork();
  if (pid == 0) {
    // The runner may be multi-threaded: only async-signal-safe calls until exec.
    setsid();
    int null_fd = open("/dev/null", O_RDONLY);
    int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (null_fd >= 0 && log_fd >= 0) {
      dup2(null_fd, STDIN_FILENO);
      dup2(log_fd, STDOUT_FILENO);
      dup2(log_fd, STDERR_FILENO);
      execv(argv[0], argv.data());
    }
    int exec_errno = errno;
    ssize_t ignored = write(exec_errors[1], &exec_errno, sizeof(exec_errno));
    (void)ignored;
    _exit(127);
  }
  int fork_errno = errno;
  close(exec_errors[1]);
  if (pid < 0) {
    close(exec_errors[0]);
    return InternalError(std::string("fork: ") + std::strerror(fork_errno));
  }
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(exec_errors[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  close(exec_errors[0]);
  if (n == static_cast<ssize_t>(sizeof(exec_errno))) {
    waitpid(pid, nullptr, 0);
    return InternalError("cannot run supervisor " + args[0] + ": " + std::strerror(exec_errno));
  }
  return pid;
}

}  // namespace

bool InheritsVariable(const std::string& name, const std::vector<std::string>& pass_env) {
  if (std::find(pass_env.begin(), pass_env.end(), name) != pass_env.end()) return true;
  return std::any_of(std::begin(kInheritedEnvironment), std::end(kInheritedEnvironment),
                     [&](std::string_view inherited) {
                       return inherited.ends_with('_') ? name.starts_with(inherited)
                                                       : name == inherited;
                     });
}

int DetectGpuCount(const fs::path& dev_dir) {
  StatusOr<std::vector<fs::path>> entries = ListDirectory(dev_dir);
  if (!entries.ok()) return 0;
  return static_cast<int>(std::count_if(entries->begin(), entries->end(), [](const fs::path& p) {
    std::string name = p.filename().string();
    int index = 0;
    return name.starts_with("nvidia") && ParsesFully(name.substr(6), &index);
  }));
}

StatusOr<std::unique_ptr<LocalBackend>> LocalBackend::Create(LocalBackendOptions options) {
  if (options.state_dir.empty()) return InvalidArgumentError("state_dir must be set");
  if (options.supervisor_command.empty()) {
    return InvalidArgumentError(
        "supervisor_command must name the program that runs the supervisor");
  }
  if (options.gpu_count < 0) return InvalidArgumentError("gpu_count must be >= 0");
  if (!(options.heartbeat_interval_seconds > 0)) {
    return InvalidArgumentError("heartbeat_interval_seconds must be > 0");
  }
  std::error_code ec;
  options.state_dir = fs::absolute(options.state_dir, ec);
  if (!ec) fs::create_directories(options.state_dir / "trials", ec);
  if (ec) return InternalError("cannot create " + options.state_dir.string() + ": " + ec.message());
  return std::unique_ptr<LocalBackend>(new LocalBackend(std::move(options)));
}

LocalBackend::LocalBackend(LocalBackendOptions options) : options_(std::move(options)) {}

fs::path LocalBackend::SegmentDir(const std::string& trial, int segment) const {
  return options_.state_dir / "trials" / trial / ("seg-" + std::to_string(segment));
}

Status LocalBackend::Start(const SegmentSpec& spec) {
  if (Status valid = CheckSpec(spec); !valid.ok()) return valid;

  std::lock_guard<std::mutex> lock(mutex_);
  SegmentFiles files{SegmentDir(spec.trial, spec.segment)};
  std::error_code ec;
  if (fs::exists(files.status(), ec)) return OkStatus();

  StatusOr<std::vector<Observed>> segments = Scan(options_.state_dir / "trials", finished_);
  if (!segments.ok()) return segments.status();
  const Busy busy = BusyOf(*segments);
  StatusOr<std::vector<int>> gpus = PickGpus(spec, options_.gpu_count, busy.gpus);
  if (!gpus.ok()) return gpus.status();
  StatusOr<int> port = PickPort(busy.ports);
  if (!port.ok()) return port.status();

  fs::path checkpoint_dir = CheckpointDir(options_.state_dir / "trials", spec.trial);
  fs::create_directories(files.dir, ec);
  if (!ec) fs::create_directories(checkpoint_dir, ec);
  if (ec) return InternalError("cannot create " + files.dir.string() + ": " + ec.message());

  LaunchRecord launch = LaunchOf(spec, *gpus, *port, options_);
  if (Status s = WriteDeadline(files, spec.deadline_unix_seconds); !s.ok()) return s;
  if (Status s = WriteFileAtomically(files.launch(), ToJson(launch)); !s.ok()) return s;
  return SpawnSupervisor(files.dir);
}

Status LocalBackend::SpawnSupervisor(const fs::path& segment_dir) {
  spawned_.insert(segment_dir);
  SegmentFiles files{segment_dir};
  std::vector<std::string> args = options_.supervisor_command;
  args.push_back(segment_dir.string());
  StatusOr<pid_t> pid = ForkSupervisor(args, files.supervisor_log().string());
  if (!pid.ok()) return pid.status();
  supervisors_.insert(*pid);

  const Clock& clock = options_.clock != nullptr ? *options_.clock : SystemClock::Get();
  const double give_up = clock.MonotonicSeconds() + kClaimTimeoutSeconds;
  std::error_code ec;
  while (clock.MonotonicSeconds() < give_up) {
    if (fs::exists(files.status(), ec)) return OkStatus();
    if (waitpid(*pid, nullptr, WNOHANG) == *pid) {
      supervisors_.erase(*pid);
      if (fs::exists(files.status(), ec)) return OkStatus();
      spawned_.erase(segment_dir);  // the next List spawns another (a full disk may heal)
      StatusOr<std::string> log = ReadFile(files.supervisor_log());
      return InternalError("the supervisor of " + segment_dir.string() +
                           " exited before starting the trainer: " + (log.ok() ? *log : ""));
    }
    clock.SleepFor(0.002);
  }
  return OkStatus();  // still starting: List shows it Pending until it claims the segment
}

void LocalBackend::ReapSupervisors() {
  for (auto it = supervisors_.begin(); it != supervisors_.end();) {
    it = waitpid(*it, nullptr, WNOHANG) == 0 ? std::next(it) : supervisors_.erase(it);
  }
}

Status LocalBackend::Stop(const std::string& trial, int segment) {
  if (Status valid = CheckSegmentName(trial, segment); !valid.ok()) return valid;
  std::lock_guard<std::mutex> lock(mutex_);
  SegmentFiles files{SegmentDir(trial, segment)};
  StatusOr<StatusRecord> status = ReadStatusRecord(files);
  std::error_code ec;
  if (status.status().code() == StatusCode::kNotFound && !fs::exists(files.launch(), ec)) {
    return NotFoundError("no segment " + std::to_string(segment) + " of trial " + trial);
  }
  if (status.ok() && Ended(*status)) return OkStatus();
  if (Status s = WriteFileAtomically(files.stop(), "stop\n"); !s.ok()) return s;
  if (status.ok() && IsSameProcessRunning(status->supervisor_pid, status->supervisor_start_ticks)) {
    kill(status->supervisor_pid, SIGTERM);
  }
  return OkStatus();
}

Status LocalBackend::SetDeadline(const std::string& trial, int segment,
                                 double deadline_unix_seconds) {
  if (Status valid = CheckSegmentName(trial, segment); !valid.ok()) return valid;
  if (!(deadline_unix_seconds > 0)) return InvalidArgumentError("the deadline must be > 0");
  std::lock_guard<std::mutex> lock(mutex_);
  SegmentFiles files{SegmentDir(trial, segment)};
  std::error_code ec;
  if (!fs::exists(files.launch(), ec)) {
    return NotFoundError("no segment " + std::to_string(segment) + " of trial " + trial);
  }
  if (Status written = WriteDeadline(files, deadline_unix_seconds); !written.ok()) return written;
  // A claimed segment's supervisor takes a later deadline only from the runner's signal.
  StatusOr<StatusRecord> status = ReadStatusRecord(files);
  if (!status.ok() || status->state != SegmentState::kRunning || !status->takes_deadline_signal ||
      !IsSameProcessRunning(status->supervisor_pid, status->supervisor_start_ticks)) {
    return OkStatus();
  }
  if (sigqueue(status->supervisor_pid, kDeadlineSignal,
               DeadlineSignalValue(deadline_unix_seconds)) != 0) {
    return InternalError("cannot signal the supervisor of " + files.dir.string() + ": " +
                         std::strerror(errno));
  }
  // Until its status shows the deadline (at once, unless the machine is loaded), so that the
  // next List reserves by it.
  const Clock& clock = options_.clock != nullptr ? *options_.clock : SystemClock::Get();
  const double give_up = clock.MonotonicSeconds() + kAcknowledgeTimeoutSeconds;
  while (clock.MonotonicSeconds() < give_up) {
    status = ReadStatusRecord(files);
    if (!status.ok() || status->state != SegmentState::kRunning ||
        status->deadline_unix_seconds == deadline_unix_seconds) {
      break;
    }
    clock.SleepFor(0.001);
  }
  return OkStatus();
}

StatusOr<std::vector<SegmentStatus>> LocalBackend::List() {
  std::lock_guard<std::mutex> lock(mutex_);
  ReapSupervisors();
  StatusOr<std::vector<Observed>> segments = Scan(options_.state_dir / "trials", finished_);
  if (!segments.ok()) return segments.status();
  std::vector<SegmentStatus> result;
  for (Observed& observed : *segments) {
    if (observed.finished) {
      result.push_back(*observed.finished);
      continue;
    }
    if (!observed.status && !spawned_.contains(observed.files.dir)) {
      if (Status s = SpawnSupervisor(observed.files.dir); !s.ok()) return s;
      if (Status s = Keep(ReadStatusRecord(observed.files), &observed.status); !s.ok()) return s;
    }
    StatusOr<SegmentStatus> segment = ToSegmentStatus(observed);
    if (!segment.ok()) return segment.status();
    if (segment->finished_unix_seconds) finished_[observed.files.dir] = *segment;
    result.push_back(std::move(segment).value());
  }
  return result;
}

Status LocalBackend::ReleaseCharge(const std::string&, int) { return OkStatus(); }

}  // namespace bsw::local
