#include "operator/controller/kube/sweep_object.h"

#include <optional>
#include <utility>
#include <vector>

#include "operator/core/field_reader.h"

namespace bsw {
namespace {

using nlohmann::json;

void ReadMetadata(const json& metadata, std::vector<std::string>* errors, SweepObject* sweep) {
  FieldReader m(metadata, "metadata", errors);
  sweep->name = m.String("name", true).value_or("");
  sweep->ns = m.String("namespace", false).value_or("");
  sweep->uid = m.String("uid", false).value_or("");
  sweep->generation = m.Integer("generation", false).value_or(0);
}

// The conditions as MergeConditions and the reconciler read them; nullopt for a malformed list.
std::optional<json> ReadConditions(FieldReader& s, std::vector<std::string>* errors) {
  const json* list = s.Get("conditions");
  if (list == nullptr) return json::array();
  if (!list->is_array()) {
    s.Error("conditions", "must be a list, got " + FieldReader::Describe(*list));
    return std::nullopt;
  }
  const size_t before = errors->size();
  for (size_t i = 0; i < list->size(); ++i) {
    const json& item = (*list)[i];
    if (!item.is_object()) {
      s.ItemError("conditions", i, "must be an object, got " + FieldReader::Describe(item));
      continue;
    }
    FieldReader c(item, s.PathOf("conditions") + "[" + std::to_string(i) + "]", errors);
    for (const char* key : {"type", "status", "reason", "message", "lastTransitionTime"}) {
      (void)c.String(key, false);
    }
  }
  if (errors->size() != before) return std::nullopt;
  return *list;
}

void ReadStatus(const json& status, std::vector<std::string>* errors, SweepObject* sweep) {
  sweep->status = status;
  sweep->status.erase("sweepEvents");
  FieldReader s(status, "status", errors);
  sweep->phase = s.String("phase", false).value_or("");
  sweep->observed_generation = s.Integer("observedGeneration", false);
  if (const json* trials = s.Object("trials", false)) {
    FieldReader t(*trials, s.PathOf("trials"), errors);
    sweep->trials_created = t.Integer("created", false).value_or(0);
  }
  sweep->has_throughput = s.Has("throughput");
  if (std::optional<json> conditions = ReadConditions(s, errors)) {
    sweep->conditions = std::move(*conditions);
  } else {
    // Left out of what the next status is compared with, which then replaces them.
    sweep->status.erase("conditions");
  }
}

}  // namespace

Status ReadSweepObject(const json& object, SweepObject* sweep) {
  *sweep = SweepObject();
  sweep->object = object;
  if (!object.is_object()) {
    return InvalidArgumentError("(document): must be a BudgetSweep object, got " +
                                FieldReader::Describe(object));
  }
  std::vector<std::string> errors;
  FieldReader top(object, "", &errors);
  if (const json* metadata = top.Object("metadata", true)) {
    ReadMetadata(*metadata, &errors, sweep);
  }
  if (const json* status = top.Object("status", false)) ReadStatus(*status, &errors, sweep);
  return ErrorsStatus(errors);
}

}  // namespace bsw
