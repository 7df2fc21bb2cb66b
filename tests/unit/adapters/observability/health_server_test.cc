#include "operator/adapters/observability/health_server.h"

#include <gtest/gtest.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <atomic>
#include <memory>
#include <string>

#include "tests/unit/adapters/observability/scrape.h"

namespace bsw::observability {
namespace {

using testing::Get;
using testing::Reply;

std::unique_ptr<HealthServer> MustStart(const std::string& address,
                                        std::shared_ptr<prometheus::Registry> registry,
                                        std::function<bool()> ready) {
  StatusOr<std::unique_ptr<HealthServer>> server =
      HealthServer::Start(address, std::move(registry), std::move(ready));
  EXPECT_TRUE(server.ok()) << server.status().message();
  return server.ok() ? std::move(server).value() : nullptr;
}

TEST(ParseListenAddress, AcceptsHostPortColonPortAndBracketedIpv6) {
  StatusOr<ListenAddress> all = ParseListenAddress(":8080");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->host, "0.0.0.0");
  EXPECT_EQ(all->port, 8080);

  StatusOr<ListenAddress> loopback = ParseListenAddress("127.0.0.1:0");
  ASSERT_TRUE(loopback.ok());
  EXPECT_EQ(loopback->host, "127.0.0.1");
  EXPECT_EQ(loopback->port, 0);

  StatusOr<ListenAddress> v6 = ParseListenAddress("[::1]:9090");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 9090);
}

TEST(ParseListenAddress, RejectsWhatIsNotAnAddressNamingIt) {
  for (const char* bad :
       {"8080", "", "localhost:", ":http", ":8080x", ":-1", ":65536", "::1:80", "a:b:c"}) {
    StatusOr<ListenAddress> parsed = ParseListenAddress(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(parsed.status().message().find(std::string("\"") + bad + "\""), std::string::npos)
        << parsed.status().message();
  }
}

TEST(HealthServer, PortZeroPicksAFreePortAndHealthzAnswersOk) {
  std::unique_ptr<HealthServer> server = MustStart("127.0.0.1:0", nullptr, nullptr);
  ASSERT_NE(server, nullptr);
  EXPECT_GT(server->port(), 0);
  Reply healthz = Get(server->port(), "/healthz");
  EXPECT_EQ(healthz.status, 200);
  EXPECT_EQ(healthz.body, "ok");
}

TEST(HealthServer, ReadyzFollowsTheCallback) {
  std::atomic<bool> ready = false;
  std::unique_ptr<HealthServer> server =
      MustStart("127.0.0.1:0", nullptr, [&ready] { return ready.load(); });
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(Get(server->port(), "/readyz").status, 503);
  EXPECT_EQ(Get(server->port(), "/healthz").status, 200) << "alive while not ready";
  ready = true;
  EXPECT_EQ(Get(server->port(), "/readyz").status, 200);
  ready = false;
  EXPECT_EQ(Get(server->port(), "/readyz").status, 503);
}

TEST(HealthServer, WithoutACallbackIsReady) {
  std::unique_ptr<HealthServer> server = MustStart("127.0.0.1:0", nullptr, nullptr);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(Get(server->port(), "/readyz").status, 200);
}

TEST(HealthServer, ServesTheRegistryInTheTextFormat) {
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildGauge()
      .Name("bsw_test_gauge")
      .Help("a gauge")
      .Register(*registry)
      .Add({{"k", "v"}})
      .Set(2.5);
  std::unique_ptr<HealthServer> server = MustStart("127.0.0.1:0", registry, nullptr);
  ASSERT_NE(server, nullptr);
  Reply metrics = Get(server->port(), "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(testing::Value(testing::Scrape(server->port()), "bsw_test_gauge", {{"k", "v"}}), 2.5);
}

TEST(HealthServer, WithoutARegistryHasNoMetricsPath) {
  std::unique_ptr<HealthServer> server = MustStart("127.0.0.1:0", nullptr, nullptr);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(Get(server->port(), "/metrics").status, 404);
}

TEST(HealthServer, TwoServersRunSideBySide) {
  std::unique_ptr<HealthServer> metrics =
      MustStart("127.0.0.1:0", std::make_shared<prometheus::Registry>(), nullptr);
  std::unique_ptr<HealthServer> health = MustStart(":0", nullptr, [] { return false; });
  ASSERT_NE(metrics, nullptr);
  ASSERT_NE(health, nullptr);
  EXPECT_NE(metrics->port(), health->port());
  EXPECT_EQ(Get(metrics->port(), "/metrics").status, 200);
  EXPECT_EQ(Get(health->port(), "/readyz").status, 503);
}

TEST(HealthServer, ATakenPortIsUnavailable) {
  std::unique_ptr<HealthServer> first = MustStart("127.0.0.1:0", nullptr, nullptr);
  ASSERT_NE(first, nullptr);
  const std::string taken = "127.0.0.1:" + std::to_string(first->port());
  StatusOr<std::unique_ptr<HealthServer>> second = HealthServer::Start(taken, nullptr, nullptr);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find(taken), std::string::npos);
}

TEST(HealthServer, StopsServingWhenDestroyed) {
  std::unique_ptr<HealthServer> server = MustStart("127.0.0.1:0", nullptr, nullptr);
  ASSERT_NE(server, nullptr);
  const int port = server->port();
  server.reset();
  EXPECT_EQ(Get(port, "/healthz").status, -1);
}

}  // namespace
}  // namespace bsw::observability
