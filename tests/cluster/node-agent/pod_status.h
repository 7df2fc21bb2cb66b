#ifndef BSW_TESTS_CLUSTER_NODE_AGENT_POD_STATUS_H_
#define BSW_TESTS_CLUSTER_NODE_AGENT_POD_STATUS_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace bsw::node_agent {

// What the agent knows about the run of a pod's first container. Times are Unix seconds.
struct ContainerRun {
  std::string container_name;
  std::string pod_ip;
  std::string host_ip;
  double pod_start_time = 0;  // status.startTime: when the agent accepted the pod
  // Set when the container could not be started (CreateContainerConfigError): it stays waiting.
  std::string waiting_reason;
  std::string waiting_message;
  double started_at = 0;  // 0: not started
  std::optional<double> finished_at;
  int exit_code = 0;
  std::string terminated_reason;  // Completed, Error, ...
  std::string terminated_message;
  // Pod-level reason and message of a failed pod (DeadlineExceeded).
  std::string pod_reason;
  std::string pod_message;
  std::string container_id;
};

// The pod status the kubelet would report for `run`: phase (Pending while waiting, Running,
// Succeeded on exit code 0 unless the pod failed for a pod-level reason, Failed otherwise), hostIP
// and podIP (with their lists), startTime, conditions (PodScheduled kept as the scheduler wrote
// it; PodReadyToStartContainers, Initialized, ContainersReady, Ready) and the first container's
// status with restartCount 0. Starts from `pod`'s current status, so fields the agent does not own
// survive; a condition keeps its lastTransitionTime while its status does not change. The result
// depends only on its inputs, never on the clock, so an unchanged run gives an unchanged status.
nlohmann::json BuildPodStatus(const nlohmann::json& pod, const ContainerRun& run);

// The container's exit reason as the kubelet words it: Completed for 0, Error otherwise.
std::string TerminatedReason(int exit_code);

}  // namespace bsw::node_agent

#endif  // BSW_TESTS_CLUSTER_NODE_AGENT_POD_STATUS_H_
