// SweepReconciler against the in-memory API server (tests/unit/adapters/kube/fake_apiserver.h):
// its informers, pods, trial records, status writes and Events go through the real client over
// HTTP, and a FakeNode plays the kubelet and the trainers. The same reconciler runs on the real
// test cluster in tests/cluster/operator_test.sh; these tests need no cluster and add the faults
// a real server does not produce on demand (a 409 on status, a 410 on a watch).
#include "operator/controller/kube/sweep_reconciler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "operator/adapters/kube/resources.h"
#include "operator/adapters/system_clock.h"
#include "operator/core/rfc3339.h"
#include "tests/unit/adapters/kube/fake_apiserver.h"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw {
namespace {

using kube::Json;
using kube::testing::ApiStatusBody;
using kube::testing::FakeApiServer;
using kube::testing::RecordedRequest;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr char kNs[] = "team";
constexpr char kSweep[] = "sw";
constexpr char kSweepPath[] = "/apis/budgetsweep.dev/v1alpha1/namespaces/team/budgetsweeps/sw";
constexpr char kPodsPath[] = "/api/v1/namespaces/team/pods";
constexpr char kTrialsPath[] = "/apis/budgetsweep.dev/v1alpha1/namespaces/team/budgetsweeptrials";

std::string Now() { return Rfc3339(SystemClock::Get().NowUnixSeconds(), /*microseconds=*/true); }

std::string EnvOf(const Json& pod, const std::string& name) {
  for (const Json& e : pod["spec"]["containers"][0].value("env", Json::array())) {
    if (e.value("name", "") == name) return e.value("value", "");
  }
  return "";
}

// Plays the node for the sweep's pods: a new pod runs at once on its own loopback address
// (127.0.0.2, .3, ...) and completes one resource unit per Step, serving the trainer's metrics
// there on `port`; it exits 0 at its BUDGETSWEEP_UNTIL. A pod being deleted or marked stopped
// ends at once with exit code 143, as the runtime's SIGTERM would end it, and one removed from
// the server is gone.
class FakeNode {
 public:
  FakeNode(kube::Client& client, int port) : client_(client), port_(port) {}
  ~FakeNode() {
    for (auto& [name, trainer] : trainers_) {
      trainer->server.stop();
      trainer->thread.join();
    }
  }

  void Step() {
    StatusOr<Json> pods = client_.List(kube::kPods, kNs, {});
    if (!pods.ok()) return;
    std::set<std::string> listed;
    for (const Json& pod : (*pods)["items"]) {
      listed.insert(pod["metadata"]["name"].get<std::string>());
      Step(pod);
    }
    // The fake server removes a deleted pod as soon as nothing holds it; its container is killed.
    for (auto& [name, trainer] : trainers_) trainer->ended |= !listed.contains(name);
  }

  size_t started() const { return trainers_.size(); }
  size_t running() const {
    size_t n = 0;
    for (const auto& [name, trainer] : trainers_) n += trainer->ended ? 0 : 1;
    return n;
  }

 private:
  struct Trainer {
    std::string started_at;
    double until = 0;
    double quality = 0;  // the objective's limit, from the trial's learning rate
    bool ended = false;
    std::mutex mu;
    double done = 0;           // guarded by mu
    int last_value_reads = 0;  // guarded by mu: reads served once done reached until
    httplib::Server server;
    std::thread thread;
  };

  void Step(const Json& pod) {
    const std::string name = pod["metadata"]["name"];
    auto it = trainers_.find(name);
    if (it == trainers_.end()) {
      Launch(pod);
      return;
    }
    Trainer& t = *it->second;
    if (t.ended) return;
    const Json& annotations = pod["metadata"].value("annotations", Json::object());
    if (pod["metadata"].contains("deletionTimestamp") ||
        annotations.value("budgetsweep.dev/stopped", "") == "true") {
      End(name, t, "Failed", 143);
      return;
    }
    std::lock_guard<std::mutex> lock(t.mu);
    // At `until` it serves its last value until that was read twice (a read answered after the
    // pass that asked for it counts on the next one), then exits 0, as the trainer contract's
    // linger is for: a trainer that exits before its value is read exits short.
    if (t.done >= t.until) {
      if (t.last_value_reads >= 2) End(name, t, "Succeeded", 0);
      return;
    }
    t.done += 1;
  }

