#ifndef BSW_CORE_SEGMENT_H_
#define BSW_CORE_SEGMENT_H_

#include <optional>
#include <string>

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

// Devices a segment is charged for: its GPUs, and one for a CPU-only segment.
inline int ChargedDevices(int gpus) { return gpus > 0 ? gpus : 1; }

}  // namespace bsw

#endif  // BSW_CORE_SEGMENT_H_
