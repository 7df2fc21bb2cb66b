// A trial pod read back as its segment's status (operator/adapters/kube/pod_status.h), one row
// per rule. Against the real node in tests/cluster/pod_backend_test.cc.
#include "operator/adapters/kube/pod_status.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "operator/core/reason.h"

namespace bsw::kube {
namespace {

struct StatusRow {
  std::string name;
  Json patch;  // merged into BasePod() (RFC 7386: null removes a field)
  // The fields of the segment's status the row is about, as StatusFields writes them; null: the
  // pod is no segment of ours.
  Json want;
};

// A pending pod of segment 2 of trial t1, with 4 GPUs, holding its charge.
Json BasePod() {
  return {{"metadata",
           {{"labels", {{"budgetsweep.dev/trial", "t1"}, {"budgetsweep.dev/segment", "2"}}},
            {"annotations",
             {{"budgetsweep.dev/deadline", "1714564900.500"},
              {"budgetsweep.dev/metrics-port", "9000"}}},
            {"finalizers", {"budgetsweep.dev/accounting"}}}},
          {"spec", {{"containers", {{{"resources", {{"requests", {{"nvidia.com/gpu", 4}}}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

// A status patch: the pod's phase, and the trial container's state unless null.
Json PodStatus(const std::string& phase, Json state = nullptr) {
  Json status = {{"phase", phase}};
  if (!state.is_null()) status["containerStatuses"] = {{{"state", std::move(state)}}};
  return {{"status", std::move(status)}};
}

Json Terminated(Json exit_code, const std::string& message = "") {
  Json terminated = {{"startedAt", "2024-05-01T12:00:00Z"}, {"finishedAt", "2024-05-01T12:01:40Z"}};
  if (!exit_code.is_null()) terminated["exitCode"] = std::move(exit_code);
  if (!message.empty()) terminated["message"] = message;
  return {{"terminated", std::move(terminated)}};
}

Json Running() { return {{"running", {{"startedAt", "2024-05-01T12:00:00Z"}}}}; }

// One patch of the patches in order, their nulls kept.
Json Patches(std::initializer_list<Json> patches) {
  Json merged = Json::object();
  for (const Json& patch : patches) merged.update(patch, /*merge_objects=*/true);
  return merged;
}

Json Annotated(const char* key, Json value) {
  return {{"metadata", {{"annotations", {{key, std::move(value)}}}}}};
}

// Deleted before its container ran, with the grace period the kubelet has left it.
Json DeletedBeforeStart(int grace_seconds) {
  return {{"metadata",
           {{"deletionTimestamp", "2024-05-01T12:00:00Z"},
            {"deletionGracePeriodSeconds", grace_seconds}}}};
}

Json PodScheduled(const std::string& status, const std::string& reason,
                  const std::string& message) {
  return {{"status",
           {{"conditions",
             {{{"type", "PodScheduled"},
               {"status", status},
               {"reason", reason},
               {"message", message}}}}}}};
}

const char* StateName(SegmentState state) {
  switch (state) {
    case SegmentState::kPending:
      return "Pending";
    case SegmentState::kRunning:
      return "Running";
    case SegmentState::kSucceeded:
      return "Succeeded";
    case SegmentState::kFailed:
      return "Failed";
  }
  return "?";
}

Json StatusFields(const SegmentStatus& s) {
  auto optional = [](const auto& v) { return v ? Json(*v) : Json(nullptr); };
  return {{"trial", s.trial},
          {"segment", s.segment},
          {"state", StateName(s.state)},
          {"reason", ReasonName(s.reason)},
          {"started", optional(s.started_unix_seconds)},
          {"finished", optional(s.finished_unix_seconds)},
          {"exitCode", optional(s.exit_code)},
          {"outputTail", s.output_tail},
          {"waitingReason", s.waiting_reason},
          {"waitingMessage", s.waiting_message},
          {"devices", s.devices},
          {"deadline", s.deadline_unix_seconds},
          {"metricsUrl", s.metrics_url},
          {"chargeHeld", s.charge_held}};
}

const std::vector<StatusRow>& StatusRows() {
  const std::string oom = "loading\nTraceback\nRuntimeError: CUDA out of memory";
  const std::string unschedulable = "0/1 nodes are available: 1 Insufficient cpu.";
  const std::string back_off = "Back-off pulling image \"x:1\"";
  static const std::vector<StatusRow> rows = {
      {"reads the segment, its GPUs, deadline and charge from a pending pod",
       Json::object(),
       {{"trial", "t1"},
        {"segment", 2},
        {"state", "Pending"},
        {"started", nullptr},
        {"devices", 4},
        {"deadline", 1714564900.5},
        {"metricsUrl", ""},
        {"chargeHeld", true},
        {"waitingReason", ""}}},
      {"reads GPUs written as a string limit",
       {{"spec", {{"containers", {{{"resources", {{"limits", {{"nvidia.com/gpu", "2"}}}}}}}}}}},
       {{"devices", 2}}},
      {"counts no GPUs on a CPU pod",
       {{"spec", {{"containers", {{{"name", "c"}}}}}}},
       {{"devices", 0}}},
      {"holds no charge without the accounting finalizer",
       {{"metadata", {{"finalizers", nullptr}}}},
       {{"chargeHeld", false}}},
      {"runs from the container's start, metrics at the pod's IP and annotated port",
       Patches({PodStatus("Running", Running()), {{"status", {{"podIP", "10.0.0.7"}}}}}),
       {{"state", "Running"},
        {"started", 1714564800.0},
        {"metricsUrl", "http://10.0.0.7:9000/metrics"}}},
      {"serves metrics on the default port without the annotation",
       Patches({Annotated("budgetsweep.dev/metrics-port", nullptr),
                {{"status", {{"podIP", "10.0.0.7"}}}}}),
       {{"metricsUrl", "http://10.0.0.7:9400/metrics"}}},
      {"reads times with a fraction and an offset",
       PodStatus("Running", {{"running", {{"startedAt", "2024-05-01T14:00:00.5+02:00"}}}}),
       {{"state", "Running"}, {"started", 1714564800.5}}},
      {"fails with Error, times and exit code, no tail without a message",
       PodStatus("Failed", Terminated(137)),
       {{"state", "Failed"},
        {"reason", "Error"},
        {"exitCode", 137},
        {"started", 1714564800.0},
        {"finished", 1714564900.0},
        {"outputTail", ""}}},
      {"fails with the tail of a failed trainer's termination message",
       PodStatus("Failed", Terminated(1, oom + "\n")),
       {{"state", "Failed"}, {"outputTail", oom}}},
      {"keeps no tail of a trainer that exited 0",
       PodStatus("Succeeded", Terminated(0, "done\n")),
       {{"state", "Succeeded"}, {"reason", ""}, {"exitCode", 0}, {"outputTail", ""}}},
      {"fails with Stopped when we stopped it",
       Patches(
           {PodStatus("Failed", Terminated(143)), Annotated("budgetsweep.dev/stopped", "true")}),
       {{"state", "Failed"}, {"reason", "Stopped"}}},
      {"fails with DeadlineExceeded at the deadline, stopped or not",
       Patches({PodStatus("Failed", Terminated(137)),
                Annotated("budgetsweep.dev/stopped", "true"),
                {{"status", {{"reason", "DeadlineExceeded"}}}}}),
       {{"state", "Failed"}, {"reason", "DeadlineExceeded"}}},
      {"fails with Evicted when the node refused it, with no charge",
       Patches({PodStatus("Failed"), {{"status", {{"reason", "OutOfnvidia.com/gpu"}}}}}),
       {{"state", "Failed"}, {"reason", "Evicted"}, {"started", nullptr}}},
      {"fails with Evicted when the node evicted it",
       Patches({PodStatus("Failed"), {{"status", {{"reason", "Evicted"}}}}}),
       {{"state", "Failed"}, {"reason", "Evicted"}}},
      {"fails with Evicted on an admission error",
       Patches({PodStatus("Failed"), {{"status", {{"reason", "UnexpectedAdmissionError"}}}}}),
       {{"state", "Failed"}, {"reason", "Evicted"}}},
      {"succeeds on exit 0 before the phase says so",
       PodStatus("Running", Terminated(0)),
       {{"state", "Succeeded"}, {"finished", 1714564900.0}}},
      {"fails on a non-zero exit before the phase says so",
       PodStatus("Running", Terminated(2)),
       {{"state", "Failed"}, {"reason", "Error"}, {"exitCode", 2}}},
      {"fails on an end without an exit code before the phase says so",
       PodStatus("Running", Terminated(nullptr)),
       {{"state", "Failed"}, {"exitCode", nullptr}}},
      {"fails with Stopped, uncharged, when deleted before it ran and let go",
       DeletedBeforeStart(0),
       {{"state", "Failed"}, {"reason", "Stopped"}, {"started", nullptr}}},
      {"stays pending when deleted before it ran and not yet let go",
       DeletedBeforeStart(30),
       {{"state", "Pending"}}},
      {"runs on when deleted while running, until it ends",
       Patches({DeletedBeforeStart(0), PodStatus("Running", Running())}),
       {{"state", "Running"}}},
      {"waits as Unschedulable with the scheduler's message",
       PodScheduled("False", "Unschedulable", unschedulable),
       {{"state", "Pending"},
        {"waitingReason", "Unschedulable"},
        {"waitingMessage", unschedulable}}},
      {"waits for no reason while the container is being created",
       Patches({PodScheduled("True", "", ""),
                PodStatus("Pending", {{"waiting", {{"reason", "ContainerCreating"}}}})}),
       {{"state", "Pending"}, {"waitingReason", ""}}},
      {"waits on an image that cannot be pulled, with the kubelet's message",
       PodStatus("Pending", {{"waiting", {{"reason", "ImagePullBackOff"}, {"message", back_off}}}}),
       {{"state", "Pending"}, {"waitingReason", "ImagePullBackOff"}, {"waitingMessage", back_off}}},
      {"is no segment of ours without our labels", {{"metadata", {{"labels", nullptr}}}}, nullptr},
      {"is no segment of ours with a segment label that is no number",
       {{"metadata", {{"labels", {{"budgetsweep.dev/segment", "two"}}}}}},
       nullptr},
  };
  return rows;
}

TEST(SegmentStatusOfPod, ReadsEachRowsPod) {
  for (const StatusRow& row : StatusRows()) {
    Json pod = BasePod();
    pod.merge_patch(row.patch);
    std::optional<SegmentStatus> segment = SegmentStatusOfPod(pod, 9400);
    if (row.want.is_null()) {
      EXPECT_FALSE(segment) << row.name;
      continue;
    }
    ASSERT_TRUE(segment) << row.name;
    const Json got = StatusFields(*segment);
    for (const auto& [field, value] : row.want.items()) {
      EXPECT_EQ(got[field], value) << row.name << ": " << field;
    }
  }
}

TEST(IsStoppedPod, IsABeingDeletedPodOrOneWithTheStopAnnotation) {
  EXPECT_FALSE(IsStoppedPod(BasePod()));
  EXPECT_FALSE(IsStoppedPod(Json::object()));
  Json pod = BasePod();
  pod.merge_patch(Annotated("budgetsweep.dev/stopped", "true"));
  EXPECT_TRUE(IsStoppedPod(pod));
  pod = BasePod();
  pod.merge_patch(DeletedBeforeStart(30));
  EXPECT_TRUE(IsStoppedPod(pod));
}

TEST(TimeAt, ReadsAnRfc3339StringAndNothingElse) {
  const Json object = {{"at", "2024-05-01T12:00:00Z"}, {"number", 5}, {"bad", "noon"}};
  EXPECT_EQ(TimeAt(object, "/at"_json_pointer), 1714564800.0);
  EXPECT_EQ(TimeAt(object, "/number"_json_pointer), std::nullopt);
  EXPECT_EQ(TimeAt(object, "/bad"_json_pointer), std::nullopt);
  EXPECT_EQ(TimeAt(object, "/missing"_json_pointer), std::nullopt);
}

}  // namespace
}  // namespace bsw::kube
