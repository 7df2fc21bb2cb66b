#include "operator/core/rfc3339.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string_view>

namespace bsw {
namespace {

// "2024-05-01T12:00:00": the part of every RFC 3339 time before its fraction and offset.
constexpr size_t kDateTimeLength = 19;

struct DateTime {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
};

// The number the `count` digits at `at` write; nullopt unless each of them is a digit.
std::optional<int> DigitsAt(std::string_view text, size_t at, size_t count) {
  if (at + count > text.size()) return std::nullopt;
  int value = 0;
  for (char c : text.substr(at, count)) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// Whether the separators of "yyyy-mm-ddThh:mm:ss" are where they belong at the start of `text`;
// RFC 3339 also allows "t" or a space between the date and the time.
bool HasDateTimeSeparators(std::string_view text) {
  return text.size() >= kDateTimeLength && text[4] == '-' && text[7] == '-' && text[13] == ':' &&
         text[16] == ':' && std::string_view("Tt ").find(text[10]) != std::string_view::npos;
}

// Whether each field is in range; second 60 is a leap second. The day is checked against its
// month later.
bool InRange(const DateTime& at) {
  return at.month >= 1 && at.month <= 12 && at.day >= 1 && at.day <= 31 && at.hour <= 23 &&
         at.minute <= 59 && at.second <= 60;
}

// "yyyy-mm-ddThh:mm:ss" at the start of `text`.
std::optional<DateTime> ParseDateTime(std::string_view text) {
  if (!HasDateTimeSeparators(text)) return std::nullopt;
  std::optional<int> fields[] = {DigitsAt(text, 0, 4),  DigitsAt(text, 5, 2),
                                 DigitsAt(text, 8, 2),  DigitsAt(text, 11, 2),
                                 DigitsAt(text, 14, 2), DigitsAt(text, 17, 2)};
  for (const std::optional<int>& field : fields) {
    if (!field) return std::nullopt;
  }
  DateTime at{*fields[0], *fields[1], *fields[2], *fields[3], *fields[4], *fields[5]};
  if (!InRange(at)) return std::nullopt;
  return at;
}

// The fractional seconds at `next` (".123456"), 0 when there are none; moves `next` past them.
// nullopt for a "." without digits.
std::optional<double> ParseFraction(std::string_view text, size_t& next) {
  if (next >= text.size() || text[next] != '.') return 0.0;
  const size_t start = ++next;
  double fraction = 0;
  double scale = 0.1;
  for (; next < text.size() && text[next] >= '0' && text[next] <= '9'; ++next) {
    fraction += (text[next] - '0') * scale;
    scale /= 10;
  }
  if (next == start) return std::nullopt;
  return fraction;
}

// The seconds east of UTC that `zone` ("Z", "+02:00", "-00:30") writes; nullopt for anything else.
std::optional<int> ParseOffset(std::string_view zone) {
  if (zone == "Z" || zone == "z") return 0;
  if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || zone[3] != ':') {
    return std::nullopt;
  }
  std::optional<int> hours = DigitsAt(zone, 1, 2);
  std::optional<int> minutes = DigitsAt(zone, 4, 2);
  if (!hours || !minutes) return std::nullopt;
  return (zone[0] == '+' ? 1 : -1) * (*hours * 3600 + *minutes * 60);
}

}  // namespace

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

std::optional<double> ParseRfc3339(const std::string& rfc3339) {
  const std::string_view text = rfc3339;
  std::optional<DateTime> at = ParseDateTime(text);
  if (!at) return std::nullopt;
  size_t next = kDateTimeLength;
  std::optional<double> fraction = ParseFraction(text, next);
  if (!fraction) return std::nullopt;
  std::optional<int> offset_seconds = ParseOffset(text.substr(next));
  if (!offset_seconds) return std::nullopt;
  using namespace std::chrono;
  const year_month_day date{year(at->year), month(static_cast<unsigned>(at->month)),
                            day(static_cast<unsigned>(at->day))};
  if (!date.ok()) return std::nullopt;
  const double days = static_cast<double>(sys_days(date).time_since_epoch().count());
  return days * 86400 + at->hour * 3600 + at->minute * 60 + at->second + *fraction -
         *offset_seconds;
}

}  // namespace bsw
