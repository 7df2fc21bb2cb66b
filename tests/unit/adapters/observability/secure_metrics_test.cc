// The --metrics-secure server: HTTPS with a self-signed or file certificate, and /metrics behind
// RequestAuthorizer (TokenReview + SubjectAccessReview, cached), with a fake AccessReviewer. The
// same filter against a real API server: tests/cluster/metrics_auth_test.sh.
#include <gtest/gtest.h>
#include <httplib.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "operator/adapters/observability/health_server.h"
#include "operator/adapters/observability/request_authorizer.h"
#include "operator/adapters/observability/tls_identity.h"
#include "tests/mocks/fake_clock.h"

namespace bsw::observability {
namespace {

// Tokens it knows, by value, and which users hold which rights ("verb path"). Counts its reviews.
class FakeReviewer : public AccessReviewer {
 public:
  StatusOr<TokenReviewResult> ReviewToken(const std::string& token) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++token_reviews;
    if (fail) return UnavailableError("connection refused");
    TokenReviewResult result;
    auto found = users.find(token);
    if (found == users.end()) {
      result.error = "invalid bearer token";
      return result;
    }
    result.authenticated = true;
    result.user.username = found->second;
    result.user.groups = {"system:authenticated"};
    return result;
  }
  StatusOr<AccessDecision> Review(const UserInfo& user, const AccessCheck& check) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++access_reviews;
    last_check = check;
    AccessDecision decision;
    decision.allowed = granted.count(user.username + " " + check.verb + " " + check.path) > 0;
    if (!decision.allowed) decision.reason = "no RBAC policy matched";
    return decision;
  }

  std::mutex mu_;
  std::map<std::string, std::string> users;  // token -> username
  std::set<std::string> granted;             // "user verb path"
  bool fail = false;
  int token_reviews = 0;
  int access_reviews = 0;
  AccessCheck last_check;
};

const AccessCheck kGetMetrics = AccessCheck::NonResource("get", "/metrics");

class Authorizer : public ::testing::Test {
 protected:
  Authorizer() {
    reviewer_.users = {{"prom-token", "system:serviceaccount:mon:prometheus"},
                       {"other-token", "system:serviceaccount:mon:other"}};
    reviewer_.granted = {"system:serviceaccount:mon:prometheus get /metrics"};
  }
  FakeReviewer reviewer_;
  FakeClock clock_;
  RequestAuthorizer authorizer_{reviewer_, clock_, kGetMetrics, /*ttl_seconds=*/10,
                                /*max_entries=*/4};
};

TEST(BearerToken, TakesTheTokenOfABearerHeaderOnly) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("bearer  abc "), "abc");
  EXPECT_EQ(BearerToken("BEARER abc"), "abc");
  EXPECT_EQ(BearerToken("Basic dXNlcjpwYXNz"), "");
  EXPECT_EQ(BearerToken("Bearer"), "");
  EXPECT_EQ(BearerToken("Bearer "), "");
  EXPECT_EQ(BearerToken(""), "");
}

TEST_F(Authorizer, NoTokenIs401WithoutAReview) {
  AuthOutcome outcome = authorizer_.Authorize("");
  EXPECT_EQ(outcome.status, 401);
  EXPECT_EQ(outcome.message, "no bearer token (Authorization: Bearer <token>)");
  EXPECT_EQ(authorizer_.Authorize("Basic dXNlcjpwYXNz").status, 401);
  EXPECT_EQ(reviewer_.token_reviews, 0);
}

TEST_F(Authorizer, AnUnknownTokenIs401WithTheApiServersReason) {
  AuthOutcome outcome = authorizer_.Authorize("Bearer forged");
  EXPECT_EQ(outcome.status, 401);
  EXPECT_EQ(outcome.message,
            "the API server does not authenticate this token: invalid bearer token");
  EXPECT_EQ(reviewer_.access_reviews, 0) << "no SubjectAccessReview for an unknown token";
}

