#include "operator/adapters/kube/client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "tests/mocks/fake_clock.h"
#include "tests/unit/adapters/kube/fake_apiserver.h"

namespace bsw::kube {
namespace {

using testing::ApiStatusBody;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using testing::FakeApiServer;
using testing::Param;

const Resource kConfigMaps{"", "v1", "configmaps", true};
const Resource kSweeps{"budgetsweep.dev", "v1alpha1", "budgetsweeps", true};

Json ConfigMap(const std::string& name, const std::string& value = "1") {
  return Json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", {{"name", name}, {"namespace", "ns"}, {"labels", {{"app", "x"}}}}},
              {"data", {{"key", value}}}};
}

// A client on a simulated clock whose waits pass at once and are recorded.
struct RecordingClient {
  explicit RecordingClient(const FakeApiServer& server, ClientOptions options = {}) {
    options.clock = &clock;
    StatusOr<std::unique_ptr<Client>> made = Client::Create(server.Config(), options);
    EXPECT_TRUE(made.ok()) << made.status().message();
    client = std::move(*made);
  }
  std::vector<double> sleeps() const { return clock.waits(); }
  FakeClock clock{1'700'000'000, /*advance_on_wait=*/true};
  std::unique_ptr<Client> client;
};

TEST(KubeClient, CrudRoundTripUsesApiPathsVerbsAndContentTypes) {
  FakeApiServer server;
  RecordingClient c(server);
  Client& client = *c.client;

  StatusOr<Json> created = client.Create(kConfigMaps, "ns", ConfigMap("a"));
  ASSERT_TRUE(created.ok()) << created.status().message();
  ASSERT_TRUE(client.Create(kConfigMaps, "ns", ConfigMap("b")).ok());

  StatusOr<Json> got = client.Get(kConfigMaps, "ns", "a");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["data"]["key"], "1");

  ListOptions by_label;
  by_label.label_selector = "app=x";
  by_label.field_selector = "metadata.namespace=ns";
  StatusOr<Json> list = client.List(kConfigMaps, "ns", by_label);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)["items"].size(), 2u);
  EXPECT_FALSE((*list)["metadata"]["resourceVersion"].get<std::string>().empty());

  Json changed = *got;
  changed["data"]["key"] = "2";
  StatusOr<Json> updated = client.Update(kConfigMaps, "ns", changed);
  ASSERT_TRUE(updated.ok()) << updated.status().message();
  EXPECT_NE((*updated)["metadata"]["resourceVersion"], (*got)["metadata"]["resourceVersion"]);

  StatusOr<Json> patched = client.Patch(kConfigMaps, "ns", "a", Json{{"data", {{"more", "x"}}}});
  ASSERT_TRUE(patched.ok());
  EXPECT_EQ((*patched)["data"], (Json{{"key", "2"}, {"more", "x"}}));

  Json sweep = {{"metadata", {{"name", "s"}, {"namespace", "ns"}}}, {"spec", {{"x", 1}}}};
  ASSERT_TRUE(client.Create(kSweeps, "ns", sweep).ok());
  sweep["status"] = {{"phase", "Running"}};
  sweep["spec"]["x"] = 2;  // ignored by the status subresource
  StatusOr<Json> with_status = client.UpdateStatus(kSweeps, "ns", sweep);
  ASSERT_TRUE(with_status.ok()) << with_status.status().message();
  EXPECT_EQ((*with_status)["status"]["phase"], "Running");
  EXPECT_EQ((*with_status)["spec"]["x"], 1);

  DeleteOptions delete_options;
  delete_options.grace_period_seconds = 0;
  delete_options.precondition_resource_version =
      (*patched)["metadata"]["resourceVersion"].get<std::string>();
  ASSERT_TRUE(client.Delete(kConfigMaps, "ns", "a", delete_options).ok());
  EXPECT_TRUE(IsNotFound(client.Get(kConfigMaps, "ns", "a").status()));

  std::vector<testing::RecordedRequest> requests = server.Requests();
  ASSERT_EQ(requests.size(), 10u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/api/v1/namespaces/ns/configmaps");
  EXPECT_EQ(requests[0].content_type, "application/json");
  EXPECT_EQ(requests[0].authorization, "Bearer test-token");
  EXPECT_EQ(Param(requests[3], "labelSelector"), "app=x");
  EXPECT_EQ(Param(requests[3], "fieldSelector"), "metadata.namespace=ns");
  EXPECT_EQ(requests[4].method, "PUT");
  EXPECT_EQ(requests[4].path, "/api/v1/namespaces/ns/configmaps/a");
  EXPECT_EQ(requests[5].method, "PATCH");
  EXPECT_EQ(requests[5].content_type, "application/merge-patch+json");
  EXPECT_EQ(requests[6].path, "/apis/budgetsweep.dev/v1alpha1/namespaces/ns/budgetsweeps");
  EXPECT_EQ(requests[7].path, "/apis/budgetsweep.dev/v1alpha1/namespaces/ns/budgetsweeps/s/status");
  EXPECT_EQ(requests[8].method, "DELETE");
  Json delete_body = Json::parse(requests[8].body);
  EXPECT_EQ(delete_body["gracePeriodSeconds"], 0);
  EXPECT_EQ(delete_body["preconditions"]["resourceVersion"],
            (*patched)["metadata"]["resourceVersion"]);
}