  void Launch(const Json& pod) {
    const std::string name = pod["metadata"]["name"];
    auto t = std::make_unique<Trainer>();
    t->started_at = Now();
    t->until = std::stod(EnvOf(pod, "BUDGETSWEEP_UNTIL"));
    double lr = Json::parse(EnvOf(pod, "BUDGETSWEEP_PARAMS")).value("lr", 0.01);
    t->quality = 0.5 + 0.4 * (1 - std::abs(std::log10(lr) + 2) / 2);
    std::string ip = "127.0.0." + std::to_string(2 + trainers_.size());
    Trainer* raw = t.get();
    t->server.Get("/metrics", [raw](const httplib::Request&, httplib::Response& response) {
      std::lock_guard<std::mutex> lock(raw->mu);
      if (raw->done >= raw->until) ++raw->last_value_reads;
      std::string text =
          "budgetsweep_trainer_resource_completed " + std::to_string(raw->done) + "\n";
      for (int r = 1; r <= raw->done; ++r) {
        text += "budgetsweep_trainer_objective{metric=\"validation_accuracy\",resource=\"" +
                std::to_string(r) + "\"} " + std::to_string(raw->quality * r / (r + 1)) + "\n";
      }
      response.set_content(text, "text/plain; version=0.0.4");
    });
    EXPECT_TRUE(t->server.bind_to_port(ip, port_)) << ip << ":" << port_;
    t->thread = std::thread([raw] { raw->server.listen_after_bind(); });
    while (!t->server.is_running()) std::this_thread::sleep_for(milliseconds(1));
    (void)client_.PatchStatus(
        kube::kPods, kNs, name,
        {{"status",
          {{"phase", "Running"},
           {"podIP", ip},
           {"containerStatuses",
            {{{"name", "trainer"}, {"state", {{"running", {{"startedAt", t->started_at}}}}}}}}}}});
    trainers_[name] = std::move(t);
  }

  void End(const std::string& name, Trainer& t, const std::string& phase, int exit_code) {
    t.ended = true;
    Json terminated = {{"exitCode", exit_code}, {"startedAt", t.started_at}, {"finishedAt", Now()}};
    (void)client_.PatchStatus(
        kube::kPods, kNs, name,
        {{"status",
          {{"phase", phase},
           {"containerStatuses",
            {{{"name", "trainer"}, {"state", {{"terminated", terminated}}}}}}}}});
  }

