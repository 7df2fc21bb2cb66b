#ifndef BSW_CORE_GPU_HOURS_H_
#define BSW_CORE_GPU_HOURS_H_

#include <cmath>

namespace bsw {

// Device-seconds as GPU-hours for people (statuses), rounded to `decimals` places: figures that
// moved by less do not change the object, so status writes stay quiet between passes.
inline double RoundedGpuHours(double device_seconds, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(device_seconds * scale / 3600) / scale;
}

}  // namespace bsw

#endif  // BSW_CORE_GPU_HOURS_H_
