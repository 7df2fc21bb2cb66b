// bsw-node-agent against a real kube-apiserver and kube-scheduler:
//   eval "$(tests/cluster/up.sh | tail -1)" && ctest -L cluster -R NodeAgent
// Skips when KUBECONFIG is unset. Each test starts its own agent with nodes of its own (a unique
// prefix and label, which its pods select), its own loopback address range and a fresh namespace,
// so tests can run in parallel and never see each other's pods.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/config.h"
#include "operator/adapters/kube/errors.h"
#include "tests/cluster/agent_cluster_test.h"

namespace bsw::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;
using testing::kNamespaces;
using testing::kNodes;
using testing::kPods;
using testing::kPoolLabel;
using testing::ReadAll;
namespace fs = std::filesystem;

double ParseTime(const std::string& text) {
  tm parsed{};
  if (strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &parsed) == nullptr) return 0;
  return static_cast<double>(timegm(&parsed));
}

class NodeAgentTest : public testing::AgentClusterTest {
 protected:
  void SetUp() override { SetUpCluster("na"); }

  // A pod for this test's nodes: one container running `command`, restartPolicy Never.
  Json Pod(const std::string& name, std::vector<std::string> command, int gpus = 1) {
    Json container = {{"name", "main"}, {"image", "local"}, {"command", command}};
    if (gpus > 0) {
      container["resources"] = {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}};
    }
    return Json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", ns_}}},
                {"spec",
                 {{"restartPolicy", "Never"},
                  {"terminationGracePeriodSeconds", 2},
                  {"nodeSelector", {{kPoolLabel, prefix_}}},
                  {"containers", Json::array({container})}}}};
  }

  Json Create(const Json& pod) {
    StatusOr<Json> created = client_->Create(kPods, ns_, pod);
    EXPECT_TRUE(created.ok()) << created.status().message();
    return created.ok() ? *created : Json();
  }

  std::optional<Json> Get(const std::string& name) {
    StatusOr<Json> pod = client_->Get(kPods, ns_, name);
    if (!pod.ok()) return std::nullopt;
    return *pod;
  }

  static std::string Phase(const Json& pod) {
    return pod.contains("/status/phase"_json_pointer) ? pod["status"]["phase"].get<std::string>()
                                                      : "";
  }

  // Waits for the pod to reach `phase`; returns it (null when it never did).
  Json WaitForPhase(const std::string& name, const std::string& phase,
                    milliseconds limit = milliseconds(15000)) {
    Json last;
    bool reached = Eventually(
        [&] {
          std::optional<Json> pod = Get(name);
          if (pod) last = *pod;
          return pod && Phase(*pod) == phase;
        },
        limit);
    EXPECT_TRUE(reached) << name << " never reached " << phase << "; last: " << last.dump();
    return reached ? last : Json();
  }

  static Json Terminated(const Json& pod) {
    return pod.contains("/status/containerStatuses/0/state/terminated"_json_pointer)
               ? pod.at("/status/containerStatuses/0/state/terminated"_json_pointer)
               : Json();
  }
};

