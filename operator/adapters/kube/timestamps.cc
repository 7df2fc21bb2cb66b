#include "operator/adapters/kube/timestamps.h"

#include "operator/core/rfc3339.h"

namespace bsw::kube {

std::string FormatTime(std::chrono::system_clock::time_point time, bool microseconds) {
  return Rfc3339(std::chrono::duration<double>(time.time_since_epoch()).count(), microseconds);
}

}  // namespace bsw::kube
