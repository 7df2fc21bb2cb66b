#ifndef BSW_PORTS_TRIAL_BACKEND_H_
#define BSW_PORTS_TRIAL_BACKEND_H_

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "operator/core/segment.h"

namespace bsw {

// One run of one trial: from a start (or resume) until the trainer exits. A trial that is
// paused at a rung and resumed later has several segments, numbered from 0.
struct SegmentSpec {
  std::string sweep;  // sweep name
  std::string trial;  // deterministic trial name, e.g. "quickstart-t0007"
  int segment = 0;
  // Trial parameters in search-space order, values already formatted for the command line.
  std::vector<std::pair<std::string, std::string>> params;
  // The command and args of the trial's container template. The backend appends `extra_args`,
  // then `--name=value` per param.
  std::vector<std::string> command;
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

// Runs trial segments. Implementations: local child processes, Kubernetes pods.
class TrialBackend {
 public:
  virtual ~TrialBackend() = default;

  // Starts a segment. Idempotent: starting a segment that already exists changes nothing.
  // InvalidArgument means the segment can never start as specified (the backend, or a cluster's
  // admission, refuses it); other errors may pass, and the start is tried again.
  virtual Status Start(const SegmentSpec& spec) = 0;

  // Asks a running segment to stop: SIGTERM, then SIGKILL after its grace period.
  virtual Status Stop(const std::string& trial, int segment) = 0;

  // Moves the hard deadline of a running segment. Only admitted budget may move it later.
  virtual Status SetDeadline(const std::string& trial, int segment,
                             double deadline_unix_seconds) = 0;

  // Every segment the backend knows of, including those started before a restart.
  virtual StatusOr<std::vector<SegmentStatus>> List() = 0;

  // Lets go of an ended segment whose charge is now recorded elsewhere (SegmentStatus::
  // charge_held). The segment may then vanish from List. OK for a segment that is already gone.
  virtual Status ReleaseCharge(const std::string& trial, int segment) = 0;
};

}  // namespace bsw

#endif  // BSW_PORTS_TRIAL_BACKEND_H_
