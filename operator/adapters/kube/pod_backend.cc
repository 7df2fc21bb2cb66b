#include "operator/adapters/kube/pod_backend.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <tuple>
#include <utility>

#include "operator/adapters/kube/errors.h"
#include "operator/adapters/kube/resources.h"
#include "operator/adapters/system_clock.h"
#include "operator/core/api.h"
#include "operator/core/output_tail.h"
#include "operator/core/parse.h"
#include "operator/ports/trial_contract.h"

namespace bsw::kube {
namespace {

std::string FormatSeconds(double value) {
  char text[48];
  std::snprintf(text, sizeof(text), "%.3f", value);
  return text;
}

// Sets env `name` in a container's env list, replacing an entry of the same name.
void SetEnv(Json& env, const std::string& name, Json entry) {
  entry["name"] = name;
  for (Json& existing : env) {
    if (existing.value("name", "") == name) {
      existing = std::move(entry);
      return;
    }
  }
  env.push_back(std::move(entry));
}

// Pod Security "restricted" defaults for a container, keeping whatever the template set.
void RestrictContainer(Json& container) {
  Json& context = container["securityContext"];
  if (!context.is_object()) context = Json::object();
  if (!context.contains("allowPrivilegeEscalation")) context["allowPrivilegeEscalation"] = false;
  Json& capabilities = context["capabilities"];
  if (!capabilities.is_object()) capabilities = Json::object();
  if (!capabilities.contains("drop")) capabilities["drop"] = Json::array({"ALL"});
}

bool AnyContainerSets(const Json& spec, const char* field) {
  for (const char* list : {"containers", "initContainers"}) {
    for (const Json& container : spec.value(list, Json::array())) {
      if (container.contains("securityContext") && container["securityContext"].is_object() &&
          container["securityContext"].contains(field)) {
        return true;
      }
    }
  }
  return false;
}

std::optional<double> TimeAt(const Json& object, const Json::json_pointer& pointer) {
  if (!object.contains(pointer) || !object[pointer].is_string()) return std::nullopt;
  return ParseRfc3339(object[pointer].get<std::string>());
}

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

bool IsFinished(const Json& pod) {
  std::string phase = pod.value("status", Json::object()).value("phase", "");
  return phase == "Succeeded" || phase == "Failed";
}

// The kubelet sends SIGTERM at activeDeadlineSeconds and SIGKILL a grace period later; the port's
// contract is SIGKILL at the deadline, so the grace period comes off first.
int64_t DeadlineSecondsFrom(double deadline, double grace, double start) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::floor(deadline - grace - start)));
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

std::optional<double> ParseRfc3339(const std::string& text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%*1[Tt ]%2d:%2d:%2d%n", &year, &month, &day, &hour,
                  &minute, &second, &consumed) != 6 ||
      consumed != 19) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  size_t at = 19;
  double fraction = 0;
  if (at < text.size() && text[at] == '.') {
    size_t start = ++at;
    double scale = 0.1;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      fraction += (text[at] - '0') * scale;
      scale /= 10;
      ++at;
    }
    if (at == start) return std::nullopt;
  }
  int offset_seconds = 0;
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
    ++at;
  } else if (at + 6 == text.size() && (text[at] == '+' || text[at] == '-') && text[at + 3] == ':') {
    int hours = 0, minutes = 0;
    if (!ParsesFully(text.substr(at + 1, 2), &hours) ||
        !ParsesFully(text.substr(at + 4, 2), &minutes)) {
      return std::nullopt;
    }
    offset_seconds = (text[at] == '+' ? 1 : -1) * (hours * 3600 + minutes * 60);
    at += 6;
  } else {
    return std::nullopt;
  }
  if (at != text.size()) return std::nullopt;
  using namespace std::chrono;
  year_month_day date{std::chrono::year(year), std::chrono::month(static_cast<unsigned>(month)),
                      std::chrono::day(static_cast<unsigned>(day))};
  if (!date.ok()) return std::nullopt;
  double days = static_cast<double>(sys_days(date).time_since_epoch().count());
  return days * 86400 + hour * 3600 + minute * 60 + second + fraction - offset_seconds;
}

