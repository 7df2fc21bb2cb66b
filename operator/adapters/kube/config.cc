#include "operator/adapters/kube/config.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdlib>
#include <exception>
#include <filesystem>

#include "base/read_file.h"

namespace bsw::kube {
namespace {

std::string Resolve(const std::filesystem::path& dir, const std::string& path) {
  std::filesystem::path p(path);
  return p.is_absolute() ? path : (dir / p).string();
}

// Returns the `field` map of the entry named `name` in the list `list` (clusters, users,
// contexts), or an undefined node.
YAML::Node FindNamed(const YAML::Node& list, const std::string& name, const char* field) {
  if (!list.IsSequence()) return YAML::Node(YAML::NodeType::Undefined);
  for (const YAML::Node& entry : list) {
    if (entry["name"] && entry["name"].as<std::string>() == name) return entry[field];
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string Scalar(const YAML::Node& node, const char* key) {
  return node[key] ? node[key].as<std::string>() : std::string();
}

// Reads PEM text from `<key>-data` (base64) or from the file `<key>`.
StatusOr<std::string> PemField(const YAML::Node& node, const std::string& key,
                               const std::filesystem::path& dir) {
  std::string data = Scalar(node, (key + "-data").c_str());
  if (!data.empty()) {
    StatusOr<std::string> decoded = Base64Decode(data);
    if (!decoded.ok()) return InvalidArgumentError(key + "-data: " + decoded.status().message());
    return decoded;
  }
  std::string path = Scalar(node, key.c_str());
  if (path.empty()) return std::string();
  return ReadSmallFile(Resolve(dir, path));
}

// Sets config's server and CA from the cluster named `cluster_name`; refuses a cluster that
// turns off TLS verification.
Status ReadCluster(const YAML::Node& root, const std::string& cluster_name,
                   const std::filesystem::path& dir, KubeConfig& config) {
  YAML::Node cluster = FindNamed(root["clusters"], cluster_name, "cluster");
  if (!cluster.IsMap()) return InvalidArgumentError("cluster '" + cluster_name + "' not found");
  config.server = Scalar(cluster, "server");
  if (config.server.empty())
    return InvalidArgumentError("cluster '" + cluster_name + "' has no server");
  if (cluster["insecure-skip-tls-verify"] && cluster["insecure-skip-tls-verify"].as<bool>()) {
    return InvalidArgumentError("cluster '" + cluster_name +
                                "' sets insecure-skip-tls-verify, which budgetsweep refuses");
  }
  StatusOr<std::string> ca = PemField(cluster, "certificate-authority", dir);
  if (!ca.ok()) return ca.status();
  config.ca_pem = *ca;
  return OkStatus();
}

// Sets config's credentials from the user named `user_name`: a client certificate and key (both
// or neither), a token and a token file.
Status ReadUser(const YAML::Node& root, const std::string& user_name,
                const std::filesystem::path& dir, KubeConfig& config) {
  YAML::Node user = FindNamed(root["users"], user_name, "user");
  if (!user.IsMap()) return InvalidArgumentError("user '" + user_name + "' not found");
  StatusOr<std::string> cert = PemField(user, "client-certificate", dir);
  if (!cert.ok()) return cert.status();
  StatusOr<std::string> key = PemField(user, "client-key", dir);
  if (!key.ok()) return key.status();
  if (cert->empty() != key->empty()) {
    return InvalidArgumentError("user '" + user_name +
                                "' needs both a client certificate and a client key");
  }
  config.client_cert_pem = *cert;
  config.client_key_pem = *key;
  config.token = Scalar(user, "token");
  std::string token_file = Scalar(user, "tokenFile");
  if (!token_file.empty()) config.token_file = Resolve(dir, token_file);
  return OkStatus();
}

StatusOr<KubeConfig> ParseKubeconfig(const YAML::Node& root, const std::filesystem::path& dir,
                                     std::string context_name) {
  if (context_name.empty()) context_name = Scalar(root, "current-context");
  if (context_name.empty()) return InvalidArgumentError("no context given and no current-context");
  YAML::Node context = FindNamed(root["contexts"], context_name, "context");
  if (!context.IsMap()) return InvalidArgumentError("context '" + context_name + "' not found");

  KubeConfig config;
  std::string ns = Scalar(context, "namespace");
  if (!ns.empty()) config.namespace_name = ns;
  Status cluster = ReadCluster(root, Scalar(context, "cluster"), dir, config);
  if (!cluster.ok()) return cluster;
  std::string user_name = Scalar(context, "user");
  if (user_name.empty()) return config;
  Status user = ReadUser(root, user_name, dir, config);
  if (!user.ok()) return user;
  return config;
}

std::string Trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return std::string();
  return text.substr(begin, text.find_last_not_of(" \t\r\n") + 1 - begin);
}

}  // namespace

StatusOr<std::string> Base64Decode(const std::string& text) {
  std::string out;
  unsigned int bits = 0;
  int bit_count = 0;
  bool padding = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    int value;
    if (c >= 'A' && c <= 'Z') {
      value = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      value = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      value = c - '0' + 52;
    } else if (c == '+') {
      value = 62;
    } else if (c == '/') {
      value = 63;
    } else if (c == '=') {
      padding = true;
      continue;
    } else {
      return InvalidArgumentError(std::string("invalid base64 character '") + c + "'");
    }
    if (padding) return InvalidArgumentError("base64 data after padding");
    bits = (bits << 6) | static_cast<unsigned int>(value);
    bit_count += 6;
    if (bit_count >= 8) {
      bit_count -= 8;
      out.push_back(static_cast<char>((bits >> bit_count) & 0xFF));
    }
  }
  if (bit_count >= 6) return InvalidArgumentError("truncated base64 data");
  return out;
}

StatusOr<KubeConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  StatusOr<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  try {
    YAML::Node root = YAML::Load(*text);
    StatusOr<KubeConfig> config =
        ParseKubeconfig(root, std::filesystem::path(path).parent_path(), context);
    if (!config.ok())
      return InvalidArgumentError("kubeconfig " + path + ": " + config.status().message());
    return config;
  } catch (const std::exception& e) {
    return InvalidArgumentError("kubeconfig " + path + ": " + e.what());
  }
}

StatusOr<KubeConfig> LoadInClusterConfig(const std::string& service_account_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == '\0' || *port == '\0') {
    return FailedPreconditionError(
        "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set");
  }
  KubeConfig config;
  std::string host_text = host;
  // An IPv6 service address needs brackets in a URL.
  if (host_text.find(':') != std::string::npos) host_text = "[" + host_text + "]";
  config.server = "https://" + host_text + ":" + port;
  StatusOr<std::string> ca = ReadSmallFile(service_account_dir + "/ca.crt");
  if (!ca.ok()) return FailedPreconditionError("in-cluster CA: " + ca.status().message());
  config.ca_pem = *ca;
  config.token_file = service_account_dir + "/token";
  StatusOr<std::string> token = ReadSmallFile(config.token_file);
  if (!token.ok()) return FailedPreconditionError("in-cluster token: " + token.status().message());
  StatusOr<std::string> ns = ReadSmallFile(service_account_dir + "/namespace");
  if (ns.ok() && !Trim(*ns).empty()) config.namespace_name = Trim(*ns);
  return config;
}

}  // namespace bsw::kube
