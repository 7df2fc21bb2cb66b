#ifndef BSW_ADAPTERS_YAML_EMITTER_H_
#define BSW_ADAPTERS_YAML_EMITTER_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace bsw {

// `value` as block-style YAML that ReadSweepFile reads back as the same JSON: a string that the
// reader would take for a number, a boolean or null ("3", "true", "") is quoted; numbers are
// written in the shortest form that reads back the same. In every object the keys named in
// `key_order` come first, in that order, then the others in sorted order. Ends with a newline.
std::string EmitYaml(const nlohmann::json& value, const std::vector<std::string>& key_order);

}  // namespace bsw

#endif  // BSW_ADAPTERS_YAML_EMITTER_H_
