#ifndef BSW_ADAPTERS_SYSTEM_CLOCK_H_
#define BSW_ADAPTERS_SYSTEM_CLOCK_H_

#include <chrono>

#include "operator/ports/clock.h"

namespace bsw {

// The real wall clock.
class SystemClock : public Clock {
 public:
  double NowUnixSeconds() const override {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace bsw

#endif  // BSW_ADAPTERS_SYSTEM_CLOCK_H_
