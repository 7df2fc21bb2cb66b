#ifndef BSW_ADAPTERS_PROMETHEUS_TEXT_FORMAT_H_
#define BSW_ADAPTERS_PROMETHEUS_TEXT_FORMAT_H_

#include <cstddef>
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

// Caps on an exposition, which comes from untrusted trainer code. Prometheus's own scrapes of
// trial pods have the same sample and label caps (the chart's sample_limit and label_limit).
inline constexpr size_t kMaxLineBytes = size_t{64} << 10;
inline constexpr size_t kMaxSamples = 10'000;
inline constexpr size_t kMaxLabelSetsPerMetric = 1'000;  // samples of one metric name
inline constexpr size_t kMaxLabelsPerSample = 64;

// Parses a text exposition into its samples, in the order they appear.
// Blank lines and comments are skipped; `# HELP` and `# TYPE` lines are checked (a valid metric
// name, a known type) but not returned. Any malformed line makes the whole parse fail with an
// InvalidArgument error that names the 1-based line number; a line, sample count, label set count
// or label count over its cap above makes it fail with ResourceExhausted naming the cap and the
// line. Error messages quote at most a short excerpt of the text.
[[nodiscard]] StatusOr<std::vector<Sample>> ParseTextFormat(std::string_view text);

// `text` as an error message may quote it: at most 40 bytes of it, marked when cut.
[[nodiscard]] std::string Excerpt(std::string_view text);

}  // namespace bsw::prom

#endif  // BSW_ADAPTERS_PROMETHEUS_TEXT_FORMAT_H_
