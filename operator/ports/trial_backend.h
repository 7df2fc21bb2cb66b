#ifndef BSW_PORTS_TRIAL_BACKEND_H_
#define BSW_PORTS_TRIAL_BACKEND_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "operator/core/segment.h"

namespace bsw {

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
