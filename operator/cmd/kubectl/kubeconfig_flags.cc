#include "operator/cmd/kubectl/kubeconfig_flags.h"

#include <algorithm>

namespace bsw::kubectl {

StatusOr<KubeconfigFile> FindKubeconfig(const std::string& flag, const char* env_kubeconfig,
                                        const char* env_home) {
  if (!flag.empty()) return KubeconfigFile{flag, "--kubeconfig"};
  std::string list = env_kubeconfig ? env_kubeconfig : "";
  for (size_t start = 0; start < list.size();) {
    size_t end = std::min(list.find(':', start), list.size());
    if (end > start) return KubeconfigFile{list.substr(start, end - start), "$KUBECONFIG"};
    start = end + 1;
  }
  std::string home = env_home ? env_home : "";
  if (home.empty()) {
    return InvalidArgumentError(
        "no kubeconfig: pass --kubeconfig or set KUBECONFIG (HOME is not set, so there is no "
        "~/.kube/config)");
  }
  return KubeconfigFile{home + "/.kube/config", "~/.kube/config"};
}

StatusOr<kube::KubeConfig> LoadClusterConfig(const KubeconfigFile& file,
                                             const ClusterFlags& flags) {
  StatusOr<kube::KubeConfig> config = kube::LoadKubeconfig(file.path, flags.context);
  if (config.ok()) return config;
  std::string message = config.status().message();
  bool missing_context = !flags.context.empty() && message.find("context '" + flags.context +
                                                                "' not found") != std::string::npos;
  std::string origin = missing_context ? "--context " + flags.context : file.origin;
  return InvalidArgumentError(origin + ": " + message);
}

std::string EffectiveNamespace(const ClusterFlags& flags, const kube::KubeConfig& config) {
  return flags.namespace_name.empty() ? config.namespace_name : flags.namespace_name;
}

}  // namespace bsw::kubectl
