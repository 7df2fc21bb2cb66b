#include "operator/core/rfc3339.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>

namespace bsw {

std::string Rfc3339(double unix_seconds, bool microseconds) {
  const auto total_micros = static_cast<int64_t>(std::floor(unix_seconds * 1e6 + 0.5));
  int64_t seconds = total_micros / 1'000'000;
  int64_t micros = total_micros % 1'000'000;
  if (micros < 0) {
    micros += 1'000'000;
    --seconds;
  }
  const auto t = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buffer[48];
  size_t length = std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%S", &utc);
  if (microseconds) {
    std::snprintf(buffer + length, sizeof(buffer) - length, ".%06lldZ",
                  static_cast<long long>(micros));
  } else {
    std::snprintf(buffer + length, sizeof(buffer) - length, "Z");
  }
  return buffer;
}

std::optional<double> ParseRfc3339(const std::string& text) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6 ||
      text.empty() || text.back() != 'Z' || consumed != 19) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm));
}

}  // namespace bsw