TEST_F(Authorizer, AKnownUserWithoutTheRightIs403NamingUserAndRight) {
  AuthOutcome outcome = authorizer_.Authorize("Bearer other-token");
  EXPECT_EQ(outcome.status, 403);
  EXPECT_EQ(
      outcome.message,
      "user \"system:serviceaccount:mon:other\" may not get /metrics: no RBAC policy matched");
  EXPECT_EQ(reviewer_.last_check.path, "/metrics");
  EXPECT_EQ(reviewer_.last_check.verb, "get");
  EXPECT_TRUE(reviewer_.last_check.resource.empty());
}

TEST_F(Authorizer, AUserWithTheRightIsLetThrough) {
  AuthOutcome outcome = authorizer_.Authorize("Bearer prom-token");
  EXPECT_EQ(outcome.status, 200);
  EXPECT_EQ(reviewer_.token_reviews, 1);
  EXPECT_EQ(reviewer_.access_reviews, 1);
}

TEST_F(Authorizer, OutcomesAreCachedForTheTtlThenReviewedAgain) {
  EXPECT_EQ(authorizer_.Authorize("Bearer prom-token").status, 200);
  EXPECT_EQ(authorizer_.Authorize("Bearer other-token").status, 403);
  EXPECT_EQ(authorizer_.Authorize("Bearer forged").status, 401);
  EXPECT_EQ(authorizer_.reviews(), 5u);  // 2 + 2 + 1
  clock_.Advance(9);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(authorizer_.Authorize("Bearer prom-token").status, 200);
    EXPECT_EQ(authorizer_.Authorize("Bearer other-token").status, 403);
    EXPECT_EQ(authorizer_.Authorize("Bearer forged").status, 401);
  }
  EXPECT_EQ(authorizer_.reviews(), 5u) << "within the TTL, nothing is reviewed again";
  // The binding is revoked: it holds until the TTL runs out, then the token is refused.
  reviewer_.granted.clear();
  EXPECT_EQ(authorizer_.Authorize("Bearer prom-token").status, 200);
  clock_.Advance(1);
  EXPECT_EQ(authorizer_.Authorize("Bearer prom-token").status, 403);
  EXPECT_EQ(authorizer_.reviews(), 7u);
}

TEST_F(Authorizer, AFailedReviewIs503AndIsNotCached) {
  reviewer_.fail = true;
  AuthOutcome outcome = authorizer_.Authorize("Bearer prom-token");
  EXPECT_EQ(outcome.status, 503);
  EXPECT_EQ(outcome.message, "TokenReview failed: connection refused");
  reviewer_.fail = false;
  EXPECT_EQ(authorizer_.Authorize("Bearer prom-token").status, 200) << "the failure was not cached";
}

TEST_F(Authorizer, AFullCacheForgetsAndStillAnswers) {
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(authorizer_.Authorize("Bearer forged-" + std::to_string(i)).status, 401);
  }
  EXPECT_EQ(authorizer_.Authorize("Bearer prom-token").status, 200);
  EXPECT_EQ(authorizer_.Authorize("Bearer prom-token").status, 200);
  EXPECT_EQ(reviewer_.token_reviews, 21);
}

// ---- the server -------------------------------------------------------------------------------

struct Reply {
  int status = -1;  // -1: no response (the TLS handshake or the connection failed)
  std::string body;
  std::string www_authenticate;
  std::string error;
};

// GET https://127.0.0.1:<port><path>. With `ca_file`, the server's certificate is verified
// against it; without, not (as Prometheus with insecure_skip_verify against a self-signed one).
Reply GetTls(int port, const std::string& path, const std::string& token,
             const std::string& ca_file = "") {
  httplib::SSLClient client("127.0.0.1", port);
  client.set_connection_timeout(5);
  client.set_read_timeout(5);
  if (!ca_file.empty()) {
    client.set_ca_cert_path(ca_file.c_str());
    client.enable_server_certificate_verification(true);
  } else {
    client.enable_server_certificate_verification(false);
  }
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  httplib::Result result = client.Get(path.c_str(), headers);
  if (!result) return {-1, "", "", httplib::to_string(result.error())};
  return {result->status, result->body, result->get_header_value("WWW-Authenticate"), ""};
}

int PlainGet(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2);
  client.set_read_timeout(2);
  httplib::Result result = client.Get(path.c_str());
  return result ? result->status : -1;
}

std::string TempDir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/" + name + "-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  return dir;
}

