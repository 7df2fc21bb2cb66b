#include "operator/adapters/kube/informer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "tests/mocks/fake_clock.h"
#include "tests/unit/adapters/kube/fake_apiserver.h"

namespace bsw::kube {
namespace {

using testing::ApiStatusBody;
using testing::FakeApiServer;
using testing::Param;

const Resource kConfigMaps{"", "v1", "configmaps", true};
constexpr char kCollection[] = "/api/v1/namespaces/ns/configmaps";

Json ConfigMap(const std::string& name) {
  return Json{{"metadata", {{"name", name}, {"namespace", "ns"}}}, {"data", {{"k", "v"}}}};
}

// Polls `condition` for up to five seconds: for what the fake API server has seen, which the
// informer reaches over real HTTP.
template <typename Condition>
bool Eventually(Condition condition) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

// Records what the handlers saw.
struct Seen {
  std::mutex mu;
  std::vector<std::string> log;  // "add a", "update a", "delete a"

  InformerHandlers Handlers() {
    auto name = [](const Json& object) { return object["metadata"]["name"].get<std::string>(); };
    return InformerHandlers{[this, name](const Json& o) { Push("add " + name(o)); },
                            [this, name](const Json&, const Json& o) { Push("update " + name(o)); },
                            [this, name](const Json& o) { Push("delete " + name(o)); }};
  }
  void Push(const std::string& entry) {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back(entry);
  }
  bool Has(const std::string& entry) {
    std::lock_guard<std::mutex> lock(mu);
    return std::find(log.begin(), log.end(), entry) != log.end();
  }
  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(mu);
    return log;
  }
};

constexpr double kMaxBackoffSeconds = 0.05;

InformerOptions FastOptions(const FakeClock& clock) {
  InformerOptions options;
  options.ns = "ns";
  options.min_backoff_seconds = 0.01;
  options.max_backoff_seconds = kMaxBackoffSeconds;
  options.seed = 42;
  options.clock = &clock;
  return options;
}

std::vector<testing::RecordedRequest> Watches(const FakeApiServer& server) {
  std::vector<testing::RecordedRequest> watches;
  for (const auto& request : server.Requests()) {
    if (request.params.count("watch")) watches.push_back(request);
  }
  return watches;
}

int Lists(const FakeApiServer& server) {
  int lists = 0;
  for (const auto& request : server.Requests()) {
    if (request.method == "GET" && request.path == kCollection && !request.params.count("watch")) {
      ++lists;
    }
  }
  return lists;
}

// Serves `line` as the whole body of the first watch request; later requests go to the store.
void ScriptFirstWatch(FakeApiServer& server, std::string body, bool abort_connection) {
  auto served = std::make_shared<std::atomic<bool>>(false);
  server.SetHook([served, body, abort_connection](const httplib::Request& request,
                                                  httplib::Response& response) {
    if (request.get_param_value("watch") != "true" || served->exchange(true)) return false;
    response.set_chunked_content_provider(
        "application/json", [body, abort_connection](size_t, httplib::DataSink& sink) {
          sink.write(body.data(), body.size());
          if (abort_connection) return false;  // closes the connection mid-chunk
          sink.done();
          return true;
        });
    return true;
  });
}

struct Fixture {
  FakeClock clock;
  FakeApiServer server;
  std::unique_ptr<Client> client = Client::Create(server.Config()).value();
};

TEST(Informer, ListsThenWatchesFromTheListVersionAndSeesAddUpdateDelete) {
  Fixture f;
  ASSERT_TRUE(f.client->Create(kConfigMaps, "ns", ConfigMap("a")).ok());
  Seen seen;
  Informer informer(*f.client, kConfigMaps, FastOptions(f.clock), seen.Handlers());
  EXPECT_FALSE(informer.HasSynced());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(5));
  std::string listed_version = f.server.CurrentResourceVersion();
  EXPECT_TRUE(seen.Has("add a"));
  ASSERT_TRUE(informer.Get("ns/a").has_value());

