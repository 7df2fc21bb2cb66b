// kube::TrialLog (operator/adapters/kube/trial_log.h) against a real kube-apiserver with the
// BudgetSweep and BudgetSweepTrial CRDs from crds/:
//   eval "$(tests/cluster/up.sh | tail -1)" && build/tests/cluster/trial_log_cluster_test
// Skips when KUBECONFIG is unset.
#include "operator/adapters/kube/trial_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "operator/adapters/kube/config.h"
#include "operator/adapters/kube/errors.h"
#include "operator/adapters/kube/resources.h"

namespace bsw::kube {
namespace {

const Resource kNamespaces{"", "v1", "namespaces", false};

Json Sweep(const std::string& name) {
  return Json::parse(R"({
    "apiVersion": "budgetsweep.dev/v1alpha1", "kind": "BudgetSweep",
    "metadata": {"name": ")" +
                     name + R"("},
    "spec": {
      "budget": {"gpuHours": 1},
      "objective": {"metric": "validation_accuracy", "goal": "maximize"},
      "resource": {"unit": "epochs", "min": 1, "max": 9, "reductionFactor": 3},
      "searchSpace": {"lr": {"type": "logUniform", "min": 0.0001, "max": 0.1}},
      "trial": {"template": {"spec": {"containers": [{"name": "t", "image": "x"}]}}}}})");
}

Event Created(int64_t trial, double lr) {
  event::TrialCreated e{.at = 100 + static_cast<double>(trial), .trial = trial};
  e.params = {{"lr", lr}};
  return e;
}

class TrialLogCluster : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* path = std::getenv("KUBECONFIG");
    if (path == nullptr || *path == '\0') return;
    std::string apply = "kubectl apply -f " + std::string(BSW_SOURCE_DIR) +
                        "/crds/ >/dev/null && kubectl wait --for=condition=Established "
                        "--timeout=60s crd/budgetsweeps.budgetsweep.dev "
                        "crd/budgetsweeptrials.budgetsweep.dev >/dev/null";
    ASSERT_EQ(std::system(apply.c_str()), 0) << apply;
  }

  void SetUp() override {
    const char* path = std::getenv("KUBECONFIG");
    if (path == nullptr || *path == '\0') GTEST_SKIP() << "KUBECONFIG is not set";
    StatusOr<KubeConfig> config = LoadKubeconfig(path);
    ASSERT_TRUE(config.ok()) << config.status().message();
    StatusOr<std::unique_ptr<Client>> client = Client::Create(*config);
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_ = std::move(*client);
    ns_ = "trial-log-" + std::to_string(getpid()) + "-" +
          std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 100000);
    ASSERT_TRUE(client_->Create(kNamespaces, "", Json{{"metadata", {{"name", ns_}}}}).ok());
  }

  void TearDown() override {
    if (client_ && !ns_.empty()) (void)client_->Delete(kNamespaces, "", ns_);
  }

  SweepOwner CreateSweep(const std::string& name) {
    StatusOr<Json> sweep = client_->Create(kBudgetSweeps, ns_, Sweep(name));
    EXPECT_TRUE(sweep.ok()) << sweep.status().message();
    SweepOwner owner;
    owner.name = name;
    owner.uid = sweep.ok() ? (*sweep)["metadata"].value("uid", "") : "";
    return owner;
  }

  std::unique_ptr<Client> client_;
  std::string ns_;
};

TEST_F(TrialLogCluster, EventsComeBackInTheOrderTheyWereAppendedAcrossTrialsAndTheSweep) {
  SweepOwner owner = CreateSweep("order");
  // One cached trial: appends that alternate between trials read the evicted object first.
  TrialLog log(*client_, ns_, owner, /*cached_trials=*/1);
  ASSERT_TRUE(log.ReadAll().ok());
  event::SegmentLaunched launched{.at = 103, .trial = 0, .segment = 0};
  launched.until = 9;
  launched.deadline = 200;
  event::ValueRecorded value{.at = 104, .trial = 1};
  value.resource = 1;
  value.value = 0.5;
  event::SegmentEnded ended{.at = 105, .trial = 0, .segment = 0};
  ended.started = 103.5;
  ended.finished = 150.25;
  ended.devices = 2;
  event::SweepFinished finished{.at = 106};
  finished.phase = SweepPhase::kCompleted;
  finished.reason = "MaxTrialsReached";
  ASSERT_TRUE(log.Append({Created(0, 0.01), Created(1, 0.002), launched}).ok());
  ASSERT_TRUE(log.Append({value, ended, finished}).ok());

  TrialLog fresh(*client_, ns_, owner, 8);  // a restarted operator
  StatusOr<std::vector<Event>> events = fresh.ReadAll();
  ASSERT_TRUE(events.ok()) << events.status().message();
  ASSERT_EQ(events->size(), 6u);
  std::vector<std::string> types;
  for (const Event& e : *events) types.push_back(EventName(e));
  EXPECT_EQ(types, (std::vector<std::string>{"TrialCreated", "TrialCreated", "SegmentLaunched",
                                             "ValueRecorded", "SegmentEnded", "SweepFinished"}));
  EXPECT_EQ(std::get<event::TrialCreated>((*events)[1]).trial, 1);
  EXPECT_EQ(std::get<event::SegmentEnded>((*events)[4]).started, 103.5);
  EXPECT_EQ(std::get<event::SegmentEnded>((*events)[4]).finished, 150.25);
  EXPECT_EQ(std::get<event::SegmentEnded>((*events)[4]).devices, 2);
  EXPECT_EQ(std::get<event::SweepFinished>((*events)[5]).phase, SweepPhase::kCompleted);

  StatusOr<Json> trial = client_->Get(kBudgetSweepTrials, ns_, "order-t0001");
  ASSERT_TRUE(trial.ok()) << trial.status().message();
  EXPECT_EQ(trial->at("spec").at("params").at("lr"), 0.002);
  EXPECT_EQ(trial->at("spec").at("index"), 1);
  EXPECT_EQ(trial->at("metadata").at("ownerReferences").at(0).at("uid"), owner.uid);
  StatusOr<Json> sweep = client_->Get(kBudgetSweeps, ns_, "order");
  ASSERT_TRUE(sweep.ok());
  EXPECT_EQ(sweep->at("status").at("sweepEvents").size(), 1u);

  // It continues the sequence: a later append sorts after everything before it.
  event::TrialStopped stopped{.at = 107, .trial = 1};
  stopped.reason = "RungCutoff";
  ASSERT_TRUE(fresh.Append({stopped}).ok());
  TrialLog third(*client_, ns_, owner, 8);
  StatusOr<std::vector<Event>> again = third.ReadAll();
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 7u);
  EXPECT_TRUE(std::holds_alternative<event::TrialStopped>(again->back()));
}

