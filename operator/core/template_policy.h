#ifndef BSW_CORE_TEMPLATE_POLICY_H_
#define BSW_CORE_TEMPLATE_POLICY_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace bsw {

// What a trial's pod template may not ask for: the ways out of the container onto its node that
// Pod Security "baseline" refuses. The operator creates trial pods with its own rights, so a
// sweep's author must not get through it a pod that reaches the node, whatever the namespace
// enforces. Refused: hostNetwork, hostPID and hostIPC; hostPath volumes; privileged containers;
// capabilities added beyond baseline's list (SYS_ADMIN, NET_ADMIN, ...). Checked in containers,
// initContainers and ephemeralContainers. What baseline refuses besides (hostPort, unusual
// SELinux types, sysctls, ...) is left to the namespace's Pod Security admission.
//
// Appends to `errors` one "<path>.spec.<field>: not allowed: <why>" per violation, rule by rule;
// none when the template asks for none of it. `path` is where the PodTemplateSpec sits in the
// sweep (spec.trial.template). Fields of the wrong type are left to the caller's own checks.
void CheckTemplatePolicy(const nlohmann::json& pod_template, const std::string& path,
                         std::vector<std::string>* errors);

}  // namespace bsw

#endif  // BSW_CORE_TEMPLATE_POLICY_H_