std::optional<SegmentStatus> SegmentStatusOfPod(const Json& pod, int default_metrics_port) {
  const Json& metadata = pod.value("metadata", Json::object());
  const Json& labels = metadata.value("labels", Json::object());
  if (!labels.contains(kTrialLabel) || !labels.contains(kSegmentLabel)) return std::nullopt;
  SegmentStatus segment;
  segment.trial = labels[kTrialLabel].get<std::string>();
  if (!ParsesFully(labels[kSegmentLabel].get<std::string>(), &segment.segment)) return std::nullopt;

  const Json& spec = pod.value("spec", Json::object());
  const Json& status = pod.value("status", Json::object());
  const Json& containers = spec.value("containers", Json::array());
  if (!containers.empty()) segment.devices = GpuCount(containers[0].value("resources", Json()));
  double deadline = 0;
  if (ParsesFully(Annotation(pod, kDeadlineAnnotation), &deadline)) {
    segment.deadline_unix_seconds = deadline;
  }
  int port = default_metrics_port;
  (void)ParsesFully(Annotation(pod, kMetricsPortAnnotation), &port);
  std::string pod_ip = status.value("podIP", "");
  if (!pod_ip.empty()) {
    segment.metrics_url = "http://" + pod_ip + ":" + std::to_string(port) + "/metrics";
  }

  Json container_state = Json::object();
  const Json& container_statuses = status.value("containerStatuses", Json::array());
  if (!container_statuses.empty()) {
    container_state = container_statuses[0].value("state", Json::object());
  }
  for (const Json& finalizer : metadata.value("finalizers", Json::array())) {
    if (finalizer == kAccountingFinalizer) segment.charge_held = true;
  }
  bool deleting = metadata.contains("deletionTimestamp");
  bool stopped = deleting || Annotation(pod, kStoppedAnnotation) == "true";
  std::string phase = status.value("phase", "");

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

  bool failed = phase == "Failed";
  bool succeeded = phase == "Succeeded";
  if (!failed && !succeeded && container_state.contains("terminated")) {
    // The kubelet wrote the container's end before the phase: decide from the exit code.
    succeeded = segment.exit_code == 0;
    failed = !succeeded;
  }
  if (!failed && !succeeded && deleting && !container_state.contains("running") &&
      metadata.value("deletionGracePeriodSeconds", -1) == 0) {
    failed = true;  // deleted before it ever ran, and the kubelet has let go: no charge
  }
  if (succeeded) {
    segment.state = SegmentState::kSucceeded;
  } else if (failed) {
    segment.state = SegmentState::kFailed;
    const std::string pod_reason = status.value("reason", "");
    if (pod_reason == "DeadlineExceeded") {
      segment.reason = Reason::kDeadlineExceeded;
    } else if (stopped) {
      segment.reason = Reason::kStopped;
    } else if (IsEndedByTheNode(pod_reason)) {
      segment.reason = Reason::kEvicted;
    } else {
      segment.reason = Reason::kError;
    }
  } else if (segment.started_unix_seconds) {
    segment.state = SegmentState::kRunning;
  } else {
    segment.state = SegmentState::kPending;
    SetWaitingReason(status, container_state, segment);
  }
  return segment;
}

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