TEST_F(TrialLogCluster, ForEachHandsOutWhatReadAllReturnsAndStopsAtTheFirstError) {
  SweepOwner owner = CreateSweep("each");
  TrialLog log(*client_, ns_, owner, 8);
  ASSERT_TRUE(log.ReadAll().ok());
  event::SweepFinished finished{.at = 106};
  finished.phase = SweepPhase::kCompleted;
  ASSERT_TRUE(log.Append({Created(0, 0.01), Created(1, 0.002)}).ok());
  ASSERT_TRUE(log.Append({Created(2, 0.03), finished}).ok());

  TrialLog fresh(*client_, ns_, owner, 8);
  StatusOr<std::vector<Event>> all = fresh.ReadAll();
  ASSERT_TRUE(all.ok()) << all.status().message();
  std::vector<std::string> read, handed;
  for (const Event& e : *all) read.push_back(EventToJson(e).dump());
  ASSERT_TRUE(fresh
                  .ForEach([&](const Event& e) {
                    handed.push_back(EventToJson(e).dump());
                    return OkStatus();
                  })
                  .ok());
  EXPECT_EQ(handed, read);
  EXPECT_EQ(handed.size(), 4u);

  int calls = 0;
  Status stopped = fresh.ForEach(
      [&](const Event&) { return ++calls == 2 ? InvalidArgumentError("second") : OkStatus(); });
  EXPECT_EQ(stopped.message(), "second");
  EXPECT_EQ(calls, 2);
}

TEST_F(TrialLogCluster, AStaleWriterAddsItsEventsWithoutLosingTheOthers) {
  SweepOwner owner = CreateSweep("stale");
  TrialLog first(*client_, ns_, owner, 8);
  ASSERT_TRUE(first.ReadAll().ok());
  ASSERT_TRUE(first.Append({Created(0, 0.01)}).ok());
  TrialLog second(*client_, ns_, owner, 8);  // a new leader that read the log now
  ASSERT_TRUE(second.ReadAll().ok());
  event::TrialStopped a{.at = 110, .trial = 0};
  a.reason = "First";
  ASSERT_TRUE(first.Append({a}).ok());
  event::TrialPromoted b{.at = 111, .trial = 0};
  b.rung = 0;
  // second's copy of the object is stale: Conflict, re-read, merge.
  Status written = second.Append({b});
  ASSERT_TRUE(written.ok()) << written.message();
  StatusOr<Json> trial = client_->Get(kBudgetSweepTrials, ns_, "stale-t0000");
  ASSERT_TRUE(trial.ok());
  EXPECT_EQ(trial->at("status").at("events").size(), 3u);
}

TEST_F(TrialLogCluster, ObjectsOfAnEarlierSweepOfTheSameNameAreRemovedNotReplayed) {
  SweepOwner old_owner = CreateSweep("reborn");
  TrialLog old_log(*client_, ns_, old_owner, 8);
  ASSERT_TRUE(old_log.ReadAll().ok());
  ASSERT_TRUE(old_log.Append({Created(0, 0.05)}).ok());
  // The sweep is deleted and created again; without a garbage collector its trial stays behind.
  ASSERT_TRUE(client_->Delete(kBudgetSweeps, ns_, "reborn").ok());
  SweepOwner owner = CreateSweep("reborn");
  ASSERT_NE(owner.uid, old_owner.uid);
  TrialLog log(*client_, ns_, owner, 8);
  StatusOr<std::vector<Event>> events = log.ReadAll();
  ASSERT_TRUE(events.ok()) << events.status().message();
  EXPECT_TRUE(events->empty());
  Status written = log.Append({Created(0, 0.003)});
  ASSERT_TRUE(written.ok()) << written.message();
  StatusOr<Json> trial = client_->Get(kBudgetSweepTrials, ns_, "reborn-t0000");
  ASSERT_TRUE(trial.ok());
  EXPECT_EQ(trial->at("spec").at("params").at("lr"), 0.003);
}

}  // namespace
}  // namespace bsw::kube
