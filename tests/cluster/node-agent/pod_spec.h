#ifndef BSW_TESTS_CLUSTER_NODE_AGENT_POD_SPEC_H_
#define BSW_TESTS_CLUSTER_NODE_AGENT_POD_SPEC_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "operator/core/status.h"

namespace bsw::node_agent {

// What to run for a pod: its first container's command and args, env and working directory.
struct LaunchSpec {
  std::string container_name;
  std::vector<std::string> argv;
  std::vector<std::string> env;  // NAME=value
  std::string working_dir;       // empty: the caller's choice
};

// Builds the launch of `pod`'s first container as the kubelet would resolve it:
// - env: `base_env` (taken from the agent: PATH, HOME, ...), HOSTNAME=<pod name>, POD_IP, then the
//   container's env in order: `value` with $(VAR) references expanded against what is defined
//   so far, or `valueFrom.fieldRef` (metadata.name/namespace/uid/labels['k']/annotations['k'],
//   spec.nodeName/serviceAccountName, status.podIP/podIPs/hostIP/hostIPs); finally
//   BUDGETSWEEP_METRICS_HOST=<pod IP> unless the container defines it, so that a trainer serves
//   its metrics on the pod's own address;
// - argv: command + args with $(VAR) expanded; args alone when there is no command (there is no
//   image entrypoint to fall back on).
// InvalidArgument (the kubelet's CreateContainerConfigError) for no container, no command and no
// args, or an env source this agent cannot resolve (secretKeyRef, configMapKeyRef, ...).
[[nodiscard]] StatusOr<LaunchSpec> BuildLaunchSpec(
    const nlohmann::json& pod, const std::string& pod_ip, const std::string& host_ip,
    const std::map<std::string, std::string>& base_env);

// Kubernetes $(VAR) expansion: $(NAME) becomes its value when `vars` defines NAME and stays as
// written otherwise; $$ is a literal $.
std::string ExpandVariables(const std::string& text,
                            const std::map<std::string, std::string>& vars);

}  // namespace bsw::node_agent

#endif  // BSW_TESTS_CLUSTER_NODE_AGENT_POD_SPEC_H_
