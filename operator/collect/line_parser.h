#ifndef BSW_OPERATOR_COLLECT_LINE_PARSER_H_
#define BSW_OPERATOR_COLLECT_LINE_PARSER_H_

// Turns the lines a training script prints into values of the trainer contract's objective
// series, each at a resource. Pure: the caller reads the lines and serves the values.

#include <compare>
#include <cstddef>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <string_view>

namespace bsw::collect {

// A line longer than this is not parsed (it is still passed through).
inline constexpr size_t kMaxLineBytes = 64 * 1024;
// The same with --filter: std::regex needs stack and time that grow with the line (pair_scanner.h).
inline constexpr size_t kMaxFilteredLineBytes = 4 * 1024;
// Values kept per trial; later ones are dropped.
inline constexpr size_t kMaxValues = 10000;

enum class LineFormat { kText, kJson };

struct ParserOptions {
  LineFormat format = LineFormat::kText;
  std::string filter;  // a regular expression; empty: kDefaultFilter. Text lines only.
  std::string objective;
  // The name on a line that gives the resource of the line's other values. Empty: a line's values
  // are at the number of lines so far that carried a valid objective value.
  std::string resource_key;
  size_t max_values = kMaxValues;
};

// Where one value was evaluated: a metric at a resource.
struct SeriesKey {
  std::string metric;
  double resource = 0;
  auto operator<=>(const SeriesKey&) const = default;
};

// What one line did.
struct LineOutcome {
  int kept = 0;     // values recorded for the first time
  int dropped = 0;  // values that arrived after kMaxValues were kept
};

class LineParser {
 public:
  // The parser, or nothing with *error naming --filter when the filter is not a regular expression
  // with at least two groups.
  [[nodiscard]] static std::optional<LineParser> Create(ParserOptions options, std::string* error);

  // Records the values of one line (without its newline). Names that are not metric names and
  // values that are not finite numbers are skipped. With a resource key, a line without a finite
  // key >= 0 records nothing. The first value at a (metric, resource) wins.
  LineOutcome Feed(std::string_view line);

  // Lines longer than this record nothing.
  [[nodiscard]] size_t max_line_bytes() const;

  [[nodiscard]] const std::map<SeriesKey, double>& values() const { return values_; }

  // The largest resource a value arrived at, kept or dropped; 0 before any.
  [[nodiscard]] double resource_completed() const { return resource_completed_; }

 private:
  struct Pair {
    std::string name;
    double value;
  };

  LineParser(ParserOptions options, std::optional<std::regex> filter);
  std::vector<Pair> ValidPairs(std::string_view line) const;
  std::optional<double> ResourceOf(const std::vector<Pair>& pairs);
  void Record(const Pair& pair, double resource, LineOutcome* outcome);

  ParserOptions options_;
  std::optional<std::regex> filter_;
  std::map<SeriesKey, double> values_;
  double resource_completed_ = 0;
  double objective_lines_ = 0;
};

}  // namespace bsw::collect

#endif  // BSW_OPERATOR_COLLECT_LINE_PARSER_H_