TEST(KubeClient, ListPagesWithLimitAndContinue) {
  FakeApiServer server;
  RecordingClient c(server);
  for (const char* name : {"a", "b", "c"}) {
    ASSERT_TRUE(c.client->Create(kConfigMaps, "ns", ConfigMap(name)).ok());
  }
  ListOptions options;
  options.limit = 2;
  StatusOr<Json> first = c.client->List(kConfigMaps, "ns", options);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)["items"].size(), 2u);
  options.continue_token = (*first)["metadata"]["continue"];
  StatusOr<Json> second = c.client->List(kConfigMaps, "ns", options);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)["items"].size(), 1u);
  EXPECT_EQ(Param(server.Requests().back(), "limit"), "2");
}

TEST(KubeClient, ErrorsCarryHttpCodeAndReason) {
  FakeApiServer server;
  RecordingClient c(server);
  Status missing = c.client->Get(kConfigMaps, "ns", "nope").status();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_TRUE(IsNotFound(missing));
  EXPECT_FALSE(IsConflict(missing));
  EXPECT_EQ(ApiErrorOf(missing)->reason, "NotFound");

  ASSERT_TRUE(c.client->Create(kConfigMaps, "ns", ConfigMap("a")).ok());
  Status twice = c.client->Create(kConfigMaps, "ns", ConfigMap("a")).status();
  EXPECT_EQ(twice.code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(IsAlreadyExists(twice));
  EXPECT_FALSE(IsConflict(twice));
  EXPECT_FALSE(ApiErrorOf(OkStatus()).has_value());
  EXPECT_FALSE(ApiErrorOf(UnavailableError("connection refused")).has_value());
}

TEST(KubeClient, StaleUpdateIsConflictAndRetryOnConflictReReadsAndSucceeds) {
  FakeApiServer server;
  RecordingClient c(server);
  Client& client = *c.client;
  ASSERT_TRUE(client.Create(kConfigMaps, "ns", ConfigMap("a", "0")).ok());
  Json stale = *client.Get(kConfigMaps, "ns", "a");
  ASSERT_TRUE(client.Patch(kConfigMaps, "ns", "a", Json{{"data", {{"other", "y"}}}}).ok());

  stale["data"]["key"] = "stale";
  Status conflict = client.Update(kConfigMaps, "ns", stale).status();
  EXPECT_TRUE(IsConflict(conflict)) << conflict.message();
  EXPECT_EQ(conflict.code(), StatusCode::kFailedPrecondition);

  // Another writer slips in between this writer's read and write, once.
  int attempts = 0;
  Status result = RetryOnConflict([&]() -> Status {
    ++attempts;
    StatusOr<Json> current = client.Get(kConfigMaps, "ns", "a");
    if (!current.ok()) return current.status();
    if (attempts == 1) {
      Status interfering =
          client.Patch(kConfigMaps, "ns", "a", Json{{"data", {{"other", "z"}}}}).status();
      if (!interfering.ok()) return interfering;
    }
    Json next = *current;
    next["data"]["key"] = std::to_string(std::stoi(next["data"]["key"].get<std::string>()) + 1);
    return client.Update(kConfigMaps, "ns", next).status();
  });
  ASSERT_TRUE(result.ok()) << result.message();
  EXPECT_EQ(attempts, 2);
  Json final_object = *client.Get(kConfigMaps, "ns", "a");
  EXPECT_EQ(final_object["data"]["key"], "1");
  EXPECT_EQ(final_object["data"]["other"], "z");
}

TEST(KubeClient, RetryOnConflictGivesUpAfterMaxAttempts) {
  int attempts = 0;
  Status result = RetryOnConflict(
      [&] {
        ++attempts;
        return StatusFromResponse(409, ApiStatusBody(409, "Conflict", "modified"), 0, "PUT x");
      },
      3);
  EXPECT_TRUE(IsConflict(result));
  EXPECT_EQ(attempts, 3);
}

TEST(KubeClient, TooManyRequestsWaitsForRetryAfterThenSucceeds) {
  FakeApiServer server;
  int refused = 0;
  server.SetHook([&](const httplib::Request&, httplib::Response& response) {
    if (refused >= 1) return false;
    ++refused;
    response.status = 429;
    response.set_header("Retry-After", "3");
    response.set_content(ApiStatusBody(429, "TooManyRequests", "slow down"), "application/json");
    return true;
  });
  RecordingClient c(server);
  StatusOr<Json> created = c.client->Create(kConfigMaps, "ns", ConfigMap("a"));
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_THAT(c.sleeps(), ElementsAre(DoubleNear(3.0, 1e-9)));
  EXPECT_EQ(server.Requests().size(), 2u);
}

TEST(KubeClient, TooManyRequestsBeyondRetriesIsResourceExhaustedWithRetryAfter) {
  FakeApiServer server;
  server.SetHook([](const httplib::Request&, httplib::Response& response) {
    response.status = 429;
    response.set_header("Retry-After", "2");
    response.set_content(ApiStatusBody(429, "TooManyRequests", "slow down"), "application/json");
    return true;
  });
  ClientOptions options;
  options.max_retries = 2;
  RecordingClient c(server, options);
  Status status = c.client->Get(kConfigMaps, "ns", "a").status();
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(IsTooManyRequests(status));
  EXPECT_EQ(ApiErrorOf(status)->retry_after_seconds, 2);
  EXPECT_EQ(server.Requests().size(), 3u);
}

TEST(KubeClient, ServerErrorOnReadIsRetriedWithExponentialBackoff) {
  FakeApiServer server;
  int failures = 0;
  server.SetHook([&](const httplib::Request&, httplib::Response& response) {
    if (failures >= 2) return false;
    ++failures;
    response.status = 500;
    response.set_content(ApiStatusBody(500, "InternalError", "etcd hiccup"), "application/json");
    return true;
  });
  RecordingClient c(server);
  StatusOr<Json> list = c.client->List(kConfigMaps, "ns");
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_THAT(c.sleeps(), ElementsAre(DoubleNear(0.8, 1e-9), DoubleNear(1.6, 1e-9)));
}

TEST(KubeClient, PersistentServerErrorSurfacesAsUnavailable) {
  FakeApiServer server;
  server.SetHook([](const httplib::Request&, httplib::Response& response) {
    response.status = 503;
    response.set_content(ApiStatusBody(503, "ServiceUnavailable", "down"), "application/json");
    return true;
  });
  RecordingClient c(server);
  Status status = c.client->Get(kConfigMaps, "ns", "a").status();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(ApiErrorOf(status)->http_code, 503);
  EXPECT_EQ(server.Requests().size(), 4u);  // one try and max_retries = 3 more
}

TEST(KubeClient, ServerErrorOnWriteIsNotRetried) {
  FakeApiServer server;
  server.SetHook([](const httplib::Request&, httplib::Response& response) {
    response.status = 500;
    response.set_content(ApiStatusBody(500, "InternalError", "boom"), "application/json");
    return true;
  });
  RecordingClient c(server);
  Status status = c.client->Create(kConfigMaps, "ns", ConfigMap("a")).status();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(server.Requests().size(), 1u);
  EXPECT_TRUE(c.sleeps().empty());
}

TEST(KubeClient, SlowResponseTimesOutAsUnavailable) {
  FakeApiServer server;
  server.SetHook([](const httplib::Request&, httplib::Response& response) {
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    response.status = 200;
    response.set_content("{}", "application/json");
    return true;
  });
  ClientOptions options;
  options.request_timeout_seconds = 0.2;
  options.max_retries = 0;
  RecordingClient c(server, options);
  auto start = std::chrono::steady_clock::now();
  Status status = c.client->Get(kConfigMaps, "ns", "a").status();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(700));
}

