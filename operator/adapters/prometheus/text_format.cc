#include "operator/adapters/prometheus/text_format.h"

#include <charconv>
#include <cstdio>
#include <map>
#include <string>
#include <system_error>
#include <utility>

namespace bsw::prom {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

// Reads one line from left to right. Every Read* leaves the cursor after what it consumed and
// returns an error message (empty on success) so that the caller can prefix the line number.
class LineCursor {
 public:
  explicit LineCursor(std::string_view line) : rest_(line) {}

  bool AtEnd() const { return rest_.empty(); }
  char Peek() const { return rest_.front(); }
  void Advance() { rest_.remove_prefix(1); }
  void SkipBlanks() {
    while (!rest_.empty() && IsBlank(rest_.front())) rest_.remove_prefix(1);
  }
  bool Consume(char c) {
    if (rest_.empty() || rest_.front() != c) return false;
    rest_.remove_prefix(1);
    return true;
  }

  // A metric name: [a-zA-Z_:][a-zA-Z0-9_:]*, or a label name when `allow_colon` is false.
  std::string ReadName(bool allow_colon) {
    size_t n = 0;
    auto ok = [&](char c, bool first) {
      if (allow_colon && c == ':') return true;
      return first ? IsNameStart(c) : IsNameChar(c);
    };
    while (n < rest_.size() && ok(rest_[n], n == 0)) ++n;
    std::string name(rest_.substr(0, n));
    rest_.remove_prefix(n);
    return name;
  }

  // The text up to the next blank or the end of the line.
  std::string_view ReadToken() {
    size_t n = 0;
    while (n < rest_.size() && !IsBlank(rest_[n])) ++n;
    std::string_view token = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return token;
  }

  // A double-quoted label value with the escapes \\, \" and \n. The opening quote is consumed.
  std::string ReadQuotedValue(std::string* value) {
    if (!Consume('"')) return "expected '\"' to open a label value";
    while (!rest_.empty()) {
      char c = rest_.front();
      rest_.remove_prefix(1);
      if (c == '"') return "";
      if (c != '\\') {
        value->push_back(c);
        continue;
      }
      if (rest_.empty()) break;
      char escaped = rest_.front();
      rest_.remove_prefix(1);
      switch (escaped) {
        case '\\':
          value->push_back('\\');
          break;
        case '"':
          value->push_back('"');
          break;
        case 'n':
          value->push_back('\n');
          break;
        default:
          return std::string("invalid escape '\\") + escaped + "' in a label value";
      }
    }
    return "unterminated label value";
  }

 private:
  std::string_view rest_;
};

// Parses a sample value: a float as Go's strconv.ParseFloat reads it, including NaN and +/-Inf
// in any letter case.
std::optional<double> ParseValue(std::string_view token) {
  if (!token.empty() && token.front() == '+') {
    token.remove_prefix(1);
    if (!token.empty() && token.front() == '-') return std::nullopt;
  }
  if (token.empty()) return std::nullopt;
  double value = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return value;
}

std::string ParseMetadata(LineCursor& cursor) {
  cursor.SkipBlanks();
  std::string_view keyword = cursor.ReadToken();
  if (keyword != "HELP" && keyword != "TYPE") return "";  // an ordinary comment
  cursor.SkipBlanks();
  std::string name = cursor.ReadName(/*allow_colon=*/true);
  if (name.empty()) return "expected a metric name after # " + std::string(keyword);
  if (!cursor.AtEnd() && !IsBlank(cursor.Peek())) {
    return "invalid character in metric name after # " + std::string(keyword);
  }
  if (keyword == "HELP") return "";  // the docstring is free text
  cursor.SkipBlanks();
  std::string_view type = cursor.ReadToken();
  cursor.SkipBlanks();
  if (type != "counter" && type != "gauge" && type != "histogram" && type != "summary" &&
      type != "untyped") {
    return "unknown metric type '" + Excerpt(type) + "'";
  }
  if (!cursor.AtEnd()) return "unexpected text after the metric type";
  return "";
}

std::string ParseLabels(LineCursor& cursor, std::map<std::string, std::string>* labels) {
  // The opening brace is consumed. A trailing comma before '}' is allowed.
  while (true) {
    cursor.SkipBlanks();
    if (cursor.Consume('}')) return "";
    std::string label = cursor.ReadName(/*allow_colon=*/false);
    if (label.empty()) return "expected a label name or '}'";
    cursor.SkipBlanks();
    if (!cursor.Consume('=')) return "expected '=' after label name '" + Excerpt(label) + "'";
    cursor.SkipBlanks();
    std::string value;
    if (std::string error = cursor.ReadQuotedValue(&value); !error.empty()) {
      return error + " (label '" + Excerpt(label) + "')";
    }
    if (!labels->emplace(label, std::move(value)).second) {
      return "duplicate label '" + Excerpt(label) + "'";
    }
    cursor.SkipBlanks();
    if (cursor.Consume('}')) return "";
    if (!cursor.Consume(',')) {
      return "expected ',' or '}' after the value of label '" + Excerpt(label) + "'";
    }
  }
}

std::string LineOverCap() {
  return "longer than the cap of " + std::to_string(kMaxLineBytes) + " bytes on one line";
}

std::string ParseSample(LineCursor& cursor, Sample* sample) {
  sample->name = cursor.ReadName(/*allow_colon=*/true);
  if (sample->name.empty()) return "expected a metric name";
  bool blank_before_value = !cursor.AtEnd() && IsBlank(cursor.Peek());
  cursor.SkipBlanks();
  if (cursor.Consume('{')) {
    if (std::string error = ParseLabels(cursor, &sample->labels); !error.empty()) return error;
    blank_before_value = !cursor.AtEnd() && IsBlank(cursor.Peek());
    cursor.SkipBlanks();
  }
  if (!blank_before_value || cursor.AtEnd()) {
    return "expected a blank and a value after '" + Excerpt(sample->name) + "'";
  }
  std::string_view value_token = cursor.ReadToken();
  std::optional<double> value = ParseValue(value_token);
  if (!value) return "invalid sample value '" + Excerpt(value_token) + "'";
  sample->value = *value;
  cursor.SkipBlanks();
  if (cursor.AtEnd()) return "";
  std::string_view ts_token = cursor.ReadToken();
  std::int64_t timestamp_ms = 0;
  auto [end, ec] =
      std::from_chars(ts_token.data(), ts_token.data() + ts_token.size(), timestamp_ms);
  if (ec != std::errc() || end != ts_token.data() + ts_token.size()) {
    return "invalid timestamp '" + Excerpt(ts_token) + "'";
  }
  sample->timestamp_ms = timestamp_ms;
  cursor.SkipBlanks();
  if (!cursor.AtEnd()) return "unexpected text after the timestamp";
  return "";
}

}  // namespace

