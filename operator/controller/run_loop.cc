#include "operator/controller/run_loop.h"

#include <algorithm>
#include <utility>
#include <variant>

namespace bsw {

StatusOr<RunEnd> RunLoop::Run() {
  backoff_seconds_ = options_.poll_seconds;
  while (!signals_->Interrupted()) {
    StatusOr<bool> done = Turn();
    if (!done.ok()) return done.status();
    if (*done) break;
  }
  if (!signals_->Interrupted()) return RunEnd::kDone;
  Stop();
  return RunEnd::kInterrupted;
}

StatusOr<bool> RunLoop::Turn() {
  StatusOr<Step> step = controller_->Pass();
  if (!step.ok()) {
    if (Status s = Retry(step.status()); !s.ok()) return s;
    return false;
  }
  if (std::exchange(disk_full_, false)) output_->DiskBack();
  backoff_seconds_ = options_.poll_seconds;
  output_->Passed(clock_->NowUnixSeconds());
  if (StatusOr<bool> done = controller_->Done(); done.ok() && *done) {
    Finish();
    return true;
  }
  // A pass that recorded a segment's end left its trial paused (or done) only once journaled:
  // the next pass may resume it, so it comes at once rather than after the poll (once in a row).
  passed_again_ =
      !passed_again_ && std::any_of(step->events.begin(), step->events.end(), [](const Event& e) {
        return std::holds_alternative<event::SegmentEnded>(e);
      });
  // Until the next poll, or less when a child exits: a segment's process exits as soon as its
  // trainer has, so the next pass refills the slot at once.
  if (!passed_again_) signals_->Wait(options_.poll_seconds);
  return false;
}

Status RunLoop::Retry(const Status& error) {
  if (error.code() == StatusCode::kFailedPrecondition) return error;
  // A full disk: the sweep waits for space, saying so once, without backing off further.
  if (options_.disk_full && options_.disk_full(error)) {
    if (!std::exchange(disk_full_, true)) output_->DiskFull(error);
    clock_->SleepFor(std::min(options_.max_disk_full_wait_seconds, backoff_seconds_));
    return OkStatus();
  }
  output_->PassFailed(error, backoff_seconds_);
  clock_->SleepFor(backoff_seconds_);
  backoff_seconds_ = std::min(options_.max_backoff_seconds, backoff_seconds_ * 2);
  return OkStatus();
}

void RunLoop::Finish() {
  if (StatusOr<Step> last = controller_->Pass(); !last.ok()) output_->Warning(last.status());
}

void RunLoop::Stop() {
  output_->Stopping();
  if (Status s = controller_->Interrupt(); !s.ok()) output_->Warning(s);
  const double deadline = clock_->MonotonicSeconds() + controller_->model().spec().grace_seconds +
                          options_.stop_slack_seconds;
  while (clock_->MonotonicSeconds() < deadline) {
    StatusOr<bool> ended = controller_->AllSegmentsEnded();
    if (ended.ok() && *ended) break;
    clock_->SleepFor(options_.stop_check_seconds);
  }
  if (Status s = controller_->Refresh(); !s.ok()) {
    output_->Warning(s);
  } else if (Status settled = controller_->SettleGate(); !settled.ok()) {
    output_->Warning(settled);
  }
}

}  // namespace bsw
