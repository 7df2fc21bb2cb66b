#ifndef BSW_ADAPTERS_SYSTEM_CLOCK_H_
#define BSW_ADAPTERS_SYSTEM_CLOCK_H_

#include <chrono>
#include <cmath>

#include "operator/ports/clock.h"

namespace bsw {

// The real clocks: std::chrono::system_clock for the wall clock, steady_clock for the rest.
class SystemClock final : public Clock {
 public:
  using Clock::WaitUntil;

  // The one instance adapters fall back to when they are given no clock.
  static const SystemClock& Get() {
    static const SystemClock clock;
    return clock;
  }

  double NowUnixSeconds() const override {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  double MonotonicSeconds() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 double deadline_monotonic_seconds) const override {
    if (std::isinf(deadline_monotonic_seconds)) {
      cv.wait(lock);
      return;
    }
    auto since_epoch = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(deadline_monotonic_seconds));
    cv.wait_until(lock, std::chrono::steady_clock::time_point(since_epoch));
  }
};

}  // namespace bsw

#endif  // BSW_ADAPTERS_SYSTEM_CLOCK_H_
