#include "operator/core/template_policy.h"

#include <set>

namespace bsw {
namespace {

using nlohmann::json;

// One rule over the template's PodSpec at `spec_path`; appends its violations.
using Check = void (*)(const json& pod_spec, const std::string& spec_path,
                       std::vector<std::string>* violations);

bool IsTrue(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

// Calls `visit(container, path)` for every container object of every container list.
template <typename Visit>
void ForEachContainer(const json& pod_spec, const std::string& spec_path, Visit visit) {
  for (const char* list : {"initContainers", "containers", "ephemeralContainers"}) {
    auto it = pod_spec.find(list);
    if (it == pod_spec.end() || !it->is_array()) continue;
    for (size_t i = 0; i < it->size(); ++i) {
      const json& container = (*it)[i];
      if (!container.is_object()) continue;
      visit(container, spec_path + "." + list + "[" + std::to_string(i) + "]");
    }
  }
}

const json* SecurityContext(const json& container) {
  auto it = container.find("securityContext");
  return it != container.end() && it->is_object() ? &*it : nullptr;
}

void HostNamespaces(const json& pod_spec, const std::string& spec_path,
                    std::vector<std::string>* violations) {
  for (const auto& [key, what] : {std::pair<const char*, const char*>{"hostNetwork", "network"},
                                  {"hostPID", "process"},
                                  {"hostIPC", "IPC"}}) {
    if (IsTrue(pod_spec, key)) {
      violations->push_back(spec_path + "." + key + ": not allowed: the pod would share the " +
                            "node's " + what + " namespace");
    }
  }
}

void HostPathVolumes(const json& pod_spec, const std::string& spec_path,
                     std::vector<std::string>* violations) {
  auto volumes = pod_spec.find("volumes");
  if (volumes == pod_spec.end() || !volumes->is_array()) return;
  for (size_t i = 0; i < volumes->size(); ++i) {
    const json& volume = (*volumes)[i];
    if (volume.is_object() && volume.contains("hostPath")) {
      violations->push_back(spec_path + ".volumes[" + std::to_string(i) +
                            "].hostPath: not allowed: it mounts a directory of the node; use a "
                            "persistentVolumeClaim, emptyDir or another volume type");
    }
  }
}

void PrivilegedContainers(const json& pod_spec, const std::string& spec_path,
                          std::vector<std::string>* violations) {
  ForEachContainer(pod_spec, spec_path, [&](const json& container, const std::string& path) {
    const json* context = SecurityContext(container);
    if (context != nullptr && IsTrue(*context, "privileged")) {
      violations->push_back(path +
                            ".securityContext.privileged: not allowed: a privileged container "
                            "has the node's devices and every capability");
    }
  });
}

void AddedCapabilities(const json& pod_spec, const std::string& spec_path,
                       std::vector<std::string>* violations) {
  // Pod Security baseline's list (the container runtime's defaults).
  static const std::set<std::string> kBaseline = {
      "AUDIT_WRITE",      "CHOWN",   "DAC_OVERRIDE", "FOWNER",  "FSETID", "KILL",      "MKNOD",
      "NET_BIND_SERVICE", "SETFCAP", "SETGID",       "SETPCAP", "SETUID", "SYS_CHROOT"};
  ForEachContainer(pod_spec, spec_path, [&](const json& container, const std::string& path) {
    const json* context = SecurityContext(container);
    if (context == nullptr) return;
    auto capabilities = context->find("capabilities");
    if (capabilities == context->end() || !capabilities->is_object()) return;
    auto added = capabilities->find("add");
    if (added == capabilities->end() || !added->is_array()) return;
    for (size_t i = 0; i < added->size(); ++i) {
      const json& name = (*added)[i];
      if (name.is_string() && !kBaseline.contains(name.get<std::string>())) {
        violations->push_back(path + ".securityContext.capabilities.add[" + std::to_string(i) +
                              "]: not allowed: " + name.get<std::string>() +
                              " is beyond Pod Security baseline's capabilities");
      }
    }
  });
}

// The rules, in the order their violations are listed.
constexpr Check kTemplatePolicy[] = {HostNamespaces, HostPathVolumes, PrivilegedContainers,
                                     AddedCapabilities};

}  // namespace

void CheckTemplatePolicy(const json& pod_template, const std::string& path,
                         std::vector<std::string>* errors) {
  if (!pod_template.is_object()) return;
  auto pod_spec = pod_template.find("spec");
  if (pod_spec == pod_template.end() || !pod_spec->is_object()) return;
  for (Check check : kTemplatePolicy) check(*pod_spec, path + ".spec", errors);
}

}  // namespace bsw
