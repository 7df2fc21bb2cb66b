#include "operator/adapters/kube/timestamps.h"

#include <cstdio>
#include <ctime>

namespace bsw::kube {

std::string FormatTime(std::chrono::system_clock::time_point time, bool microseconds) {
  auto since_epoch = std::chrono::duration_cast<std::chrono::microseconds>(time.time_since_epoch());
  std::time_t seconds = static_cast<std::time_t>(since_epoch.count() / 1000000);
  long micros = static_cast<long>(since_epoch.count() % 1000000);
  if (micros < 0) {
    micros += 1000000;
    --seconds;
  }
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[40];
  size_t length = std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%S", &utc);
  if (microseconds) {
    std::snprintf(buffer + length, sizeof(buffer) - length, ".%06ldZ", micros);
  } else {
    std::snprintf(buffer + length, sizeof(buffer) - length, "Z");
  }
  return buffer;
}

}  // namespace bsw::kube