TextFormatParser::TextFormatParser(SampleSink sink) : sink_(std::move(sink)) {}

Status TextFormatParser::Feed(std::string_view piece) {
  for (size_t newline; (newline = piece.find('\n')) != std::string_view::npos;) {
    std::string_view line = piece.substr(0, newline);
    piece.remove_prefix(newline + 1);
    if (partial_line_.empty()) {
      if (Status parsed = ParseLine(line); !parsed.ok()) return parsed;
      continue;
    }
    if (Status kept = KeepPartial(line); !kept.ok()) return kept;
    Status parsed = ParseLine(partial_line_);
    partial_line_.clear();
    if (!parsed.ok()) return parsed;
  }
  return KeepPartial(piece);
}

Status TextFormatParser::KeepPartial(std::string_view piece) {
  if (piece.size() > kMaxLineBytes - partial_line_.size()) {
    return OverCap(line_number_ + 1, LineOverCap());
  }
  partial_line_.append(piece);
  return OkStatus();
}

Status TextFormatParser::Finish() {
  if (partial_line_.empty()) return OkStatus();
  Status parsed = ParseLine(partial_line_);
  partial_line_.clear();
  return parsed;
}

Status TextFormatParser::OverCap(int line_number, const std::string& what) const {
  return Status(StatusCode::kResourceExhausted,
                "metrics line " + std::to_string(line_number) + ": " + what);
}

Status TextFormatParser::ParseLine(std::string_view line) {
  ++line_number_;
  if (line.size() > kMaxLineBytes) return OverCap(line_number_, LineOverCap());
  LineCursor cursor(line);
  cursor.SkipBlanks();
  if (cursor.AtEnd()) return OkStatus();
  std::string error;
  if (cursor.Consume('#')) {
    error = ParseMetadata(cursor);
  } else {
    Sample sample;
    error = ParseSample(cursor, &sample);
    if (error.empty()) {
      if (samples_ == kMaxSamples) {
        return OverCap(line_number_,
                       "more than the cap of " + std::to_string(kMaxSamples) + " samples");
      }
      if (sample.labels.size() > kMaxLabelsPerSample) {
        return OverCap(line_number_,
                       std::to_string(sample.labels.size()) + " labels, over the cap of " +
                           std::to_string(kMaxLabelsPerSample) + " labels per sample");
      }
      if (++label_sets_[std::hash<std::string>{}(sample.name)] > kMaxLabelSetsPerMetric) {
        return OverCap(line_number_, "more than the cap of " +
                                         std::to_string(kMaxLabelSetsPerMetric) +
                                         " label sets of metric '" + Excerpt(sample.name) + "'");
      }
      ++samples_;
      sink_(std::move(sample));
    }
  }
  if (!error.empty()) {
    return InvalidArgumentError("metrics line " + std::to_string(line_number_) + ": " + error);
  }
  return OkStatus();
}

StatusOr<std::vector<Sample>> ParseTextFormat(std::string_view text) {
  std::vector<Sample> samples;
  TextFormatParser parser([&samples](Sample sample) { samples.push_back(std::move(sample)); });
  if (Status fed = parser.Feed(text); !fed.ok()) return fed;
  if (Status finished = parser.Finish(); !finished.ok()) return finished;
  return samples;
}

std::string Excerpt(std::string_view text) {
  constexpr size_t kMaxBytes = 40;
  std::string out;
  for (char c : text.substr(0, kMaxBytes)) {
    if (c >= ' ' && c <= '~') {
      out.push_back(c);
      continue;
    }
    char escaped[5];
    std::snprintf(escaped, sizeof(escaped), "\\x%02x", static_cast<unsigned char>(c));
    out += escaped;
  }
  if (text.size() > kMaxBytes) out += "...";
  return out;
}

}  // namespace bsw::prom