class SecureServer : public ::testing::Test {
 protected:
  SecureServer() {
    reviewer_.users = {{"prom-token", "system:serviceaccount:mon:prometheus"},
                       {"other-token", "system:serviceaccount:mon:other"}};
    reviewer_.granted = {"system:serviceaccount:mon:prometheus get /metrics"};
    prometheus::BuildGauge()
        .Name("bsw_test_gauge")
        .Help("a gauge")
        .Register(*registry_)
        .Add({})
        .Set(1);
  }

  std::unique_ptr<HealthServer> Start(ServingCertificate& certificate) {
    secure_.certificate = &certificate;
    secure_.authorizer = &authorizer_;
    secure_.on_refused = [this](const std::string&, const AuthOutcome& outcome) {
      std::lock_guard<std::mutex> lock(mu_);
      refused_.push_back(outcome.status);
    };
    StatusOr<std::unique_ptr<HealthServer>> server = HealthServer::Start(
        "127.0.0.1:0", registry_, [] { return true; }, &secure_);
    EXPECT_TRUE(server.ok()) << server.status().message();
    return server.ok() ? std::move(server).value() : nullptr;
  }

  FakeReviewer reviewer_;
  FakeClock clock_;
  RequestAuthorizer authorizer_{reviewer_, clock_, kGetMetrics};
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  SecureMetrics secure_;
  std::mutex mu_;
  std::vector<int> refused_;
};

TEST_F(SecureServer, SelfSignedHttpsAnswers401403AndTheMetricsByToken) {
  StatusOr<TlsIdentity> identity = SelfSignedIdentity({"localhost"}, {"127.0.0.1"});
  ASSERT_TRUE(identity.ok()) << identity.status().message();
  StatusOr<std::unique_ptr<ServingCertificate>> certificate = ServingCertificate::Fixed(*identity);
  ASSERT_TRUE(certificate.ok()) << certificate.status().message();
  std::unique_ptr<HealthServer> server = Start(**certificate);
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(server->secure());

  Reply anonymous = GetTls(server->port(), "/metrics", "");
  EXPECT_EQ(anonymous.status, 401) << anonymous.error;
  EXPECT_EQ(anonymous.www_authenticate, "Bearer realm=\"budgetsweep-operator\"");
  EXPECT_EQ(anonymous.body, "no bearer token (Authorization: Bearer <token>)\n");
  EXPECT_EQ(GetTls(server->port(), "/metrics", "forged").status, 401);
  Reply other = GetTls(server->port(), "/metrics", "other-token");
  EXPECT_EQ(other.status, 403);
  EXPECT_EQ(other.body.find("bsw_test_gauge"), std::string::npos);
  Reply prometheus = GetTls(server->port(), "/metrics", "prom-token");
  EXPECT_EQ(prometheus.status, 200);
  EXPECT_NE(prometheus.body.find("bsw_test_gauge 1"), std::string::npos) << prometheus.body;
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_EQ(refused_, (std::vector<int>{401, 401, 403}));
  }

  // The probes stay open on the secure port.
  EXPECT_EQ(GetTls(server->port(), "/healthz", "").status, 200);
  EXPECT_EQ(GetTls(server->port(), "/readyz", "").status, 200);
  // Plain HTTP gets no answer from the TLS port.
  EXPECT_EQ(PlainGet(server->port(), "/metrics"), -1);
  // Nobody verifies a self-signed certificate against a CA: it is its own issuer.
  const std::string dir = TempDir("self-signed");
  std::ofstream(dir + "/self.crt") << (*certificate)->CertificatePem();
  Reply verified = GetTls(server->port(), "/healthz", "", dir + "/self.crt");
  EXPECT_EQ(verified.status, 200) << "pinned, the certificate itself verifies: " << verified.error;
}

