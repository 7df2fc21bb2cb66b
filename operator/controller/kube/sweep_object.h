#ifndef BSW_CONTROLLER_KUBE_SWEEP_OBJECT_H_
#define BSW_CONTROLLER_KUBE_SWEEP_OBJECT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "nlohmann/json.hpp"

namespace bsw {

// A BudgetSweep as the reconciler reads it, read once at the adapter's edge so that no decision
// of the reconciler walks JSON: who it is, and the fields of its status that the reconciler
// decides on. The spec is ParseSweep's (core/api.h), from `object`.
struct SweepObject {
  nlohmann::json object;  // verbatim: for ParseSweep, the creator check and Events about it
  std::string ns;
  std::string name;
  std::string uid;
  int64_t generation = 0;
  // status without sweepEvents: what the reconciler compares its next status with.
  nlohmann::json status = nlohmann::json::object();
  std::string phase;                           // status.phase
  std::optional<int64_t> observed_generation;  // status.observedGeneration
  int64_t trials_created = 0;                  // status.trials.created
  bool has_throughput = false;                 // status.throughput is set: it has had probe runs
  // status.conditions: objects whose type, status, reason, message and lastTransitionTime are
  // strings where set (MergeConditions reads them).
  nlohmann::json conditions = nlohmann::json::array();

  // Whether it has had trials or probe runs.
  bool Started() const { return trials_created > 0 || has_throughput; }
};

// Reads `object` into `*sweep`. A malformed field is InvalidArgument naming each one, one per
// line, as "path: message" (`metadata.generation: must be an integer, got "x"`); `*sweep` then
// holds every other field as read and the default of each malformed one, enough to report the
// problem on the object.
[[nodiscard]] Status ReadSweepObject(const nlohmann::json& object, SweepObject* sweep);

}  // namespace bsw

#endif  // BSW_CONTROLLER_KUBE_SWEEP_OBJECT_H_
