#ifndef BSW_TESTS_CLUSTER_NODE_CLUSTER_TEST_H_
#define BSW_TESTS_CLUSTER_NODE_CLUSTER_TEST_H_

// A gtest fixture for tests whose pods really run: on the test cluster's real node (node_up.sh:
// kubelet, containerd, runc), as containers. It connects with KUBECONFIG (the test skips when it is
// unset), reads the node's name and pod subnet from node.env in the cluster's state directory
// (BSW_CLUSTER_DIR, else the directory of KUBECONFIG), and creates a fresh namespace per test, so
// tests never see each other's pods.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/config.h"

namespace bsw::kube::testing {

inline const Resource kNamespaces{"", "v1", "namespaces", false};
inline const Resource kPods{"", "v1", "pods", true};

inline std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The `export NAME=value` lines of node.env (values without shell quoting: node_up.sh writes
// names, addresses and numbers).
inline std::map<std::string, std::string> ReadNodeEnv(const std::filesystem::path& path) {
  std::map<std::string, std::string> env;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("export ", 0) == 0) line = line.substr(7);
    size_t eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

// Whether dotted IPv4 `ip` lies in `cidr` (a.b.c.d/n).
inline bool InSubnet(const std::string& ip, const std::string& cidr) {
  auto parse = [](const std::string& text, uint32_t& out) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    char tail = 0;
    if (std::sscanf(text.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4) return false;
    if (a > 255 || b > 255 || c > 255 || d > 255) return false;
    out = (a << 24) | (b << 16) | (c << 8) | d;
    return true;
  };
  size_t slash = cidr.find('/');
  uint32_t address = 0, network = 0;
  if (slash == std::string::npos || !parse(ip, address) || !parse(cidr.substr(0, slash), network)) {
    return false;
  }
  int bits = std::atoi(cidr.c_str() + slash + 1);
  uint32_t mask = bits <= 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return (address & mask) == (network & mask);
}

class NodeClusterTest : public ::testing::Test {
 protected:
  // Connects, reads node.env, and creates the namespace `<tag>-<test>-<unique>` with
  // `namespace_labels`.
  void SetUpCluster(const std::string& tag, const Json& namespace_labels = Json::object()) {
    const char* path = std::getenv("KUBECONFIG");
    if (path == nullptr || *path == '\0') GTEST_SKIP() << "KUBECONFIG is not set";
    kubeconfig_ = path;
    const char* dir = std::getenv("BSW_CLUSTER_DIR");
    std::filesystem::path node_env =
        std::filesystem::path(dir != nullptr && *dir != '\0'
                                  ? std::filesystem::path(dir)
                                  : std::filesystem::path(kubeconfig_).parent_path()) /
        "node" / "node.env";
    std::map<std::string, std::string> env = ReadNodeEnv(node_env);
    node_name_ = env["BSW_NODE_NAME"];
    pod_subnet_ = env["BSW_POD_SUBNET"];
    ASSERT_FALSE(node_name_.empty() || pod_subnet_.empty())
        << node_env << " names no test node (BSW_NODE_NAME, BSW_POD_SUBNET): start it with "
        << "tests/cluster/node_up.sh";
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
    ns_ = tag + "-" + short_name + "-" + std::to_string(getpid()) + "-" +
          std::to_string(random() % 100000);
    StatusOr<Json> created = client_->Create(
        kNamespaces, "", Json{{"metadata", {{"name", ns_}, {"labels", namespace_labels}}}});
    ASSERT_TRUE(created.ok()) << created.status().message();
  }

  // Deletes every pod of the test (finalizers off, grace 0) and drops the namespace.
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
    (void)client_->Delete(kNamespaces, "", ns_);
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

  // The output of pod `name`'s container, as `kubectl logs` reads it through the kubelet.
  std::string PodLog(const std::string& name) const {
    std::string command =
        "kubectl --kubeconfig='" + kubeconfig_ + "' -n '" + ns_ + "' logs '" + name + "' 2>&1";
    std::string out;
    if (FILE* pipe = popen(command.c_str(), "r")) {
      char buffer[4096];
      size_t n = 0;
      while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
      pclose(pipe);
    }
    return out;
  }

  std::string kubeconfig_;
  std::unique_ptr<Client> client_;
  std::string ns_;
  std::string node_name_;   // the test node's Node name (kubernetes.io/hostname)
  std::string pod_subnet_;  // its pod CIDR: every pod IP lies in it
};

}  // namespace bsw::kube::testing

#endif  // BSW_TESTS_CLUSTER_NODE_CLUSTER_TEST_H_
