// The pure parts of PodBackend (operator/adapters/kube/pod_backend.h): the pod built for a
// segment, and the segment status read back from a pod. Against the real node in
// tests/cluster/pod_backend_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "operator/adapters/kube/pod_backend.h"

namespace bsw::kube {
namespace {

TEST(ParseRfc3339Test, ParsesUtcWithAndWithoutFractionAndOffsets) {
  EXPECT_EQ(ParseRfc3339("1970-01-01T00:00:00Z"), 0.0);
  EXPECT_EQ(ParseRfc3339("2024-05-01T12:00:00Z"), 1714564800.0);
  EXPECT_NEAR(*ParseRfc3339("2024-05-01T12:00:00.123456Z"), 1714564800.123456, 1e-6);
  EXPECT_EQ(ParseRfc3339("2024-05-01T14:00:00+02:00"), 1714564800.0);
  EXPECT_EQ(ParseRfc3339("2024-05-01T11:30:00-00:30"), 1714564800.0);
  EXPECT_EQ(ParseRfc3339("2024-02-29T00:00:00Z"), 1709164800.0);
  EXPECT_FALSE(ParseRfc3339(""));
  EXPECT_FALSE(ParseRfc3339("2024-05-01 12:00"));
  EXPECT_FALSE(ParseRfc3339("2024-05-01T12:00:00"));
  EXPECT_FALSE(ParseRfc3339("2024-05-01T12:00:00.Z"));
  EXPECT_FALSE(ParseRfc3339("2023-02-29T00:00:00Z"));
  EXPECT_FALSE(ParseRfc3339("2024-05-01T12:00:00Zjunk"));
}

// BuildPod and SegmentStatusOfPod need no cluster.
std::unique_ptr<PodBackend> OfflineBackend(Json trial_template) {
  PodBackendOptions options;
  static Client* const kNoClient = reinterpret_cast<Client*>(1);  // never called
  options.client = kNoClient;
  options.ns = "ns";
  options.owner.name = "sw";
  options.owner.uid = "uid-1";
  options.trial_template = std::move(trial_template);
  StatusOr<std::unique_ptr<PodBackend>> backend = PodBackend::Create(std::move(options));
  EXPECT_TRUE(backend.ok()) << backend.status().message();
  return backend.ok() ? std::move(*backend) : nullptr;
}

TEST(PodBackendBuildTest, KeepsTheTemplatesOwnSecurityAndDropsGpusForCpuSegments) {
  Json container = {{"name", "c"},
                    {"image", "i"},
                    {"args", {"--base"}},
                    {"securityContext", {{"allowPrivilegeEscalation", true}, {"runAsUser", 1000}}},
                    {"resources", {{"limits", {{"nvidia.com/gpu", "1"}, {"cpu", "2"}}}}}};
  std::unique_ptr<PodBackend> backend =
      OfflineBackend(Json{{"spec",
                           {{"securityContext", {{"seccompProfile", {{"type", "Localhost"}}}}},
                            {"containers", Json::array({container})}}}});
  ASSERT_NE(backend, nullptr);
  SegmentSpec spec;
  spec.trial = "sw-t0001";
  spec.segment = 3;
  spec.params = {{"lr", "0.1"}};
  spec.devices = 0;
  spec.deadline_unix_seconds = 1000.9;
  spec.grace_seconds = 2.5;
  StatusOr<Json> pod = backend->BuildPod(spec, 900.5);
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  EXPECT_EQ((*pod)["metadata"]["name"], "sw-t0001-s3");
  EXPECT_EQ((*pod)["spec"]["activeDeadlineSeconds"], 97) << "floor(1000.9 - 2.5 grace - 900.5)";
  EXPECT_EQ((*pod)["spec"]["terminationGracePeriodSeconds"], 3);
  EXPECT_EQ((*pod)["spec"]["securityContext"]["seccompProfile"]["type"], "Localhost");
  EXPECT_EQ((*pod)["spec"]["securityContext"]["runAsNonRoot"], true);
  EXPECT_FALSE((*pod)["spec"]["securityContext"].contains("runAsUser"))
      << "the container sets its own";
  const Json& built = (*pod)["spec"]["containers"][0];
  EXPECT_EQ(built["securityContext"]["allowPrivilegeEscalation"], true);
  EXPECT_EQ(built["securityContext"]["runAsUser"], 1000);
  EXPECT_EQ(built["args"], Json({"--base", "--lr=0.1"}));
  EXPECT_EQ(built["terminationMessagePolicy"], "FallbackToLogsOnError")
      << "a failed trainer's last log lines become its termination message";
  EXPECT_FALSE(built["resources"]["limits"].contains("nvidia.com/gpu"));
  EXPECT_EQ(built["resources"]["limits"]["cpu"], "2");

  spec.deadline_unix_seconds = 900;  // already past: the smallest deadline Kubernetes takes
  EXPECT_EQ((*backend->BuildPod(spec, 950))["spec"]["activeDeadlineSeconds"], 1);
  spec.deadline_unix_seconds = 0;
  EXPECT_EQ(backend->BuildPod(spec, 900).status().code(), StatusCode::kInvalidArgument);
  spec.deadline_unix_seconds = 1000;
  spec.trial = "Upper_case";
  EXPECT_EQ(backend->BuildPod(spec, 900).status().code(), StatusCode::kInvalidArgument);
  spec.trial = std::string(61, 'a');  // + "-s3": 64
  EXPECT_EQ(backend->BuildPod(spec, 900).status().code(), StatusCode::kInvalidArgument)
      << "pod name over 63 characters";
  EXPECT_EQ(PodBackend::Create(PodBackendOptions{}).status().code(), StatusCode::kInvalidArgument);
}

TEST(SegmentStatusOfPodTest, MapsPhasesTimesAndReasons) {
  Json pod = {
      {"metadata",
       {{"labels", {{"budgetsweep.dev/trial", "t1"}, {"budgetsweep.dev/segment", "2"}}},
        {"annotations",
         {{"budgetsweep.dev/deadline", "1714564900.500"},
          {"budgetsweep.dev/metrics-port", "9000"}}}}},
      {"spec", {{"containers", {{{"resources", {{"requests", {{"nvidia.com/gpu", 4}}}}}}}}}},
      {"status", {{"phase", "Pending"}}}};
  std::optional<SegmentStatus> pending = SegmentStatusOfPod(pod, 9400);
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->trial, "t1");
  EXPECT_EQ(pending->segment, 2);
  EXPECT_EQ(pending->state, SegmentState::kPending);
  EXPECT_EQ(pending->devices, 4);
  EXPECT_EQ(pending->deadline_unix_seconds, 1714564900.5);
  EXPECT_EQ(pending->metrics_url, "");

