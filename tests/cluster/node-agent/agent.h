#ifndef BSW_TESTS_CLUSTER_NODE_AGENT_AGENT_H_
#define BSW_TESTS_CLUSTER_NODE_AGENT_AGENT_H_

#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/informer.h"
#include "operator/core/status.h"
#include "tests/cluster/node-agent/address_pool.h"
#include "tests/cluster/node-agent/pod_status.h"

namespace bsw::node_agent {

struct AgentOptions {
  int nodes = 2;
  int gpus_per_node = 4;
  std::string node_prefix = "bsw-node";
  std::string cpu = "16";
  std::string memory = "64Gi";
  int max_pods = 110;
  std::string address_base = "127.0.0.10";
  std::filesystem::path work_dir;
  std::map<std::string, std::string> node_labels;  // added to every node
  // This binary, started again as the shim of each pod (see shim.h).
  std::string self_exe;
  // Passed to every pod's process (PATH, HOME, ...).
  std::map<std::string, std::string> base_env;
  int lease_duration_seconds = 40;
  double heartbeat_seconds = 10;
  // On Stop, pods get at most this long between SIGTERM and SIGKILL.
  double shutdown_grace_seconds = 10;
};

// A kubelet stand-in for nodes without containers: it registers `nodes` Node objects, keeps their
// Leases and Ready condition fresh, and runs each pod bound to one of them as a local process on a
// loopback address of its own, reporting its status as the kubelet would. See README.md.
//
// Differences from the kubelet, by design:
// - Only the first container runs; init containers, probes, volumes and resource limits are
//   ignored. Every restartPolicy is treated as Never: a pod runs once.
// - A pod whose status shows a started container that this agent has no record of (its work dir
//   was lost) is reported terminated, reason Error, exit code 137, "agent lost the process"; it is
//   never started twice.
// - Stop() kills the pods' processes, as a node going away would, reports them Failed, and taints
//   the nodes node.kubernetes.io/not-ready:NoSchedule until an agent registers them again.
//   An agent that dies without Stop() leaves the processes running under their shims, and its next
//   incarnation adopts them from the work dir.
class NodeAgent {
 public:
  NodeAgent(kube::Client& client, AgentOptions options, AddressPool pool);
  ~NodeAgent();
  NodeAgent(const NodeAgent&) = delete;
  NodeAgent& operator=(const NodeAgent&) = delete;

  // Registers the nodes and their leases, reloads the pod records of the work dir, starts the pod
  // informer and waits for its first list, then starts the heartbeat and pod sync threads.
  [[nodiscard]] Status Start();
  // Kills the pods' processes (SIGTERM, SIGKILL after the grace period), reports their final
  // status, marks the nodes not ready and stops the threads. Idempotent.
  void Stop();

 private:
  struct Run {
    std::string key;  // namespace/name
    std::string uid;
    std::string node;
    std::filesystem::path dir;
    std::string log_file;
    ContainerRun container;
    pid_t shim_pid = 0;
    std::uint64_t shim_start_ticks = 0;
    bool deadline_exceeded = false;
    bool address_held = false;
    // Killing: SIGTERM once the workload's pid is known, SIGKILL at kill_deadline.
    bool killing = false;
    bool term_sent = false;
    bool kill_sent = false;
    double kill_deadline = 0;
    std::string kill_message;
    bool delete_sent = false;
    nlohmann::json last_written;  // the status last written, to write only on change
  };

  Status RegisterNode(const std::string& name);
  nlohmann::json NodeStatus(const nlohmann::json& current, bool ready) const;
  Status RenewLease(const std::string& name);
  Status Heartbeat(const std::string& name, bool ready);
  void HeartbeatLoop();

  void LoadRecords();
  Status SaveRecord(const Run& run) const;
  void SyncLoop();
  void SyncKey(const std::string& key);
  void SyncPod(const nlohmann::json& pod);
  void StartPod(const nlohmann::json& pod);
  void AdoptLostPod(const nlohmann::json& pod);
  // Reads the shim's files: the workload's exit, or that it is lost.
  void Observe(Run& run, double now);
  void BeginKill(Run& run, double grace_seconds, const std::string& message, double now);
  void DriveKill(Run& run, double now);
  bool WriteStatus(Run& run, const nlohmann::json& pod);
  void ForgetRun(Run& run);
  void ShutdownPods();
  bool IsOurNode(const std::string& node) const { return node_names_.contains(node); }
  bool Settled(const Run& run) const;

  kube::Client& client_;
  const AgentOptions options_;
  std::set<std::string> node_names_;

  // Only the sync thread touches runs_ and pool_ once started.
  AddressPool pool_;
  std::map<std::string, Run> runs_;  // by pod uid
  std::unique_ptr<kube::Informer> pods_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::set<std::string> dirty_;  // pod keys with news
  bool stopping_ = false;
  bool stopped_ = false;
  std::thread sync_thread_;
  std::thread heartbeat_thread_;
};

}  // namespace bsw::node_agent

#endif  // BSW_TESTS_CLUSTER_NODE_AGENT_AGENT_H_
