// PodBackend (operator/adapters/kube/pod_backend.h) against the real test cluster and its real
// node: the pods run as containers of the trainer image (its shell) under the kubelet:
//   eval "$(tests/cluster/up.sh | tail -1)"; tests/cluster/node_up.sh
//   ctest --test-dir build -R PodBackend
// The cluster tests skip when KUBECONFIG is unset. Each test has a fresh namespace enforcing Pod
// Security "restricted", so every trial pod must comply.
#include "operator/adapters/kube/pod_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/config.h"
#include "operator/adapters/kube/errors.h"
#include "operator/adapters/yaml/sweep_file.h"
#include "operator/core/rfc3339.h"
#include "tests/cluster/node_cluster_test.h"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;
using testing::InSubnet;
using testing::kPods;

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class PodBackendTest : public testing::NodeClusterTest {
 protected:
  // Every pod really passes Pod Security admission: the namespace enforces `restricted`.
  void SetUp() override {
    SetUpCluster("pb", Json{{"pod-security.kubernetes.io/enforce", "restricted"}});
    if (!IsSkipped() && !HasFatalFailure()) CreateOwner();
  }

  // The pods' owner is a real BudgetSweep `sw` (the CRD is applied if missing): the cluster's
  // garbage collector deletes a pod whose owner does not exist.
  void CreateOwner() {
    const Resource crds{"apiextensions.k8s.io", "v1", "customresourcedefinitions", false};
    StatusOr<Json> crd =
        ParseSweepText(testing::ReadAll("crds/budgetsweeps.budgetsweep.dev.yaml"), "the CRD");
    ASSERT_TRUE(crd.ok()) << crd.status().message();
    StatusOr<Json> applied = client_->Create(crds, "", *crd);
    ASSERT_TRUE(applied.ok() || IsAlreadyExists(applied.status())) << applied.status().message();
    const Resource sweeps{"budgetsweep.dev", "v1alpha1", "budgetsweeps", true};
    Json sweep = bsw::testing::ValidSweepJson();
    sweep["metadata"]["name"] = "sw";
    StatusOr<Json> owner = client_->Create(sweeps, ns_, sweep);
    for (int i = 0; i < 120 && IsNotFound(owner.status()); ++i) {  // until the CRD is served
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      owner = client_->Create(sweeps, ns_, sweep);
    }
    ASSERT_TRUE(owner.ok()) << owner.status().message();
    owner_uid_ = (*owner)["metadata"]["uid"].get<std::string>();
  }

  // A backend whose template runs `script` with the trainer image's sh (or `image`) on the test
  // node.
  std::unique_ptr<PodBackend> Backend(const std::string& script,
                                      const std::string& image = BSW_TRAINER_IMAGE) {
    PodBackendOptions options;
    options.client = client_.get();
    options.ns = ns_;
    options.owner.name = "sw";
    options.owner.uid = owner_uid_;
    options.metrics_port = 9555;
    options.checkpoint_dir = "/ckpt/";
    options.trial_template =
        Json{{"metadata", {{"labels", {{"team", "ml"}}}}},
             {"spec",
              {{"nodeSelector", {{"kubernetes.io/hostname", node_name_}}},
               {"containers",
                Json::array({Json{{"name", "trainer"},
                                  {"image", image},
                                  {"command", {"sh", "-c", script, "trainer"}},
                                  {"env", {{{"name", "FROM_TEMPLATE"}, {"value", "t"}}}}}})}}}};
    StatusOr<std::unique_ptr<PodBackend>> backend = PodBackend::Create(std::move(options));
    EXPECT_TRUE(backend.ok()) << backend.status().message();
    return backend.ok() ? std::move(*backend) : nullptr;
  }

  static SegmentSpec Spec(const std::string& trial, double deadline, int devices = 1) {
    SegmentSpec spec;
    spec.sweep = "sw";
    spec.trial = trial;
    spec.segment = 0;
    spec.params = {{"lr", "0.01"}, {"opt", "adam"}};
    spec.param_args = {"--lr=0.01", "--opt=adam"};  // as core makes them (no placeholder here)
    spec.until_resource = 3;
    spec.max_resource = 27;
    spec.milestones = {1, 3, 9, 27};
    spec.devices = devices;
    spec.deadline_unix_seconds = deadline;
    spec.grace_seconds = 1;
    return spec;
  }

  // Polls List until the segment satisfies `done`; returns its last status.
  std::optional<SegmentStatus> WaitFor(PodBackend& backend, const std::string& trial,
                                       const std::function<bool(const SegmentStatus&)>& done,
                                       milliseconds limit = milliseconds(15000)) {
    std::optional<SegmentStatus> last;
    Eventually(
        [&] {
          StatusOr<std::vector<SegmentStatus>> segments = backend.List();
          if (!segments.ok()) return false;
          for (const SegmentStatus& segment : *segments) {
            if (segment.trial == trial) last = segment;
          }
          return last && done(*last);
        },
        limit);
    return last;
  }

  std::string owner_uid_;  // of the BudgetSweep sw in ns_
};

