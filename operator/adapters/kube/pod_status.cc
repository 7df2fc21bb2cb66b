#include "operator/adapters/kube/pod_status.h"

#include <string>

#include "operator/core/output_tail.h"
#include "operator/core/parse.h"
#include "operator/core/rfc3339.h"

namespace bsw::kube {
namespace {

// A quantity like "2" or 2; 0 when absent or not a whole number.
int GpuCount(const Json& resources) {
  for (const char* kind : {"limits", "requests"}) {
    if (!resources.contains(kind) || !resources[kind].contains(kGpuResource)) continue;
    const Json& value = resources[kind][kGpuResource];
    if (value.is_number_integer()) return value.get<int>();
    int count = 0;
    if (value.is_string() && ParsesFully(value.get<std::string>(), &count)) return count;
  }
  return 0;
}

std::string Annotation(const Json& pod, const char* key) {
  const Json& metadata = pod.value("metadata", Json::object());
  const Json& annotations = metadata.value("annotations", Json::object());
  auto found = annotations.find(key);
  return found != annotations.end() && found->is_string() ? found->get<std::string>() : "";
}

// Container waiting reasons that hold a pod up until someone acts (the kubelet keeps retrying):
// its image cannot be had, or its container cannot be made from the spec.
bool IsStuckWaitingReason(const std::string& reason) {
  for (const char* stuck :
       {"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName",
        "CreateContainerConfigError", "CreateContainerError"}) {
    if (reason == stuck) return true;
  }
  return false;
}

// Why a pending pod does not start, as the scheduler or the kubelet says it: the PodScheduled
// condition's Unschedulable, or the trial container's stuck waiting state.
void SetWaitingReason(const Json& status, const Json& container_state, SegmentStatus& segment) {
  for (const Json& condition : status.value("conditions", Json::array())) {
    if (condition.value("type", "") == "PodScheduled" && condition.value("status", "") == "False" &&
        condition.value("reason", "") == "Unschedulable") {
      segment.waiting_reason = "Unschedulable";
      segment.waiting_message = condition.value("message", "");
      return;
    }
  }
  const Json& waiting = container_state.value("waiting", Json::object());
  if (std::string reason = waiting.value("reason", ""); IsStuckWaitingReason(reason)) {
    segment.waiting_reason = reason;
    segment.waiting_message = waiting.value("message", "");
  }
}

// A pod the kubelet refused at admission (OutOf<resource>, for instance while the pods it replaces
// are still terminating, or UnexpectedAdmissionError) or evicted: the node ended it, not its
// trainer.
bool IsEndedByTheNode(const std::string& pod_reason) {
  return pod_reason == "Evicted" || pod_reason == "UnexpectedAdmissionError" ||
         pod_reason.starts_with("OutOf");
}

// The trial and segment our labels name; nullopt for a pod without them.
std::optional<SegmentStatus> SegmentOfLabels(const Json& metadata) {
  const Json& labels = metadata.value("labels", Json::object());
  if (!labels.contains(kTrialLabel) || !labels.contains(kSegmentLabel)) return std::nullopt;
  SegmentStatus segment;
  segment.trial = labels[kTrialLabel].get<std::string>();
  if (!ParsesFully(labels[kSegmentLabel].get<std::string>(), &segment.segment)) return std::nullopt;
  return segment;
}

// What the pod was given: its GPUs, its deadline, where its metrics are served, and whether it
// still holds its charge (the accounting finalizer).
void ReadPlacement(const Json& pod, int default_metrics_port, SegmentStatus& segment) {
  const Json& containers = pod.value("spec", Json::object()).value("containers", Json::array());
  if (!containers.empty()) segment.devices = GpuCount(containers[0].value("resources", Json()));
  double deadline = 0;
  if (ParsesFully(Annotation(pod, kDeadlineAnnotation), &deadline)) {
    segment.deadline_unix_seconds = deadline;
  }
  int port = default_metrics_port;
  (void)ParsesFully(Annotation(pod, kMetricsPortAnnotation), &port);
  std::string pod_ip = pod.value("status", Json::object()).value("podIP", "");
  if (!pod_ip.empty()) {
    segment.metrics_url = "http://" + pod_ip + ":" + std::to_string(port) + "/metrics";
  }
  const Json& metadata = pod.value("metadata", Json::object());
  for (const Json& finalizer : metadata.value("finalizers", Json::array())) {
    if (finalizer == kAccountingFinalizer) segment.charge_held = true;
  }
}

// The trial container's state, containerStatuses[0].state; empty before the kubelet reports it.
Json ContainerState(const Json& status) {
  const Json& container_statuses = status.value("containerStatuses", Json::array());
  if (container_statuses.empty()) return Json::object();
  return container_statuses[0].value("state", Json::object());
}

// The container's start, and once it has ended its end, exit code and, for a failure, the tail
// of its termination message.
void ReadContainerRun(const Json& container_state, SegmentStatus& segment) {
  if (container_state.contains("terminated")) {
    const Json& terminated = container_state["terminated"];
    segment.started_unix_seconds = TimeAt(terminated, "/startedAt"_json_pointer);
    segment.finished_unix_seconds = TimeAt(terminated, "/finishedAt"_json_pointer);
    if (terminated.contains("exitCode")) segment.exit_code = terminated["exitCode"].get<int>();
    if (segment.exit_code.value_or(0) != 0 && terminated.contains("message") &&
        terminated["message"].is_string()) {
      segment.output_tail = OutputTail(terminated["message"].get<std::string>());
    }
  } else if (container_state.contains("running")) {
    segment.started_unix_seconds = TimeAt(container_state["running"], "/startedAt"_json_pointer);
  }
}

enum class PodEnd { kNotEnded, kSucceeded, kFailed };

// How the pod ended: its phase; before the phase, the container's exit code; or a pod deleted
// before its container ever ran, once the kubelet has let go of it (no charge).
PodEnd EndOf(const Json& pod, const Json& container_state, const SegmentStatus& segment) {
  const std::string phase = pod.value("status", Json::object()).value("phase", "");
  if (phase == "Succeeded") return PodEnd::kSucceeded;
  if (phase == "Failed") return PodEnd::kFailed;
  if (container_state.contains("terminated")) {
    return segment.exit_code == 0 ? PodEnd::kSucceeded : PodEnd::kFailed;
  }
  const Json& metadata = pod.value("metadata", Json::object());
  if (metadata.contains("deletionTimestamp") && !container_state.contains("running") &&
      metadata.value("deletionGracePeriodSeconds", -1) == 0) {
    return PodEnd::kFailed;
  }
  return PodEnd::kNotEnded;
}

Reason FailureReason(const Json& pod) {
  const std::string pod_reason = pod.value("status", Json::object()).value("reason", "");
  if (pod_reason == "DeadlineExceeded") return Reason::kDeadlineExceeded;
  if (IsStoppedPod(pod)) return Reason::kStopped;
  if (IsEndedByTheNode(pod_reason)) return Reason::kEvicted;
  return Reason::kError;
}

}  // namespace

std::optional<SegmentStatus> SegmentStatusOfPod(const Json& pod, int default_metrics_port) {
  std::optional<SegmentStatus> segment = SegmentOfLabels(pod.value("metadata", Json::object()));
  if (!segment) return std::nullopt;
  ReadPlacement(pod, default_metrics_port, *segment);
  const Json& status = pod.value("status", Json::object());
  const Json container_state = ContainerState(status);
  ReadContainerRun(container_state, *segment);
  switch (EndOf(pod, container_state, *segment)) {
    case PodEnd::kSucceeded:
      segment->state = SegmentState::kSucceeded;
      break;
    case PodEnd::kFailed:
      segment->state = SegmentState::kFailed;
      segment->reason = FailureReason(pod);
      break;
    case PodEnd::kNotEnded:
      if (segment->started_unix_seconds) {
        segment->state = SegmentState::kRunning;
      } else {
        segment->state = SegmentState::kPending;
        SetWaitingReason(status, container_state, *segment);
      }
      break;
  }
  return segment;
}

bool IsStoppedPod(const Json& pod) {
  return pod.value("metadata", Json::object()).contains("deletionTimestamp") ||
         Annotation(pod, kStoppedAnnotation) == "true";
}

std::optional<double> TimeAt(const Json& object, const Json::json_pointer& pointer) {
  if (!object.contains(pointer) || !object[pointer].is_string()) return std::nullopt;
  return ParseRfc3339(object[pointer].get<std::string>());
}

}  // namespace bsw::kube
