#ifndef BSW_TESTS_MOCKS_FAKE_CLOCK_H_
#define BSW_TESTS_MOCKS_FAKE_CLOCK_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <vector>

#include "operator/ports/clock.h"

namespace bsw {

// A simulated clock. Time moves only when a test calls Advance, which wakes every
// thread blocked in WaitUntil so that it re-checks its deadline; no test sleeps for real.
//
// With `advance_on_wait`, a timed wait instead moves the clock to its deadline at once and
// returns: for code that waits on the test's own thread (a client's retry backoff). Each such
// wait is recorded in waits().
//
// Monotonic time starts at 0 and wall time at `unix_seconds`; both move together.
class FakeClock final : public Clock {
 public:
  using Clock::WaitUntil;

  explicit FakeClock(double unix_seconds = 1'700'000'000, bool advance_on_wait = false)
      : unix_offset_(unix_seconds), advance_on_wait_(advance_on_wait) {}

  double NowUnixSeconds() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return unix_offset_ + monotonic_;
  }
  double MonotonicSeconds() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return monotonic_;
  }

  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 double deadline_monotonic_seconds) const override {
    if (advance_on_wait_ && deadline_monotonic_seconds != kNever) {
      std::lock_guard<std::mutex> clock_lock(mu_);
      if (deadline_monotonic_seconds > monotonic_) {
        waits_.push_back(deadline_monotonic_seconds - monotonic_);
        monotonic_ = deadline_monotonic_seconds;
      }
      return;
    }
    Waiter self{&cv, lock.mutex(), 0};
    {
      std::lock_guard<std::mutex> clock_lock(mu_);
      self.epoch = epoch_;
      waiters_.insert(&self);
      if (monotonic_ >= deadline_monotonic_seconds) {
        waiters_.erase(&self);
        return;
      }
    }
    waiters_changed_.notify_all();
    // Advance changes the time before it takes `lock` to notify, so this wait cannot miss it.
    cv.wait(lock);
    // An Advance may be about to notify through `self`: leave only once none is. `lock` is let
    // go meanwhile, because that Advance takes it.
    lock.unlock();
    {
      std::unique_lock<std::mutex> clock_lock(mu_);
      waiters_.erase(&self);
      notified_.wait(clock_lock, [this] { return notifying_ == 0; });
    }
    waiters_changed_.notify_all();
    lock.lock();
  }

  // Moves both clocks forward by `seconds` and wakes every waiter.
  void Advance(double seconds) {
    std::vector<Waiter*> waiters;
    {
      std::lock_guard<std::mutex> lock(mu_);
      monotonic_ += seconds;
      ++epoch_;
      waiters.assign(waiters_.begin(), waiters_.end());
      ++notifying_;
    }
    for (Waiter* waiter : waiters) {
      std::lock_guard<std::mutex> lock(*waiter->mu);
      waiter->cv->notify_all();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      --notifying_;
    }
    notified_.notify_all();
  }

  // Blocks until at least `count` threads have gone to wait on this clock since the last Advance
  // (a retired thread counts as waiting): the way a test learns that the code under test has
  // seen the current time and gone back to sleep. False when that did not happen within
  // `real_timeout_seconds`, a bound only a failing test reaches.
  [[nodiscard]] bool AwaitWaiters(size_t count, double real_timeout_seconds = 10) const {
    std::unique_lock<std::mutex> lock(mu_);
    return waiters_changed_.wait_for(lock, std::chrono::duration<double>(real_timeout_seconds),
                                     [&] {
                                       size_t current = retired_;
                                       for (const Waiter* w : waiters_)
                                         current += w->epoch == epoch_;
                                       return current >= count;
                                     });
  }

  // Says that the calling thread will not wait on this clock again (it is about to end).
  void Retire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++retired_;
    }
    waiters_changed_.notify_all();
  }

  // The timed waits an advance_on_wait clock skipped, in seconds, in order.
  std::vector<double> waits() const {
    std::lock_guard<std::mutex> lock(mu_);
    return waits_;
  }

 private:
  struct Waiter {
    std::condition_variable* cv;
    std::mutex* mu;
    uint64_t epoch;  // the Advance count when it started waiting
  };

  const double unix_offset_;
  const bool advance_on_wait_;
  mutable std::mutex mu_;
  mutable std::condition_variable notified_;
  mutable std::condition_variable waiters_changed_;
  mutable double monotonic_ = 0;
  mutable std::set<Waiter*> waiters_;
  mutable int notifying_ = 0;
  uint64_t epoch_ = 0;
  size_t retired_ = 0;
  mutable std::vector<double> waits_;
};

}  // namespace bsw

#endif  // BSW_TESTS_MOCKS_FAKE_CLOCK_H_
