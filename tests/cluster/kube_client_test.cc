// The Kubernetes client against a real kube-apiserver:
//   eval "$(tests/cluster/up.sh | tail -1)" && ctest -L cluster
// Skips when KUBECONFIG is unset.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/config.h"
#include "operator/adapters/kube/events.h"
#include "operator/adapters/kube/informer.h"
#include "operator/adapters/kube/leader_election.h"

namespace bsw::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

const Resource kNamespaces{"", "v1", "namespaces", false};
const Resource kConfigMaps{"", "v1", "configmaps", true};
const Resource kPods{"", "v1", "pods", true};

template <typename Condition>
bool Eventually(Condition condition, milliseconds limit = milliseconds(10000)) {
  auto deadline = steady_clock::now() + limit;
  while (steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return condition();
}

Json ConfigMap(const std::string& name, const std::string& value) {
  return Json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", {{"name", name}, {"labels", {{"app", "kube-client-test"}}}}},
              {"data", {{"value", value}}}};
}

// Each test gets a fresh namespace. The test cluster has no controller-manager, so a deleted
// namespace stays Terminating; the names are unique per run.
class KubeCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* path = std::getenv("KUBECONFIG");
    if (path == nullptr || *path == '\0') GTEST_SKIP() << "KUBECONFIG is not set";
    StatusOr<KubeConfig> config = LoadKubeconfig(path);
    ASSERT_TRUE(config.ok()) << config.status().message();
    ASSERT_FALSE(config->ca_pem.empty()) << "the test cluster's kubeconfig names its CA";
    ASSERT_FALSE(config->client_cert_pem.empty()) << "the test cluster uses client certificates";
    config_ = *config;
    StatusOr<std::unique_ptr<Client>> client = Client::Create(config_);
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_ = std::move(*client);

    std::string test_name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : test_name)
      c = std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(c) : '-';
    ns_ = "kube-" + test_name.substr(0, 30) + "-" + std::to_string(getpid()) + "-" +
          std::to_string(steady_clock::now().time_since_epoch().count() % 100000);
    StatusOr<Json> created = client_->Create(kNamespaces, "", Json{{"metadata", {{"name", ns_}}}});
    ASSERT_TRUE(created.ok()) << created.status().message();
  }

  void TearDown() override {
    if (client_ && !ns_.empty()) {
      Status deleted = client_->Delete(kNamespaces, "", ns_);
      EXPECT_TRUE(deleted.ok()) << deleted.message();
    }
  }

  KubeConfig config_;
  std::unique_ptr<Client> client_;
  std::string ns_;
};

// Issue #23: the client never skips TLS verification. A kubeconfig that names another CA (the
// test cluster's client CA, which signs no server) for the real API server is refused before any
// request is sent, with an error that says so; the right CA works.
TEST_F(KubeCluster, AnApiServerWhoseCertificateDoesNotMatchTheCaIsRefused) {
  StatusOr<Json> version = client_->Version();
  ASSERT_TRUE(version.ok()) << version.status().message();
  EXPECT_EQ(version->value("gitVersion", "").rfind("v1.", 0), 0u) << version->dump();

  const std::string kubeconfig = std::getenv("KUBECONFIG");
  const std::string other_ca = kubeconfig.substr(0, kubeconfig.rfind('/')) + "/pki/client-ca.crt";
  std::ifstream in(other_ca);
  ASSERT_TRUE(in) << other_ca;
  std::ostringstream pem;
  pem << in.rdbuf();
  KubeConfig wrong = config_;
  wrong.ca_pem = pem.str();
  StatusOr<std::unique_ptr<Client>> untrusting = Client::Create(wrong);
  ASSERT_TRUE(untrusting.ok()) << untrusting.status().message();
  for (const Status& status :
       {(*untrusting)->Version().status(), (*untrusting)->Get(kNamespaces, "", ns_).status()}) {
    EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition) << status.message();
    EXPECT_NE(status.message().find("refusing the API server at " + config_.server + ": "),
              std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find("(checked against the configured certificate-authority); "
                                    "TLS verification is never skipped"),
              std::string::npos)
        << status.message();
  }
}

