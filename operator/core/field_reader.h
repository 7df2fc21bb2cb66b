#ifndef BSW_CORE_FIELD_READER_H_
#define BSW_CORE_FIELD_READER_H_

// What the readers of the API's objects (api.h, spec_sections.h, pool_spec.h) share: a walker
// over one JSON object that collects every problem with its field path instead of stopping at
// the first, and the way messages write values.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "nlohmann/json.hpp"
#include "operator/core/api.h"

namespace bsw {

// A number as messages write it: an integer below ten million in full, any other number in the
// shortest form that reads back the same (0.25, 1e+15, 1.7e+308).
std::string NumberText(double v);

// A value as messages write it: numbers as NumberText does, anything else as JSON.
std::string ValueText(const nlohmann::json& v);

// Walks one JSON object at `path`, appending each problem to `errors` as "path.key: message".
// Each accessor marks its key as known; Finish() reports the keys nobody asked for.
class FieldReader {
 public:
  FieldReader(const nlohmann::json& object, std::string path, std::vector<std::string>* errors)
      : object_(object), path_(std::move(path)), errors_(errors) {}

  std::string PathOf(const std::string& key) const;
  void Error(const std::string& key, const std::string& message) const;
  // An error about item `index` of the list at `key`.
  void ItemError(const std::string& key, size_t index, const std::string& message) const;
  // Whether `key` is set to something other than null.
  bool Has(const std::string& key);
  const nlohmann::json* Get(const std::string& key);

  std::optional<std::string> String(const std::string& key, bool required);
  // A finite number.
  std::optional<double> Number(const std::string& key, bool required);
  // A number in (0, highest]; `limit` says what the highest value is the limit of.
  std::optional<double> Positive(const std::string& key, bool required, double highest,
                                 const std::string& limit);
  // An integer in [lowest, highest].
  std::optional<int64_t> Integer(const std::string& key, bool required,
                                 int64_t lowest = -kMaxExactInteger,
                                 int64_t highest = kMaxExactInteger);
  std::optional<bool> Bool(const std::string& key);
  // Returns the nested object at `key`, or nullptr (with an error if it is required or no object).
  const nlohmann::json* Object(const std::string& key, bool required);

  // Reports every key that no accessor asked for.
  void Finish() const;

  // A value's type and text, shortened, for "must be ..., got <Describe>".
  static std::string Describe(const nlohmann::json& v);

 private:
  const nlohmann::json& object_;
  std::string path_;
  std::vector<std::string>* errors_;
  std::set<std::string> known_;
};

// The string at `key` as one of `names`' values; an error listing the names for any other string.
template <typename Enum>
std::optional<Enum> ParseEnum(FieldReader& f, const std::string& key,
                              const std::vector<std::pair<std::string, Enum>>& names) {
  std::optional<std::string> s = f.String(key, false);
  if (!s) return std::nullopt;
  std::string allowed;
  for (const auto& [name, value] : names) {
    if (*s == name) return value;
    allowed += (allowed.empty() ? "" : ", ") + name;
  }
  f.Error(key, "must be one of " + allowed + ", got \"" + *s + "\"");
  return std::nullopt;
}

// Whether the list at `key` is within `max_items`; reports it when it is not.
bool WithinMaxItems(FieldReader& f, const std::string& key, const nlohmann::json& list,
                    size_t max_items);

// The apiVersion and kind of a top-level object, which must be kApiVersion and `kind`.
void CheckTypeMeta(FieldReader& top, const char* kind);

// Server-populated and descriptive metadata is accepted as it is.
void AcceptServerMetadata(FieldReader& metadata);

// OK, or InvalidArgument listing `errors` one per line.
Status ErrorsStatus(const std::vector<std::string>& errors);

}  // namespace bsw

#endif  // BSW_CORE_FIELD_READER_H_