  kube::Client& client_;
  const int port_;
  std::map<std::string, std::unique_ptr<Trainer>> trainers_;  // by pod name
};

// A port free on 127.0.0.2 for every fake trainer's metrics.
int FreeTrainerPort() {
  httplib::Server probe;
  int port = probe.bind_to_any_port("127.0.0.2");
  probe.stop();
  return port;
}

class SweepReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<kube::Client>> client = kube::Client::Create(server_.Config());
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_ = std::move(*client);
    port_ = FreeTrainerPort();
    ASSERT_GT(port_, 0);
    node_ = std::make_unique<FakeNode>(*client_, port_);
  }

  void TearDown() override { StopOperator(); }

  // A sweep of four trials, two at a time, under ASHA from 1 to 9 units.
  void CreateSweep(const std::function<void(Json&)>& edit = nullptr) {
    Json sweep = testing::ValidSweepJson();
    sweep["metadata"] = {{"name", kSweep}, {"namespace", kNs}, {"generation", 1}};
    sweep["spec"]["resource"] = {
        {"unit", "epochs"}, {"min", 1}, {"max", 9}, {"reductionFactor", 3}};
    sweep["spec"]["parallelism"] = 2;
    sweep["spec"]["maxTrials"] = 4;
    sweep["spec"]["budget"]["gpuHours"] = 1;
    if (edit) edit(sweep);
    ASSERT_TRUE(client_->Create(kube::kBudgetSweeps, kNs, sweep).ok());
  }

  void StartOperator(ReconcilerHooks hooks = {}) {
    ReconcilerOptions options;
    options.ns = kNs;
    options.resync_seconds = 0.05;
    options.pool_recheck_seconds = 0.1;
    options.metrics_port = port_;
    operator_ = std::make_unique<SweepReconciler>(*client_, clock_, options, std::move(hooks));
    ASSERT_TRUE(operator_->Start(10).ok());
    worker_ = std::thread([this] { operator_->Run(); });
  }

  void StopOperator() {
    if (!operator_) return;
    operator_->Stop();
    worker_.join();
    operator_.reset();
  }

  // Steps the node every 20 ms until `done` holds; false after 60 s.
  bool StepUntil(const std::function<bool()>& done) {
    for (auto end = steady_clock::now() + std::chrono::seconds(60); steady_clock::now() < end;) {
      node_->Step();
      if (done()) return true;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return false;
  }

  // The server answers the first `times` requests `method` `path` with 409 Conflict, counting
  // them in `*conflicts`.
  void FailWithConflict(const std::string& method, const std::string& path, int times,
                        int* conflicts) {
    server_.SetHook([=](const httplib::Request& request, httplib::Response& response) {
      if (request.method != method || request.path != path || *conflicts >= times) return false;
      ++*conflicts;
      response.status = 409;
      response.set_content(ApiStatusBody(409, "Conflict", "the object has been modified"),
                           "application/json");
      return true;
    });
  }

  Json Status() const { return server_.Object(kSweepPath).value("status", Json::object()); }
  // The sweep's condition of type `type`; null while it has none.
  Json ConditionOf(const std::string& type) const {
    for (const Json& c : Status().value("conditions", Json::array())) {
      if (c["type"] == type) return c;
    }
    return Json();
  }
  std::string Phase() const { return Status().value("phase", ""); }

  std::vector<Json> Pods() const {
    StatusOr<Json> pods = client_->List(kube::kPods, kNs, {});
    EXPECT_TRUE(pods.ok());
    return pods.ok() ? (*pods)["items"].get<std::vector<Json>>() : std::vector<Json>{};
  }

  std::vector<RecordedRequest> Requests(const std::string& method, const std::string& path) const {
    std::vector<RecordedRequest> matching;
    for (const RecordedRequest& r : server_.Requests()) {
      if (r.method == method && r.path == path) matching.push_back(r);
    }
    return matching;
  }

  // The reasons of the Events recorded for the sweep, in order.
  std::vector<std::string> EventReasons() const {
    std::vector<std::string> reasons;
    for (const RecordedRequest& r : server_.Requests()) {
      if (r.method != "POST" || r.path.find("/events") == std::string::npos) continue;
      Json event = Json::parse(r.body);
      if (event.value("/regarding/name"_json_pointer,
                      event.value("/involvedObject/name"_json_pointer, "")) == kSweep) {
        reasons.push_back(event.value("reason", ""));
      }
    }
    return reasons;
  }

  // What a finished sweep must show whatever happened on the way: every trial decided, each pod
  // created once, and no pod still holding its charge.
  void ExpectFinishedCleanly() {
    Json status = Status();
    EXPECT_EQ(status["trials"]["created"], 4) << status.dump(2);
    EXPECT_EQ(status["trials"]["running"], 0) << status.dump(2);
    EXPECT_EQ(status["trials"].value("completed", 0) + status["trials"].value("stopped", 0) +
                  status["trials"].value("paused", 0),
              4)
        << status.dump(2);
    std::map<std::string, int> creations;
    for (const RecordedRequest& r : Requests("POST", kPodsPath)) {
      ++creations[Json::parse(r.body)["metadata"]["name"].get<std::string>()];
    }
    for (const auto& [pod, times] : creations) EXPECT_EQ(times, 1) << pod << " created again";
    EXPECT_EQ(creations.size(), node_->started());
    for (const Json& pod : Pods()) {
      EXPECT_THAT(pod["metadata"].value("finalizers", Json::array()),
                  ::testing::Not(::testing::Contains("budgetsweep.dev/accounting")))
          << pod["metadata"]["name"] << " still holds its charge";
    }
    std::set<std::string> trials;
    for (const RecordedRequest& r : Requests("POST", kTrialsPath)) {
      trials.insert(Json::parse(r.body)["metadata"]["name"].get<std::string>());
    }
    EXPECT_EQ(trials.size(), 4u) << "one trial record per trial";
  }

  FakeApiServer server_;
  SystemClock clock_;
  std::unique_ptr<kube::Client> client_;
  int port_ = 0;
  std::unique_ptr<FakeNode> node_;
  std::unique_ptr<SweepReconciler> operator_;
  std::thread worker_;
};

