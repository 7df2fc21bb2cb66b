#ifndef BSW_PORTS_CLOCK_H_
#define BSW_PORTS_CLOCK_H_

#include <condition_variable>
#include <functional>
#include <limits>
#include <mutex>

namespace bsw {

// Time, injected into the controller and every adapter, so that tests drive it with a simulated
// clock (tests/mocks/fake_clock.h) instead of sleeping. Thread-safe.
class Clock {
 public:
  // A deadline that never passes.
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  virtual ~Clock() = default;

  // Wall-clock seconds since the Unix epoch: for timestamps. May jump.
  virtual double NowUnixSeconds() const = 0;
  // Seconds on a monotonic scale with an arbitrary origin: for intervals, delays and deadlines.
  virtual double MonotonicSeconds() const = 0;

  // Blocks on `cv` until it is notified, MonotonicSeconds() reaches `deadline_monotonic_seconds`,
  // or it wakes spuriously, as std::condition_variable::wait_until. A simulated clock also wakes
  // it when its time is advanced.
  // REQUIRES: `lock` holds the mutex that notifiers of `cv` hold when they change what the
  // waiter is waiting for.
  virtual void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         double deadline_monotonic_seconds) const = 0;

  // Waits as above until `ready()` holds (checked with `lock` held) or the deadline passes;
  // returns ready().
  bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 double deadline_monotonic_seconds, const std::function<bool()>& ready) const {
    while (!ready()) {
      if (MonotonicSeconds() >= deadline_monotonic_seconds) return false;
      WaitUntil(cv, lock, deadline_monotonic_seconds);
    }
    return true;
  }

  // Blocks for `seconds` of this clock's time (no-op for seconds <= 0).
  void SleepFor(double seconds) const {
    std::mutex mu;
    std::condition_variable never_notified;
    std::unique_lock<std::mutex> lock(mu);
    const double deadline = MonotonicSeconds() + seconds;
    WaitUntil(never_notified, lock, deadline, [] { return false; });
  }
};

}  // namespace bsw

#endif  // BSW_PORTS_CLOCK_H_
