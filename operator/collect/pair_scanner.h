#ifndef BSW_OPERATOR_COLLECT_PAIR_SCANNER_H_
#define BSW_OPERATOR_COLLECT_PAIR_SCANNER_H_

// Finding `name=value` pairs in one line a training script printed or wrote. The line is user
// code's output: every scanner here takes any bytes and finds nothing rather than failing.

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace bsw::collect {

// Katib's default metricsFormat: the first group is the name, the second the value.
inline constexpr char kDefaultFilter[] = R"(([\w|-]+)\s*=\s*([+-]?\d*(\.\d+)?([Ee][+-]?\d+)?))";

// One pair as the line spelt it; the value is not checked yet.
struct RawPair {
  std::string name;
  std::string value;
  bool operator==(const RawPair&) const = default;
};

// The pairs kDefaultFilter finds along `line`, as std::regex_search iteration finds them, in time
// linear in the line and constant stack. std::regex recurses once a character and backtracks
// quadratically: a 64 KiB token takes about a minute, or overflows the stack.
[[nodiscard]] std::vector<RawPair> ScanDefaultFilter(std::string_view line);

// The pairs the first two groups of `filter` find along `line` (std::regex_search iteration).
// REQUIRES: filter.mark_count() >= 2, and a short line (see kMaxFilteredLineBytes).
[[nodiscard]] std::vector<RawPair> ScanFilter(const std::regex& filter, std::string_view line);

// The members of a one-line JSON object whose value is a number, or a string holding one; nested
// objects, arrays, booleans and null are not pairs. Nothing when the line is not a JSON object.
[[nodiscard]] std::vector<RawPair> ScanJsonObject(std::string_view line);

// The value of `text` when it is all one finite number (a leading '+' allowed).
[[nodiscard]] std::optional<double> FiniteValue(std::string_view text);

// True for a metric name this collector keeps: at most 128 bytes of [A-Za-z_:][A-Za-z0-9_:.-]*.
[[nodiscard]] bool IsMetricName(std::string_view name);

}  // namespace bsw::collect

#endif  // BSW_OPERATOR_COLLECT_PAIR_SCANNER_H_
