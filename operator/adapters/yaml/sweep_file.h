#ifndef BSW_ADAPTERS_YAML_SWEEP_FILE_H_
#define BSW_ADAPTERS_YAML_SWEEP_FILE_H_

#include <string>

#include "nlohmann/json.hpp"
#include "operator/core/status.h"

namespace bsw {

// Reads one YAML or JSON document from `path` into JSON, with YAML 1.2 core-schema scalars:
// unquoted true/false, null, integers and floats become JSON booleans, null and numbers; quoted
// scalars stay strings. Errors name the file and, for syntax errors, the line and column.
StatusOr<nlohmann::json> ReadSweepFile(const std::string& path);

// The same for text already in memory; `source` names it in errors.
StatusOr<nlohmann::json> ParseSweepText(const std::string& text, const std::string& source);

}  // namespace bsw

#endif  // BSW_ADAPTERS_YAML_SWEEP_FILE_H_
