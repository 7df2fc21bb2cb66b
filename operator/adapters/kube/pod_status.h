#ifndef BSW_ADAPTERS_KUBE_POD_STATUS_H_
#define BSW_ADAPTERS_KUBE_POD_STATUS_H_

// A trial pod read back as its segment's status, as PodBackend::List reports it (pod_backend.h).

#include <optional>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/pod_backend.h"

namespace bsw::kube {

// A pod's status mapped to a segment's, as List does. nullopt for a pod without our labels.
std::optional<SegmentStatus> SegmentStatusOfPod(const Json& pod, int default_metrics_port);

// Whether the segment was stopped by us: the pod is being deleted or carries the stop annotation.
bool IsStoppedPod(const Json& pod);

// The RFC 3339 time at `pointer` in `object` as unix seconds; nullopt when it is missing or no
// time.
std::optional<double> TimeAt(const Json& object, const Json::json_pointer& pointer);

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_POD_STATUS_H_