  pod["status"] = {
      {"phase", "Running"},
      {"podIP", "10.0.0.7"},
      {"containerStatuses", {{{"state", {{"running", {{"startedAt", "2024-05-01T12:00:00Z"}}}}}}}}};
  std::optional<SegmentStatus> running = SegmentStatusOfPod(pod, 9400);
  EXPECT_EQ(running->state, SegmentState::kRunning);
  EXPECT_EQ(running->started_unix_seconds, 1714564800.0);
  EXPECT_EQ(running->metrics_url, "http://10.0.0.7:9000/metrics");

  pod["status"]["phase"] = "Failed";
  pod["status"]["containerStatuses"][0]["state"] = {{"terminated",
                                                     {{"exitCode", 137},
                                                      {"startedAt", "2024-05-01T12:00:00Z"},
                                                      {"finishedAt", "2024-05-01T12:01:40Z"}}}};
  std::optional<SegmentStatus> failed = SegmentStatusOfPod(pod, 9400);
  EXPECT_EQ(failed->state, SegmentState::kFailed);
  EXPECT_EQ(failed->reason, Reason::kError);
  EXPECT_EQ(failed->exit_code, 137);
  EXPECT_EQ(*failed->finished_unix_seconds - *failed->started_unix_seconds, 100);
  EXPECT_EQ(failed->output_tail, "") << "no termination message";
  pod["status"]["containerStatuses"][0]["state"]["terminated"]["message"] =
      "loading\nTraceback\nRuntimeError: CUDA out of memory\n";
  EXPECT_EQ(SegmentStatusOfPod(pod, 9400)->output_tail,
            "loading\nTraceback\nRuntimeError: CUDA out of memory");
  pod["metadata"]["annotations"]["budgetsweep.dev/stopped"] = "true";
  EXPECT_EQ(SegmentStatusOfPod(pod, 9400)->reason, Reason::kStopped);
  pod["status"]["reason"] = "DeadlineExceeded";
  EXPECT_EQ(SegmentStatusOfPod(pod, 9400)->reason, Reason::kDeadlineExceeded);
  // Refused or evicted by the node: not the trainer's failure.
  Json refused = pod;
  refused["metadata"]["annotations"].erase("budgetsweep.dev/stopped");
  refused["status"] = {{"phase", "Failed"},
                       {"reason", "OutOfnvidia.com/gpu"},
                       {"message", "Pod was rejected: Node didn't have enough resource"}};
  EXPECT_EQ(SegmentStatusOfPod(refused, 9400)->state, SegmentState::kFailed);
  EXPECT_EQ(SegmentStatusOfPod(refused, 9400)->reason, Reason::kEvicted);
  EXPECT_FALSE(SegmentStatusOfPod(refused, 9400)->started_unix_seconds) << "never ran: no charge";
  for (const char* reason : {"Evicted", "UnexpectedAdmissionError"}) {
    refused["status"]["reason"] = reason;
    EXPECT_EQ(SegmentStatusOfPod(refused, 9400)->reason, Reason::kEvicted) << reason;
  }