TEST(KubeClient, ClientSideRateLimitSpacesRequestsBeyondTheBurst) {
  FakeApiServer server;
  ClientOptions options;
  options.qps = 1;
  options.burst = 2;
  RecordingClient c(server, options);
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(IsNotFound(c.client->Get(kConfigMaps, "ns", "a").status()));
  // The third and fourth requests wait for the tokens refilled 1 s and 2 s after the burst.
  EXPECT_THAT(c.sleeps(), ElementsAre(DoubleNear(1.0, 1e-9), DoubleNear(1.0, 1e-9)));
}

TEST(KubeClient, TokenFileIsReReadAfterTheRefreshPeriod) {
  FakeApiServer server;
  std::string token_file = ::testing::TempDir() + "/kube-token";
  std::ofstream(token_file) << "first\n";
  KubeConfig config = server.Config();
  config.token.clear();
  config.token_file = token_file;
  config.token_refresh_seconds = 0;
  StatusOr<std::unique_ptr<Client>> client = Client::Create(config);
  ASSERT_TRUE(client.ok());
  EXPECT_TRUE(IsNotFound((*client)->Get(kConfigMaps, "ns", "a").status()));
  std::ofstream(token_file) << "second\n";
  EXPECT_TRUE(IsNotFound((*client)->Get(kConfigMaps, "ns", "a").status()));
  std::vector<testing::RecordedRequest> requests = server.Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].authorization, "Bearer first");
  EXPECT_EQ(requests[1].authorization, "Bearer second");
  std::remove(token_file.c_str());
}

