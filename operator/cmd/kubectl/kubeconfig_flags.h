#ifndef BSW_CMD_KUBECTL_KUBECONFIG_FLAGS_H_
#define BSW_CMD_KUBECTL_KUBECONFIG_FLAGS_H_

#include <string>

#include "base/status.h"
#include "operator/adapters/kube/config.h"

namespace bsw::kubectl {

// The flags kubectl itself takes for reaching a cluster, as the plugin receives them.
struct ClusterFlags {
  std::string kubeconfig;      // --kubeconfig
  std::string context;         // --context
  std::string namespace_name;  // -n, --namespace
};

// The kubeconfig file to read, and what chose it ("--kubeconfig", "$KUBECONFIG" or
// "~/.kube/config"), for error messages.
struct KubeconfigFile {
  std::string path;
  std::string origin;
};

// kubectl's order: --kubeconfig, else the first file of $KUBECONFIG (a colon-separated list, whose
// files kubectl merges; the plugin reads only the first, empty entries skipped), else
// $HOME/.kube/config. Null or empty environment values count as unset. InvalidArgument when none
// applies (no HOME).
[[nodiscard]] StatusOr<KubeconfigFile> FindKubeconfig(const std::string& flag,
                                                      const char* env_kubeconfig,
                                                      const char* env_home);

// Loads `file` for flags.context (its current-context when empty). Errors name the flag or
// variable that chose the file, or --context when that context is missing.
[[nodiscard]] StatusOr<kube::KubeConfig> LoadClusterConfig(const KubeconfigFile& file,
                                                           const ClusterFlags& flags);

// -n, else the context's namespace, else "default" (kube::KubeConfig's own default).
std::string EffectiveNamespace(const ClusterFlags& flags, const kube::KubeConfig& config);

}  // namespace bsw::kubectl

#endif  // BSW_CMD_KUBECTL_KUBECONFIG_FLAGS_H_
