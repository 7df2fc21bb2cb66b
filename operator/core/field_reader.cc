#include "operator/core/field_reader.h"

#include <charconv>
#include <cmath>
#include <sstream>

namespace bsw {

using nlohmann::json;

std::string NumberText(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e7) return std::to_string(static_cast<int64_t>(v));
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, v);
  return ec == std::errc() ? std::string(text, end) : std::to_string(v);
}

std::string ValueText(const json& v) {
  if (v.is_number_float()) return NumberText(v.get<double>());
  return v.dump();
}

std::string FieldReader::PathOf(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

void FieldReader::Error(const std::string& key, const std::string& message) const {
  errors_->push_back(PathOf(key) + ": " + message);
}

void FieldReader::ItemError(const std::string& key, size_t index,
                            const std::string& message) const {
  errors_->push_back(PathOf(key) + "[" + std::to_string(index) + "]: " + message);
}

bool FieldReader::Has(const std::string& key) {
  known_.insert(key);
  return object_.contains(key) && !object_.at(key).is_null();
}

const json* FieldReader::Get(const std::string& key) {
  return Has(key) ? &object_.at(key) : nullptr;
}

std::optional<std::string> FieldReader::String(const std::string& key, bool required) {
  const json* v = Get(key);
  if (v == nullptr) {
    if (required) Error(key, "required");
    return std::nullopt;
  }
  if (!v->is_string()) {
    Error(key, "must be a string, got " + Describe(*v));
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<double> FieldReader::Number(const std::string& key, bool required) {
  const json* v = Get(key);
  if (v == nullptr) {
    if (required) Error(key, "required");
    return std::nullopt;
  }
  if (!v->is_number()) {
    Error(key, "must be a number, got " + Describe(*v));
    return std::nullopt;
  }
  const double d = v->get<double>();
  if (std::isnan(d)) {
    Error(key, "must be a number, got .nan");
    return std::nullopt;
  }
  if (std::isinf(d)) {
    Error(key, "out of range: must be a finite number, got " + std::string(d < 0 ? "-" : "") +
                   "infinity (.inf, or a number beyond 1.8e+308)");
    return std::nullopt;
  }
  return d;
}

std::optional<double> FieldReader::Positive(const std::string& key, bool required, double highest,
                                            const std::string& limit) {
  std::optional<double> d = Number(key, required);
  if (!d) return std::nullopt;
  if (*d <= 0) Error(key, "must be greater than 0, got " + ValueText(object_.at(key)));
  if (*d > highest) {
    Error(key, "out of range: must be at most " + NumberText(highest) + " (" + limit + "), got " +
                   ValueText(object_.at(key)));
  }
  return d;
}

std::optional<int64_t> FieldReader::Integer(const std::string& key, bool required, int64_t lowest,
                                            int64_t highest) {
  std::optional<double> d = Number(key, required);
  if (!d) return std::nullopt;
  const std::string got = ValueText(object_.at(key));
  if (std::floor(*d) != *d) {
    Error(key, "must be an integer, got " + got);
    return std::nullopt;
  }
  if (*d < static_cast<double>(lowest) || *d > static_cast<double>(highest)) {
    std::string range = "between " + std::to_string(lowest) + " and " + std::to_string(highest);
    if (highest == kMaxExactInteger && lowest != -kMaxExactInteger) {
      range = "at least " + std::to_string(lowest);
    }
    Error(key, (std::fabs(*d) > kMaxExactInteger ? "out of range: must be " : "must be ") + range +
                   ", got " + got);
    return std::nullopt;
  }
  return static_cast<int64_t>(*d);
}

std::optional<bool> FieldReader::Bool(const std::string& key) {
  const json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) {
    Error(key, "must be true or false, got " + Describe(*v));
    return std::nullopt;
  }
  return v->get<bool>();
}

const json* FieldReader::Object(const std::string& key, bool required) {
  const json* v = Get(key);
  if (v == nullptr) {
    if (required) Error(key, "required");
    return nullptr;
  }
  if (!v->is_object()) {
    Error(key, "must be an object, got " + Describe(*v));
    return nullptr;
  }
  return v;
}

void FieldReader::Finish() const {
  for (const auto& [key, value] : object_.items()) {
    if (!known_.contains(key)) Error(key, "unknown field");
  }
}

std::string FieldReader::Describe(const json& v) {
  std::string text = ValueText(v);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return std::string(v.type_name()) + " " + text;
}

bool WithinMaxItems(FieldReader& f, const std::string& key, const json& list, size_t max_items) {
  if (list.size() <= max_items) return true;
  f.Error(key, "must list at most " + std::to_string(max_items) + " items, got " +
                   std::to_string(list.size()));
  return false;
}

void CheckTypeMeta(FieldReader& top, const char* kind) {
  std::optional<std::string> api_version = top.String("apiVersion", true);
  if (api_version && *api_version != kApiVersion) {
    top.Error("apiVersion",
              std::string("must be ") + kApiVersion + ", got \"" + *api_version + "\"");
  }
  std::optional<std::string> found = top.String("kind", true);
  if (found && *found != kind) top.Error("kind", std::string("must be ") + kind);
}

void AcceptServerMetadata(FieldReader& metadata) {
  for (const char* key : {"uid", "resourceVersion", "creationTimestamp", "labels", "annotations",
                          "finalizers", "managedFields", "deletionTimestamp",
                          "deletionGracePeriodSeconds", "ownerReferences", "generateName"}) {
    metadata.Has(key);
  }
}

Status ErrorsStatus(const std::vector<std::string>& errors) {
  if (errors.empty()) return OkStatus();
  std::ostringstream out;
  for (size_t i = 0; i < errors.size(); ++i) out << (i ? "\n" : "") << errors[i];
  return InvalidArgumentError(out.str());
}

}  // namespace bsw