TEST_F(KubeCluster, ConfigMapCreateGetListUpdatePatchDelete) {
  Client& client = *client_;
  StatusOr<Json> created = client.Create(kConfigMaps, ns_, ConfigMap("a", "1"));
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_TRUE(IsAlreadyExists(client.Create(kConfigMaps, ns_, ConfigMap("a", "1")).status()));
  ASSERT_TRUE(client.Create(kConfigMaps, ns_, ConfigMap("b", "1")).ok());

  StatusOr<Json> got = client.Get(kConfigMaps, ns_, "a");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ((*got)["data"]["value"], "1");

  ListOptions options;
  options.label_selector = "app=kube-client-test";
  options.limit = 1;
  StatusOr<Json> page = client.List(kConfigMaps, ns_, options);
  ASSERT_TRUE(page.ok()) << page.status().message();
  EXPECT_EQ((*page)["items"].size(), 1u);
  options.continue_token = (*page)["metadata"]["continue"];
  ASSERT_FALSE(options.continue_token.empty());
  StatusOr<Json> rest = client.List(kConfigMaps, ns_, options);
  ASSERT_TRUE(rest.ok()) << rest.status().message();
  EXPECT_EQ((*rest)["items"].size(), 1u);

  Json changed = *got;
  changed["data"]["value"] = "2";
  StatusOr<Json> updated = client.Update(kConfigMaps, ns_, changed);
  ASSERT_TRUE(updated.ok()) << updated.status().message();
  EXPECT_EQ((*updated)["data"]["value"], "2");

  StatusOr<Json> patched = client.Patch(
      kConfigMaps, ns_, "a",
      Json{{"data", {{"extra", "x"}}}, {"metadata", {{"labels", {{"app", nullptr}}}}}});
  ASSERT_TRUE(patched.ok()) << patched.status().message();
  EXPECT_EQ((*patched)["data"], (Json{{"value", "2"}, {"extra", "x"}}));
  EXPECT_FALSE((*patched)["metadata"].contains("labels") &&
               (*patched)["metadata"]["labels"].contains("app"));

  DeleteOptions stale;
  stale.precondition_resource_version = (*updated)["metadata"]["resourceVersion"];
  EXPECT_TRUE(IsConflict(client.Delete(kConfigMaps, ns_, "a", stale)));
  DeleteOptions current;
  current.grace_period_seconds = 0;
  current.precondition_uid = (*patched)["metadata"]["uid"];
  current.precondition_resource_version = (*patched)["metadata"]["resourceVersion"];
  Status deleted = client.Delete(kConfigMaps, ns_, "a", current);
  ASSERT_TRUE(deleted.ok()) << deleted.message();
  Status missing = client.Get(kConfigMaps, ns_, "a").status();
  EXPECT_TRUE(IsNotFound(missing)) << missing.message();
  EXPECT_TRUE(IsNotFound(client.Delete(kConfigMaps, ns_, "a")));
}

TEST_F(KubeCluster, StaleUpdateConflictsAndRetryOnConflictRecovers) {
  Client& client = *client_;
  ASSERT_TRUE(client.Create(kConfigMaps, ns_, ConfigMap("counter", "0")).ok());
  Json stale = *client.Get(kConfigMaps, ns_, "counter");
  ASSERT_TRUE(client.Patch(kConfigMaps, ns_, "counter", Json{{"data", {{"value", "10"}}}}).ok());
  stale["data"]["value"] = "1";
  Status conflict = client.Update(kConfigMaps, ns_, stale).status();
  ASSERT_TRUE(IsConflict(conflict)) << conflict.message();
  EXPECT_EQ(ApiErrorOf(conflict)->http_code, 409);

  // Two writers increment concurrently; every increment lands.
  auto increment = [&] {
    return RetryOnConflict(
        [&]() -> Status {
          StatusOr<Json> current = client.Get(kConfigMaps, ns_, "counter");
          if (!current.ok()) return current.status();
          Json next = *current;
          next["data"]["value"] =
              std::to_string(std::stoi(next["data"]["value"].get<std::string>()) + 1);
          return client.Update(kConfigMaps, ns_, next).status();
        },
        /*max_attempts=*/50);
  };
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        if (!increment().ok()) ++failures;
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ((*client.Get(kConfigMaps, ns_, "counter"))["data"]["value"], "30");
}

