#ifndef BSW_ADAPTERS_KUBE_POD_BUILDER_H_
#define BSW_ADAPTERS_KUBE_POD_BUILDER_H_

// The pod PodBackend::Start creates for a segment (pod_backend.h): the trial template with the
// segment's name, labels, deadline, arguments, environment and GPUs, under Pod Security
// "restricted" defaults.

#include <cstdint>
#include <string>

#include "base/status.h"
#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/pod_backend.h"

namespace bsw::kube {

// The pod for `spec`, created at time `now`. InvalidArgument for an unusable spec: a trial name
// that is no DNS label, a pod name over 63 characters, no deadline, a negative segment or device
// count. REQUIRES: `options` as PodBackend::Create accepts them (a template with a container).
[[nodiscard]] StatusOr<Json> BuildPod(const PodBackendOptions& options, const SegmentSpec& spec,
                                      double now);

// The pod's activeDeadlineSeconds for a SIGKILL at `deadline` when the pod counts from `start`,
// at least 1: the kubelet sends SIGTERM at activeDeadlineSeconds and SIGKILL a grace period
// later, so the grace period comes off first.
int64_t ActiveDeadlineSeconds(double deadline, double grace, double start);

// Unix seconds to the millisecond ("1767000000.000"), as the deadline annotation writes them.
std::string FormatDeadline(double deadline_unix_seconds);

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_POD_BUILDER_H_