TEST_F(SweepReconcilerTest, RunsASweepToItsEndAndReleasesEveryPod) {
  CreateSweep();
  StartOperator();
  ASSERT_TRUE(StepUntil([&] { return Phase() == "Completed"; })) << Status().dump(2);
  ASSERT_TRUE(StepUntil([&] { return node_->running() == 0; }));
  ExpectFinishedCleanly();
  Json status = Status();
  EXPECT_EQ(status["observedGeneration"], 1);
  EXPECT_EQ(status["budget"]["reserved"], 0) << "nothing is reserved once every trial ended";
  EXPECT_FALSE(status["best"].value("trial", "").empty()) << status.dump(2);
  std::vector<std::string> reasons = EventReasons();
  EXPECT_THAT(reasons, ::testing::Contains("TrialStarted"));
  EXPECT_EQ(reasons.back(), "SweepCompleted");
  EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "SweepCompleted"), 1);
}

constexpr char kPoolsPath[] = "/apis/budgetsweep.dev/v1alpha1/namespaces/team/budgetpools";
constexpr char kPoolPath[] = "/apis/budgetsweep.dev/v1alpha1/namespaces/team/budgetpools/team-a";

void CreatePool(kube::Client& client, double gpu_hours) {
  Json pool = {{"apiVersion", "budgetsweep.dev/v1alpha1"},
               {"kind", "BudgetPool"},
               {"metadata", {{"name", "team-a"}, {"namespace", kNs}, {"generation", 1}}},
               {"spec", {{"gpuHours", gpu_hours}}}};
  ASSERT_TRUE(client.Create(kube::kBudgetPools, kNs, pool).ok());
}

// The index in the server's requests of the first that matches.
size_t FirstIndex(const std::vector<RecordedRequest>& requests, const std::string& method,
                  const std::string& path_prefix) {
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].method == method && requests[i].path.starts_with(path_prefix)) return i;
  }
  return requests.size();
}

TEST_F(SweepReconcilerTest, APooledSweepWritesItsAccountToThePoolBeforeItsFirstPod) {
  CreatePool(*client_, 2);
  CreateSweep([](Json& sweep) {
    sweep["spec"]["budget"].erase("gpuHours");
    sweep["spec"]["budget"]["poolRef"] = {{"name", "team-a"}};
  });
  StartOperator();
  ASSERT_TRUE(StepUntil([&] { return Phase() == "Completed"; })) << Status().dump(2);
  ASSERT_TRUE(StepUntil([&] { return node_->running() == 0; }));
  ExpectFinishedCleanly();
  EXPECT_EQ(Status()["budget"]["gpuHours"], 2) << "without its own, the pool's gpuHours caps it";

  std::vector<RecordedRequest> requests = server_.Requests();
  size_t account = FirstIndex(requests, "PUT", std::string(kPoolPath) + "/status");
  size_t pod = FirstIndex(requests, "POST", kPodsPath);
  ASSERT_LT(pod, requests.size());
  EXPECT_LT(account, pod) << "a pod was created before the pool counted its reservation";
  Json first = Json::parse(requests[account].body)["status"]["sweeps"][0];
  EXPECT_GT(first["reservedDeviceSeconds"].get<double>(), 0) << first.dump();
  // The pass read the pool once: to bind the sweep's budget and to plan within the pool.
  EXPECT_EQ(std::count_if(
                requests.begin(), requests.begin() + static_cast<ptrdiff_t>(account),
                [](const RecordedRequest& r) { return r.method == "GET" && r.path == kPoolPath; }),
            1);

  // Once it ends, the pool's account is what the sweep's status says it used, and wants no more.
  ASSERT_TRUE(StepUntil([&] {
    Json sweeps = server_.Object(kPoolPath)["status"].value("sweeps", Json::array());
    return sweeps.size() == 1 && !sweeps[0]["active"].get<bool>() &&
           sweeps[0]["reservedDeviceSeconds"] == 0;
  })) << server_.Object(kPoolPath).dump(2);
  Json pool_status = server_.Object(kPoolPath)["status"];
  EXPECT_EQ(pool_status["sweeps"][0]["sweep"], kSweep);
  EXPECT_EQ(pool_status["sweeps"][0]["key"], server_.Object(kSweepPath)["metadata"]["uid"]);
  // The sweep's status rounds to 0.001 GPU-hours and the pool's to 0.0001: 0.00451 is 0.005 in
  // one and 0.0045 in the other.
  EXPECT_NEAR(pool_status["usedGpuHours"].get<double>(), Status()["budget"]["used"].get<double>(),
              0.0005 + 0.00005 + 1e-9);
  EXPECT_GT(pool_status["usedGpuHours"].get<double>(), 0);
  EXPECT_EQ(pool_status["conditions"][0]["type"], "Available");
}