TEST_F(KubeCluster, StatusSubresourceWritesOnlyStatus) {
  Client& client = *client_;
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}}},
              {"spec",
               {{"nodeName", "no-such-node"},  // bound already: the scheduler leaves it alone
                {"containers", {{{"name", "c"}, {"image", "example.invalid/none"}}}}}}};
  StatusOr<Json> created = client.Create(kPods, ns_, pod);
  ASSERT_TRUE(created.ok()) << created.status().message();
  Json next = *created;
  next["status"]["conditions"] = {{{"type", "budgetsweep.dev/Charged"}, {"status", "True"}}};
  next["spec"]["activeDeadlineSeconds"] = 5;  // not status: ignored
  StatusOr<Json> updated = client.UpdateStatus(kPods, ns_, next);
  ASSERT_TRUE(updated.ok()) << updated.status().message();
  EXPECT_EQ((*updated)["status"]["conditions"][0]["type"], "budgetsweep.dev/Charged");
  EXPECT_FALSE((*updated)["spec"].contains("activeDeadlineSeconds"));
  DeleteOptions now;
  now.grace_period_seconds = 0;
  EXPECT_TRUE(client.Delete(kPods, ns_, "p", now).ok());
}

TEST_F(KubeCluster, InformerSeesAddUpdateDelete) {
  Client& client = *client_;
  ASSERT_TRUE(client.Create(kConfigMaps, ns_, ConfigMap("before", "1")).ok());
  std::mutex mu;
  std::vector<std::string> seen;
  auto push = [&](const std::string& entry) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(entry);
  };
  auto has = [&](const std::string& entry) {
    std::lock_guard<std::mutex> lock(mu);
    return std::find(seen.begin(), seen.end(), entry) != seen.end();
  };
  auto name = [](const Json& o) { return o["metadata"]["name"].get<std::string>(); };
  InformerOptions options;
  options.ns = ns_;
  options.label_selector = "app=kube-client-test";
  // The server ends each watch after 2 s, so the test also sees the informer resume.
  options.min_watch_timeout_seconds = 2;
  options.max_watch_timeout_seconds = 2;
  Informer informer(client, kConfigMaps, options,
                    InformerHandlers{[&](const Json& o) { push("add " + name(o)); },
                                     [&](const Json&, const Json& o) { push("update " + name(o)); },
                                     [&](const Json& o) { push("delete " + name(o)); }});
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10));
  EXPECT_TRUE(has("add before"));

  ASSERT_TRUE(client.Create(kConfigMaps, ns_, ConfigMap("x", "1")).ok());
  ASSERT_TRUE(Eventually([&] { return has("add x"); }));
  ASSERT_TRUE(client.Patch(kConfigMaps, ns_, "x", Json{{"data", {{"value", "2"}}}}).ok());
  ASSERT_TRUE(Eventually([&] { return has("update x"); }));
  EXPECT_EQ((*informer.Get(ns_ + "/x"))["data"]["value"], "2");
  ASSERT_TRUE(client.Delete(kConfigMaps, ns_, "x").ok());
  ASSERT_TRUE(Eventually([&] { return has("delete x"); }));
  EXPECT_FALSE(informer.Get(ns_ + "/x").has_value());
  EXPECT_TRUE(informer.Get(ns_ + "/before").has_value());

  std::this_thread::sleep_for(milliseconds(2500));  // past the first watch's end
  ASSERT_TRUE(client.Create(kConfigMaps, ns_, ConfigMap("y", "1")).ok());
  ASSERT_TRUE(Eventually([&] { return has("add y"); }));
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), "add before"), 1);
  }

  auto start = steady_clock::now();
  informer.Stop();
  EXPECT_LT(steady_clock::now() - start, milliseconds(1000));
}

