#include "operator/cmd/kubectl/format.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>

namespace bsw::kubectl {

std::string AlignedTable(const std::vector<Row>& rows) {
  std::vector<size_t> widths;
  for (const Row& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const Row& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 3, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string FormatNumber(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

std::string BudgetBar(double used_gpu_hours, double reserved_gpu_hours, double budget_gpu_hours,
                      int width) {
  double budget = std::max(budget_gpu_hours, 1e-9);
  auto cells = [&](double hours) {
    return static_cast<int>(std::lround(width * std::clamp(hours / budget, 0.0, 1.0)));
  };
  int used = cells(used_gpu_hours);
  int reserved = std::max(0, cells(used_gpu_hours + reserved_gpu_hours) - used);
  std::string bar = std::string(static_cast<size_t>(used), '#') +
                    std::string(static_cast<size_t>(reserved), '+') +
                    std::string(static_cast<size_t>(width - used - reserved), '.');
  return "[" + bar + "] " + FormatNumber("%.2f", used_gpu_hours) + "+" +
         FormatNumber("%.2f", reserved_gpu_hours) + "/" + FormatNumber("%.2f", budget_gpu_hours) +
         " GPU-h";
}

std::string HumanDuration(double seconds) {
  auto s = static_cast<int64_t>(std::max(0.0, seconds));
  int64_t minutes = s / 60;
  int64_t hours = s / 3600;
  int64_t days = s / 86400;
  // "3m" rather than "3m0s".
  auto pair = [](int64_t major, const char* major_unit, int64_t minor, const char* minor_unit) {
    std::string out = std::to_string(major) + major_unit;
    return minor == 0 ? out : out + std::to_string(minor) + minor_unit;
  };
  if (s < 120) return std::to_string(s) + "s";
  if (minutes < 10) return pair(minutes, "m", s % 60, "s");
  if (minutes < 180) return std::to_string(minutes) + "m";
  if (hours < 8) return pair(hours, "h", minutes % 60, "m");
  if (hours < 48) return std::to_string(hours) + "h";
  if (days < 8) return pair(days, "d", hours % 24, "h");
  if (days < 365 * 2) return std::to_string(days) + "d";
  if (days < 365 * 8) return pair(days / 365, "y", days % 365, "d");
  return std::to_string(days / 365) + "y";
}

std::string IndentedLines(const std::string& output, const std::string& indent) {
  std::string out;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = std::min(output.find('\n', start), output.size());
    out += indent + output.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace bsw::kubectl
