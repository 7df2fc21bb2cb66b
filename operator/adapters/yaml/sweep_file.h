#ifndef BSW_ADAPTERS_YAML_SWEEP_FILE_H_
#define BSW_ADAPTERS_YAML_SWEEP_FILE_H_

#include <cstddef>
#include <string>

#include "base/status.h"
#include "nlohmann/json.hpp"

namespace bsw {

// Limits on what one sweep file may make the reader build. A BudgetSweep is a few kilobytes and
// its deepest field (a container's env value in the trial template) sits at about depth 10; these
// bound hostile input (an alias bomb, nesting thousands deep, a huge file) to milliseconds and a
// few megabytes. Node and scalar counts are taken with every alias expanded, before any node is
// built, so an alias bomb costs no more than its own text.
inline constexpr size_t kMaxSweepFileBytes = 1 << 20;
inline constexpr int kMaxSweepNestingDepth = 64;
inline constexpr size_t kMaxSweepNodes = 100'000;
inline constexpr size_t kMaxSweepScalarBytes = 4 << 20;

// Reads one YAML or JSON document from `path` into JSON, with YAML 1.2 core-schema scalars:
// unquoted true/false, null, integers and floats become JSON booleans, null and numbers (.inf,
// .nan and floats beyond a double's range become infinities and NaN, for the validator to refuse
// by name); quoted scalars stay strings. As kubectl does, merge keys (`<<: *anchor`) are resolved
// and empty documents (a trailing `---`) are ignored. The text is UTF-8: a UTF-8 byte-order mark
// is skipped, a UTF-16 or UTF-32 one is an error that says to save the file as UTF-8. Errors name
// the file and, for syntax errors and exceeded limits, the line and column. A directory, or a
// file over kMaxSweepFileBytes, is an error that says so.
StatusOr<nlohmann::json> ReadSweepFile(const std::string& path);

// The same for text already in memory; `source` names it in errors.
StatusOr<nlohmann::json> ParseSweepText(const std::string& text, const std::string& source);

}  // namespace bsw

#endif  // BSW_ADAPTERS_YAML_SWEEP_FILE_H_
