#ifndef BSW_ADAPTERS_PROMETHEUS_TEXT_FORMAT_H_
#define BSW_ADAPTERS_PROMETHEUS_TEXT_FORMAT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace bsw::prom {

// One sample line of the Prometheus text exposition format (version 0.0.4).
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;  // label values unescaped
  double value = 0;                           // NaN, +Inf and -Inf are kept as such
  std::optional<std::int64_t> timestamp_ms;
};

// Parses a text exposition into its samples, in the order they appear.
// Blank lines and comments are skipped; `# HELP` and `# TYPE` lines are checked (a valid metric
// name, a known type) but not returned. Any malformed line makes the whole parse fail with an
// InvalidArgument error that names the 1-based line number.
[[nodiscard]] StatusOr<std::vector<Sample>> ParseTextFormat(std::string_view text);

}  // namespace bsw::prom

#endif  // BSW_ADAPTERS_PROMETHEUS_TEXT_FORMAT_H_
