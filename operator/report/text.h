#ifndef BSW_REPORT_TEXT_H_
#define BSW_REPORT_TEXT_H_

#include <string>

#include "operator/core/api.h"

// Text as the report writes it: numbers, escaped markup and resource amounts.
namespace bsw::report {

// `v` formatted by printf's `format`, which takes one double. The result fits in 63 bytes.
std::string Fmt(const char* format, double v);

// Four significant digits, the precision of the progress lines; "NaN" for a value that is not
// finite.
std::string Num(double v);

// `text` with the five characters special to HTML and XML (& < > " ') escaped, safe in an element
// or a quoted attribute.
std::string Escape(const std::string& text);

// An amount of the sweep's resource with its unit, e.g. "epochs 3".
std::string ResourceText(const SweepSpec& spec, double resource);

}  // namespace bsw::report

#endif  // BSW_REPORT_TEXT_H_
