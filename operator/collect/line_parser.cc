#include "operator/collect/line_parser.h"

#include <algorithm>
#include <utility>

#include "operator/collect/pair_scanner.h"

namespace bsw::collect {

std::optional<LineParser> LineParser::Create(ParserOptions options, std::string* error) {
  if (options.filter.empty()) return LineParser(std::move(options), std::nullopt);
  std::regex filter;
  try {
    filter = std::regex(options.filter);
  } catch (const std::regex_error& e) {
    *error = "--filter=" + options.filter + " is not a regular expression: " + e.what();
    return std::nullopt;
  }
  if (filter.mark_count() < 2) {
    *error = "--filter=" + options.filter +
             " needs two groups, the name's and the value's, and has " +
             std::to_string(filter.mark_count());
    return std::nullopt;
  }
  return LineParser(std::move(options), std::move(filter));
}

LineParser::LineParser(ParserOptions options, std::optional<std::regex> filter)
    : options_(std::move(options)), filter_(std::move(filter)) {}

size_t LineParser::max_line_bytes() const {
  return filter_ ? kMaxFilteredLineBytes : kMaxLineBytes;
}

LineOutcome LineParser::Feed(std::string_view line) {
  LineOutcome outcome;
  if (line.size() > max_line_bytes()) return outcome;
  std::vector<Pair> pairs = ValidPairs(line);
  std::optional<double> resource = ResourceOf(pairs);
  if (!resource) return outcome;
  for (const Pair& pair : pairs) {
    if (pair.name != options_.resource_key) Record(pair, *resource, &outcome);
  }
  return outcome;
}

std::vector<LineParser::Pair> LineParser::ValidPairs(std::string_view line) const {
  std::vector<RawPair> raw = options_.format == LineFormat::kJson ? ScanJsonObject(line)
                             : filter_                            ? ScanFilter(*filter_, line)
                                                                  : ScanDefaultFilter(line);
  std::vector<Pair> pairs;
  for (RawPair& pair : raw) {
    std::optional<double> value = FiniteValue(pair.value);
    if (value && IsMetricName(pair.name)) pairs.push_back({std::move(pair.name), *value});
  }
  return pairs;
}

std::optional<double> LineParser::ResourceOf(const std::vector<Pair>& pairs) {
  auto named = [&pairs](const std::string& name) {
    return std::find_if(pairs.begin(), pairs.end(),
                        [&name](const Pair& pair) { return pair.name == name; });
  };
  if (!options_.resource_key.empty()) {
    auto key = named(options_.resource_key);
    if (key == pairs.end() || key->value < 0) return std::nullopt;
    return key->value;
  }
  if (named(options_.objective) != pairs.end()) ++objective_lines_;
  return objective_lines_;
}

void LineParser::Record(const Pair& pair, double resource, LineOutcome* outcome) {
  resource_completed_ = std::max(resource_completed_, resource);
  SeriesKey key{pair.name, resource};
  if (values_.contains(key)) return;
  if (values_.size() >= options_.max_values) {
    ++outcome->dropped;
    return;
  }
  values_.emplace(std::move(key), pair.value);
  ++outcome->kept;
}

}  // namespace bsw::collect