TEST_F(KubeCluster, OfTwoElectorsOnARealLeaseExactlyOneLeadsAndTheOtherTakesOver) {
  // Leaders at once, as the callbacks report them, and the most ever seen.
  std::mutex mu;
  int leading = 0;
  int most_leading = 0;
  auto started = [&] {
    std::lock_guard<std::mutex> lock(mu);
    most_leading = std::max(most_leading, ++leading);
  };
  auto stopped = [&] {
    std::lock_guard<std::mutex> lock(mu);
    --leading;
  };
  auto make = [&](const std::string& identity) {
    LeaderElectionConfig config;
    config.lease_namespace = ns_;
    config.lease_name = "budgetsweep-operator";
    config.identity = identity;
    config.lease_duration_seconds = 4;
    config.renew_deadline_seconds = 3;
    config.retry_period_seconds = 0.5;
    StatusOr<std::unique_ptr<LeaderElector>> elector =
        LeaderElector::Create(config_, config, LeaderCallbacks{started, stopped});
    EXPECT_TRUE(elector.ok()) << elector.status().message();
    return std::move(*elector);
  };
  std::unique_ptr<LeaderElector> a = make("replica-a");
  std::unique_ptr<LeaderElector> b = make("replica-b");
  a->Start();
  b->Start();
  ASSERT_TRUE(Eventually([&] { return a->IsLeader() || b->IsLeader(); }));
  for (int i = 0; i < 30; ++i) {  // across several renewals
    EXPECT_FALSE(a->IsLeader() && b->IsLeader());
    std::this_thread::sleep_for(milliseconds(50));
  }
  LeaderElector& leader = a->IsLeader() ? *a : *b;
  LeaderElector& follower = a->IsLeader() ? *b : *a;
  StatusOr<Json> lease = client_->Get(kLeases, ns_, "budgetsweep-operator");
  ASSERT_TRUE(lease.ok()) << lease.status().message();
  EXPECT_EQ((*lease)["spec"]["holderIdentity"], &leader == a.get() ? "replica-a" : "replica-b");

  leader.Stop();  // releases the lease
  ASSERT_TRUE(Eventually([&] { return follower.IsLeader(); }, milliseconds(3000)));
  follower.Stop();
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(most_leading, 1);
  EXPECT_EQ(leading, 0);
}

TEST_F(KubeCluster, EventsAreRecordedAndRepeatsCounted) {
  Client& client = *client_;
  StatusOr<Json> object = client.Create(kConfigMaps, ns_, ConfigMap("subject", "1"));
  ASSERT_TRUE(object.ok()) << object.status().message();
  (*object)["apiVersion"] = "v1";
  (*object)["kind"] = "ConfigMap";
  EventRecorder recorder(client, "budgetsweep-operator");
  recorder.Record(*object, EventType::kNormal, "TrialStarted", "started trial 1");
  recorder.Record(*object, EventType::kNormal, "TrialStarted", "started trial 1");
  recorder.Record(*object, EventType::kWarning, "BudgetExhausted", "no budget left");
  StatusOr<Json> events = client.List(kEvents, ns_);
  ASSERT_TRUE(events.ok()) << events.status().message();
  ASSERT_EQ((*events)["items"].size(), 2u);
  for (const Json& event : (*events)["items"]) {
    EXPECT_EQ(event["involvedObject"]["name"], "subject");
    EXPECT_EQ(event["involvedObject"]["uid"], (*object)["metadata"]["uid"]);
    if (event["reason"] == "TrialStarted") {
      EXPECT_EQ(event["count"], 2);
      EXPECT_EQ(event["type"], "Normal");
    } else {
      EXPECT_EQ(event["reason"], "BudgetExhausted");
      EXPECT_EQ(event["type"], "Warning");
      EXPECT_EQ(event["count"], 1);
    }
  }
}

}  // namespace
}  // namespace bsw::kube
