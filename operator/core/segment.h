#ifndef BSW_CORE_SEGMENT_H_
#define BSW_CORE_SEGMENT_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "operator/core/reason.h"

namespace bsw {

enum class SegmentState { kPending, kRunning, kSucceeded, kFailed };

// What a backend observed of one segment (one run of a trial, from a start or resume until the
// trainer exits). Times come from the backend itself, never from metrics: they are what the
// budget charges.
struct SegmentStatus {
  std::string trial;
  int segment = 0;
  SegmentState state = SegmentState::kPending;
  std::optional<double> started_unix_seconds;   // unset while pending
  std::optional<double> finished_unix_seconds;  // unset until it exited
  std::optional<int> exit_code;
  // When failed: Error, DeadlineExceeded, Stopped, Lost, Evicted (the node refused or evicted it:
  // not the trainer's failure)
  Reason reason = Reason::kNone;
  // When the trainer exited non-zero (locally, when it exited at all): the end of what it wrote
  // (OutputTail, output_tail.h).
  std::string output_tail;
  // While pending: why it cannot start, as the backend names it (a pod: Unschedulable,
  // ErrImagePull, ImagePullBackOff, ...), and the backend's own message. Empty when it is just
  // starting.
  std::string waiting_reason;
  std::string waiting_message;
  int devices = 0;
  double deadline_unix_seconds = 0;
  std::string metrics_url;  // http://host:port/metrics; empty until known
  // The backend keeps this segment (and with it the charge) until ReleaseCharge.
  bool charge_held = false;
};

// One run of one trial: from a start (or resume) until the trainer exits. A trial that is
// paused at a rung and resumed later has several segments, numbered from 0.
struct SegmentSpec {
  std::string sweep;  // sweep name
  std::string trial;  // deterministic trial name, e.g. "quickstart-t0007"
  int segment = 0;
  // Trial parameters in search-space order, values already formatted for the command line.
  std::vector<std::pair<std::string, std::string>> params;
  // The command and args of the trial's container template, its placeholders filled in
  // (placeholders.h). The backend appends `extra_args`, then `param_args`.
  std::vector<std::string> command;
  // `--name=value` for each param the template does not place itself.
  std::vector<std::string> param_args;
  // Not empty: the trainer's metrics come from what it prints or writes
  // (spec.metrics.collector): the backend runs the command under budgetsweep-collect with these
  // options, then "--".
  std::vector<std::string> collector_args;
  // Flags from the probe phase, between the template's args and the params: a probe run's
  // candidate settings (and --probe-steps), or the settings the phase chose for every trial.
  std::vector<std::string> extra_args;
  std::vector<std::pair<std::string, std::string>> env;  // extra env from the template
  double until_resource = 0;         // the trainer checkpoints and exits 0 on reaching this
  double max_resource = 0;           // spec.resource.max: the length of the LR schedule
  std::vector<double> milestones;    // every rung's resource, ascending
  int devices = 0;                   // GPUs requested; 0 runs on CPU (charged as one device)
  double deadline_unix_seconds = 0;  // hard stop: SIGTERM at deadline - grace, SIGKILL at deadline
  double grace_seconds = 10;
  // pbt and pb2: the trainer keeps a snapshot of its checkpoint at each pause (`snapshots`); and
  // after an exploit it goes on from trial `exploit_trial`'s snapshot at `exploit_at`, unless its
  // own checkpoint already did, its flags in `mutable_flags` free to differ from the snapshot's.
  bool snapshots = false;
  std::string exploit_trial;  // empty: none
  double exploit_at = 0;
  std::vector<std::string> mutable_flags;
};

// Devices a segment is charged for: its GPUs, and one for a CPU-only segment.
inline int ChargedDevices(int gpus) { return gpus > 0 ? gpus : 1; }

}  // namespace bsw

#endif  // BSW_CORE_SEGMENT_H_
