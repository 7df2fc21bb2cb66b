#include "operator/adapters/kube/events.h"

#include <spdlog/spdlog.h>

#include <cstdio>

#include "operator/core/rfc3339.h"

namespace bsw::kube {
namespace {

// Enough to aggregate repeats from one reconcile loop without growing without bound.
constexpr size_t kMaxRecorded = 1024;

std::string Field(const Json& object, const char* key) {
  auto value = object.find(key);
  return value != object.end() && value->is_string() ? value->get<std::string>() : std::string();
}

// The core/v1 Event that first reports `reason` about `object` (its metadata an object), written
// to namespace `ns` at `now_unix`. The name's suffix is the time in nanoseconds, as kubectl and
// client-go write it.
Json NewEvent(const Json& object, const std::string& ns, const char* type_name,
              const std::string& reason, const std::string& message, double now_unix,
              const std::string& component) {
  const Json& metadata = object["metadata"];
  const std::string name = Field(metadata, "name");
  const std::string now = Rfc3339(now_unix);
  auto nanos = static_cast<long long>(now_unix * 1e9);
  char suffix[24];
  std::snprintf(suffix, sizeof(suffix), ".%llx", static_cast<unsigned long long>(nanos));
  Json involved = {{"apiVersion", Field(object, "apiVersion")},
                   {"kind", Field(object, "kind")},
                   {"name", name},
                   {"namespace", Field(metadata, "namespace")},
                   {"uid", Field(metadata, "uid")},
                   {"resourceVersion", Field(metadata, "resourceVersion")}};
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", name + suffix}, {"namespace", ns}}},
          {"involvedObject", involved},
          {"reason", reason},
          {"message", message},
          {"type", type_name},
          {"count", 1},
          {"firstTimestamp", now},
          {"lastTimestamp", now},
          {"source", {{"component", component}}},
          {"reportingComponent", component}};
}

}  // namespace

EventRecorder::EventRecorder(Client& client, std::string component, const Clock& clock)
    : client_(client), component_(std::move(component)), clock_(clock) {}

void EventRecorder::Record(const Json& object, EventType type, const std::string& reason,
                           const std::string& message) {
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) {
    spdlog::warn("event {}: the involved object has no metadata", reason);
    return;
  }
  const Json& metadata = object["metadata"];
  std::string name = Field(metadata, "name");
  std::string ns = Field(metadata, "namespace");
  if (ns.empty()) ns = "default";  // events about cluster-scoped objects
  std::string uid = Field(metadata, "uid");
  const char* type_name = type == EventType::kNormal ? "Normal" : "Warning";
  const double now_unix = clock_.NowUnixSeconds();
  const std::string now = Rfc3339(now_unix);
  const std::string key =
      (uid.empty() ? ns + "/" + name : uid) + "\n" + type_name + "\n" + reason + "\n" + message;

  std::lock_guard<std::mutex> lock(mu_);
  auto previous = recorded_.find(key);
  if (previous != recorded_.end()) {
    Json patch = {{"count", previous->second.count + 1}, {"lastTimestamp", now}};
    StatusOr<Json> patched = client_.Patch(kEvents, ns, previous->second.event_name, patch);
    if (patched.ok()) {
      ++previous->second.count;
      return;
    }
    if (!IsNotFound(patched.status())) {
      spdlog::warn("event {} on {}/{}: {}", reason, ns, name, patched.status().message());
      return;
    }
    recorded_.erase(previous);  // expired on the server: write a new one
  }

  Json event = NewEvent(object, ns, type_name, reason, message, now_unix, component_);
  StatusOr<Json> created = client_.Create(kEvents, ns, event);
  if (!created.ok()) {
    spdlog::warn("event {} on {}/{}: {}", reason, ns, name, created.status().message());
    return;
  }
  if (recorded_.size() >= kMaxRecorded) recorded_.clear();
  recorded_[key] = Recorded{event["metadata"]["name"].get<std::string>(), 1};
}

}  // namespace bsw::kube
