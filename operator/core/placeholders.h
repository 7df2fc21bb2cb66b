#ifndef BSW_CORE_PLACEHOLDERS_H_
#define BSW_CORE_PLACEHOLDERS_H_

// Katib's placeholders: a trial template may place a parameter itself, as
// `${trialParameters.NAME}` in its container's command, args and env values, NAME being a key of
// spec.searchSpace. A parameter placed so is not also appended as `--NAME=value`.

#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bsw {

inline constexpr std::string_view kPlaceholderOpen = "${trialParameters.";

// The parameter names `text` places, in order of appearance. `malformed` is set when a
// placeholder is not closed by '}' or names nothing.
std::vector<std::string> PlaceholderNames(std::string_view text, bool* malformed);

// `text` with each closed placeholder replaced by what `replace` returns for the name it places
// (empty for `${trialParameters.}`); an unclosed one is kept as it is.
std::string RewritePlaceholders(std::string_view text,
                                const std::function<std::string(const std::string&)>& replace);

// `text` with every placeholder whose name is in `params` replaced by its value; others are kept
// as they are (validation refuses them before a trial runs).
std::string PlaceParams(std::string_view text,
                        const std::vector<std::pair<std::string, std::string>>& params);

// The names placed anywhere in `texts`.
std::set<std::string> PlacedNames(const std::vector<std::string>& texts);

}  // namespace bsw

#endif  // BSW_CORE_PLACEHOLDERS_H_