StatusOr<Json> PodBackend::BuildPod(const SegmentSpec& spec, double now) const {
  if (!IsDnsLabel(spec.trial)) {
    return InvalidArgumentError("trial name '" + spec.trial +
                                "' must be a DNS label: lowercase letters, digits and '-', at most "
                                "63 characters");
  }
  if (spec.segment < 0) return InvalidArgumentError("segment must be >= 0");
  std::string name = PodName(spec.trial, spec.segment);
  if (name.size() > 63) {
    return InvalidArgumentError("pod name '" + name + "' is longer than 63 characters");
  }
  if (!(spec.deadline_unix_seconds > 0)) {
    return InvalidArgumentError("segment " + name + " has no deadline");
  }
  if (spec.devices < 0) return InvalidArgumentError("devices must be >= 0");

  Json pod = Json::object();
  pod["apiVersion"] = "v1";
  pod["kind"] = "Pod";
  Json metadata = options_.trial_template.value("metadata", Json::object());
  if (!metadata.is_object()) metadata = Json::object();
  for (const char* drop : {"name", "generateName", "namespace", "uid", "resourceVersion",
                           "creationTimestamp", "ownerReferences", "finalizers"}) {
    metadata.erase(drop);
  }
  metadata["name"] = name;
  metadata["namespace"] = options_.ns;
  if (!metadata["labels"].is_object()) metadata["labels"] = Json::object();
  metadata["labels"][kSweepLabel] = options_.owner.name;
  metadata["labels"][kTrialLabel] = spec.trial;
  metadata["labels"][kSegmentLabel] = std::to_string(spec.segment);
  if (!metadata["annotations"].is_object()) metadata["annotations"] = Json::object();
  metadata["annotations"][kDeadlineAnnotation] = FormatSeconds(spec.deadline_unix_seconds);
  metadata["annotations"][kMetricsPortAnnotation] = std::to_string(options_.metrics_port);
  // For a Prometheus that discovers pods by the common annotations (docs/design.md, "Metrics
  // and Prometheus").
  for (const auto& [key, value] :
       {std::pair<const char*, std::string>{"prometheus.io/scrape", "true"},
        {"prometheus.io/port", std::to_string(options_.metrics_port)},
        {"prometheus.io/path", "/metrics"}}) {
    if (!metadata["annotations"].contains(key)) metadata["annotations"][key] = value;
  }
  metadata["ownerReferences"] = Json::array({Json{{"apiVersion", options_.owner.api_version},
                                                  {"kind", options_.owner.kind},
                                                  {"name", options_.owner.name},
                                                  {"uid", options_.owner.uid},
                                                  {"controller", true},
                                                  {"blockOwnerDeletion", false}}});
  metadata["finalizers"] = Json::array({kAccountingFinalizer});
  pod["metadata"] = std::move(metadata);

  Json pod_spec = options_.trial_template["spec"];
  pod_spec["restartPolicy"] = "Never";
  pod_spec["activeDeadlineSeconds"] =
      DeadlineSecondsFrom(spec.deadline_unix_seconds, spec.grace_seconds, now);
  pod_spec["terminationGracePeriodSeconds"] =
      static_cast<int64_t>(std::ceil(std::max(0.0, spec.grace_seconds)));

  Json& container = pod_spec["containers"][0];
  Json& args = container["args"];
  if (!args.is_array()) args = Json::array();
  for (const std::string& arg : spec.extra_args) args.push_back(arg);
  for (const auto& [param, value] : spec.params) args.push_back("--" + param + "=" + value);

  // A failed trainer's last log lines become its termination message (SegmentStatus::
  // output_tail), unless the template chose its own policy.
  if (!container.contains("terminationMessagePolicy")) {
    container["terminationMessagePolicy"] = "FallbackToLogsOnError";
  }

  Json& env = container["env"];
  if (!env.is_array()) env = Json::array();
  for (const auto& [var, value] : spec.env) SetEnv(env, var, Json{{"value", value}});
  std::string checkpoint_dir = options_.checkpoint_dir;
  while (checkpoint_dir.size() > 1 && checkpoint_dir.back() == '/') checkpoint_dir.pop_back();
  auto checkpoint_dir_of = [&](const std::string& trial) { return checkpoint_dir + "/" + trial; };
  for (const auto& [var, value] :
       TrialContractEnv(spec, checkpoint_dir_of, options_.metrics_port)) {
    SetEnv(env, var, Json{{"value", value}});
  }
  SetEnv(env, "BUDGETSWEEP_METRICS_HOST",
         Json{{"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}});

  Json& resources = container["resources"];
  if (!resources.is_object()) resources = Json::object();
  for (const char* kind : {"limits", "requests"}) {
    if (spec.devices > 0) {
      if (!resources[kind].is_object()) resources[kind] = Json::object();
      resources[kind][kGpuResource] = std::to_string(spec.devices);
    } else if (resources.contains(kind) && resources[kind].is_object()) {
      resources[kind].erase(kGpuResource);
    }
  }

  Json& pod_context = pod_spec["securityContext"];
  if (!pod_context.is_object()) pod_context = Json::object();
  if (!pod_context.contains("runAsNonRoot") && !AnyContainerSets(pod_spec, "runAsNonRoot")) {
    pod_context["runAsNonRoot"] = true;
  }
  if (!pod_context.contains("runAsUser") && !AnyContainerSets(pod_spec, "runAsUser")) {
    pod_context["runAsUser"] = 65532;
  }
  if (!pod_context.contains("seccompProfile") && !AnyContainerSets(pod_spec, "seccompProfile")) {
    pod_context["seccompProfile"] = Json{{"type", "RuntimeDefault"}};
  }
  for (const char* list : {"containers", "initContainers"}) {
    if (!pod_spec.contains(list)) continue;
    for (Json& each : pod_spec[list]) RestrictContainer(each);
  }
  pod["spec"] = std::move(pod_spec);
  return pod;
}

Status PodBackend::Start(const SegmentSpec& spec) {
  StatusOr<Json> pod = BuildPod(spec, Now());
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
    int64_t wanted = DeadlineSecondsFrom(deadline_unix_seconds, grace, *start);
    std::optional<int64_t> current;
    if (spec.contains("activeDeadlineSeconds"))
      current = spec["activeDeadlineSeconds"].get<int64_t>();
    if (current && wanted > *current) {
      return FailedPreconditionError(
          "pod " + name + ": moving the deadline to " + FormatSeconds(deadline_unix_seconds) +
          " needs activeDeadlineSeconds " + std::to_string(wanted) + " > " +
          std::to_string(*current) +
          ", and Kubernetes only lets it decrease; on Kubernetes a segment's whole rung is "
          "reserved at Start");
    }
    Json patch = {
        {"metadata",
         {{"resourceVersion", (*pod)["metadata"]["resourceVersion"]},
          {"annotations", {{kDeadlineAnnotation, FormatSeconds(deadline_unix_seconds)}}}}}};
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
    const bool stopped = Annotation(pod, kStoppedAnnotation) == "true" ||
                         pod["metadata"].contains("deletionTimestamp");
    if (options_.client != nullptr && segment->state == SegmentState::kSucceeded && !stopped &&
        segment->charge_held) {
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