TEST_F(NodeAgentTest, GpuPod_IsScheduledRunsAndSucceedsWithRealTimes) {
  StartAgent(2, 4);
  Json pod = Pod(
      "hello", {"sh", "-c", "echo hi $POD_IP $BUDGETSWEEP_METRICS_HOST $MY_IP $MY_NAME; sleep 1"});
  pod["spec"]["containers"][0]["env"] = {
      {{"name", "MY_IP"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}},
      {{"name", "MY_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}}};
  Create(pod);
  Json running = WaitForPhase("hello", "Running");
  ASSERT_FALSE(running.is_null());
  EXPECT_EQ(running["spec"]["nodeName"].get<std::string>().rfind(prefix_ + "-", 0), 0u)
      << "bound by kube-scheduler to one of the agent's nodes";
  EXPECT_TRUE(running.contains("/status/containerStatuses/0/state/running/startedAt"_json_pointer));

  Json done = WaitForPhase("hello", "Succeeded");
  ASSERT_FALSE(done.is_null());
  const std::string ip = done["status"]["podIP"];
  EXPECT_EQ(ip, address_base_);
  EXPECT_EQ(done["status"]["hostIP"], "127.0.0.1");
  EXPECT_EQ(done["status"]["podIPs"][0]["ip"], ip);
  Json terminated = Terminated(done);
  EXPECT_EQ(terminated["exitCode"], 0);
  EXPECT_EQ(terminated["reason"], "Completed");
  double started = ParseTime(terminated["startedAt"]);
  double finished = ParseTime(terminated["finishedAt"]);
  double now = static_cast<double>(std::time(nullptr));
  EXPECT_GE(finished - started, 1) << "the command slept 1 s";
  EXPECT_LE(finished - started, 4);
  EXPECT_LE(now - started, 30) << "times are real wall-clock times";
  EXPECT_EQ(done["status"]["containerStatuses"][0]["restartCount"], 0);
  std::map<std::string, std::string> conditions;
  for (const Json& condition : done["status"]["conditions"]) {
    conditions[condition["type"]] = condition["status"];
  }
  EXPECT_EQ(conditions["PodScheduled"], "True");
  EXPECT_EQ(conditions["Initialized"], "True");
  EXPECT_EQ(conditions["ContainersReady"], "False");
  EXPECT_EQ(conditions["Ready"], "False");
  EXPECT_EQ(ReadAll(PodLog(done)), "hi " + ip + " " + ip + " " + ip + " hello\n");
}

TEST_F(NodeAgentTest, FailingCommand_EndsFailedWithItsExitCode) {
  StartAgent(1, 1);
  Create(Pod("fails", {"sh", "-c", "echo oops >&2; exit 3"}));
  Json done = WaitForPhase("fails", "Failed");
  ASSERT_FALSE(done.is_null());
  EXPECT_EQ(Terminated(done)["exitCode"], 3);
  EXPECT_EQ(Terminated(done)["reason"], "Error");
  EXPECT_EQ(ReadAll(PodLog(done)), "oops\n");
}

TEST_F(NodeAgentTest, HttpServer_IsReachableAtItsPodIp) {
  StartAgent(1, 1);
  Create(Pod("web", {"sh", "-c", "exec python3 -m http.server --bind \"$POD_IP\" 8080"}, 0));
  Json running = WaitForPhase("web", "Running");
  ASSERT_FALSE(running.is_null());
  const std::string ip = running["status"]["podIP"];
  int code = 0;
  EXPECT_TRUE(Eventually([&] {
    httplib::Client http(ip, 8080);
    http.set_connection_timeout(1);
    httplib::Result result = http.Get("/");
    code = result ? result->status : 0;
    return code == 200;
  })) << "GET http://"
      << ip << ":8080/ gave " << code;
}

TEST_F(NodeAgentTest, ActiveDeadline_KillsALongPodAsDeadlineExceeded) {
  StartAgent(1, 1);
  Json pod = Pod("slow", {"sleep", "60"});
  pod["spec"]["activeDeadlineSeconds"] = 2;
  pod["spec"]["terminationGracePeriodSeconds"] = 1;
  Create(pod);
  Json done = WaitForPhase("slow", "Failed", milliseconds(20000));
  ASSERT_FALSE(done.is_null());
  EXPECT_EQ(done["status"]["reason"], "DeadlineExceeded");
  EXPECT_FALSE(done["status"].value("message", "").empty());
  double start = ParseTime(done["status"]["startTime"]);
  double finished = ParseTime(Terminated(done)["finishedAt"]);
  EXPECT_GE(finished - start, 2);
  EXPECT_LE(finished - start, 2 + 1 + 2) << "deadline + grace + slack";
  EXPECT_EQ(Terminated(done)["exitCode"], 128 + SIGTERM) << "sleep dies of the SIGTERM";
}

TEST_F(NodeAgentTest, GracefulDelete_SigtermsTheProcessAndTheObjectDisappears) {
  StartAgent(1, 1);
  Create(Pod("term", {"sh", "-c",
                      "trap 'echo got SIGTERM; exit 0' TERM; echo up; "
                      "while true; do sleep 0.1; done"}));
  Json running = WaitForPhase("term", "Running");
  ASSERT_FALSE(running.is_null());
  ASSERT_TRUE(Eventually([&] { return ReadAll(PodLog(running)) == "up\n"; }));
  DeleteOptions graceful;
  graceful.grace_period_seconds = 20;
  auto deleted_at = steady_clock::now();
  ASSERT_TRUE(client_->Delete(kPods, ns_, "term", graceful).ok());
  EXPECT_TRUE(Eventually([&] { return !Get("term"); }, milliseconds(10000)))
      << "the agent finishes the deletion once the process is gone";
  EXPECT_LT(steady_clock::now() - deleted_at, seconds(10)) << "well before the 20 s grace period";
  // The whole process group gets the SIGTERM: sh reports its sleep "Terminated", then traps.
  EXPECT_NE(ReadAll(PodLog(running)).find("got SIGTERM\n"), std::string::npos);
}

TEST_F(NodeAgentTest, Finalizer_KeepsTheDeletedPodUntilItIsRemoved) {
  StartAgent(1, 1);
  Json pod = Pod("held", {"sleep", "60"});
  pod["metadata"]["finalizers"] = {"budgetsweep.dev/accounting"};
  Create(pod);
  ASSERT_FALSE(WaitForPhase("held", "Running").is_null());
  DeleteOptions graceful;
  graceful.grace_period_seconds = 30;
  ASSERT_TRUE(client_->Delete(kPods, ns_, "held", graceful).ok());
  // The process ends (SIGTERM), its status is written, and the deletion is finished with grace 0,
  // but the finalizer keeps the object.
  Json stopped = WaitForPhase("held", "Failed");
  ASSERT_FALSE(stopped.is_null());
  EXPECT_EQ(Terminated(stopped)["exitCode"], 128 + SIGTERM);
  EXPECT_TRUE(Eventually([&] {
    std::optional<Json> held = Get("held");
    return held && (*held)["metadata"].value("deletionGracePeriodSeconds", -1) == 0;
  }));
  std::this_thread::sleep_for(milliseconds(1000));
  ASSERT_TRUE(Get("held").has_value()) << "the finalizer holds the object";

  ASSERT_TRUE(
      client_->Patch(kPods, ns_, "held", Json{{"metadata", {{"finalizers", nullptr}}}}).ok());
  EXPECT_TRUE(Eventually([&] { return !Get("held"); }, milliseconds(5000)));
}

TEST_F(NodeAgentTest, GpuCapacity_AThirdOneGpuPodWaitsForAFreeGpu) {
  StartAgent(2, 1);
  for (const char* name : {"gpu-a", "gpu-b"}) Create(Pod(name, {"sleep", "4"}));
  ASSERT_FALSE(WaitForPhase("gpu-a", "Running").is_null());
  ASSERT_FALSE(WaitForPhase("gpu-b", "Running").is_null());
  Create(Pod("gpu-c", {"sleep", "1"}));
  std::this_thread::sleep_for(milliseconds(1000));
  std::optional<Json> waiting = Get("gpu-c");
  ASSERT_TRUE(waiting);
  EXPECT_EQ(Phase(*waiting), "Pending");
  EXPECT_FALSE((*waiting)["spec"].contains("nodeName")) << "no node has a free GPU";
  std::optional<Json> a = Get("gpu-a");
  ASSERT_TRUE(a && Phase(*a) == "Running") << "gpu-c was checked while both GPUs were busy";

  Json done = WaitForPhase("gpu-c", "Succeeded", milliseconds(20000));
  ASSERT_FALSE(done.is_null());
  double c_started = ParseTime(Terminated(done)["startedAt"]);
  double first_finished = 1e18;
  for (const char* name : {"gpu-a", "gpu-b"}) {
    Json other = WaitForPhase(name, "Succeeded");
    ASSERT_FALSE(other.is_null());
    first_finished = std::min(first_finished, ParseTime(Terminated(other)["finishedAt"]));
  }
  EXPECT_GE(c_started, first_finished) << "gpu-c started only once a GPU was free";
}

TEST_F(NodeAgentTest, AgentRestart_NeitherRerunsAFinishedPodNorDuplicatesARunningOne) {
  StartAgent(1, 2);
  const std::string marker = (work_dir_ / "runs").string();
  Json finished = Pod("finished", {"sh", "-c", "echo finished >> " + marker});
  Json running = Pod("running", {"sh", "-c", "echo running >> " + marker + "; sleep 4"});
  Create(finished);
  Create(running);
  Json finished_before = WaitForPhase("finished", "Succeeded");
  Json running_before = WaitForPhase("running", "Running");
  ASSERT_FALSE(finished_before.is_null());
  ASSERT_FALSE(running_before.is_null());

  StopAgent(SIGKILL);  // a crash: the pod's process lives on under its shim
  StartAgent(1, 2);
  Json running_after = WaitForPhase("running", "Succeeded");
  ASSERT_FALSE(running_after.is_null());
  EXPECT_EQ(Terminated(running_after)["exitCode"], 0) << "the exit code survives the restart";
  EXPECT_EQ(Terminated(running_after)["startedAt"],
            running_before["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]);
  std::optional<Json> finished_after = Get("finished");
  ASSERT_TRUE(finished_after);
  EXPECT_EQ((*finished_after)["status"]["containerStatuses"],
            finished_before["status"]["containerStatuses"]);
  std::string runs = ReadAll(marker);
  EXPECT_EQ(std::count(runs.begin(), runs.end(), '\n'), 2) << runs;
  EXPECT_NE(runs.find("finished\n"), std::string::npos);
  EXPECT_NE(runs.find("running\n"), std::string::npos);
}

TEST_F(NodeAgentTest, AgentStop_KillsItsPodsAndReportsThemFailed) {
  StartAgent(1, 1);
  Create(Pod("orphan", {"sleep", "60"}));
  ASSERT_FALSE(WaitForPhase("orphan", "Running").is_null());
  StopAgent(SIGTERM);
  std::optional<Json> pod = Get("orphan");
  ASSERT_TRUE(pod);
  EXPECT_EQ(Phase(*pod), "Failed");
  EXPECT_EQ(Terminated(*pod)["exitCode"], 128 + SIGTERM);
  EXPECT_EQ(Terminated(*pod)["message"], "the node agent stopped");
  StatusOr<Json> node = client_->Get(kNodes, "", prefix_ + "-0");
  ASSERT_TRUE(node.ok());
  EXPECT_EQ((*node)["spec"]["taints"][0]["key"], "node.kubernetes.io/not-ready")
      << "a stopped agent's nodes take no new pods";
}

TEST_F(NodeAgentTest, PodsOfOtherNodes_AreLeftAlone) {
  StartAgent(1, 1);
  Json pod = Pod("elsewhere", {"sh", "-c", "exit 0"});
  pod["spec"].erase("nodeSelector");
  pod["spec"]["nodeName"] = prefix_ + "-not-ours";
  Create(pod);
  Create(Pod("ours", {"sh", "-c", "exit 0"}));
  ASSERT_FALSE(WaitForPhase("ours", "Succeeded").is_null());
  std::optional<Json> other = Get("elsewhere");
  ASSERT_TRUE(other);
  EXPECT_EQ(Phase(*other), "Pending");
  EXPECT_FALSE((*other)["status"].contains("containerStatuses"));
}

}  // namespace
}  // namespace bsw::kube
