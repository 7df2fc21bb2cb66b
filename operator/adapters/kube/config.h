#ifndef BSW_ADAPTERS_KUBE_CONFIG_H_
#define BSW_ADAPTERS_KUBE_CONFIG_H_

#include <string>

#include "base/status.h"

namespace bsw::kube {

// Where and how to reach a kube-apiserver. Certificates and keys are held as PEM text, never as
// paths, so that inline kubeconfig data and files are handled alike.
struct KubeConfig {
  // https://host:port. http:// is accepted only for a loopback host (test servers).
  std::string server;
  // PEM of the CA bundle the server's certificate must chain to. Empty: the system trust store.
  // Server certificates are always verified; there is no option to skip it.
  std::string ca_pem;
  // Client certificate authentication (both or neither).
  std::string client_cert_pem;
  std::string client_key_pem;
  // Bearer token authentication: a fixed token, or a file re-read every token_refresh_seconds
  // (service-account tokens are rotated).
  std::string token;
  std::string token_file;
  double token_refresh_seconds = 60;
  // The namespace of the context, or of the service account in cluster.
  std::string namespace_name = "default";
};

// Reads a kubeconfig file: `context` or, when empty, its current-context. Supports clusters with
// server and certificate-authority(-data), and users with client-certificate(-data) +
// client-key(-data), token or tokenFile. Relative paths are relative to the file's directory.
// InvalidArgument: malformed YAML, a missing context/cluster/user, bad base64 or an unreadable
// referenced file.
[[nodiscard]] StatusOr<KubeConfig> LoadKubeconfig(const std::string& path,
                                                  const std::string& context = "");

inline constexpr char kServiceAccountDir[] = "/var/run/secrets/kubernetes.io/serviceaccount";

// The in-cluster configuration: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the
// CA `ca.crt`, the token file `token` (re-read every minute) and the namespace in
// `service_account_dir`. FailedPrecondition when not running in a pod.
[[nodiscard]] StatusOr<KubeConfig> LoadInClusterConfig(
    const std::string& service_account_dir = kServiceAccountDir);

// Decodes standard base64 (RFC 4648, padding optional, whitespace ignored).
[[nodiscard]] StatusOr<std::string> Base64Decode(const std::string& text);

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_CONFIG_H_