  ASSERT_TRUE(f.client->Create(kConfigMaps, "ns", ConfigMap("b")).ok());
  ASSERT_TRUE(f.client->Patch(kConfigMaps, "ns", "a", Json{{"data", {{"k", "w"}}}}).ok());
  ASSERT_TRUE(f.client->Delete(kConfigMaps, "ns", "b").ok());
  ASSERT_TRUE(Eventually([&] { return seen.Has("delete b"); }));
  EXPECT_EQ(seen.Log(), (std::vector<std::string>{"add a", "add b", "update a", "delete b"}));
  EXPECT_EQ((*informer.Get("ns/a"))["data"]["k"], "w");
  EXPECT_FALSE(informer.Get("ns/b").has_value());
  EXPECT_EQ(informer.LastResourceVersion(), f.server.CurrentResourceVersion());

  std::vector<testing::RecordedRequest> watches = Watches(f.server);
  ASSERT_FALSE(watches.empty());
  EXPECT_EQ(Param(watches[0], "resourceVersion"), listed_version);
  EXPECT_EQ(Param(watches[0], "allowWatchBookmarks"), "true");
  int timeout = std::stoi(Param(watches[0], "timeoutSeconds"));
  EXPECT_GE(timeout, 300);
  EXPECT_LE(timeout, 600);
}

// Every watch ends at once with a 500.
void FailEveryWatch(FakeApiServer& server) {
  server.SetHook([](const httplib::Request& request, httplib::Response& response) {
    if (request.get_param_value("watch") != "true") return false;
    response.status = 500;
    response.set_content(ApiStatusBody(500, "InternalError", "x"), "application/json");
    return true;
  });
}

TEST(Informer, WatchTimeoutsAreRandomizedBetweenFiveAndTenMinutes) {
  Fixture f;
  FailEveryWatch(f.server);  // so the informer keeps re-watching
  Informer informer(*f.client, kConfigMaps, FastOptions(f.clock), InformerHandlers{});
  informer.Start();
  for (int failed = 0; failed < 5; ++failed) {
    ASSERT_TRUE(f.clock.AwaitWaiters(1));  // backing off after a failed watch
    f.clock.Advance(kMaxBackoffSeconds);
  }
  informer.Stop();
  std::set<int> timeouts;
  for (const auto& watch : Watches(f.server)) {
    int timeout = std::stoi(Param(watch, "timeoutSeconds"));
    EXPECT_GE(timeout, 300);
    EXPECT_LE(timeout, 600);
    timeouts.insert(timeout);
  }
  EXPECT_GT(timeouts.size(), 1u);
}

TEST(Informer, AfterAFailedWatchItWaitsItsBackoffBeforeWatchingAgain) {
  Fixture f;
  FailEveryWatch(f.server);
  Informer informer(*f.client, kConfigMaps, FastOptions(f.clock), InformerHandlers{});
  informer.Start();
  ASSERT_TRUE(f.clock.AwaitWaiters(1));
  EXPECT_EQ(Watches(f.server).size(), 1u);
  f.clock.Advance(0.009);  // under the first backoff, 0.01 s with up to 100% jitter added
  ASSERT_TRUE(f.clock.AwaitWaiters(1));
  EXPECT_EQ(Watches(f.server).size(), 1u);
  f.clock.Advance(kMaxBackoffSeconds);
  ASSERT_TRUE(f.clock.AwaitWaiters(1));  // the second watch failed too
  EXPECT_EQ(Watches(f.server).size(), 2u);
}

TEST(Informer, WatchCutInTheMiddleOfAnEventReconnectsWithoutABogusEvent) {
  Fixture f;
  ScriptFirstWatch(
      f.server,
      R"({"type":"ADDED","object":{"metadata":{"name":"x","namespace":"ns","resourceVersion":"500"}}})"
      "\n"
      R"({"type":"ADDED","object":{"metadata":{"name":"bog)",
      /*abort_connection=*/true);
  Seen seen;
  Informer informer(*f.client, kConfigMaps, FastOptions(f.clock), seen.Handlers());
  informer.Start();
  ASSERT_TRUE(f.clock.AwaitWaiters(1));  // backing off after the broken watch
  f.clock.Advance(kMaxBackoffSeconds);
  ASSERT_TRUE(Eventually([&] { return Watches(f.server).size() >= 2; }));
  EXPECT_EQ(seen.Log(), std::vector<std::string>{"add x"});
  EXPECT_EQ(Param(Watches(f.server)[1], "resourceVersion"), "500");
  EXPECT_EQ(informer.List().size(), 1u);
  EXPECT_EQ(Lists(f.server), 1);
}

