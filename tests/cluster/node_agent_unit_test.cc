// The node agent's pure parts and its shim, without a cluster.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/cluster/node-agent/address_pool.h"
#include "tests/cluster/node-agent/pod_spec.h"
#include "tests/cluster/node-agent/pod_status.h"
#include "tests/cluster/node-agent/shim.h"

namespace bsw::node_agent {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

TEST(AddressPool, HandsOutAddressesInTurnSoAFreedOneIsNotReusedAtOnce) {
  StatusOr<AddressPool> pool = AddressPool::Create("127.0.0.254");
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  EXPECT_EQ(*pool->Allocate(), "127.0.0.254");
  EXPECT_EQ(*pool->Allocate(), "127.0.0.255");
  EXPECT_EQ(*pool->Allocate(), "127.0.1.0");
  pool->Release("127.0.0.255");
  EXPECT_EQ(*pool->Allocate(), "127.0.1.1") << "the freed address waits its turn";
  EXPECT_TRUE(pool->Reserve("127.0.1.3"));
  EXPECT_FALSE(pool->Reserve("127.0.1.3"));
  EXPECT_FALSE(pool->Reserve("127.0.0.1")) << "below the base";
  EXPECT_EQ(*pool->Allocate(), "127.0.1.4") << "after what a restart reserved";
  EXPECT_EQ(pool->in_use(), 5u);
}

TEST(AddressPool, WrapsToTheBaseAtTheTopAndSkipsWhatIsTaken) {
  StatusOr<AddressPool> pool = AddressPool::Create("127.255.255.252");
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  EXPECT_EQ(*pool->Allocate(), "127.255.255.252");
  EXPECT_EQ(*pool->Allocate(), "127.255.255.253");
  EXPECT_EQ(*pool->Allocate(), "127.255.255.254");
  pool->Release("127.255.255.253");
  EXPECT_EQ(*pool->Allocate(), "127.255.255.253") << "wrapped, past the taken base";
  EXPECT_EQ(pool->Allocate().status().code(), StatusCode::kResourceExhausted);
}

TEST(AddressPool, RejectsAddressesOutsideLoopback) {
  EXPECT_FALSE(AddressPool::Create("10.0.0.1").ok());
  EXPECT_FALSE(AddressPool::Create("127.0.0.0").ok());
  EXPECT_FALSE(AddressPool::Create("localhost").ok());
}

TEST(ExpandVariables, ExpandsDefinedNamesAndKeepsTheRest) {
  std::map<std::string, std::string> vars = {{"A", "1"}, {"B", "x y"}};
  EXPECT_EQ(ExpandVariables("$(A)-$(B)", vars), "1-x y");
  EXPECT_EQ(ExpandVariables("$(C) $(A", vars), "$(C) $(A");
  EXPECT_EQ(ExpandVariables("$$(A) $$ $", vars), "$(A) $ $");
}

Json TestPod() {
  return Json::parse(R"json({
    "metadata": {"name": "p", "namespace": "ns", "uid": "u-1", "labels": {"app": "a"}},
    "spec": {"nodeName": "n-0", "containers": [{
      "name": "main", "image": "img", "command": ["run", "--port=$(PORT)"], "args": ["$(POD_IP)"],
      "env": [
        {"name": "PORT", "value": "8080"},
        {"name": "ADDR", "value": "$(MY_IP):$(PORT)"},
        {"name": "MY_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}}
      ]}]}})json");
}

TEST(BuildLaunchSpec, ResolvesEnvAndCommandLikeTheKubelet) {
  StatusOr<LaunchSpec> spec =
      BuildLaunchSpec(TestPod(), "127.0.0.10", "127.0.0.1", {{"PATH", "/bin"}});
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->container_name, "main");
  // $(POD_IP) is not defined by the container, so it stays as written, as with the kubelet.
  EXPECT_EQ(spec->argv, (std::vector<std::string>{"run", "--port=8080", "$(POD_IP)"}));
  EXPECT_EQ(spec->env,
            (std::vector<std::string>{"PATH=/bin", "HOSTNAME=p", "POD_IP=127.0.0.10", "PORT=8080",
                                      // MY_IP is defined after ADDR, so ADDR cannot see it.
                                      "ADDR=$(MY_IP):8080", "MY_IP=127.0.0.10", "NODE=n-0", "APP=a",
                                      "BUDGETSWEEP_METRICS_HOST=127.0.0.10"}));
}

TEST(BuildLaunchSpec, KeepsTheContainersOwnMetricsHost) {
  Json pod = TestPod();
  pod["spec"]["containers"][0]["env"] = {
      {{"name", "BUDGETSWEEP_METRICS_HOST"}, {"value", "0.0.0.0"}}};
  StatusOr<LaunchSpec> spec = BuildLaunchSpec(pod, "127.0.0.10", "127.0.0.1", {});
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->env.back(), "BUDGETSWEEP_METRICS_HOST=0.0.0.0");
}

TEST(BuildLaunchSpec, RejectsWhatItCannotResolve) {
  Json pod = TestPod();
  pod["spec"]["containers"][0]["env"] = {
      {{"name", "S"}, {"valueFrom", {{"secretKeyRef", {{"name", "s"}, {"key", "k"}}}}}}};
  EXPECT_EQ(BuildLaunchSpec(pod, "", "", {}).status().code(), StatusCode::kInvalidArgument);
  pod = TestPod();
  pod["spec"]["containers"][0].erase("command");
  pod["spec"]["containers"][0].erase("args");
  EXPECT_EQ(BuildLaunchSpec(pod, "", "", {}).status().code(), StatusCode::kInvalidArgument);
}

