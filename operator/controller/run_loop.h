#ifndef BSW_CONTROLLER_RUN_LOOP_H_
#define BSW_CONTROLLER_RUN_LOOP_H_

#include <functional>

#include "base/status.h"
#include "operator/controller/sweep_controller.h"
#include "operator/ports/clock.h"

namespace bsw {

// What a local run waits on besides its clock: its trials' processes and the user's Ctrl-C.
class RunSignals {
 public:
  virtual ~RunSignals() = default;

  // Whether the user asked the run to stop (SIGINT, SIGTERM).
  virtual bool Interrupted() const = 0;

  // Waits up to `seconds`, or less when a segment's process exits or the run is interrupted.
  virtual void Wait(double seconds) = 0;
};

// What a local run tells its user while it runs; the command line prints it.
class RunOutput {
 public:
  virtual ~RunOutput() = default;

  // After each pass that succeeded, at `now` (Unix seconds).
  virtual void Passed(double now) = 0;
  // A pass failed; the next comes after `retry_seconds`.
  virtual void PassFailed(const Status& error, double retry_seconds) = 0;
  // A pass failed because the disk of the state is full: once for a row of such passes, and
  // DiskBack once a pass succeeds again.
  virtual void DiskFull(const Status& error) = 0;
  virtual void DiskBack() = 0;
  // Interrupted: the running segments are being stopped.
  virtual void Stopping() = 0;
  // A step after the sweep's passes (the last pass, the stop, the last look) failed; the run
  // ends regardless.
  virtual void Warning(const Status& error) = 0;
};

struct RunLoopOptions {
  double poll_seconds = 0.25;  // between passes while nothing happens
  double max_backoff_seconds = 30;
  double max_disk_full_wait_seconds = 5;  // between passes while the disk is full
  double stop_check_seconds = 0.2;        // between checks that interrupted segments ended
  // How long past the sweep's grace period an interrupted run waits for its segments to end.
  double stop_slack_seconds = 5;
  // Whether a pass failed because the disk of the state is full (the backend's and the event
  // log's own test); none is when empty.
  std::function<bool(const Status&)> disk_full;
};

enum class RunEnd { kDone, kInterrupted };

// The local run's loop around SweepController::Pass: passes until the sweep is done, backing off
// while passes fail; on an interrupt, stops the running segments and settles the budget gate.
class RunLoop {
 public:
  // REQUIRES: `controller` has recovered; every argument outlives this.
  RunLoop(SweepController* controller, const Clock* clock, RunSignals* signals, RunOutput* output,
          RunLoopOptions options = {})
      : controller_(controller),
        clock_(clock),
        signals_(signals),
        output_(output),
        options_(options) {}

  // Runs until the sweep is done (finished, every segment ended, and one more pass journaled
  // their ends) or interrupted. A pass failing with FailedPrecondition ends it with that error:
  // nothing heals it but the user. Any other failure is retried, after a backoff that doubles
  // from the poll interval up to max_backoff_seconds; a full disk is waited out.
  StatusOr<RunEnd> Run();

 private:
  // One pass and the wait after it; true once the sweep is done.
  StatusOr<bool> Turn();
  // Waits after a failed pass; FailedPrecondition is passed up.
  Status Retry(const Status& error);
  // The sweep is done: one more pass journals the ends of the segments that ended since the
  // last one listed them, so that the summary counts no trial running.
  void Finish();
  // Stops the running segments, waits for them (the grace period and some), takes one last look
  // and settles the gate, so that the summary charges the seconds they ran.
  void Stop();

  SweepController* controller_;
  const Clock* clock_;
  RunSignals* signals_;
  RunOutput* output_;
  RunLoopOptions options_;
  double backoff_seconds_ = 0;
  bool passed_again_ = false;
  bool disk_full_ = false;
};

}  // namespace bsw

#endif  // BSW_CONTROLLER_RUN_LOOP_H_