TEST_F(SweepReconcilerTest, ASweepWaitsForAMissingPoolAndStartsOnceItExists) {
  CreateSweep([](Json& sweep) { sweep["spec"]["budget"]["poolRef"] = {{"name", "team-a"}}; });
  std::atomic<int> gone{0};
  ReconcilerHooks hooks;
  hooks.on_pool_gone = [&gone](const std::string& ns, const std::string& pool) {
    if (ns == kNs && pool == "team-a") ++gone;
  };
  StartOperator(hooks);
  auto pool_bound = [&] { return ConditionOf("PoolBound"); };
  ASSERT_TRUE(StepUntil([&] { return !pool_bound().is_null(); })) << Status().dump(2);
  EXPECT_EQ(Phase(), "Pending");
  EXPECT_EQ(pool_bound()["reason"], "PoolNotFound");
  EXPECT_THAT(pool_bound()["message"].get<std::string>(),
              ::testing::HasSubstr("spec.budget.poolRef.name: BudgetPool \"team-a\" does not "
                                   "exist in namespace team"));
  EXPECT_THAT(EventReasons(), ::testing::Contains("PoolNotFound"));
  EXPECT_TRUE(Requests("POST", kPodsPath).empty()) << "a sweep without its pool started a pod";
  EXPECT_GT(gone.load(), 0) << "the missing pool's metrics were not let go";
  CreatePool(*client_, 2);  // looked for again within pool_recheck_seconds
  ASSERT_TRUE(StepUntil([&] { return Phase() == "Completed"; })) << Status().dump(2);
}

TEST_F(SweepReconcilerTest, AConflictOnThePoolStartsNothingAndIsPlannedAgain) {
  CreatePool(*client_, 2);
  int conflicts = 0;
  FailWithConflict("PUT", std::string(kPoolPath) + "/status", 3, &conflicts);
  CreateSweep([](Json& sweep) { sweep["spec"]["budget"]["poolRef"] = {{"name", "team-a"}}; });
  StartOperator();
  ASSERT_TRUE(StepUntil([&] { return Phase() == "Completed"; })) << Status().dump(2);
  EXPECT_EQ(conflicts, 3);
  std::vector<RecordedRequest> requests = server_.Requests();
  EXPECT_LT(FirstIndex(requests, "PUT", std::string(kPoolPath) + "/status") + 3,
            FirstIndex(requests, "POST", kPodsPath))
      << "a pod was created before the pool's write went through";
  ExpectFinishedCleanly();
}

TEST_F(SweepReconcilerTest, ADeletedSweepsChargeStaysInItsPool) {
  CreatePool(*client_, 2);
  CreateSweep([](Json& sweep) { sweep["spec"]["budget"]["poolRef"] = {{"name", "team-a"}}; });
  StartOperator();
  ASSERT_TRUE(StepUntil([&] { return node_->running() > 0; }));
  ASSERT_TRUE(client_->Delete(kube::kBudgetSweeps, kNs, kSweep).ok());
  ASSERT_TRUE(StepUntil([&] {
    Json sweeps = server_.Object(kPoolPath)["status"].value("sweeps", Json::array());
    return sweeps.size() == 1 && !sweeps[0]["active"].get<bool>();
  })) << server_.Object(kPoolPath).dump(2);
  Json account = server_.Object(kPoolPath)["status"]["sweeps"][0];
  EXPECT_EQ(account["reservedDeviceSeconds"], 0);
  EXPECT_GT(account["usedDeviceSeconds"].get<double>(), 0)
      << "what the deleted sweep had reserved is charged: " << account.dump();
  EXPECT_TRUE(Requests("GET", kPoolsPath).empty()) << "the operator knew the sweep's pool";
}

