#ifndef BSW_OPERATOR_COLLECT_EXPOSITION_H_
#define BSW_OPERATOR_COLLECT_EXPOSITION_H_

#include <map>
#include <string>

#include "operator/collect/line_parser.h"

namespace bsw::collect {

// The trainer contract's series for the collected values, in the Prometheus text format 0.0.4:
// the objective series for every (metric, resource), then resource_completed.
[[nodiscard]] std::string RenderExposition(const std::string& sweep, const std::string& trial,
                                           const std::map<SeriesKey, double>& values,
                                           double resource_completed);

// A resource as the operator reads its label back: an integer without a decimal point ("3"), any
// other number in its shortest exact form.
[[nodiscard]] std::string FormatResource(double resource);

// `value` escaped for a label value between double quotes (backslash, quote, newline).
[[nodiscard]] std::string EscapeLabelValue(const std::string& value);

}  // namespace bsw::collect

#endif  // BSW_OPERATOR_COLLECT_EXPOSITION_H_
