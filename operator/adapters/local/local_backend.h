#ifndef BSW_ADAPTERS_LOCAL_LOCAL_BACKEND_H_
#define BSW_ADAPTERS_LOCAL_LOCAL_BACKEND_H_

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "operator/ports/clock.h"
#include "operator/ports/trial_backend.h"

namespace bsw::local {

// The number of NVIDIA GPUs on this machine: the /dev/nvidia<N> device nodes in `dev_dir`.
int DetectGpuCount(const std::filesystem::path& dev_dir = "/dev");

struct LocalBackendOptions {
  // Segments live in <state_dir>/trials/<trial>/seg-<n>/; checkpoints in
  // <state_dir>/trials/<trial>/checkpoint/, shared by the segments of a trial.
  std::filesystem::path state_dir;
  // The argv prefix that runs RunSupervisor (see supervisor.h); the segment dir is appended.
  // E.g. {"/usr/local/bin/budgetsweep-supervise"}.
  std::vector<std::string> supervisor_command;
  // budgetsweep-collect, which runs a trainer whose metrics come from what it prints or writes
  // (SegmentSpec::collector_args).
  std::string collect_program;
  // GPUs to hand out through CUDA_VISIBLE_DEVICES; usually DetectGpuCount(). With 0, segments
  // run without CUDA_VISIBLE_DEVICES whatever they request.
  int gpu_count = 0;
  // How stale a supervisor's heartbeat may get; also the margin charged for a lost segment.
  double heartbeat_interval_seconds = 1.0;
  // Times the wait for a new supervisor to claim its segment; must outlive the backend. Default:
  // SystemClock::Get().
  const Clock* clock = nullptr;
  // Variables of the runner's environment a trainer inherits besides kInheritedEnvironment
  // (`budgetsweep run --pass-env NAME`).
  std::vector<std::string> pass_env;
  // The file mode creation mask trainers run with (the runner's own is stricter, 077).
  mode_t trial_umask = 022;
};

// What a trainer inherits of the runner's environment: these names, and those starting with a
// prefix that ends in '_' ("LC_"). Nothing else of it, so that a token in the runner's
// environment never reaches a trial or its launch record.
inline constexpr const char* kInheritedEnvironment[] = {
    "PATH",        "HOME",        "USER",        "LOGNAME",      "SHELL",         "TMPDIR",
    "TZ",          "LANG",        "LANGUAGE",    "LC_",          "TERM",          "LD_LIBRARY_PATH",
    "PYTHONPATH",  "VIRTUAL_ENV", "CUDA_",       "NVIDIA_",      "OMP_",          "OPENBLAS_",
    "MKL_",        "http_proxy",  "https_proxy", "no_proxy",     "all_proxy",     "HTTP_PROXY",
    "HTTPS_PROXY", "NO_PROXY",    "ALL_PROXY",   "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS",
    "TSAN_OPTIONS"};

// Whether a trainer inherits the runner's variable `name` (kInheritedEnvironment, `pass_env`).
bool InheritsVariable(const std::string& name, const std::vector<std::string>& pass_env);

// Runs each segment as a local process under its own supervisor process (see supervisor.h).
// Supervisors run in their own session: Ctrl-C or a kill -9 of the runner leaves them running,
// and a new LocalBackend on the same state_dir lists, stops and re-deadlines them. All state is
// in files, so any number of instances may come and go; calls on one instance are serialized.
//
// Times are CLOCK_REALTIME seconds taken by the supervisor: started when it claimed the segment
// (before the trainer is forked), finished when it reaped the trainer. A segment whose supervisor
// vanished (kill -9, reboot) is Failed with reason Lost and finished at its last heartbeat plus
// the heartbeat interval, which is never earlier than its real end.
class LocalBackend final : public TrialBackend {
 public:
  // Fails when the options are unusable or state_dir cannot be created.
  [[nodiscard]] static StatusOr<std::unique_ptr<LocalBackend>> Create(LocalBackendOptions options);

  // Creates the segment's directory, then spawns its supervisor and waits (up to a few seconds)
  // until it has claimed the segment, so that List shows it Running with its start time.
  // The trainer gets `spec.command`, `spec.extra_args`, `--name=value` per parameter, and the
  // runner's variables it inherits (InheritsVariable) plus spec.env plus the BUDGETSWEEP_*
  // contract (TrialContractEnv, and METRICS_HOST 127.0.0.1) and, with GPUs, CUDA_VISIBLE_DEVICES.
  // Its stdout and stderr go to trainer.log in the segment directory. No-op when the segment was
  // started before. InvalidArgument for an unusable spec (unsafe trial name, empty command, no
  // deadline); ResourceExhausted when too few GPUs are free.
  Status Start(const SegmentSpec& spec) override;

  // Asks the segment to stop: writes its stop file and sends its supervisor SIGTERM, which
  // forwards SIGTERM to the trainer and SIGKILL after the grace period. The segment ends Failed
  // with reason Stopped. No-op for a finished segment; NotFound for an unknown one.
  Status Stop(const std::string& trial, int segment) override;

  // Rewrites the segment's deadline file and, once a supervisor claimed the segment, sends it the
  // deadline (kDeadlineSignal), waiting up to 0.5 s for its status record to show it.
  // NotFound for an unknown segment; InvalidArgument for a deadline <= 0.
  Status SetDeadline(const std::string& trial, int segment, double deadline_unix_seconds) override;

  // Every segment under state_dir, sorted by trial and segment. A segment whose supervisor has
  // not claimed it yet is Pending. One launched by an earlier runner that no supervisor claimed
  // (that runner died between writing the launch record and starting the supervisor) is given a
  // supervisor here: only one supervisor can ever claim a segment, so this never runs it twice.
  StatusOr<std::vector<SegmentStatus>> List() override;

  // Segment directories stay for the sweep's life, so no charge is ever held: OK, nothing to do.
  Status ReleaseCharge(const std::string& trial, int segment) override;

 private:
  explicit LocalBackend(LocalBackendOptions options);

  std::filesystem::path SegmentDir(const std::string& trial, int segment) const;
  Status SpawnSupervisor(const std::filesystem::path& segment_dir);
  void ReapSupervisors();

  const LocalBackendOptions options_;
  std::mutex mutex_;
  std::set<pid_t> supervisors_;              // spawned by this instance and not reaped yet
  std::set<std::filesystem::path> spawned_;  // the segments this instance started a supervisor for
  // Finished segments never change again: List reads their records once.
  std::map<std::filesystem::path, SegmentStatus> finished_;
};

}  // namespace bsw::local

#endif  // BSW_ADAPTERS_LOCAL_LOCAL_BACKEND_H_
