// The pod built for a segment (operator/adapters/kube/pod_builder.h), one row per rule. Against
// the real node in tests/cluster/pod_backend_test.cc.
#include "operator/adapters/kube/pod_builder.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace bsw::kube {
namespace {

struct BuildRow {
  std::string name;
  // Changes the options (template "c" with args ["--base"], sweep "sw", namespace "ns") and the
  // segment (sw-t0001 segment 3, deadline 1000, grace 10, one GPU) before the pod is built at 900.
  std::function<void(PodBackendOptions&, SegmentSpec&)> change;
  std::string error;  // a part of the InvalidArgument message; empty: the pod is built
  // What the pod holds, by JSON pointer; null: absent. "env:NAME" is the trainer's env entry
  // NAME without its name.
  std::vector<std::pair<std::string, Json>> want;
};

Json Container(Json fields) {
  Json container = {{"name", "c"}, {"image", "i"}, {"args", {"--base"}}};
  container.update(fields);
  return container;
}

void SetContainer(PodBackendOptions& options, Json fields) {
  options.trial_template["spec"]["containers"] = Json::array({Container(std::move(fields))});
}

const std::vector<BuildRow>& BuildRows() {
  static const std::vector<BuildRow> rows = {
      {"names the pod after the trial and segment, with our labels, owner and finalizer",
       [](PodBackendOptions&, SegmentSpec&) {},
       "",
       {{"/apiVersion", "v1"},
        {"/kind", "Pod"},
        {"/metadata/name", "sw-t0001-s3"},
        {"/metadata/namespace", "ns"},
        {"/metadata/labels/budgetsweep.dev~1sweep", "sw"},
        {"/metadata/labels/budgetsweep.dev~1trial", "sw-t0001"},
        {"/metadata/labels/budgetsweep.dev~1segment", "3"},
        {"/metadata/ownerReferences/0/uid", "uid-1"},
        {"/metadata/ownerReferences/0/controller", true},
        {"/metadata/ownerReferences/0/blockOwnerDeletion", false},
        {"/metadata/finalizers", Json::array({"budgetsweep.dev/accounting"})},
        {"/spec/restartPolicy", "Never"}}},
      {"takes the grace period off the deadline, counted from now",
       [](PodBackendOptions&, SegmentSpec& spec) {
         spec.deadline_unix_seconds = 1000.9;
         spec.grace_seconds = 2.5;
       },
       "",
       {{"/spec/activeDeadlineSeconds", 98},  // floor(1000.9 - 2.5 - 900)
        {"/spec/terminationGracePeriodSeconds", 3},
        {"/metadata/annotations/budgetsweep.dev~1deadline", "1000.900"}}},
      {"gives a deadline already past the smallest one Kubernetes takes",
       [](PodBackendOptions&, SegmentSpec& spec) { spec.deadline_unix_seconds = 850; },
       "",
       {{"/spec/activeDeadlineSeconds", 1}}},
      {"keeps the template's metadata but its name, owner and server fields",
       [](PodBackendOptions& options, SegmentSpec&) {
         options.trial_template["metadata"] = {{"name", "x"},
                                               {"uid", "u"},
                                               {"finalizers", {"other"}},
                                               {"labels", {{"team", "a"}}},
                                               {"annotations", {{"prometheus.io/port", "1234"}}}};
       },
       "",
       {{"/metadata/name", "sw-t0001-s3"},
        {"/metadata/uid", nullptr},
        {"/metadata/finalizers", Json::array({"budgetsweep.dev/accounting"})},
        {"/metadata/labels/team", "a"},
        {"/metadata/annotations/prometheus.io~1port", "1234"},
        {"/metadata/annotations/prometheus.io~1scrape", "true"},
        {"/metadata/annotations/prometheus.io~1path", "/metrics"},
        {"/metadata/annotations/budgetsweep.dev~1metrics-port", "9400"}}},
      {"appends the probe's flags, then the parameters, to the template's args",
       [](PodBackendOptions&, SegmentSpec& spec) {
         spec.extra_args = {"--workers=4"};
         spec.params = {{"lr", "0.1"}, {"layers", "3"}};
         spec.param_args = {"--lr=0.1", "--layers=3"};
       },
       "",
       {{"/spec/containers/0/args", Json({"--base", "--workers=4", "--lr=0.1", "--layers=3"})}}},
      {"fills in the template's placeholders with the trial's values",
       [](PodBackendOptions& options, SegmentSpec& spec) {
         SetContainer(options, {{"command", {"python3", "train.py", "--lr=${trialParameters.lr}"}},
                                {"args", {"--layers=${trialParameters.layers}"}}});
         spec.params = {{"lr", "0.1"}, {"layers", "3"}};
       },
       "",
       {{"/spec/containers/0/command", Json({"python3", "train.py", "--lr=0.1"})},
        {"/spec/containers/0/args", Json({"--layers=3"})}}},
      {"runs a printing trainer's command under budgetsweep-collect, copied in by an init "
       "container from the operator's image",
       [](PodBackendOptions& options, SegmentSpec& spec) {
         SetContainer(options, {{"command", {"python3", "train.py"}}});
         options.collect_image = "budgetsweep/operator:1";
         spec.collector_args = {"--source=stdout", "--objective=accuracy"};
       },
       "",
       {{"/spec/initContainers/0/image", "budgetsweep/operator:1"},
        {"/spec/initContainers/0/command",
         Json({"/usr/local/bin/budgetsweep-collect", "--install=/budgetsweep/bin"})},
        {"/spec/initContainers/0/volumeMounts/0/mountPath", "/budgetsweep/bin"},
        {"/spec/initContainers/0/securityContext/allowPrivilegeEscalation", false},
        {"/spec/containers/0/command",
         Json({"/budgetsweep/bin/budgetsweep-collect", "--source=stdout", "--objective=accuracy",
               "--", "python3", "train.py"})},
        {"/spec/containers/0/args", Json({"--base"})},
        {"/spec/containers/0/volumeMounts/0", Json({{"name", "budgetsweep-collect"},
                                                    {"mountPath", "/budgetsweep/bin"},
                                                    {"readOnly", true}})},
        {"/spec/containers/0/volumeMounts/1/mountPath", "/budgetsweep/trial"},
        {"/spec/volumes/0", Json({{"name", "budgetsweep-collect"}, {"emptyDir", Json::object()}})},
        {"/spec/volumes/1", Json({{"name", "budgetsweep-trial"}, {"emptyDir", Json::object()}})},
        {"env:BUDGETSWEEP_TRIAL_DIR", Json({{"value", "/budgetsweep/trial"}})}}},
      {"refuses a printing trainer when the operator has no image to copy the collector from",
       [](PodBackendOptions&, SegmentSpec& spec) { spec.collector_args = {"--source=stdout"}; },
       "the operator has no --collect-image",
       {}},
      {"falls back to the log for a failed trainer's termination message",
       [](PodBackendOptions&, SegmentSpec&) {},
       "",
       {{"/spec/containers/0/terminationMessagePolicy", "FallbackToLogsOnError"}}},
      {"keeps the template's termination message policy",
       [](PodBackendOptions& options, SegmentSpec&) {
         SetContainer(options, {{"terminationMessagePolicy", "File"}});
       },
       "",
       {{"/spec/containers/0/terminationMessagePolicy", "File"}}},
      {"sets the trial contract's env over the template's and the segment's",
       [](PodBackendOptions& options, SegmentSpec& spec) {
         SetContainer(options, {{"env",
                                 {{{"name", "BUDGETSWEEP_TRIAL"}, {"value", "wrong"}},
                                  {{"name", "KEEP"}, {"value", "1"}}}}});
         spec.env = {{"EXTRA", "2"}};
         options.checkpoint_dir = "/ckpt//";
         options.metrics_port = 9500;
       },
       "",
       {{"env:BUDGETSWEEP_TRIAL", {{"value", "sw-t0001"}}},
        {"env:KEEP", {{"value", "1"}}},
        {"env:EXTRA", {{"value", "2"}}},
        {"env:BUDGETSWEEP_CHECKPOINT_DIR", {{"value", "/ckpt/sw-t0001"}}},
        {"env:BUDGETSWEEP_METRICS_PORT", {{"value", "9500"}}},
        {"env:BUDGETSWEEP_METRICS_HOST",
         {{"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}}}}},
      {"asks for the segment's GPUs as limit and request",
       [](PodBackendOptions&, SegmentSpec& spec) { spec.devices = 2; },
       "",
       {{"/spec/containers/0/resources/limits/nvidia.com~1gpu", "2"},
        {"/spec/containers/0/resources/requests/nvidia.com~1gpu", "2"}}},
      {"drops the template's GPUs for a CPU segment, keeping its other resources",
       [](PodBackendOptions& options, SegmentSpec& spec) {
         SetContainer(options,
                      {{"resources", {{"limits", {{"nvidia.com/gpu", "1"}, {"cpu", "2"}}}}}});
         spec.devices = 0;
       },
       "",
       {{"/spec/containers/0/resources/limits/nvidia.com~1gpu", nullptr},
        {"/spec/containers/0/resources/limits/cpu", "2"}}},
      {"adds Pod Security restricted defaults",
       [](PodBackendOptions&, SegmentSpec&) {},
       "",
       {{"/spec/securityContext/runAsNonRoot", true},
        {"/spec/securityContext/runAsUser", 65532},
        {"/spec/securityContext/seccompProfile/type", "RuntimeDefault"},
        {"/spec/containers/0/securityContext/allowPrivilegeEscalation", false},
        {"/spec/containers/0/securityContext/capabilities/drop", Json::array({"ALL"})}}},
      {"keeps the security settings the template's pod or containers make",
       [](PodBackendOptions& options, SegmentSpec&) {
         options.trial_template["spec"]["securityContext"] = {
             {"seccompProfile", {{"type", "Localhost"}}}};
         SetContainer(options, {{"securityContext",
                                 {{"allowPrivilegeEscalation", true}, {"runAsUser", 1000}}}});
         options.trial_template["spec"]["initContainers"] = {{{"name", "init"}}};
       },
       "",
       {{"/spec/securityContext/seccompProfile/type", "Localhost"},
        {"/spec/securityContext/runAsUser", nullptr},
        {"/spec/securityContext/runAsNonRoot", true},
        {"/spec/containers/0/securityContext/allowPrivilegeEscalation", true},
        {"/spec/containers/0/securityContext/runAsUser", 1000},
        {"/spec/initContainers/0/securityContext/allowPrivilegeEscalation", false}}},
      {"refuses a segment without a deadline",
       [](PodBackendOptions&, SegmentSpec& spec) { spec.deadline_unix_seconds = 0; },
       "segment sw-t0001-s3 has no deadline",
       {}},
      {"refuses a trial name that is no DNS label",
       [](PodBackendOptions&, SegmentSpec& spec) { spec.trial = "Upper_case"; },
       "trial name 'Upper_case' must be a DNS label",
       {}},
      {"refuses a pod name over 63 characters",
       [](PodBackendOptions&, SegmentSpec& spec) { spec.trial = std::string(61, 'a'); },
       "is longer than 63 characters",
       {}},
      {"refuses a negative segment",
       [](PodBackendOptions&, SegmentSpec& spec) { spec.segment = -1; },
       "segment must be >= 0",
       {}},
      {"refuses a negative device count",
       [](PodBackendOptions&, SegmentSpec& spec) { spec.devices = -1; },
       "devices must be >= 0",
       {}},
  };
  return rows;
}

// The entry of `pod`'s trainer env named `name`, without its name; null when there is none.
Json EnvEntry(const Json& pod, const std::string& name) {
  for (Json entry : pod["spec"]["containers"][0]["env"]) {
    if (entry["name"] == name) {
      entry.erase("name");
      return entry;
    }
  }
  return nullptr;
}

Json ValueAt(const Json& pod, const std::string& where) {
  if (where.starts_with("env:")) return EnvEntry(pod, where.substr(4));
  const Json::json_pointer pointer(where);
  return pod.contains(pointer) ? pod[pointer] : Json(nullptr);
}

TEST(BuildPod, BuildsEachRowsPod) {
  for (const BuildRow& row : BuildRows()) {
    PodBackendOptions options;
    options.ns = "ns";
    options.owner.name = "sw";
    options.owner.uid = "uid-1";
    options.trial_template = {{"spec", {{"containers", Json::array({Container(Json::object())})}}}};
    SegmentSpec spec;
    spec.sweep = "sw";
    spec.trial = "sw-t0001";
    spec.segment = 3;
    spec.devices = 1;
    spec.deadline_unix_seconds = 1000;
    spec.grace_seconds = 10;
    row.change(options, spec);
    StatusOr<Json> pod = BuildPod(options, spec, 900);
    if (!row.error.empty()) {
      EXPECT_EQ(pod.status().code(), StatusCode::kInvalidArgument) << row.name;
      EXPECT_NE(pod.status().message().find(row.error), std::string::npos)
          << row.name << ": " << pod.status().message();
      continue;
    }
    ASSERT_TRUE(pod.ok()) << row.name << ": " << pod.status().message();
    for (const auto& [where, value] : row.want) {
      EXPECT_EQ(ValueAt(*pod, where), value) << row.name << ": " << where;
    }
  }
}

TEST(ActiveDeadlineSeconds, IsTheWholeSecondsToTheDeadlineLessGraceAtLeastOne) {
  EXPECT_EQ(ActiveDeadlineSeconds(1000.9, 2.5, 900.5), 97);
  EXPECT_EQ(ActiveDeadlineSeconds(1000, 0, 1000), 1);
  EXPECT_EQ(ActiveDeadlineSeconds(900, 10, 1000), 1);
}

TEST(FormatDeadline, WritesMilliseconds) {
  EXPECT_EQ(FormatDeadline(1767000000), "1767000000.000");
  EXPECT_EQ(FormatDeadline(1000.9), "1000.900");
}

}  // namespace
}  // namespace bsw::kube
