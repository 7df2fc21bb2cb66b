#ifndef BSW_CORE_PARSE_H_
#define BSW_CORE_PARSE_H_

#include <charconv>
#include <string_view>

namespace bsw {

// Parses all of `text` as a number; false (and `*value` unspecified) when any of it is left over.
template <typename T>
bool ParsesFully(std::string_view text, T* value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

}  // namespace bsw

#endif  // BSW_CORE_PARSE_H_
