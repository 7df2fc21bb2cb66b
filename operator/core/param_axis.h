#ifndef BSW_CORE_PARAM_AXIS_H_
#define BSW_CORE_PARAM_AXIS_H_

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "nlohmann/json.hpp"
#include "operator/core/api.h"
#include "operator/core/search_space.h"

namespace bsw {

// Where a numeric parameter is modelled: [low, high) on a linear or log axis.
struct Axis {
  double low = 0;
  double high = 0;
  bool log = false;
  bool integer = false;

  explicit Axis(const ParamSpec& p)
      : log(p.type == ParamType::kLogUniform || (p.type == ParamType::kInt && p.log)),
        integer(p.type == ParamType::kInt) {
    low = Scale(p.min);
    high = Scale(integer ? p.max + 1 : p.max);
  }

  double Scale(double x) const { return log ? std::log(x) : x; }

  // The position of value `v`, or nullopt when `p` cannot take it.
  std::optional<double> Position(const ParamSpec& p, const nlohmann::json& v) const {
    if (!v.is_number()) return std::nullopt;
    double x = v.get<double>();
    if (!(x >= p.min && x <= p.max)) return std::nullopt;
    return Scale(integer ? x + 0.5 : x);
  }

  nlohmann::json ValueAt(const ParamSpec& p, double position) const {
    double x = log ? std::exp(position) : position;
    if (integer) return static_cast<int64_t>(std::clamp(std::floor(x), p.min, p.max));
    return std::clamp(x, p.min, p.max);
  }
};

// The value of parameter `name` in `params`; null when it has none.
inline const nlohmann::json* FindParam(const Config& params, const std::string& name) {
  for (const auto& [key, value] : params) {
    if (key == name) return &value;
  }
  return nullptr;
}

}  // namespace bsw

#endif  // BSW_CORE_PARAM_AXIS_H_
