#include "operator/adapters/kube/pod_backend.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <tuple>
#include <utility>

#include "operator/adapters/kube/errors.h"
#include "operator/adapters/kube/pod_builder.h"
#include "operator/adapters/kube/pod_status.h"
#include "operator/adapters/kube/resources.h"
#include "operator/adapters/system_clock.h"
#include "operator/core/output_tail.h"

namespace bsw::kube {
namespace {

bool IsFinished(const Json& pod) {
  std::string phase = pod.value("status", Json::object()).value("phase", "");
  return phase == "Succeeded" || phase == "Failed";
}

// Pod Security admission's answer to a pod that breaks the namespace's profile: 403 Forbidden,
// "pods "<name>" is forbidden: violates PodSecurity "restricted:latest": ...". Unlike the other
// 403s on a create (RBAC, an exceeded ResourceQuota, a terminating namespace), the same pod is
// refused again however long one waits.
bool IsRefusedByPodSecurity(const Status& status) {
  std::optional<ApiError> error = ApiErrorOf(status);
  return error && error->http_code == 403 &&
         status.message().find("violates PodSecurity") != std::string::npos;
}

}  // namespace

StatusOr<std::unique_ptr<PodBackend>> PodBackend::Create(PodBackendOptions options) {
  if (options.client == nullptr) return InvalidArgumentError("PodBackend needs a client");
  if (options.ns.empty()) return InvalidArgumentError("PodBackend needs a namespace");
  if (options.owner.name.empty() || options.owner.uid.empty()) {
    return InvalidArgumentError("PodBackend needs the sweep's name and uid for ownerReferences");
  }
  const Json& spec = options.trial_template.value("spec", Json::object());
  if (!spec.contains("containers") || !spec["containers"].is_array() ||
      spec["containers"].empty() || !spec["containers"][0].is_object()) {
    return InvalidArgumentError("the trial template has no containers (spec.containers[0])");
  }
  if (options.metrics_port <= 0 || options.metrics_port > 65535) {
    return InvalidArgumentError("metrics port must be in 1..65535");
  }
  return std::unique_ptr<PodBackend>(new PodBackend(std::move(options)));
}

PodBackend::PodBackend(PodBackendOptions options) : options_(std::move(options)) {}

double PodBackend::Now() const {
  return (options_.clock != nullptr ? *options_.clock : SystemClock::Get()).NowUnixSeconds();
}

std::string PodBackend::PodName(const std::string& trial, int segment) {
  return trial + "-s" + std::to_string(segment);
}

Status PodBackend::Start(const SegmentSpec& spec) {
  StatusOr<Json> pod = BuildPod(options_, spec, Now());
  if (!pod.ok()) return pod.status();
  StatusOr<Json> created = options_.client->Create(kPods, options_.ns, *pod);
  if (created.ok() || IsAlreadyExists(created.status())) {
    if (options_.list_pods) {
      SegmentStatus pending;
      pending.trial = spec.trial;
      pending.segment = spec.segment;
      pending.devices = spec.devices;
      pending.deadline_unix_seconds = spec.deadline_unix_seconds;
      expected_[PodName(spec.trial, spec.segment)] = {std::move(pending), Now()};
    }
    return OkStatus();
  }
  if (IsRefusedByPodSecurity(created.status())) {
    return InvalidArgumentError("the API server refused the pod: " + created.status().message());
  }
  return created.status();
}

Status PodBackend::Stop(const std::string& trial, int segment) {
  std::string name = PodName(trial, segment);
  StatusOr<Json> pod = options_.client->Get(kPods, options_.ns, name);
  if (!pod.ok()) return IsNotFound(pod.status()) ? OkStatus() : pod.status();
  if (IsFinished(*pod)) return OkStatus();
  if (!(*pod)["metadata"].contains("deletionTimestamp")) {
    StatusOr<Json> patched = options_.client->Patch(
        kPods, options_.ns, name,
        Json{{"metadata", {{"annotations", {{kStoppedAnnotation, "true"}}}}}});
    if (!patched.ok()) return IsNotFound(patched.status()) ? OkStatus() : patched.status();
  }
  DeleteOptions options;
  options.grace_period_seconds =
      (*pod).value("/spec/terminationGracePeriodSeconds"_json_pointer, static_cast<int64_t>(30));
  options.precondition_uid = (*pod).value("/metadata/uid"_json_pointer, "");
  Status deleted = options_.client->Delete(kPods, options_.ns, name, options);
  if (!deleted.ok() && !IsNotFound(deleted)) return deleted;
  return OkStatus();
}

Status PodBackend::SetDeadline(const std::string& trial, int segment,
                               double deadline_unix_seconds) {
  if (!(deadline_unix_seconds > 0)) return InvalidArgumentError("deadline must be > 0");
  std::string name = PodName(trial, segment);
  return RetryOnConflict([&]() -> Status {
    StatusOr<Json> pod = options_.client->Get(kPods, options_.ns, name);
    if (!pod.ok()) {
      return IsNotFound(pod.status()) ? NotFoundError("no pod " + name + " for segment " +
                                                      std::to_string(segment) + " of " + trial)
                                      : pod.status();
    }
    if (IsFinished(*pod)) return OkStatus();
    std::optional<double> start = TimeAt(*pod, "/status/startTime"_json_pointer);
    if (!start) start = TimeAt(*pod, "/metadata/creationTimestamp"_json_pointer);
    if (!start) return InternalError("pod " + name + " has neither startTime nor creation time");
    const Json& spec = (*pod)["spec"];
    double grace = spec.value("terminationGracePeriodSeconds", 0.0);
    int64_t wanted = ActiveDeadlineSeconds(deadline_unix_seconds, grace, *start);
    std::optional<int64_t> current;
    if (spec.contains("activeDeadlineSeconds"))
      current = spec["activeDeadlineSeconds"].get<int64_t>();
    if (current && wanted > *current) {
      return FailedPreconditionError(
          "pod " + name + ": moving the deadline to " + FormatDeadline(deadline_unix_seconds) +
          " needs activeDeadlineSeconds " + std::to_string(wanted) + " > " +
          std::to_string(*current) +
          ", and Kubernetes only lets it decrease; on Kubernetes a segment's whole rung is "
          "reserved at Start");
    }
    Json patch = {
        {"metadata",
         {{"resourceVersion", (*pod)["metadata"]["resourceVersion"]},
          {"annotations", {{kDeadlineAnnotation, FormatDeadline(deadline_unix_seconds)}}}}}};
    if (!current || wanted < *current) patch["spec"] = {{"activeDeadlineSeconds", wanted}};
    StatusOr<Json> patched = options_.client->Patch(kPods, options_.ns, name, patch);
    return patched.status();
  });
}

StatusOr<std::vector<Json>> PodBackend::ListPods() const {
  if (options_.list_pods) return options_.list_pods();
  std::vector<Json> pods;
  ListOptions list;
  list.label_selector = std::string(kSweepLabel) + "=" + options_.owner.name;
  list.limit = 500;
  do {
    StatusOr<Json> page = options_.client->List(kPods, options_.ns, list);
    if (!page.ok()) return page.status();
    for (Json& pod : (*page)["items"]) pods.push_back(std::move(pod));
    list.continue_token = (*page).value("/metadata/continue"_json_pointer, "");
  } while (!list.continue_token.empty());
  return pods;
}

// A trainer that exited 0 on its own leaves no termination message (FallbackToLogsOnError), yet
// one that exited short of its UNTIL fails, and its end gives its output's tail: read from its
// log once a pod, while the pod still holds its charge (before its end is journaled). A log that
// cannot be read leaves the tail empty.
void PodBackend::AddExitTail(const Json& pod, const std::string& name, SegmentStatus& segment) {
  auto known = exit_tails_.find(name);
  if (known == exit_tails_.end()) {
    const Json& containers = pod["spec"]["containers"];
    std::string container = containers.empty() ? "" : containers[0].value("name", "");
    StatusOr<std::string> log =
        options_.client->PodLog(options_.ns, name, container, kExitTailLines, kExitTailBytes);
    known = exit_tails_.emplace(name, log.ok() ? OutputTail(*log) : std::string()).first;
  }
  segment.output_tail = known->second;
}

StatusOr<std::vector<SegmentStatus>> PodBackend::List() {
  StatusOr<std::vector<Json>> pods = ListPods();
  if (!pods.ok()) return pods.status();
  std::vector<SegmentStatus> segments;
  std::set<std::string> exited;
  std::set<std::string> listed;
  for (const Json& pod : *pods) {
    std::optional<SegmentStatus> segment = SegmentStatusOfPod(pod, options_.metrics_port);
    if (!segment) continue;
    const std::string name = pod["metadata"].value("name", "");
    listed.insert(name);
    if (options_.client != nullptr && segment->state == SegmentState::kSucceeded &&
        !IsStoppedPod(pod) && segment->charge_held) {
      AddExitTail(pod, name, *segment);
      exited.insert(name);
    }
    segments.push_back(std::move(*segment));
  }
  std::erase_if(exit_tails_, [&](const auto& entry) { return !exited.contains(entry.first); });
  // Pods created here that the cache has not shown yet are pending, for a while.
  for (auto it = expected_.begin(); it != expected_.end();) {
    if (listed.contains(it->first) || Now() - it->second.created_at > kExpectationSeconds) {
      it = expected_.erase(it);
    } else {
      segments.push_back((it++)->second.status);
    }
  }
  std::sort(segments.begin(), segments.end(), [](const SegmentStatus& a, const SegmentStatus& b) {
    return std::tie(a.trial, a.segment) < std::tie(b.trial, b.segment);
  });
  return segments;
}

Status ReleasePod(Client& client, const std::string& ns, const std::string& name) {
  // The pod is deleted before the finalizer comes off: the finalizer keeps it (deleted, charge
  // held) until then, so a crash between the two leaves it for the next pass to release again,
  // never a pod without the finalizer that no pass would look at. A pod still running (a trainer
  // serving its last values for a moment after its final epoch) is deleted too: its charge is
  // recorded, so it may not run on, and nothing else would remove it once it ends.
  StatusOr<Json> current = client.Get(kPods, ns, name);
  if (!current.ok()) return IsNotFound(current.status()) ? OkStatus() : current.status();
  bool fresh = true;  // `current` is the pod as it stands; a delete or a conflict changes it
  if (!(*current)["metadata"].contains("deletionTimestamp")) {
    Status deleted = client.Delete(kPods, ns, name);
    if (!deleted.ok() && !IsNotFound(deleted)) return deleted;
    fresh = false;
  }
  return RetryOnConflict([&]() -> Status {
    if (!fresh) current = client.Get(kPods, ns, name);
    fresh = false;
    if (!current.ok()) return IsNotFound(current.status()) ? OkStatus() : current.status();
    Json finalizers = Json::array();
    bool found = false;
    for (const Json& finalizer :
         (*current).value("/metadata/finalizers"_json_pointer, Json::array())) {
      if (finalizer == kAccountingFinalizer) {
        found = true;
      } else {
        finalizers.push_back(finalizer);
      }
    }
    if (!found) return OkStatus();
    Json patch = {{"metadata",
                   {{"resourceVersion", (*current)["metadata"]["resourceVersion"]},
                    {"finalizers", finalizers.empty() ? Json(nullptr) : finalizers}}}};
    StatusOr<Json> patched = client.Patch(kPods, ns, name, patch);
    if (!patched.ok() && IsNotFound(patched.status())) return OkStatus();
    return patched.status();
  });
}

Status PodBackend::ReleaseCharge(const std::string& trial, int segment) {
  return ReleasePod(*options_.client, options_.ns, PodName(trial, segment));
}

}  // namespace bsw::kube