TEST_F(PodBackendTest, Start_CreatesOneCompliantPodWithTheContract) {
  std::unique_ptr<PodBackend> backend = Backend("sleep 30");
  ASSERT_NE(backend, nullptr);
  double deadline = Now() + 120.7;
  SegmentSpec segment = Spec("sw-t0001", deadline, 2);
  segment.extra_args = {"--workers=2", "--prefetch=4"};  // the probe phase's choice
  segment.snapshots = true;  // pbt: the trial goes on from sw-t0000's snapshot at 2
  segment.mutable_flags = {"lr"};
  segment.exploit_trial = "sw-t0000";
  segment.exploit_at = 2;
  ASSERT_TRUE(backend->Start(segment).ok());
  Status again = backend->Start(segment);
  EXPECT_TRUE(again.ok()) << again.message();
  StatusOr<Json> pods = client_->List(kPods, ns_);
  ASSERT_TRUE(pods.ok());
  ASSERT_EQ((*pods)["items"].size(), 1u) << "Start twice makes one pod";
  const Json& pod = (*pods)["items"][0];
  const Json& metadata = pod["metadata"];
  EXPECT_EQ(metadata["name"], "sw-t0001-s0");
  EXPECT_EQ(metadata["labels"]["budgetsweep.dev/sweep"], "sw");
  EXPECT_EQ(metadata["labels"]["budgetsweep.dev/trial"], "sw-t0001");
  EXPECT_EQ(metadata["labels"]["budgetsweep.dev/segment"], "0");
  EXPECT_EQ(metadata["labels"]["team"], "ml");
  EXPECT_EQ(metadata["finalizers"], Json::array({"budgetsweep.dev/accounting"}));
  ASSERT_EQ(metadata["ownerReferences"].size(), 1u);
  const Json& owner = metadata["ownerReferences"][0];
  EXPECT_EQ(owner["apiVersion"], "budgetsweep.dev/v1alpha1");
  EXPECT_EQ(owner["kind"], "BudgetSweep");
  EXPECT_EQ(owner["name"], "sw");
  EXPECT_EQ(owner["uid"], owner_uid_);
  EXPECT_EQ(owner["controller"], true);
  EXPECT_EQ(owner["blockOwnerDeletion"], false);
  EXPECT_NEAR(std::stod(metadata["annotations"]["budgetsweep.dev/deadline"].get<std::string>()),
              deadline, 0.01);
  EXPECT_EQ(metadata["annotations"]["budgetsweep.dev/metrics-port"], "9555");
  EXPECT_EQ(metadata["annotations"]["prometheus.io/scrape"], "true");
  EXPECT_EQ(metadata["annotations"]["prometheus.io/port"], "9555");

  const Json& spec = pod["spec"];
  double created = *ParseRfc3339(metadata["creationTimestamp"]);
  int64_t active = spec["activeDeadlineSeconds"];
  EXPECT_LE(active, deadline - 1 - created) << "the 1 s grace period comes off";
  EXPECT_GE(active, deadline - 1 - created - 3);
  EXPECT_EQ(spec["restartPolicy"], "Never");
  EXPECT_EQ(spec["terminationGracePeriodSeconds"], 1);
  const Json& container = spec["containers"][0];
  EXPECT_EQ(container["command"], Json({"sh", "-c", "sleep 30", "trainer"}));
  EXPECT_EQ(container["args"], Json({"--workers=2", "--prefetch=4", "--lr=0.01", "--opt=adam"}));
  EXPECT_EQ(container["resources"]["limits"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(container["resources"]["requests"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(spec["securityContext"]["runAsNonRoot"], true);
  EXPECT_EQ(spec["securityContext"]["runAsUser"], 65532);
  EXPECT_EQ(spec["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
  EXPECT_EQ(container["securityContext"]["allowPrivilegeEscalation"], false);
  EXPECT_EQ(container["securityContext"]["capabilities"]["drop"], Json::array({"ALL"}));
  std::map<std::string, Json> env;
  for (const Json& var : container["env"]) env[var["name"]] = var;
  EXPECT_EQ(env["FROM_TEMPLATE"]["value"], "t");
  EXPECT_EQ(env["BUDGETSWEEP_METRICS_HOST"]["valueFrom"]["fieldRef"]["fieldPath"], "status.podIP");
  EXPECT_EQ(env["BUDGETSWEEP_METRICS_PORT"]["value"], "9555");
  EXPECT_EQ(env["BUDGETSWEEP_SNAPSHOTS"]["value"], "1");
  EXPECT_EQ(env["BUDGETSWEEP_MUTABLE"]["value"], "lr");
  EXPECT_EQ(env["BUDGETSWEEP_EXPLOIT_DIR"]["value"], "/ckpt/sw-t0000");  // options.checkpoint_dir
  EXPECT_EQ(env["BUDGETSWEEP_EXPLOIT_AT"]["value"], "2");

  std::optional<SegmentStatus> running =
      WaitFor(*backend, "sw-t0001", [](const SegmentStatus& s) { return s.metrics_url != ""; });
  ASSERT_TRUE(running);
  EXPECT_EQ(running->devices, 2);
  StatusOr<Json> scheduled = client_->Get(kPods, ns_, "sw-t0001-s0");
  ASSERT_TRUE(scheduled.ok());
  std::string ip = (*scheduled)["status"].value("podIP", "");
  EXPECT_TRUE(InSubnet(ip, pod_subnet_)) << ip << " outside the node's pod subnet " << pod_subnet_;
  EXPECT_EQ((*scheduled)["spec"]["nodeName"], node_name_);
  EXPECT_EQ(running->metrics_url, "http://" + ip + ":9555/metrics");
}

TEST_F(PodBackendTest, Segment_RunsAndSucceedsWithRealTimesAndTheEnvContract) {
  std::unique_ptr<PodBackend> backend = Backend(
      "echo \"$BUDGETSWEEP_SWEEP|$BUDGETSWEEP_TRIAL|$BUDGETSWEEP_PARAMS|$BUDGETSWEEP_MILESTONES|"
      "$BUDGETSWEEP_UNTIL|$BUDGETSWEEP_MAX_RESOURCE|$BUDGETSWEEP_CHECKPOINT_DIR|"
      "$BUDGETSWEEP_METRICS_HOST|$BUDGETSWEEP_METRICS_PORT|$FROM_TEMPLATE|$*\"; sleep 1");
  ASSERT_NE(backend, nullptr);
  double before = std::floor(Now());
  ASSERT_TRUE(backend->Start(Spec("sw-t0002", Now() + 60)).ok());
  std::optional<SegmentStatus> running = WaitFor(*backend, "sw-t0002", [](const SegmentStatus& s) {
    return s.state != SegmentState::kPending;
  });
  ASSERT_TRUE(running);
  EXPECT_EQ(running->state, SegmentState::kRunning);
  ASSERT_TRUE(running->started_unix_seconds);
  EXPECT_GE(*running->started_unix_seconds, before);
  EXPECT_LE(*running->started_unix_seconds, Now());
  EXPECT_EQ(running->devices, 1);

  std::optional<SegmentStatus> done = WaitFor(*backend, "sw-t0002", [](const SegmentStatus& s) {
    return s.state == SegmentState::kSucceeded || s.state == SegmentState::kFailed;
  });
  ASSERT_TRUE(done);
  EXPECT_EQ(done->state, SegmentState::kSucceeded);
  EXPECT_EQ(done->exit_code, 0);
  ASSERT_TRUE(done->started_unix_seconds && done->finished_unix_seconds);
  EXPECT_GE(*done->finished_unix_seconds - *done->started_unix_seconds, 1);
  EXPECT_LE(*done->finished_unix_seconds - *done->started_unix_seconds, 4);
  EXPECT_EQ(done->segment, 0);
  EXPECT_EQ(done->reason, Reason::kNone);

  StatusOr<Json> pod = client_->Get(kPods, ns_, "sw-t0002-s0");
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(PodLog("sw-t0002-s0"),
            "sw|sw-t0002|{\"lr\":0.01,\"opt\":\"adam\"}|1,3,9,27|3|27|/ckpt/"
            "sw-t0002|" +
                (*pod)["status"].value("podIP", "") + "|9555|t|--lr=0.01 --opt=adam\n");
  // Finished pods stay, with the finalizer, for the controller to account.
  EXPECT_EQ((*pod)["metadata"]["finalizers"], Json::array({"budgetsweep.dev/accounting"}));
}

TEST_F(PodBackendTest, NearDeadline_EndsDeadlineExceededByItsDeadline) {
  std::unique_ptr<PodBackend> backend = Backend("exec sleep 60");
  ASSERT_NE(backend, nullptr);
  double deadline = Now() + 3;
  ASSERT_TRUE(backend->Start(Spec("sw-t0003", deadline)).ok());
  std::optional<SegmentStatus> done = WaitFor(
      *backend, "sw-t0003", [](const SegmentStatus& s) { return s.state == SegmentState::kFailed; },
      milliseconds(20000));
  double seen = Now();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->state, SegmentState::kFailed);
  EXPECT_EQ(done->reason, Reason::kDeadlineExceeded);
  ASSERT_TRUE(done->finished_unix_seconds);
  // SIGKILL is due at the deadline: activeDeadlineSeconds leaves room for the grace period. The
  // slack covers whole-second start times and the kubelet's sync.
  EXPECT_LE(*done->finished_unix_seconds, deadline + 2);
  EXPECT_LE(seen, deadline + 1 + 2 + 1) << "seen in List promptly";
  EXPECT_NEAR(done->deadline_unix_seconds, deadline, 0.01);
}

TEST_F(PodBackendTest, FailedSegment_CarriesTheEndOfItsOutputFromTheKubelet) {
  // stdout and stderr are two pipes the runtime copies into the log on its own: lines written
  // microseconds apart on the two can land in either order (seen: the stderr line first). The
  // pause keeps this test's order; budgetsweep-trainer itself writes its reason to
  // /dev/termination-log, which the kubelet prefers to the log (node_test.sh).
  std::unique_ptr<PodBackend> backend = Backend(
      "for i in 1 2 3 4 5 6 7; do echo line $i; done; sleep 1; "
      "echo 'error: --dataset: no such file' >&2; exit 2");
  ASSERT_NE(backend, nullptr);
  ASSERT_TRUE(backend->Start(Spec("sw-t0009", Now() + 60)).ok());
  std::optional<SegmentStatus> failed = WaitFor(*backend, "sw-t0009", [](const SegmentStatus& s) {
    return s.state == SegmentState::kFailed;
  });
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->reason, Reason::kError);
  EXPECT_EQ(failed->exit_code, 2);
  EXPECT_EQ(failed->output_tail, "line 4\nline 5\nline 6\nline 7\nerror: --dataset: no such file")
      << "the kubelet's termination message (FallbackToLogsOnError), cut to its last 5 lines";
}

TEST_F(PodBackendTest, HeldUpSegments_SayWhyAsTheSchedulerAndTheKubeletDo) {
  std::unique_ptr<PodBackend> backend = Backend("sleep 30");
  ASSERT_NE(backend, nullptr);
  ASSERT_TRUE(backend->Start(Spec("sw-t0010", Now() + 60, 5)).ok());  // the node has 4 GPUs
  std::optional<SegmentStatus> unschedulable = WaitFor(
      *backend, "sw-t0010", [](const SegmentStatus& s) { return !s.waiting_reason.empty(); });
  ASSERT_TRUE(unschedulable);
  EXPECT_EQ(unschedulable->state, SegmentState::kPending);
  EXPECT_EQ(unschedulable->waiting_reason, "Unschedulable");
  EXPECT_THAT(unschedulable->waiting_message, ::testing::HasSubstr("Insufficient nvidia.com/gpu"));

  // No registry is reachable from the node: an image it does not have cannot be pulled.
  std::unique_ptr<PodBackend> unpullable = Backend("true", "budgetsweep/no-such-image:0");
  ASSERT_NE(unpullable, nullptr);
  ASSERT_TRUE(unpullable->Start(Spec("sw-t0011", Now() + 120)).ok());
  std::optional<SegmentStatus> pull = WaitFor(
      *unpullable, "sw-t0011", [](const SegmentStatus& s) { return !s.waiting_reason.empty(); },
      milliseconds(60000));
  ASSERT_TRUE(pull);
  EXPECT_EQ(pull->state, SegmentState::kPending);
  EXPECT_THAT(pull->waiting_reason, ::testing::AnyOf("ErrImagePull", "ImagePullBackOff"));
  EXPECT_THAT(pull->waiting_message, ::testing::HasSubstr("no-such-image"));
}

TEST_F(PodBackendTest, Stop_EndsStoppedAndThePodStaysUntilReleaseCharge) {
  std::unique_ptr<PodBackend> backend = Backend("exec sleep 60");
  ASSERT_NE(backend, nullptr);
  ASSERT_TRUE(backend->Start(Spec("sw-t0004", Now() + 60)).ok());
  ASSERT_TRUE(WaitFor(*backend, "sw-t0004",
                      [](const SegmentStatus& s) { return s.state == SegmentState::kRunning; })
                  .value_or(SegmentStatus())
                  .state == SegmentState::kRunning);
  auto stop_at = steady_clock::now();
  Status stopped = backend->Stop("sw-t0004", 0);
  ASSERT_TRUE(stopped.ok()) << stopped.message();
  std::optional<SegmentStatus> done = WaitFor(*backend, "sw-t0004", [](const SegmentStatus& s) {
    return s.state == SegmentState::kFailed;
  });
  ASSERT_TRUE(done);
  EXPECT_EQ(done->state, SegmentState::kFailed);
  EXPECT_EQ(done->reason, Reason::kStopped);
  EXPECT_TRUE(done->finished_unix_seconds);
  // `sleep` is the container's PID 1, which ignores SIGTERM: the kubelet kills it when the 1 s
  // grace period is over. The bound leaves room for the kubelet's status updates on a loaded
  // machine and is still far below the 60 s the container would otherwise run.
  EXPECT_LE(steady_clock::now() - stop_at, std::chrono::seconds(1 + 9)) << "grace 1 s";
  // The finalizer holds the pod (deleted, finished) until the charge is released.
  std::this_thread::sleep_for(milliseconds(500));
  StatusOr<Json> pod = client_->Get(kPods, ns_, "sw-t0004-s0");
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  EXPECT_TRUE((*pod)["metadata"].contains("deletionTimestamp"));
  EXPECT_TRUE(backend->Stop("sw-t0004", 0).ok()) << "Stop again: no-op";

  Status released = backend->ReleaseCharge("sw-t0004", 0);
  ASSERT_TRUE(released.ok()) << released.message();
  EXPECT_TRUE(Eventually([&] {
    return IsNotFound(client_->Get(kPods, ns_, "sw-t0004-s0").status());
  })) << "the pod is gone once the finalizer is off";
  EXPECT_TRUE(backend->ReleaseCharge("sw-t0004", 0).ok()) << "a pod already gone is OK";
  EXPECT_TRUE(backend->Stop("sw-t0004", 0).ok()) << "a pod already gone is OK";
  StatusOr<std::vector<SegmentStatus>> listed = backend->List();
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
}

TEST_F(PodBackendTest, StopWhilePending_EndsStoppedWithoutChargeAndGoesOnRelease) {
  std::unique_ptr<PodBackend> backend = Backend("exec sleep 60");
  ASSERT_NE(backend, nullptr);
  ASSERT_TRUE(backend->Start(Spec("sw-t0006", Now() + 60, 8)).ok()) << "8 GPUs: never fits";
  std::optional<SegmentStatus> pending =
      WaitFor(*backend, "sw-t0006", [](const SegmentStatus&) { return true; });
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->state, SegmentState::kPending);
  ASSERT_TRUE(backend->Stop("sw-t0006", 0).ok());
  std::optional<SegmentStatus> done = WaitFor(*backend, "sw-t0006", [](const SegmentStatus& s) {
    return s.state == SegmentState::kFailed;
  });
  ASSERT_TRUE(done);
  EXPECT_EQ(done->state, SegmentState::kFailed);
  EXPECT_EQ(done->reason, Reason::kStopped);
  EXPECT_FALSE(done->started_unix_seconds) << "never ran: no charge";
  ASSERT_TRUE(backend->ReleaseCharge("sw-t0006", 0).ok());
  EXPECT_TRUE(
      Eventually([&] { return IsNotFound(client_->Get(kPods, ns_, "sw-t0006-s0").status()); }));
}

TEST_F(PodBackendTest, SetDeadline_LowersButNeverRaises) {
  std::unique_ptr<PodBackend> backend = Backend("exec sleep 60");
  ASSERT_NE(backend, nullptr);
  ASSERT_TRUE(backend->Start(Spec("sw-t0005", Now() + 50)).ok());
  ASSERT_TRUE(WaitFor(*backend, "sw-t0005",
                      [](const SegmentStatus& s) { return s.state == SegmentState::kRunning; })
                  .value_or(SegmentStatus())
                  .state == SegmentState::kRunning);
  StatusOr<Json> before = client_->Get(kPods, ns_, "sw-t0005-s0");
  ASSERT_TRUE(before.ok());
  int64_t active_before = (*before)["spec"]["activeDeadlineSeconds"];

  Status raised = backend->SetDeadline("sw-t0005", 0, Now() + 500);
  EXPECT_EQ(raised.code(), StatusCode::kFailedPrecondition) << raised.message();
  EXPECT_NE(raised.message().find("only lets it decrease"), std::string::npos) << raised.message();

  double lowered_to = Now() + 2;
  Status lowered = backend->SetDeadline("sw-t0005", 0, lowered_to);
  ASSERT_TRUE(lowered.ok()) << lowered.message();
  StatusOr<Json> after = client_->Get(kPods, ns_, "sw-t0005-s0");
  ASSERT_TRUE(after.ok());
  double start = *ParseRfc3339((*after)["status"]["startTime"]);
  int64_t active = (*after)["spec"]["activeDeadlineSeconds"];
  EXPECT_LT(active, active_before);
  EXPECT_LE(start + active, lowered_to);
  std::optional<SegmentStatus> done = WaitFor(*backend, "sw-t0005", [](const SegmentStatus& s) {
    return s.state == SegmentState::kFailed;
  });
  ASSERT_TRUE(done);
  EXPECT_EQ(done->reason, Reason::kDeadlineExceeded);
  EXPECT_NEAR(done->deadline_unix_seconds, lowered_to, 0.01);
  ASSERT_TRUE(done->finished_unix_seconds);
  EXPECT_LE(*done->finished_unix_seconds, lowered_to + 1 + 2);
  EXPECT_EQ(backend->SetDeadline("sw-t0099", 0, Now() + 5).code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace bsw::kube