TEST(KubeClient, A401ReReadsARotatedTokenFileAtOnceAndRetriesOnce) {
  FakeApiServer server;
  // The server knows only the rotated token.
  server.SetHook([](const httplib::Request& request, httplib::Response& response) {
    if (request.get_header_value("Authorization") == "Bearer rotated") return false;
    response.status = 401;
    response.set_content(R"({"kind":"Status","code":401,"reason":"Unauthorized"})",
                         "application/json");
    return true;
  });
  std::string token_file = ::testing::TempDir() + "/kube-token-401";
  std::ofstream(token_file) << "expired\n";
  KubeConfig config = server.Config();
  config.token.clear();
  config.token_file = token_file;
  config.token_refresh_seconds = 3600;  // the periodic re-read will not come in time
  StatusOr<std::unique_ptr<Client>> client = Client::Create(config);
  ASSERT_TRUE(client.ok());
  // Not rotated yet: one 401, no retry with the same token.
  Status status = (*client)->Get(kConfigMaps, "ns", "a").status();
  EXPECT_EQ(status.message().find("Unauthorized") != std::string::npos, true) << status.message();
  EXPECT_EQ(server.Requests().size(), 1u);
  // The kubelet writes the next token: the 401 makes the client read it and try again.
  std::ofstream(token_file) << "rotated\n";
  EXPECT_TRUE(IsNotFound((*client)->Get(kConfigMaps, "ns", "a").status()));
  std::vector<testing::RecordedRequest> requests = server.Requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].authorization, "Bearer expired");
  EXPECT_EQ(requests[2].authorization, "Bearer rotated");
  std::remove(token_file.c_str());
}

TEST(KubeClient, PlainHttpIsRefusedForNonLoopbackServers) {
  KubeConfig config;
  config.server = "http://example.com:8080";
  StatusOr<std::unique_ptr<Client>> client = Client::Create(config);
  EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument);
  config.server = "ftp://127.0.0.1";
  EXPECT_EQ(Client::Create(config).status().code(), StatusCode::kInvalidArgument);
}

