// bsw-node-agent: makes the test cluster's nodes real enough to run pods as local processes.
// See README.md in this directory.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/config.h"
#include "operator/adapters/kube/json_log.h"
#include "tests/cluster/node-agent/address_pool.h"
#include "tests/cluster/node-agent/agent.h"
#include "tests/cluster/node-agent/shim.h"

namespace {

using bsw::kube::LogEvent;

// The part of the agent's environment a pod's process inherits.
std::map<std::string, std::string> BaseEnvironment() {
  std::map<std::string, std::string> env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
  for (const char* name :
       {"PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR", "LD_LIBRARY_PATH", "PYTHONPATH"}) {
    if (const char* value = std::getenv(name); value != nullptr) env[name] = value;
  }
  return env;
}

int Fail(const std::string& event, const std::string& message) {
  LogEvent("error", event, {{"error", message}});
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], bsw::node_agent::kShimArg) == 0) {
    return bsw::node_agent::ShimMain(argc, argv);
  }
  bsw::node_agent::AgentOptions options;
  const char* env_kubeconfig = std::getenv("KUBECONFIG");
  std::string kubeconfig = env_kubeconfig != nullptr ? env_kubeconfig : "";
  std::string work_dir;
  std::vector<std::string> labels;
  CLI::App app{
      "bsw-node-agent: registers nodes with nvidia.com/gpu capacity and runs the pods "
      "bound to them as local processes on loopback addresses"};
  app.add_option("--kubeconfig", kubeconfig, "kubeconfig (default: $KUBECONFIG)");
  app.add_option("--nodes", options.nodes, "nodes to register")->check(CLI::Range(1, 1000));
  app.add_option("--gpus-per-node", options.gpus_per_node, "nvidia.com/gpu capacity of each node")
      ->check(CLI::Range(0, 1024));
  app.add_option("--node-prefix", options.node_prefix, "nodes are <prefix>-0, <prefix>-1, ...");
  app.add_option("--node-label", labels, "key=value label for every node (repeatable)");
  app.add_option("--cpu", options.cpu, "cpu capacity of each node");
  app.add_option("--memory", options.memory, "memory capacity of each node");
  app.add_option("--max-pods", options.max_pods, "pods capacity of each node");
  app.add_option("--address-base", options.address_base,
                 "first pod address; pods get the lowest free address from here up");
  app.add_option("--work-dir", work_dir,
                 "pod records and logs (default: $TMPDIR/bsw-node-agent/<node-prefix>)");
  app.add_option("--heartbeat-seconds", options.heartbeat_seconds,
                 "how often leases and node conditions are renewed")
      ->check(CLI::Range(0.1, 60.0));
  app.add_option("--shutdown-grace-seconds", options.shutdown_grace_seconds,
                 "on SIGTERM, pods get this long between SIGTERM and SIGKILL")
      ->check(CLI::Range(0.0, 300.0));
  CLI11_PARSE(app, argc, argv);

  bsw::kube::InstallJsonLogger();
  for (const std::string& label : labels) {
    size_t equals = label.find('=');
    if (equals == std::string::npos || equals == 0) {
      return Fail("bad_flag", "--node-label wants key=value, got " + label);
    }
    options.node_labels[label.substr(0, equals)] = label.substr(equals + 1);
  }
  if (work_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    work_dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/bsw-node-agent/" +
               options.node_prefix;
  }
  options.work_dir = std::filesystem::absolute(work_dir);
  // Executes this very binary even if the file is replaced while the agent runs.
  options.self_exe = "/proc/self/exe";
  options.base_env = BaseEnvironment();
  if (kubeconfig.empty()) return Fail("bad_flag", "--kubeconfig or $KUBECONFIG is required");

  auto pool = bsw::node_agent::AddressPool::Create(options.address_base);
  if (!pool.ok()) return Fail("bad_flag", pool.status().message());
  auto config = bsw::kube::LoadKubeconfig(kubeconfig);
  if (!config.ok()) return Fail("kubeconfig", config.status().message());
  auto client = bsw::kube::Client::Create(*config);
  if (!client.ok()) return Fail("kubeconfig", client.status().message());

  // SIGTERM and SIGINT are taken by sigwait below, never by another thread.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  bsw::node_agent::NodeAgent agent(**client, options, std::move(*pool));
  bsw::Status started = agent.Start();
  if (!started.ok()) return Fail("start_failed", started.message());
  int signal = 0;
  sigwait(&stop_signals, &signal);
  LogEvent("info", "signal", {{"signal", strsignal(signal)}});
  agent.Stop();
  return 0;
}