ContainerRun Started() {
  ContainerRun run;
  run.container_name = "main";
  run.pod_ip = "127.0.0.10";
  run.host_ip = "127.0.0.1";
  run.pod_start_time = 1714564800;  // 2024-05-01T12:00:00Z
  run.started_at = 1714564800.5;
  return run;
}

TEST(BuildPodStatus, RunningThenSucceededWithStableTransitionTimes) {
  Json pod = TestPod();
  pod["status"] = {{"phase", "Pending"},
                   {"qosClass", "BestEffort"},
                   {"conditions", {{{"type", "PodScheduled"}, {"status", "True"}}}}};
  ContainerRun run = Started();
  Json running = BuildPodStatus(pod, run);
  EXPECT_EQ(running["phase"], "Running");
  EXPECT_EQ(running["qosClass"], "BestEffort") << "fields the agent does not own survive";
  EXPECT_EQ(running["podIP"], "127.0.0.10");
  EXPECT_EQ(running["startTime"], "2024-05-01T12:00:00Z");
  EXPECT_EQ(running["containerStatuses"][0]["state"]["running"]["startedAt"],
            "2024-05-01T12:00:00Z");
  EXPECT_EQ(running["containerStatuses"][0]["ready"], true);
  pod["status"] = running;
  EXPECT_EQ(BuildPodStatus(pod, run), running) << "an unchanged run gives an unchanged status";

  run.finished_at = 1714564861;
  Json done = BuildPodStatus(pod, run);
  EXPECT_EQ(done["phase"], "Succeeded");
  const Json& terminated = done["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(terminated["exitCode"], 0);
  EXPECT_EQ(terminated["reason"], "Completed");
  EXPECT_EQ(terminated["finishedAt"], "2024-05-01T12:01:01Z");
  for (const Json& condition : done["conditions"]) {
    if (condition["type"] == "Initialized") {
      EXPECT_EQ(condition["lastTransitionTime"], "2024-05-01T12:00:00Z");
    }
    if (condition["type"] == "Ready") {
      EXPECT_EQ(condition["status"], "False");
      EXPECT_EQ(condition["reason"], "PodCompleted");
      EXPECT_EQ(condition["lastTransitionTime"], "2024-05-01T12:01:01Z");
    }
  }
}

TEST(BuildPodStatus, DeadlineExceededFailsThePodWhateverTheExitCode) {
  ContainerRun run = Started();
  run.finished_at = run.started_at + 3;
  run.exit_code = 0;
  run.pod_reason = "DeadlineExceeded";
  run.pod_message = "too long";
  Json status = BuildPodStatus(TestPod(), run);
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(status["reason"], "DeadlineExceeded");
}

TEST(BuildPodStatus, AConfigErrorLeavesThePodPendingAndWaiting) {
  ContainerRun run = Started();
  run.started_at = 0;
  run.waiting_reason = "CreateContainerConfigError";
  run.waiting_message = "env S: unsupported";
  Json status = BuildPodStatus(TestPod(), run);
  EXPECT_EQ(status["phase"], "Pending");
  EXPECT_EQ(status["containerStatuses"][0]["state"]["waiting"]["reason"],
            "CreateContainerConfigError");
}

class ShimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bsw-shim-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Spawns the shim for `argv`; returns its pid.
  pid_t Spawn(std::vector<std::string> argv) {
    LaunchSpec spec;
    spec.argv = std::move(argv);
    spec.env = {"PATH=/usr/bin:/bin", "GREETING=hello"};
    StatusOr<pid_t> shim = SpawnShim(BSW_NODE_AGENT, dir_, (dir_ / "log").string(), "", spec);
    EXPECT_TRUE(shim.ok()) << shim.status().message();
    return shim.ok() ? *shim : 0;
  }

  static void Reap(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the shim itself succeeds";
  }

  fs::path dir_;
};

TEST_F(ShimTest, RecordsTheExitCodeAndTheOutput) {
  Reap(Spawn({"sh", "-c", "echo $GREETING; echo err >&2; exit 7"}));
  std::optional<WorkloadExit> exit = ReadWorkloadExit(dir_);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 7);
  EXPECT_EQ(exit->signal, 0);
  EXPECT_GT(exit->finished_at, 1.7e9);
  EXPECT_TRUE(ReadWorkloadProcess(dir_).has_value());
  std::ifstream log(dir_ / "log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "hello\nerr\n");
}

TEST_F(ShimTest, ASignalledWorkloadExitsWith128PlusTheSignal) {
  pid_t shim = Spawn({"sleep", "30"});
  for (int i = 0; i < 200 && !SignalWorkload(dir_, SIGTERM); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Reap(shim);
  std::optional<WorkloadExit> exit = ReadWorkloadExit(dir_);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 128 + SIGTERM);
  EXPECT_EQ(exit->signal, SIGTERM);
  EXPECT_FALSE(SignalWorkload(dir_, SIGKILL)) << "nothing left to signal";
}

TEST_F(ShimTest, AMissingCommandExitsWith127) {
  Reap(Spawn({"/nonexistent/command"}));
  std::optional<WorkloadExit> exit = ReadWorkloadExit(dir_);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 127);
}

}  // namespace
}  // namespace bsw::node_agent
