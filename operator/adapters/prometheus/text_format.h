#ifndef BSW_ADAPTERS_PROMETHEUS_TEXT_FORMAT_H_
#define BSW_ADAPTERS_PROMETHEUS_TEXT_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
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

// Receives each sample of an exposition that passes the caps, in the order they appear.
using SampleSink = std::function<void(Sample sample)>;

// Parses a text exposition as it arrives, a piece at a time, handing each sample to a sink: it
// holds at most one partial line (kMaxLineBytes) and counts label sets by a 64-bit hash of the
// metric name, never the text or the samples.
// Blank lines and comments are skipped; `# HELP` and `# TYPE` lines are checked (a valid metric
// name, a known type) but not returned. Any malformed line makes the whole parse fail with an
// InvalidArgument error that names the 1-based line number; a line, sample count, label set count
// or label count over its cap above makes it fail with ResourceExhausted naming the cap and the
// line. Error messages quote at most a short excerpt of the text. The samples of a parse that
// fails are those before the failing line. Not thread-safe.
class TextFormatParser {
 public:
  explicit TextFormatParser(SampleSink sink);

  // Parses the complete lines that `piece` ends and keeps the partial line after them.
  // REQUIRES: no earlier call failed.
  [[nodiscard]] Status Feed(std::string_view piece);

  // Parses the last line, when the exposition does not end with a newline.
  // REQUIRES: no earlier call failed.
  [[nodiscard]] Status Finish();

 private:
  Status ParseLine(std::string_view line);
  // Appends `piece` to the partial line, unless that makes it longer than kMaxLineBytes.
  Status KeepPartial(std::string_view piece);
  Status OverCap(int line_number, const std::string& what) const;

  SampleSink sink_;
  std::string partial_line_;  // at most kMaxLineBytes
  int line_number_ = 0;       // of the last complete line
  size_t samples_ = 0;
  std::unordered_map<size_t, size_t> label_sets_;  // by the hash of the metric name
};

// Parses a whole text exposition into its samples, in the order they appear, as
// TextFormatParser does.
[[nodiscard]] StatusOr<std::vector<Sample>> ParseTextFormat(std::string_view text);

// `text` as an error message may quote it: at most 40 bytes of it, marked when cut.
[[nodiscard]] std::string Excerpt(std::string_view text);

}  // namespace bsw::prom

#endif  // BSW_ADAPTERS_PROMETHEUS_TEXT_FORMAT_H_
