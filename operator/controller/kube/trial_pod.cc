#include "operator/controller/kube/trial_pod.h"

#include "operator/adapters/kube/pod_backend.h"

namespace bsw {
namespace {

using nlohmann::json;

// The object at `key` of `object`; an empty one when there is none.
const json& ObjectAt(const json& object, const char* key) {
  static const json kEmpty = json::object();
  auto found = object.is_object() ? object.find(key) : object.end();
  return found != object.end() && found->is_object() ? *found : kEmpty;
}

std::string StringAt(const json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

}  // namespace

TrialPod ReadTrialPod(const json& pod) {
  const json& metadata = ObjectAt(pod, "metadata");
  TrialPod read;
  read.ns = StringAt(metadata, "namespace");
  read.name = StringAt(metadata, "name");
  read.sweep = StringAt(ObjectAt(metadata, "labels"), kube::kSweepLabel);
  const std::string phase = StringAt(ObjectAt(pod, "status"), "phase");
  read.ended = phase == "Succeeded" || phase == "Failed";
  read.deleting = metadata.contains("deletionTimestamp");
  return read;
}

}  // namespace bsw
