#include "operator/report/text.h"

#include <cmath>
#include <cstdio>

namespace bsw::report {

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string Num(double v) { return std::isfinite(v) ? Fmt("%.4g", v) : "NaN"; }

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string ResourceText(const SweepSpec& spec, double resource) {
  return spec.resource_unit + " " + Fmt("%g", resource);
}

}  // namespace bsw::report
