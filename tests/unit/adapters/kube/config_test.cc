#include "operator/adapters/kube/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace bsw::kube {
namespace {

class KubeConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("kube-config-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST(Base64, DecodesPaddedUnpaddedAndWrappedText) {
  EXPECT_EQ(*Base64Decode("aGVsbG8="), "hello");
  EXPECT_EQ(*Base64Decode("aGVsbG8"), "hello");
  EXPECT_EQ(*Base64Decode("aGVs\nbG8h"), "hello!");
  EXPECT_EQ(*Base64Decode(""), "");
  EXPECT_FALSE(Base64Decode("aGV$").ok());
  EXPECT_FALSE(Base64Decode("aGVsbG8=x").ok());
  EXPECT_FALSE(Base64Decode("a").ok());
}

TEST_F(KubeConfigTest, ReadsTheCurrentContextWithInlineDataAndFiles) {
  Write("ca.crt", "CA PEM");
  Write("token", "file-token");
  std::string path = Write("config", R"(
apiVersion: v1
kind: Config
current-context: second
contexts:
- name: first
  context: {cluster: one, user: cert-user}
- name: second
  context: {cluster: two, user: token-user, namespace: team}
clusters:
- name: one
  cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: Q0EgREFUQQ==}
- name: two
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: ca.crt}
users:
- name: cert-user
  user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ}
- name: token-user
  user: {token: abc, tokenFile: token}
)");
  StatusOr<KubeConfig> current = LoadKubeconfig(path);
  ASSERT_TRUE(current.ok()) << current.status().message();
  EXPECT_EQ(current->server, "https://127.0.0.1:6443");
  EXPECT_EQ(current->ca_pem, "CA PEM");
  EXPECT_EQ(current->token, "abc");
  EXPECT_EQ(current->token_file, (dir_ / "token").string());
  EXPECT_EQ(current->namespace_name, "team");

  StatusOr<KubeConfig> first = LoadKubeconfig(path, "first");
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->server, "https://10.0.0.1:6443");
  EXPECT_EQ(first->ca_pem, "CA DATA");
  EXPECT_EQ(first->client_cert_pem, "CERT");
  EXPECT_EQ(first->client_key_pem, "KEY");
  EXPECT_EQ(first->namespace_name, "default");
}

TEST_F(KubeConfigTest, RejectsWhatItCannotUseSafely) {
  auto load = [&](const std::string& text) {
    return LoadKubeconfig(Write("config", text)).status();
  };
  EXPECT_EQ(load("current-context: missing\ncontexts: []\n").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(load("{{{").code(), StatusCode::kInvalidArgument);
  const std::string prefix =
      "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n";
  EXPECT_EQ(load(prefix + "clusters: [{name: k, cluster: {server: 'https://h', "
                          "insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {}}]\n")
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(load(prefix + "clusters: [{name: k, cluster: {server: 'https://h', "
                          "certificate-authority-data: '%%%'}}]\nusers: [{name: u, user: {}}]\n")
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(load(prefix + "clusters: [{name: k, cluster: {server: 'https://h'}}]\n"
                          "users: [{name: u, user: {client-certificate-data: Q0VSVA==}}]\n")
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadKubeconfig((dir_ / "absent").string()).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(KubeConfigTest, InClusterReadsTheServiceAccountAndEnvironment) {
  unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_EQ(LoadInClusterConfig(dir_.string()).status().code(), StatusCode::kFailedPrecondition);

  Write("ca.crt", "CLUSTER CA");
  Write("token", "sa-token\n");
  Write("namespace", "operators\n");
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  StatusOr<KubeConfig> config = LoadInClusterConfig(dir_.string());
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->server, "https://10.96.0.1:443");
  EXPECT_EQ(config->ca_pem, "CLUSTER CA");
  EXPECT_EQ(config->token_file, (dir_ / "token").string());
  EXPECT_EQ(config->token_refresh_seconds, 60);
  EXPECT_EQ(config->namespace_name, "operators");
}

}  // namespace
}  // namespace bsw::kube