TEST(Informer, GoneOnWatchReListsAndReplacesTheCache) {
  Fixture f;
  ASSERT_TRUE(f.client->Create(kConfigMaps, "ns", ConfigMap("a")).ok());
  ASSERT_TRUE(f.client->Create(kConfigMaps, "ns", ConfigMap("b")).ok());
  // The first watch is answered 410: b was deleted in history the server has compacted.
  f.server.SetHook([&](const httplib::Request& request, httplib::Response& response) {
    if (request.get_param_value("watch") != "true") return false;
    f.server.ForgetObject(std::string(kCollection) + "/b");
    f.server.SetHook(nullptr);
    response.status = 410;
    response.set_content(ApiStatusBody(410, "Gone", "too old resource version"),
                         "application/json");
    return true;
  });
  Seen seen;
  Informer informer(*f.client, kConfigMaps, FastOptions(f.clock), seen.Handlers());
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return seen.Has("delete b"); }));
  EXPECT_EQ(seen.Log(), (std::vector<std::string>{"add a", "add b", "delete b"}));
  EXPECT_FALSE(informer.Get("ns/b").has_value());
  EXPECT_TRUE(informer.Get("ns/a").has_value());
  EXPECT_EQ(Lists(f.server), 2);
}

TEST(Informer, ExpiredErrorEventInsideTheStreamReLists) {
  Fixture f;
  ASSERT_TRUE(f.client->Create(kConfigMaps, "ns", ConfigMap("a")).ok());
  ScriptFirstWatch(
      f.server,
      R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","code":410,"reason":"Expired","message":"too old resource version: 1 (2)"}})json"
      "\n",
      /*abort_connection=*/false);
  Seen seen;
  Informer informer(*f.client, kConfigMaps, FastOptions(f.clock), seen.Handlers());
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return Lists(f.server) == 2 && Watches(f.server).size() >= 2; }));
  // The re-list found nothing new: no handler call beyond the first add.
  EXPECT_EQ(seen.Log(), std::vector<std::string>{"add a"});
}

TEST(Informer, BookmarksAdvanceTheResourceVersionWithoutEvents) {
  Fixture f;
  ScriptFirstWatch(
      f.server,
      R"({"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"777"}}})"
      "\n",
      /*abort_connection=*/false);
  Seen seen;
  Informer informer(*f.client, kConfigMaps, FastOptions(f.clock), seen.Handlers());
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return Watches(f.server).size() >= 2; }));
  EXPECT_EQ(Param(Watches(f.server)[1], "resourceVersion"), "777");
  EXPECT_TRUE(seen.Log().empty());
  EXPECT_TRUE(informer.List().empty());
}

TEST(Informer, ListsInPages) {
  Fixture f;
  for (const char* name : {"a", "b", "c", "d", "e"}) {
    ASSERT_TRUE(f.client->Create(kConfigMaps, "ns", ConfigMap(name)).ok());
  }
  InformerOptions options = FastOptions(f.clock);
  options.list_page_size = 2;
  Informer informer(*f.client, kConfigMaps, options, InformerHandlers{});
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(5));
  EXPECT_EQ(informer.List().size(), 5u);
  EXPECT_EQ(Lists(f.server), 3);
}

TEST(Informer, StopReturnsPromptlyWhileAWatchIsOpen) {
  Fixture f;
  Informer informer(*f.client, kConfigMaps, FastOptions(f.clock), InformerHandlers{});
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(5));
  ASSERT_TRUE(Eventually([&] { return !Watches(f.server).empty(); }));
  auto start = std::chrono::steady_clock::now();
  informer.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
}

}  // namespace
}  // namespace bsw::kube
