#ifndef BSW_CORE_SEARCH_SPACE_H_
#define BSW_CORE_SEARCH_SPACE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"
#include "operator/core/api.h"
#include "operator/core/random.h"

namespace bsw {

// One trial's parameters, in search-space order: name and value (number, string or boolean).
using Config = std::vector<std::pair<std::string, nlohmann::json>>;

// Turns a search space into configurations. Configuration i depends only on the seed and i, so a
// restarted sweep regenerates exactly the configurations it had, in the same order.
//
// With the grid algorithm every parameter is enumerated and configuration i is the i-th point of
// the full product. With asha and random, `grid` parameters are enumerated (configuration i takes
// grid point i mod G, as Ray Tune's grid_search does) and every other parameter is sampled.
class SearchSpace {
 public:
  SearchSpace(std::vector<ParamSpec> params, Algorithm algorithm, uint64_t seed);

  Config ConfigAt(int64_t index) const;

  // The number of distinct configurations when that number is finite and the algorithm stops
  // after enumerating them (grid); nullopt when configurations are sampled without end.
  std::optional<int64_t> FiniteSize() const;

 private:
  std::vector<ParamSpec> params_;
  Algorithm algorithm_;
  uint64_t seed_;
  std::vector<int64_t> radix_;  // per enumerated parameter: number of points; 0 = sampled
  int64_t grid_points_ = 1;
};

// One value of `p`, drawn from its range (uniformly, on a log scale where it has one) with one
// draw of `rng`.
nlohmann::json SampleParam(const ParamSpec& p, Random& rng);

// Formats a parameter value for the command line: integers without a decimal point, doubles in
// their shortest round-trip form, strings verbatim.
std::string FormatParamValue(const nlohmann::json& value);

// A value for people: a real number to 4 significant digits, others as the trainer receives them.
std::string ParamValueText(const nlohmann::json& value);

// A configuration for people, "lr=0.001 optimizer=adamw" (ParamValueText).
std::string ParamsText(const Config& params);

}  // namespace bsw

#endif  // BSW_CORE_SEARCH_SPACE_H_
