#include "operator/core/search_space.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "operator/core/random.h"

namespace bsw {
namespace {

// Beyond this many points a product is treated as unbounded (and validation keeps grids sane).
constexpr int64_t kMaxGridPoints = int64_t{1} << 40;

int64_t PointsOf(const ParamSpec& p) {
  if (p.type == ParamType::kInt) return static_cast<int64_t>(p.max - p.min) + 1;
  return static_cast<int64_t>(p.values.size());
}

nlohmann::json PointAt(const ParamSpec& p, int64_t i) {
  if (p.type == ParamType::kInt) return static_cast<int64_t>(p.min) + i;
  return p.values[static_cast<size_t>(i)];
}

}  // namespace

nlohmann::json SampleParam(const ParamSpec& p, Random& rng) {
  double u = rng.Uniform();
  switch (p.type) {
    case ParamType::kUniform:
      return p.min + u * (p.max - p.min);
    case ParamType::kLogUniform:
      return std::exp(std::log(p.min) + u * (std::log(p.max) - std::log(p.min)));
    case ParamType::kInt: {
      double x = p.log ? std::exp(std::log(p.min) + u * (std::log(p.max + 1) - std::log(p.min)))
                       : p.min + u * (p.max - p.min + 1);
      return static_cast<int64_t>(std::clamp(std::floor(x), p.min, p.max));
    }
    case ParamType::kChoice:
    case ParamType::kGrid: {
      auto n = static_cast<double>(p.values.size());
      return p.values[static_cast<size_t>(std::min(std::floor(u * n), n - 1))];
    }
  }
  return nullptr;
}

SearchSpace::SearchSpace(std::vector<ParamSpec> params, Algorithm algorithm, uint64_t seed)
    : params_(std::move(params)), algorithm_(algorithm), seed_(seed) {
  for (const ParamSpec& p : params_) {
    bool enumerated = algorithm_ == Algorithm::kGrid || p.type == ParamType::kGrid;
    int64_t points = enumerated ? std::max<int64_t>(PointsOf(p), 1) : 0;
    radix_.push_back(points);
    if (points > 0) grid_points_ = std::min(kMaxGridPoints, grid_points_ * points);
  }
}

Config SearchSpace::ConfigAt(int64_t index) const {
  Config config;
  Random rng(MixSeed(seed_, static_cast<uint64_t>(index)));
  int64_t rest = index % grid_points_;
  for (size_t i = 0; i < params_.size(); ++i) {
    const ParamSpec& p = params_[i];
    // Every parameter draws once, enumerated or not, so adding a grid dimension leaves the
    // stream of the sampled ones aligned.
    nlohmann::json sampled = SampleParam(p, rng);
    if (radix_[i] > 0) {
      config.emplace_back(p.name, PointAt(p, rest % radix_[i]));
      rest /= radix_[i];
    } else {
      config.emplace_back(p.name, std::move(sampled));
    }
  }
  return config;
}

std::optional<int64_t> SearchSpace::FiniteSize() const {
  if (algorithm_ != Algorithm::kGrid || grid_points_ >= kMaxGridPoints) return std::nullopt;
  return grid_points_;
}

std::string FormatParamValue(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value.get<double>());
    return ec == std::errc() ? std::string(buf, end) : value.dump();
  }
  return value.dump();
}

std::string ParamValueText(const nlohmann::json& value) {
  if (!value.is_number_float()) return FormatParamValue(value);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", value.get<double>());
  return buf;
}

std::string ParamsText(const Config& params) {
  std::string out;
  for (const auto& [name, value] : params) {
    out += (out.empty() ? "" : " ") + name + "=" + ParamValueText(value);
  }
  return out;
}

}  // namespace bsw