// A CA, and two server certificates it signs for 127.0.0.1 (openssl command, as tls_test.cc).
std::string MakePki() {
  const std::string dir = TempDir("metrics-pki");
  const std::string script = R"(set -e
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
openssl req -x509 $ec -keyout ca.key -out ca.crt -subj /CN=metrics-ca -days 1
openssl req -x509 $ec -keyout other-ca.key -out other-ca.crt -subj /CN=other-ca -days 1
for n in one two; do
  openssl req $ec -keyout $n.key -out $n.csr -subj /CN=budgetsweep-operator-$n
  printf 'subjectAltName=IP:127.0.0.1\n' > $n.ext
  openssl x509 -req -in $n.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -extfile $n.ext \
    -out $n.crt
done
)";
  std::ofstream(dir + "/make-pki.sh") << script;
  std::string command = "cd '" + dir + "' && bash make-pki.sh > make-pki.log 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << "see " << dir << "/make-pki.log";
  return dir;
}

TEST_F(SecureServer, ACertificateFromFilesVerifiesAgainstItsCaAndIsReloadedWhenItChanges) {
  const std::string pki = MakePki();
  const std::string live = pki + "/live";
  std::filesystem::create_directories(live);
  std::filesystem::copy_file(pki + "/one.crt", live + "/tls.crt");
  std::filesystem::copy_file(pki + "/one.key", live + "/tls.key");
  StatusOr<std::unique_ptr<ServingCertificate>> certificate =
      ServingCertificate::FromFiles(live + "/tls.crt", live + "/tls.key", clock_, 10);
  ASSERT_TRUE(certificate.ok()) << certificate.status().message();
  std::unique_ptr<HealthServer> server = Start(**certificate);
  ASSERT_NE(server, nullptr);

  Reply verified = GetTls(server->port(), "/metrics", "prom-token", pki + "/ca.crt");
  EXPECT_EQ(verified.status, 200) << verified.error;
  Reply wrong_ca = GetTls(server->port(), "/metrics", "prom-token", pki + "/other-ca.crt");
  EXPECT_EQ(wrong_ca.status, -1) << "a client that trusts another CA refuses the server";

  // The Secret is renewed: the files change; the next handshake after the check interval serves
  // the new certificate.
  const std::string before = (*certificate)->CertificatePem();
  std::filesystem::copy_file(pki + "/two.crt", live + "/tls.crt.new");
  std::filesystem::copy_file(pki + "/two.key", live + "/tls.key.new");
  std::filesystem::rename(live + "/tls.crt.new", live + "/tls.crt");
  std::filesystem::rename(live + "/tls.key.new", live + "/tls.key");
  EXPECT_EQ((*certificate)->CertificatePem(), before) << "not before the check interval";
  clock_.Advance(10);
  const std::string after = (*certificate)->CertificatePem();
  EXPECT_NE(after, before);
  std::ifstream two(pki + "/two.crt");
  std::string two_pem((std::istreambuf_iterator<char>(two)), std::istreambuf_iterator<char>());
  EXPECT_EQ(after, two_pem);
  EXPECT_EQ(GetTls(server->port(), "/metrics", "prom-token", pki + "/ca.crt").status, 200);

  // A half-written pair (a key that does not match) keeps the last good certificate.
  std::filesystem::copy_file(pki + "/one.key", live + "/tls.key",
                             std::filesystem::copy_options::overwrite_existing);
  clock_.Advance(10);
  EXPECT_EQ((*certificate)->CertificatePem(), after);
  EXPECT_EQ(GetTls(server->port(), "/metrics", "prom-token", pki + "/ca.crt").status, 200);
}

TEST(ServingCertificate, FilesThatDoNotLoadAreRefusedNamingTheFile) {
  const std::string pki = MakePki();
  FakeClock clock;
  StatusOr<std::unique_ptr<ServingCertificate>> missing =
      ServingCertificate::FromFiles(pki + "/nope.crt", pki + "/one.key", clock);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "cannot read " + pki + "/nope.crt");
  StatusOr<std::unique_ptr<ServingCertificate>> mismatch =
      ServingCertificate::FromFiles(pki + "/one.crt", pki + "/two.key", clock);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.status().message(),
            pki + "/two.key does not match the certificate of " + pki + "/one.crt");
  StatusOr<std::unique_ptr<ServingCertificate>> swapped =
      ServingCertificate::FromFiles(pki + "/one.key", pki + "/one.crt", clock);
  ASSERT_FALSE(swapped.ok());
  EXPECT_EQ(swapped.status().message(), pki + "/one.key holds no PEM certificate");
}

}  // namespace
}  // namespace bsw::observability
