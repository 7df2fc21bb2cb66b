#include "operator/collect/exposition.h"

#include <charconv>
#include <cmath>

#include "contract/trainer_contract.h"

namespace bsw::collect {
namespace {

// Doubles hold every integer below 2^53 exactly.
constexpr double kLargestExactInteger = 9007199254740992.0;

std::string FormatNumber(double value, std::chars_format format) {
  char text[64];
  auto [end, ec] = std::to_chars(text, text + sizeof(text), value, format);
  return std::string(text, ec == std::errc() ? end : text);
}

std::string Label(const char* name, const std::string& value) {
  return std::string(name) + "=\"" + EscapeLabelValue(value) + "\"";
}

}  // namespace

std::string FormatResource(double resource) {
  if (resource == std::floor(resource) && std::fabs(resource) < kLargestExactInteger) {
    return FormatNumber(resource, std::chars_format::fixed);
  }
  return FormatNumber(resource, std::chars_format::general);
}

std::string EscapeLabelValue(const std::string& value) {
  std::string escaped;
  escaped.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == '"') {
      escaped += '\\';
      escaped += c;
    } else if (c == '\n') {
      escaped += "\\n";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string RenderExposition(const std::string& sweep, const std::string& trial,
                             const std::map<SeriesKey, double>& values, double resource_completed) {
  std::string trial_labels = Label(kLabelSweep, sweep) + "," + Label(kLabelTrial, trial);
  std::string text = std::string("# TYPE ") + kMetricObjective + " gauge\n";
  for (const auto& [key, value] : values) {
    text += std::string(kMetricObjective) + "{" + trial_labels + "," +
            Label(kLabelMetric, key.metric) + "," +
            Label(kLabelResource, FormatResource(key.resource)) + "} " +
            FormatNumber(value, std::chars_format::general) + "\n";
  }
  text += std::string("# TYPE ") + kMetricResourceCompleted + " gauge\n";
  text += std::string(kMetricResourceCompleted) + "{" + trial_labels + "} " +
          FormatNumber(resource_completed, std::chars_format::general) + "\n";
  return text;
}

}  // namespace bsw::collect
