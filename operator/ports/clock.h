#ifndef BSW_PORTS_CLOCK_H_
#define BSW_PORTS_CLOCK_H_

namespace bsw {

// Wall-clock time, injected so that the controller can be driven by a simulated clock in tests.
class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since the Unix epoch.
  virtual double NowUnixSeconds() const = 0;
};

}  // namespace bsw

#endif  // BSW_PORTS_CLOCK_H_
