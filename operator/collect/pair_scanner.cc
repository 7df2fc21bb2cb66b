#include "operator/collect/pair_scanner.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <system_error>

namespace bsw::collect {
namespace {

constexpr size_t kMaxNameBytes = 128;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// [\w|-] in the C locale.
bool IsFilterNameChar(char c) {
  return IsLetter(c) || IsDigit(c) || c == '_' || c == '|' || c == '-';
}

// \s in the C locale.
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

size_t SkipSpaces(std::string_view line, size_t at) {
  while (at < line.size() && IsSpace(line[at])) ++at;
  return at;
}

size_t SkipDigits(std::string_view line, size_t at) {
  while (at < line.size() && IsDigit(line[at])) ++at;
  return at;
}

// The end of [+-]?\d*(\.\d+)?([Ee][+-]?\d+)? matched greedily from `at`; every part is optional,
// so a greedy match never backtracks.
size_t NumberEnd(std::string_view line, size_t at) {
  auto is_sign = [&line](size_t i) {
    return i < line.size() && (line[i] == '+' || line[i] == '-');
  };
  auto is_digit = [&line](size_t i) { return i < line.size() && IsDigit(line[i]); };
  if (is_sign(at)) ++at;
  at = SkipDigits(line, at);
  if (at < line.size() && line[at] == '.' && is_digit(at + 1)) at = SkipDigits(line, at + 1);
  if (at < line.size() && (line[at] == 'e' || line[at] == 'E')) {
    size_t digits = is_sign(at + 1) ? at + 2 : at + 1;
    if (is_digit(digits)) at = SkipDigits(line, digits);
  }
  return at;
}

}  // namespace

std::vector<RawPair> ScanDefaultFilter(std::string_view line) {
  std::vector<RawPair> pairs;
  size_t at = 0;
  while (at < line.size()) {
    if (!IsFilterNameChar(line[at])) {
      ++at;
      continue;
    }
    // A match starting anywhere in this run of name characters has the same greedy name end, and
    // a shorter name leaves a name character where \s*= must follow: the run matches as a whole
    // or not at all.
    size_t name_end = at;
    while (name_end < line.size() && IsFilterNameChar(line[name_end])) ++name_end;
    size_t equals = SkipSpaces(line, name_end);
    if (equals == line.size() || line[equals] != '=') {
      at = name_end;
      continue;
    }
    size_t value_begin = SkipSpaces(line, equals + 1);
    size_t value_end = NumberEnd(line, value_begin);
    pairs.push_back({std::string(line.substr(at, name_end - at)),
                     std::string(line.substr(value_begin, value_end - value_begin))});
    at = value_end;
  }
  return pairs;
}

std::vector<RawPair> ScanFilter(const std::regex& filter, std::string_view line) {
  std::vector<RawPair> pairs;
  using Iterator = std::regex_iterator<std::string_view::const_iterator>;
  try {
    for (Iterator match(line.begin(), line.end(), filter), end; match != end; ++match) {
      if ((*match)[1].matched && (*match)[2].matched) {
        pairs.push_back({(*match)[1].str(), (*match)[2].str()});
      }
    }
  } catch (const std::regex_error&) {
    // libstdc++ gives up on a match too complex for it; the line just yields no more pairs.
  }
  return pairs;
}

std::vector<RawPair> ScanJsonObject(std::string_view line) {
  std::vector<RawPair> pairs;
  nlohmann::json object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) return pairs;
  for (const auto& [name, value] : object.items()) {
    if (value.is_number()) {
      pairs.push_back({name, value.dump()});
    } else if (value.is_string()) {
      pairs.push_back({name, value.get_ref<const std::string&>()});
    }
  }
  return pairs;
}

std::optional<double> FiniteValue(std::string_view text) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

bool IsMetricName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes) return false;
  if (!IsLetter(name[0]) && name[0] != '_' && name[0] != ':') return false;
  for (char c : name) {
    if (!IsLetter(c) && !IsDigit(c) && c != '_' && c != ':' && c != '.' && c != '-') return false;
  }
  return true;
}

}  // namespace bsw::collect