TEST_F(SweepReconcilerTest, AMalformedObjectGetsAConditionNamingTheFieldOnce) {
  CreateSweep();
  ASSERT_TRUE(client_
                  ->PatchStatus(kube::kBudgetSweeps, kNs, kSweep,
                                {{"status", {{"trials", {{"created", "many"}}}}}})
                  .ok());
  StartOperator();
  auto invalid = [&] { return ConditionOf("InvalidSpec"); };
  ASSERT_TRUE(StepUntil([&] { return !invalid().is_null(); })) << Status().dump(2);
  EXPECT_EQ(Phase(), "Failed");
  EXPECT_EQ(invalid()["message"], "status.trials.created: must be a number, got string \"many\"");
  EXPECT_THAT(EventReasons(), ::testing::Contains("InvalidSpec"));
  // Its own write is read back as the same report: nothing more is written.
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(Requests("PATCH", std::string(kSweepPath) + "/status").size(), 2u);
  EXPECT_TRUE(Requests("POST", kPodsPath).empty());
}

TEST_F(SweepReconcilerTest, AConflictOnTheStatusWriteIsRetried) {
  int conflicts = 0;
  FailWithConflict("PATCH", std::string(kSweepPath) + "/status", 2, &conflicts);
  CreateSweep();
  StartOperator();
  ASSERT_TRUE(StepUntil([&] { return Phase() == "Completed"; })) << Status().dump(2);
  EXPECT_EQ(conflicts, 2);
  ASSERT_TRUE(StepUntil([&] { return node_->running() == 0; }));
  ExpectFinishedCleanly();
}

TEST_F(SweepReconcilerTest, AWatchThatExpiredIsListedAgainAndTheSweepGoesOn) {
  bool expired = false;
  server_.SetHook([&](const httplib::Request& request, httplib::Response& response) {
    if (expired || request.path != kPodsPath || request.get_param_value("watch") != "true") {
      return false;
    }
    expired = true;
    response.status = 410;
    response.set_content(ApiStatusBody(410, "Expired", "too old resource version"),
                         "application/json");
    return true;
  });
  CreateSweep();
  StartOperator();
  ASSERT_TRUE(StepUntil([&] { return Phase() == "Completed"; })) << Status().dump(2);
  EXPECT_TRUE(expired);
  int lists = 0;
  for (const RecordedRequest& r : Requests("GET", kPodsPath)) {
    lists += r.params.find("watch") == r.params.end() ? 1 : 0;
  }
  EXPECT_GE(lists, 2) << "the pod informer did not list again after the 410";
  ASSERT_TRUE(StepUntil([&] { return node_->running() == 0; }));
  ExpectFinishedCleanly();
}

TEST_F(SweepReconcilerTest, ADeletedSweepsPodsAreDeletedAndReleased) {
  CreateSweep();
  StartOperator();
  ASSERT_TRUE(StepUntil([&] { return node_->running() == 2; }));
  ASSERT_TRUE(client_->Delete(kube::kBudgetSweeps, kNs, kSweep).ok());
  ASSERT_TRUE(StepUntil([&] { return Pods().empty(); }))
      << Pods().size() << " pods left, the first: " << Pods().front().dump(2);
  // The node kills a deleted pod's trainer as it sees the deletion, a moment after the API does.
  EXPECT_TRUE(StepUntil([&] { return node_->running() == 0; })) << node_->running() << " running";
  EXPECT_TRUE(Requests("GET", kPoolsPath).empty()) << "a sweep without a pool settled in pools";
}

TEST_F(SweepReconcilerTest, AnOperatorRestartedMidSweepCarriesOnWithoutLaunchingAnythingTwice) {
  CreateSweep();
  StartOperator();
  ASSERT_TRUE(StepUntil([&] { return node_->started() >= 2; }));
  StopOperator();
  // Trials go on while no operator runs; some end.
  for (int i = 0; i < 5; ++i) node_->Step();
  StartOperator();
  ASSERT_TRUE(StepUntil([&] { return Phase() == "Completed"; })) << Status().dump(2);
  ASSERT_TRUE(StepUntil([&] { return node_->running() == 0; }));
  ExpectFinishedCleanly();
}

}  // namespace
}  // namespace bsw
