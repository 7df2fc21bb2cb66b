#ifndef BSW_CMD_KUBECTL_FORMAT_H_
#define BSW_CMD_KUBECTL_FORMAT_H_

#include <string>
#include <vector>

namespace bsw::kubectl {

using Row = std::vector<std::string>;

// Rows as `kubectl get` prints them: each column as wide as its widest cell, three spaces
// between columns, the last column unpadded, one line per row. REQUIRES: rows of equal size.
std::string AlignedTable(const std::vector<Row>& rows);

// "[####+.....] 0.41+0.10/1.00 GPU-h": of `width` cells, '#' for what is used, '+' for what is
// reserved and '.' for what is left, each rounded to the nearest cell and clamped to the bar.
std::string BudgetBar(double used_gpu_hours, double reserved_gpu_hours, double budget_gpu_hours,
                      int width);

// A duration as kubectl's AGE column shows it: "45s" under two minutes, then "3m20s", "42m",
// "5h10m", "30h", "3d4h", "120d", "2y30d". Negative durations are "0s".
std::string HumanDuration(double seconds);

// printf-style formatting of one number.
std::string FormatNumber(const char* format, double value);

// `output` (lines separated by '\n') with `indent` before each line, one line each.
std::string IndentedLines(const std::string& output, const std::string& indent);

}  // namespace bsw::kubectl

#endif  // BSW_CMD_KUBECTL_FORMAT_H_
