// The client over real TLS: a cpp-httplib SSLServer that demands a client certificate, with a
// throwaway PKI made by the openssl command.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/config.h"

namespace bsw::kube {
namespace {

const Resource kConfigMaps{"", "v1", "configmaps", true};

// ca.crt signs server.crt (SAN 127.0.0.1, localhost), wrong-name.crt (SAN elsewhere.test) and
// client.crt; other-ca.crt signs nothing here. kubeconfig holds them as *-data fields, with the
// server "SERVER".
const std::string& PkiDir() {
  static std::string dir;
  static std::once_flag once;
  std::call_once(once, [] {
    dir = ::testing::TempDir() + "/kube-tls-" + std::to_string(getpid());
    std::string script = R"(set -e
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
openssl req -x509 $ec -keyout ca.key -out ca.crt -subj /CN=test-ca -days 1
openssl req -x509 $ec -keyout other-ca.key -out other-ca.crt -subj /CN=other-ca -days 1
sign() {  # name subject extensions
  openssl req $ec -keyout $1.key -out $1.csr -subj "$2"
  printf '%s\n' "$3" > $1.ext
  openssl x509 -req -in $1.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
    -extfile $1.ext -out $1.crt
}
sign server /CN=kube-apiserver "subjectAltName=IP:127.0.0.1,DNS:localhost"
sign wrong-name /CN=elsewhere "subjectAltName=DNS:elsewhere.test"
sign client "/O=system:masters/CN=admin" "extendedKeyUsage=clientAuth"
cat > kubeconfig <<KUBECONFIG
apiVersion: v1
kind: Config
current-context: test
contexts:
- name: test
  context: {cluster: c, user: u, namespace: ns}
clusters:
- name: c
  cluster:
    server: SERVER
    certificate-authority-data: $(base64 -w0 ca.crt)
users:
- name: u
  user:
    client-certificate-data: $(base64 -w0 client.crt)
    client-key-data: $(base64 -w0 client.key)
KUBECONFIG
)";
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/make-pki.sh") << script;
    std::string command = "cd '" + dir + "' && bash make-pki.sh > make-pki.log 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << "see " << dir << "/make-pki.log";
  });
  return dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// An HTTPS server that requires a client certificate signed by ca.crt.
class TlsServer {
 public:
  explicit TlsServer(const std::string& cert = "server")
      : server_((PkiDir() + "/" + cert + ".crt").c_str(), (PkiDir() + "/" + cert + ".key").c_str(),
                (PkiDir() + "/ca.crt").c_str()) {
    server_.Get(".*", [this](const httplib::Request&, httplib::Response& response) {
      ++requests_;
      response.set_content(R"({"kind":"ConfigMap","metadata":{"name":"a"}})", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~TlsServer() {
    server_.stop();
    thread_.join();
  }
  std::string url(const std::string& host = "127.0.0.1") const {
    return "https://" + host + ":" + std::to_string(port_);
  }
  int requests() const { return requests_; }

 private:
  httplib::SSLServer server_;
  int port_ = 0;
  std::atomic<int> requests_{0};
  std::thread thread_;
};

KubeConfig LoadTestKubeconfig(const std::string& server) {
  std::string text = ReadFile(PkiDir() + "/kubeconfig");
  text.replace(text.find("SERVER"), 6, server);
  std::string path = PkiDir() + "/kubeconfig-resolved";
  std::ofstream(path) << text;
  StatusOr<KubeConfig> config = LoadKubeconfig(path);
  EXPECT_TRUE(config.ok()) << config.status().message();
  return config.ok() ? *config : KubeConfig{};
}

StatusOr<Json> GetOnce(const KubeConfig& config) {
  ClientOptions options;
  options.max_retries = 0;
  StatusOr<std::unique_ptr<Client>> client = Client::Create(config, options);
  if (!client.ok()) return client.status();
  EXPECT_EQ((*client)->default_namespace(), config.namespace_name);
  return (*client)->Get(kConfigMaps, "ns", "a");
}

TEST(KubeClientTls, KubeconfigWithInlineDataAuthenticatesWithAClientCertificate) {
  TlsServer server;
  KubeConfig config = LoadTestKubeconfig(server.url());
  EXPECT_EQ(config.namespace_name, "ns");
  StatusOr<Json> got = GetOnce(config);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ((*got)["metadata"]["name"], "a");
  EXPECT_TRUE(GetOnce(LoadTestKubeconfig(server.url("localhost"))).ok());
}

TEST(KubeClientTls, AServerSignedByAnotherCaIsRejected) {
  TlsServer server;
  KubeConfig config = LoadTestKubeconfig(server.url());
  config.ca_pem = ReadFile(PkiDir() + "/other-ca.crt");
  Status status = GetOnce(config).status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition) << status.message();
  // OpenSSL's reason between the server and what it was checked against.
  EXPECT_NE(status.message().find("refusing the API server at " + server.url() + ": "),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("certificate"), std::string::npos) << status.message();
  EXPECT_TRUE(status.message().ends_with(
      " (checked against the configured certificate-authority); TLS verification is never "
      "skipped"))
      << status.message();
  EXPECT_EQ(server.requests(), 0);
}

TEST(KubeClientTls, AServerCertificateForAnotherNameIsRejected) {
  TlsServer server("wrong-name");
  Status status = GetOnce(LoadTestKubeconfig(server.url())).status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition) << status.message();
  EXPECT_NE(status.message().find("its certificate does not name host 127.0.0.1"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(server.requests(), 0);
}

TEST(KubeClientTls, WithoutTheCaOnlyTheSystemStoreIsTrusted) {
  TlsServer server;
  KubeConfig config = LoadTestKubeconfig(server.url());
  config.ca_pem.clear();
  EXPECT_EQ(GetOnce(config).status().code(), StatusCode::kFailedPrecondition);
}

TEST(KubeClientTls, TheServerRefusesAClientWithoutCertificate) {
  TlsServer server;
  KubeConfig config = LoadTestKubeconfig(server.url());
  config.client_cert_pem.clear();
  config.client_key_pem.clear();
  EXPECT_EQ(GetOnce(config).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(server.requests(), 0);
}

TEST(KubeClientTls, AKeyThatDoesNotMatchTheCertificateIsInvalid) {
  KubeConfig config = LoadTestKubeconfig("https://127.0.0.1:1");
  config.client_key_pem = ReadFile(PkiDir() + "/other-ca.key");
  EXPECT_EQ(Client::Create(config).status().code(), StatusCode::kInvalidArgument);
  config = LoadTestKubeconfig("https://127.0.0.1:1");
  config.ca_pem = "not a certificate";
  EXPECT_EQ(Client::Create(config).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bsw::kube