TEST(KubeClient, MalformedServerUrlsAreRefusedSayingWhatIsWrong) {
  struct Row {
    std::string server;
    std::string says;
  };
  const Row rows[] = {
      {"ftp://127.0.0.1", "is not an https:// URL"},
      {"127.0.0.1:6443", "is not an https:// URL"},
      {"https://host:0", "has a bad port"},
      {"https://host:65536", "has a bad port"},
      {"https://host:64x", "has a bad port"},
      {"https://host:", "has a bad port"},
      {"https://[::1]:x/api", "has a bad port"},
      {"https://", "has no host"},
      {"https://:6443/prefix/", "has no host"},
      {"https://[]", "has no host"},
      {"http://10.0.0.1:8080", "allowed only on loopback"},
  };
  for (const Row& row : rows) {
    KubeConfig config;
    config.server = row.server;
    Status status = Client::Create(config).status();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << row.server;
    EXPECT_THAT(status.message(), ::testing::HasSubstr(row.says)) << row.server;
  }
}

TEST(KubeClientWatch, EventCutAtEndOfStreamIsDroppedAndReported) {
  FakeApiServer server;
  server.SetHook([](const httplib::Request& request, httplib::Response& response) {
    if (request.get_param_value("watch") != "true") return false;
    response.set_chunked_content_provider("application/json", [](size_t, httplib::DataSink& sink) {
      std::string full =
          R"({"type":"ADDED","object":{"metadata":{"name":"a","namespace":"ns","resourceVersion":"201"}}})"
          "\n";
      std::string split_first = R"({"type":"ADDED","obj)";
      std::string split_second = R"(ect":{"metadata":{"name":"b","namespace":"ns"}}})"
                                 "\n";
      std::string cut = R"({"type":"ADDED","object":{"metadata":{"name":"bog)";
      sink.write(full.data(), full.size());
      sink.write(split_first.data(), split_first.size());
      sink.write(split_second.data(), split_second.size());
      sink.write(cut.data(), cut.size());
      sink.done();
      return true;
    });
    return true;
  });
  RecordingClient c(server);
  std::vector<std::string> names;
  WatchCancel cancel;
  WatchOptions options;
  options.resource_version = "200";
  Status status = c.client->Watch(
      kConfigMaps, "ns", options,
      [&](const WatchEvent& event) { names.push_back(event.object["metadata"]["name"]); }, cancel);
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("incomplete event"), std::string::npos) << status.message();
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b"}));
  testing::RecordedRequest request = server.Requests().back();
  EXPECT_EQ(Param(request, "allowWatchBookmarks"), "true");
  EXPECT_EQ(Param(request, "resourceVersion"), "200");
}

TEST(KubeClientWatch, GoneResponseAndExpiredErrorEventAreGone) {
  FakeApiServer server;
  bool error_event = false;
  server.SetHook([&](const httplib::Request&, httplib::Response& response) {
    if (!error_event) {
      response.status = 410;
      response.set_content(ApiStatusBody(410, "Gone", "too old resource version"),
                           "application/json");
      return true;
    }
    response.set_chunked_content_provider("application/json", [](size_t, httplib::DataSink& sink) {
      std::string line =
          R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old"}})"
          "\n";
      sink.write(line.data(), line.size());
      sink.done();
      return true;
    });
    return true;
  });
  RecordingClient c(server);
  WatchCancel cancel;
  int events = 0;
  auto count = [&](const WatchEvent&) { ++events; };
  Status gone = c.client->Watch(kConfigMaps, "ns", WatchOptions{}, count, cancel);
  EXPECT_TRUE(IsGone(gone)) << gone.message();
  error_event = true;
  Status expired = c.client->Watch(kConfigMaps, "ns", WatchOptions{}, count, cancel);
  EXPECT_TRUE(IsGone(expired)) << expired.message();
  EXPECT_EQ(ApiErrorOf(expired)->reason, "Expired");
  EXPECT_EQ(events, 0);
}

TEST(KubeClientWatch, CancelEndsAnOpenWatchPromptly) {
  FakeApiServer server;
  RecordingClient c(server);
  WatchCancel cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancel.Cancel();
  });
  auto start = std::chrono::steady_clock::now();
  Status status = c.client->Watch(
      kConfigMaps, "ns", WatchOptions{}, [](const WatchEvent&) {}, cancel);
  canceller.join();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(600));
  // A watch started after Cancel returns at once.
  EXPECT_FALSE(c.client
                   ->Watch(
                       kConfigMaps, "ns", WatchOptions{}, [](const WatchEvent&) {}, cancel)
                   .ok());
}

}  // namespace
}  // namespace bsw::kube