  Json deleted_before_start = pod;
  deleted_before_start["status"] = {{"phase", "Pending"}};
  deleted_before_start["metadata"]["deletionTimestamp"] = "2024-05-01T12:00:00Z";
  deleted_before_start["metadata"]["deletionGracePeriodSeconds"] = 0;
  std::optional<SegmentStatus> never_ran = SegmentStatusOfPod(deleted_before_start, 9400);
  EXPECT_EQ(never_ran->state, SegmentState::kFailed);
  EXPECT_EQ(never_ran->reason, Reason::kStopped);
  EXPECT_FALSE(never_ran->started_unix_seconds) << "a pending pod costs nothing";

  EXPECT_FALSE(SegmentStatusOfPod(Json{{"metadata", {{"name", "other"}}}}, 9400));

  Json held = deleted_before_start;
  held["metadata"].erase("deletionTimestamp");
  held["status"]["conditions"] = {{{"type", "PodScheduled"},
                                   {"status", "False"},
                                   {"reason", "Unschedulable"},
                                   {"message", "0/1 nodes are available: 1 Insufficient cpu."}}};
  std::optional<SegmentStatus> unschedulable = SegmentStatusOfPod(held, 9400);
  EXPECT_EQ(unschedulable->state, SegmentState::kPending);
  EXPECT_EQ(unschedulable->waiting_reason, "Unschedulable");
  EXPECT_EQ(unschedulable->waiting_message, "0/1 nodes are available: 1 Insufficient cpu.");
  held["status"]["conditions"][0]["status"] = "True";
  held["status"]["containerStatuses"] = {
      {{"state", {{"waiting", {{"reason", "ContainerCreating"}}}}}}};
  EXPECT_EQ(SegmentStatusOfPod(held, 9400)->waiting_reason, "") << "just starting";
  held["status"]["containerStatuses"][0]["state"]["waiting"] = {
      {"reason", "ImagePullBackOff"}, {"message", "Back-off pulling image \"x:1\""}};
  EXPECT_EQ(SegmentStatusOfPod(held, 9400)->waiting_reason, "ImagePullBackOff");
  EXPECT_EQ(SegmentStatusOfPod(held, 9400)->waiting_message, "Back-off pulling image \"x:1\"");
}

}  // namespace
}  // namespace bsw::kube
