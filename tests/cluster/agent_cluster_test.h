#ifndef BSW_TESTS_CLUSTER_AGENT_CLUSTER_TEST_H_
#define BSW_TESTS_CLUSTER_AGENT_CLUSTER_TEST_H_

// A gtest fixture for tests that need pods to really run on the test cluster: a client from
// KUBECONFIG (the test skips when it is unset), a fresh namespace, and bsw-node-agent nodes of the
// test's own (a unique prefix and label that its pods select, and a loopback range of its own), so
// tests can run in parallel and never see each other's pods. REQUIRES: BSW_NODE_AGENT is defined.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/config.h"

extern char** environ;

namespace bsw::kube::testing {

inline const Resource kNamespaces{"", "v1", "namespaces", false};
inline const Resource kNodes{"", "v1", "nodes", false};
inline const Resource kPods{"", "v1", "pods", true};
inline constexpr char kPoolLabel[] = "budgetsweep.dev/test-pool";

inline std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class AgentClusterTest : public ::testing::Test {
 protected:
  // Connects, and creates the namespace `<tag>-<test>-<unique>` with `namespace_labels`.
  void SetUpCluster(const std::string& tag, const Json& namespace_labels = Json::object()) {
    const char* path = std::getenv("KUBECONFIG");
    if (path == nullptr || *path == '\0') GTEST_SKIP() << "KUBECONFIG is not set";
    kubeconfig_ = path;
    StatusOr<KubeConfig> config = LoadKubeconfig(path);
    ASSERT_TRUE(config.ok()) << config.status().message();
    StatusOr<std::unique_ptr<Client>> client = Client::Create(*config);
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_ = std::move(*client);

    std::mt19937 random(std::random_device{}());
    std::string test_name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::string short_name;
    for (char c : test_name.substr(0, 16)) {
      short_name += std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(c) : '-';
    }
    std::string unique = std::to_string(getpid()) + "-" + std::to_string(random() % 100000);
    ns_ = tag + "-" + short_name + "-" + unique;
    prefix_ = tag + "n-" + short_name + "-" + unique;
    // A /16 of loopback per test: parallel tests never share a pod address.
    address_base_ =
        "127." + std::to_string(20 + random() % 200) + "." + std::to_string(random() % 250) + ".10";
    work_dir_ = std::filesystem::temp_directory_path() / ("bsw-" + tag + "-test-" + unique);
    std::filesystem::create_directories(work_dir_);
    StatusOr<Json> created = client_->Create(
        kNamespaces, "", Json{{"metadata", {{"name", ns_}, {"labels", namespace_labels}}}});
    ASSERT_TRUE(created.ok()) << created.status().message();
  }

  // Deletes every pod of the test (finalizers off, grace 0), stops the agent, drops the namespace,
  // and prints the agent's log when the test failed.
  void TearDown() override {
    if (!client_) return;
    StatusOr<Json> pods = client_->List(kPods, ns_);
    if (pods.ok()) {
      for (const Json& pod : (*pods)["items"]) {
        std::string name = pod["metadata"]["name"];
        (void)client_->Patch(kPods, ns_, name, Json{{"metadata", {{"finalizers", nullptr}}}});
        DeleteOptions now;
        now.grace_period_seconds = 0;
        (void)client_->Delete(kPods, ns_, name, now);
      }
    }
    if (agent_pid_ > 0) StopAgent(SIGTERM);
    (void)client_->Delete(kNamespaces, "", ns_);
    if (HasFailure()) {
      std::cerr << "---- agent log (" << AgentLog() << ")\n" << ReadAll(AgentLog()) << "----\n";
    } else {
      std::error_code error;
      std::filesystem::remove_all(work_dir_, error);
    }
  }

  std::filesystem::path AgentLog() const { return work_dir_ / "agent.log"; }

  // Starts bsw-node-agent and waits until its nodes are Ready and schedulable.
  void StartAgent(int nodes, int gpus_per_node) {
    std::vector<std::string> args = {BSW_NODE_AGENT,
                                     "--kubeconfig=" + kubeconfig_,
                                     "--nodes=" + std::to_string(nodes),
                                     "--gpus-per-node=" + std::to_string(gpus_per_node),
                                     "--node-prefix=" + prefix_,
                                     "--node-label=" + std::string(kPoolLabel) + "=" + prefix_,
                                     "--address-base=" + address_base_,
                                     "--work-dir=" + (work_dir_ / "agent").string(),
                                     "--heartbeat-seconds=2",
                                     "--shutdown-grace-seconds=2"};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, AgentLog().c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    int error = posix_spawn(&agent_pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ASSERT_EQ(error, 0) << "posix_spawn " << argv[0];
    for (int i = 0; i < nodes; ++i) {
      std::string name = prefix_ + "-" + std::to_string(i);
      ASSERT_TRUE(Eventually([&] {
        StatusOr<Json> node = client_->Get(kNodes, "", name);
        if (!node.ok() || (*node)["spec"].contains("taints")) return false;
        for (const Json& condition : (*node)["status"].value("conditions", Json::array())) {
          if (condition["type"] == "Ready") return condition["status"] == "True";
        }
        return false;
      })) << "node "
          << name << " never became Ready";
    }
  }

  // Sends `signal` to the agent and reaps it.
  void StopAgent(int signal) {
    kill(agent_pid_, signal);
    int status = 0;
    waitpid(agent_pid_, &status, 0);
    agent_pid_ = 0;
  }

  template <typename Condition>
  bool Eventually(Condition condition,
                  std::chrono::milliseconds limit = std::chrono::milliseconds(15000)) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (condition()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return condition();
  }

  // Where the agent writes the output of `pod`.
  std::filesystem::path PodLog(const Json& pod) const {
    return work_dir_ / "agent" / "logs" /
           (ns_ + "_" + pod["metadata"]["name"].get<std::string>() + "_" +
            pod["metadata"]["uid"].get<std::string>() + ".log");
  }

  std::string kubeconfig_;
  std::unique_ptr<Client> client_;
  std::string ns_;
  std::string prefix_;
  std::string address_base_;
  std::filesystem::path work_dir_;
  pid_t agent_pid_ = 0;
};

}  // namespace bsw::kube::testing

#endif  // BSW_TESTS_CLUSTER_AGENT_CLUSTER_TEST_H_
