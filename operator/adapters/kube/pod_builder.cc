#include "operator/adapters/kube/pod_builder.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "contract/trainer_contract.h"
#include "operator/core/api.h"
#include "operator/core/placeholders.h"
#include "operator/ports/trial_contract.h"

namespace bsw::kube {
namespace {

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

// The segment's pod name, or why the segment cannot run as a pod.
StatusOr<std::string> CheckedPodName(const SegmentSpec& spec) {
  if (!IsDnsLabel(spec.trial)) {
    return InvalidArgumentError("trial name '" + spec.trial +
                                "' must be a DNS label: lowercase letters, digits and '-', at most "
                                "63 characters");
  }
  if (spec.segment < 0) return InvalidArgumentError("segment must be >= 0");
  std::string name = PodBackend::PodName(spec.trial, spec.segment);
  if (name.size() > 63) {
    return InvalidArgumentError("pod name '" + name + "' is longer than 63 characters");
  }
  if (!(spec.deadline_unix_seconds > 0)) {
    return InvalidArgumentError("segment " + name + " has no deadline");
  }
  if (spec.devices < 0) return InvalidArgumentError("devices must be >= 0");
  return name;
}

// The template's labels and annotations with the segment's own; the template's name, owner and
// server fields are dropped.
Json PodMetadata(const PodBackendOptions& options, const SegmentSpec& spec,
                 const std::string& name) {
  Json metadata = options.trial_template.value("metadata", Json::object());
  if (!metadata.is_object()) metadata = Json::object();
  for (const char* drop : {"name", "generateName", "namespace", "uid", "resourceVersion",
                           "creationTimestamp", "ownerReferences", "finalizers"}) {
    metadata.erase(drop);
  }
  metadata["name"] = name;
  metadata["namespace"] = options.ns;
  if (!metadata["labels"].is_object()) metadata["labels"] = Json::object();
  metadata["labels"][kSweepLabel] = options.owner.name;
  metadata["labels"][kTrialLabel] = spec.trial;
  metadata["labels"][kSegmentLabel] = std::to_string(spec.segment);
  Json& annotations = metadata["annotations"];
  if (!annotations.is_object()) annotations = Json::object();
  annotations[kDeadlineAnnotation] = FormatDeadline(spec.deadline_unix_seconds);
  annotations[kMetricsPortAnnotation] = std::to_string(options.metrics_port);
  // For a Prometheus that discovers pods by the common annotations (docs/design.md, "Metrics
  // and Prometheus").
  for (const auto& [key, value] :
       {std::pair<const char*, std::string>{"prometheus.io/scrape", "true"},
        {"prometheus.io/port", std::to_string(options.metrics_port)},
        {"prometheus.io/path", "/metrics"}}) {
    if (!annotations.contains(key)) annotations[key] = value;
  }
  metadata["ownerReferences"] = Json::array({Json{{"apiVersion", options.owner.api_version},
                                                  {"kind", options.owner.kind},
                                                  {"name", options.owner.name},
                                                  {"uid", options.owner.uid},
                                                  {"controller", true},
                                                  {"blockOwnerDeletion", false}}});
  metadata["finalizers"] = Json::array({kAccountingFinalizer});
  return metadata;
}

// The template's command and args with its placeholders filled in, then the probe phase's flags,
// then `--name=value` for each parameter the template does not place.
void AppendTrainerArgs(const SegmentSpec& spec, Json& container) {
  for (const char* key : {"command", "args"}) {
    if (!container.contains(key) || !container[key].is_array()) continue;
    for (Json& text : container[key]) {
      if (text.is_string()) text = PlaceParams(text.get<std::string>(), spec.params);
    }
  }
  Json& args = container["args"];
  if (!args.is_array()) args = Json::array();
  for (const std::string& arg : spec.extra_args) args.push_back(arg);
  for (const std::string& arg : spec.param_args) args.push_back(arg);
}

// The template's env, then the segment's, then the trial contract's, each replacing the one
// before it of the same name.
void SetTrainerEnv(const PodBackendOptions& options, const SegmentSpec& spec, Json& container) {
  Json& env = container["env"];
  if (!env.is_array()) env = Json::array();
  for (const auto& [var, value] : spec.env) SetEnv(env, var, Json{{"value", value}});
  std::string checkpoint_dir = options.checkpoint_dir;
  while (checkpoint_dir.size() > 1 && checkpoint_dir.back() == '/') checkpoint_dir.pop_back();
  auto checkpoint_dir_of = [&](const std::string& trial) { return checkpoint_dir + "/" + trial; };
  for (const auto& [var, value] : TrialContractEnv(spec, checkpoint_dir_of, options.metrics_port)) {
    SetEnv(env, var, Json{{"value", value}});
  }
  SetEnv(env, kEnvMetricsHost,
         Json{{"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}});
}

// The segment's GPUs as the container's limit and request; none on a CPU segment, whatever the
// template asked for.
void SetGpus(int devices, Json& container) {
  Json& resources = container["resources"];
  if (!resources.is_object()) resources = Json::object();
  for (const char* kind : {"limits", "requests"}) {
    if (devices > 0) {
      if (!resources[kind].is_object()) resources[kind] = Json::object();
      resources[kind][kGpuResource] = std::to_string(devices);
    } else if (resources.contains(kind) && resources[kind].is_object()) {
      resources[kind].erase(kGpuResource);
    }
  }
}

// Pod Security "restricted" defaults for the pod and each of its containers, where neither the
// pod nor any container of the template sets its own.
void RestrictPod(Json& pod_spec) {
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
}

// Where a wrapped trainer's pod holds budgetsweep-collect and the trial's own directory
// (BUDGETSWEEP_TRIAL_DIR, where a File collector's path lies): two emptyDir volumes.
constexpr char kCollectVolume[] = "budgetsweep-collect";
constexpr char kCollectDir[] = "/budgetsweep/bin";
constexpr char kTrialDirVolume[] = "budgetsweep-trial";
constexpr char kTrialDir[] = "/budgetsweep/trial";

void AddVolumeMount(Json& container, const char* volume, const char* path, bool read_only) {
  Json& mounts = container["volumeMounts"];
  if (!mounts.is_array()) mounts = Json::array();
  mounts.push_back(Json{{"name", volume}, {"mountPath", path}, {"readOnly", read_only}});
}

// Runs the trainer's command under budgetsweep-collect, copied from the operator's image by an
// init container (the command must be the template's own: the image's ENTRYPOINT is unknown here,
// so validation refuses a wrapped template without one).
void WrapInCollector(const PodBackendOptions& options, const SegmentSpec& spec, Json& pod_spec) {
  Json& volumes = pod_spec["volumes"];
  if (!volumes.is_array()) volumes = Json::array();
  for (const char* volume : {kCollectVolume, kTrialDirVolume}) {
    volumes.push_back(Json{{"name", volume}, {"emptyDir", Json::object()}});
  }
  Json install = {{"name", "budgetsweep-collect-install"},
                  {"image", options.collect_image},
                  {"command", Json::array({"/usr/local/bin/budgetsweep-collect",
                                           std::string("--install=") + kCollectDir})}};
  AddVolumeMount(install, kCollectVolume, kCollectDir, false);
  Json& init = pod_spec["initContainers"];
  if (!init.is_array()) init = Json::array();
  init.push_back(install);

  Json& container = pod_spec["containers"][0];
  Json command = Json::array({std::string(kCollectDir) + "/budgetsweep-collect"});
  for (const std::string& arg : spec.collector_args) command.push_back(arg);
  command.push_back("--");
  for (const Json& part : container.value("command", Json::array())) command.push_back(part);
  container["command"] = command;
  AddVolumeMount(container, kCollectVolume, kCollectDir, true);
  AddVolumeMount(container, kTrialDirVolume, kTrialDir, false);
  SetEnv(container["env"], kEnvTrialDir, Json{{"value", kTrialDir}});
}

Json PodSpec(const PodBackendOptions& options, const SegmentSpec& spec, double now) {
  Json pod_spec = options.trial_template["spec"];
  pod_spec["restartPolicy"] = "Never";
  pod_spec["activeDeadlineSeconds"] =
      ActiveDeadlineSeconds(spec.deadline_unix_seconds, spec.grace_seconds, now);
  pod_spec["terminationGracePeriodSeconds"] =
      static_cast<int64_t>(std::ceil(std::max(0.0, spec.grace_seconds)));
  Json& container = pod_spec["containers"][0];
  AppendTrainerArgs(spec, container);
  // A failed trainer's last log lines become its termination message (SegmentStatus::
  // output_tail), unless the template chose its own policy.
  if (!container.contains("terminationMessagePolicy")) {
    container["terminationMessagePolicy"] = "FallbackToLogsOnError";
  }
  SetTrainerEnv(options, spec, container);
  SetGpus(spec.devices, container);
  if (!spec.collector_args.empty()) WrapInCollector(options, spec, pod_spec);
  RestrictPod(pod_spec);
  return pod_spec;
}

}  // namespace

StatusOr<Json> BuildPod(const PodBackendOptions& options, const SegmentSpec& spec, double now) {
  StatusOr<std::string> name = CheckedPodName(spec);
  if (!name.ok()) return name.status();
  if (!spec.collector_args.empty() && options.collect_image.empty()) {
    return InvalidArgumentError(
        "segment " + *name +
        " runs its trainer under budgetsweep-collect "
        "(spec.metrics.collector), and the operator has no --collect-image");
  }
  Json pod = Json::object();
  pod["apiVersion"] = "v1";
  pod["kind"] = "Pod";
  pod["metadata"] = PodMetadata(options, spec, *name);
  pod["spec"] = PodSpec(options, spec, now);
  return pod;
}

int64_t ActiveDeadlineSeconds(double deadline, double grace, double start) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::floor(deadline - grace - start)));
}

std::string FormatDeadline(double deadline_unix_seconds) {
  char text[48];
  std::snprintf(text, sizeof(text), "%.3f", deadline_unix_seconds);
  return text;
}

}  // namespace bsw::kube
