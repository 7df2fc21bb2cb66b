// kubectl-bsw (operator/cmd/kubectl): its views as text, the kubeconfig rules it shares with
// kubectl, and its reads against the in-process fake API server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "operator/adapters/kube/pod_backend.h"
#include "operator/adapters/kube/resources.h"
#include "operator/adapters/kube/trial_log.h"
#include "operator/cmd/kubectl/format.h"
#include "operator/cmd/kubectl/kubeconfig_flags.h"
#include "operator/cmd/kubectl/sweep_reads.h"
#include "operator/cmd/kubectl/views.h"
#include "operator/report/report.h"
#include "tests/unit/adapters/kube/fake_apiserver.h"

namespace bsw::kubectl {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// 2026-01-01T00:00:00Z
constexpr double kNewYear = 1767225600;

TEST(BudgetBarTest, MarksUsedThenReservedThenWhatIsLeft) {
  EXPECT_EQ(BudgetBar(0.41, 0.10, 1.0, 10), "[####+.....] 0.41+0.10/1.00 GPU-h");
  EXPECT_EQ(BudgetBar(0, 0, 2.0, 10), "[..........] 0.00+0.00/2.00 GPU-h");
  EXPECT_EQ(BudgetBar(0.5, 0.5, 1.0, 4), "[##++] 0.50+0.50/1.00 GPU-h");
}

TEST(BudgetBarTest, StaysWithinItsWidthWhenOverspent) {
  EXPECT_EQ(BudgetBar(1.2, 0.3, 1.0, 10), "[##########] 1.20+0.30/1.00 GPU-h");
  EXPECT_EQ(BudgetBar(0.9, 0.3, 1.0, 10), "[#########+] 0.90+0.30/1.00 GPU-h");
}

TEST(HumanDurationTest, ShortensAsKubectlsAgeColumnDoes) {
  EXPECT_EQ(HumanDuration(-3), "0s");
  EXPECT_EQ(HumanDuration(45), "45s");
  EXPECT_EQ(HumanDuration(119), "119s");
  EXPECT_EQ(HumanDuration(180), "3m");
  EXPECT_EQ(HumanDuration(200), "3m20s");
  EXPECT_EQ(HumanDuration(42 * 60 + 5), "42m");
  EXPECT_EQ(HumanDuration(5 * 3600 + 10 * 60), "5h10m");
  EXPECT_EQ(HumanDuration(30 * 3600), "30h");
  EXPECT_EQ(HumanDuration(3 * 86400 + 4 * 3600), "3d4h");
  EXPECT_EQ(HumanDuration(120 * 86400), "120d");
  EXPECT_EQ(HumanDuration(395 * 86400), "395d");
  EXPECT_EQ(HumanDuration((2 * 365 + 30) * 86400), "2y30d");
}

TEST(AlignedTableTest, PadsEachColumnToItsWidestCellButTheLast) {
  EXPECT_EQ(AlignedTable({{"NAME", "PHASE", "AGE"}, {"a-long-name", "Running", "3m"}}),
            "NAME          PHASE     AGE\n"
            "a-long-name   Running   3m\n");
}

json ListedSweep(const std::string& ns, const std::string& name, const std::string& created) {
  return {{"metadata", {{"name", name}, {"namespace", ns}, {"creationTimestamp", created}}},
          {"spec", {{"budget", {{"gpuHours", 2}}}}}};
}

json ListedSweeps() {
  json running = ListedSweep("ml", "mnist", "2026-01-01T00:00:00Z");
  running["status"] = {
      {"phase", "Running"},
      {"budget", {{"gpuHours", 1}, {"used", 0.41}, {"reserved", 0.1}, {"remaining", 0.49}}},
      {"best", {{"trial", "mnist-t0000"}, {"value", 0.86}, {"resource", 9}}},
      {"trials", {{"created", 5}, {"running", 1}}}};
  // Just applied: the operator has written no status yet.
  json fresh = ListedSweep("team", "cifar", "2026-01-01T00:03:00Z");
  return {running, fresh};
}

TEST(SweepListTableTest, ShowsPhaseBudgetBestTrialsAndAgeAlignedAsKubectlGet) {
  EXPECT_EQ(SweepListTable(ListedSweeps(), false, kNewYear + 200),
            "NAME    PHASE     BUDGET                              BEST                 TRIALS   "
            "AGE\n"
            "mnist   Running   [####+.....] 0.41+0.10/1.00 GPU-h   0.86 (mnist-t0000)   1/5      "
            "3m20s\n"
            "cifar   -         [..........] 0.00+0.00/2.00 GPU-h   -                    -        "
            "20s\n");
}

TEST(SweepListTableTest, PutsTheNamespaceFirstForAllNamespaces) {
  std::string table = SweepListTable(ListedSweeps(), true, kNewYear + 200);
  EXPECT_THAT(table, ::testing::StartsWith("NAMESPACE   NAME    PHASE     BUDGET"));
  EXPECT_THAT(table, HasSubstr("\nml          mnist   Running   [####+.....]"));
  EXPECT_THAT(table, HasSubstr("\nteam        cifar   -         [..........]"));
}

TEST(SweepListTableTest, ShowsANonFiniteBestAsNan) {
  json sweeps = ListedSweeps();
  sweeps[0]["status"]["best"]["value"] = nullptr;
  EXPECT_THAT(SweepListTable(sweeps, false, kNewYear), HasSubstr("   nan (mnist-t0000)   "));
}

// Five trials on one GPU each, η = 3 over epochs 1, 3, 9, one retry: t0000 completes, t0001 is
// cut at the first rung, t0002 fails twice (out of memory), t0003 diverges, t0004 runs at kNow.
constexpr double kNow = 1700;

json SweepObject() {
  return json::parse(R"({
    "apiVersion": "budgetsweep.dev/v1alpha1",
    "kind": "BudgetSweep",
    "metadata": {"name": "mnist", "namespace": "ns"},
    "spec": {
      "budget": {"gpuHours": 1},
      "objective": {"metric": "validation_accuracy"},
      "resource": {"unit": "epochs", "min": 1, "max": 9, "reductionFactor": 3},
      "searchSpace": {
        "lr": {"type": "logUniform", "min": 1.0e-4, "max": 1.0},
        "optimizer": {"type": "choice", "values": ["adamw", "sgd"]}
      },
      "trial": {"gpus": 1, "template": {"spec": {"containers": [
        {"name": "trainer", "image": "trainer", "command": ["trainer"]}]}}}
    }
  })");
}

SweepSpec Spec() { return ParseSweep(SweepObject()).value(); }

std::vector<Event> Launch(int64_t trial, int segment, double at, double deadline) {
  std::vector<Event> events;
  if (segment == 0) {
    event::TrialCreated created{.at = at, .trial = trial};
    created.params = {{"lr", 0.01 * static_cast<double>(trial + 1)},
                      {"optimizer", trial % 2 ? "sgd" : "adamw"}};
    events.push_back(created);
  }
  event::SegmentLaunched launched{.at = at, .trial = trial, .segment = segment};
  launched.until = 9;
  launched.deadline = deadline;
  events.push_back(launched);
  return events;
}

Event Value(int64_t trial, double at, double resource, double value) {
  event::ValueRecorded e{.at = at, .trial = trial};
  e.resource = resource;
  e.value = value;
  return e;
}

// The verdict the planner records after a value at a rung that decides.
Event Judged(int64_t trial, double at, int rung, double resource, Verdict verdict,
             std::string message = "") {
  event::RungVerdict e{.at = at, .trial = trial};
  e.rung = rung;
  e.resource = resource;
  e.verdict = verdict;
  e.message = std::move(message);
  return e;
}

Event Ended(int64_t trial, int segment, double at, std::string reason, std::string message = "",
            std::string output = "") {
  event::SegmentEnded e{.at = at, .trial = trial, .segment = segment};
  e.reason = std::move(reason);
  e.message = std::move(message);
  e.output = std::move(output);
  e.started = at - 100;
  e.finished = at;
  e.devices = 1;
  return e;
}

// Each trial's events together, in trial order (the fake API server keeps a BudgetSweepTrial's
// status only from its creation, so each record is written once).
std::vector<Event> Events() {
  std::vector<Event> events;
  auto add = [&events](std::vector<Event> more) {
    events.insert(events.end(), more.begin(), more.end());
  };
  add(Launch(0, 0, 1000, 2000));
  add({Value(0, 1100, 1, 0.7), Judged(0, 1100, 0, 1, Verdict::kContinue), Value(0, 1200, 3, 0.8),
       Judged(0, 1200, 1, 3, Verdict::kContinue), Value(0, 1400, 9, 0.86), Ended(0, 0, 1401, "")});
  add(Launch(1, 0, 1000, 2000));
  event::TrialStopped stopped{.at = 1110, .trial = 1};
  stopped.reason = "RungCutoff";
  stopped.message = "value 0.4 at rung 0 (epochs 1) is not in the top 1/3";
  add({Value(1, 1105, 1, 0.4), Judged(1, 1105, 0, 1, Verdict::kStop, stopped.message), stopped,
       Ended(1, 0, 1111, "Stopped")});
  add(Launch(2, 0, 1120, 2000));
  add({Ended(2, 0, 1130, "Error", "exit code 1",
             "loading data\nRuntimeError: CUDA out of memory")});
  add(Launch(2, 1, 1131, 2000));
  add({Ended(2, 1, 1140, "Error", "exit code 1",
             "resuming from checkpoint\nRuntimeError: CUDA out of memory")});
  add(Launch(3, 0, 1150, 2000));
  add({Ended(3, 0, 1160, "Diverged", "the trainer reported a non-finite loss (exit code 3)",
             "step 120 loss nan")});
  add(Launch(4, 0, 1600, 2400));
  add({Value(4, 1650, 1, 0.75), Judged(4, 1650, 0, 1, Verdict::kContinue)});
  return events;
}

TEST(TrialsViewTest, ListsEveryTrialThenTheOutputOfFailedAndDivergedOnes) {
  StatusOr<std::string> view = TrialsView(Spec(), Events());
  ASSERT_TRUE(view.ok()) << view.status().message();
  EXPECT_EQ(*view,
            "TRIAL         PHASE                  RESOURCE   VALUE   PARAMS\n"
            "mnist-t0000   Completed              9          0.86    lr=0.01 optimizer=adamw\n"
            "mnist-t0001   Stopped (RungCutoff)   1          0.4     lr=0.02 optimizer=sgd\n"
            "mnist-t0002   Failed (Error)         -          -       lr=0.03 optimizer=adamw\n"
            "mnist-t0003   Stopped (Diverged)     -          -       lr=0.04 optimizer=sgd\n"
            "mnist-t0004   Running                1          0.75    lr=0.05 optimizer=adamw\n"
            "\n"
            "mnist-t0002: Error in segment 1: exit code 1\n"
            "    resuming from checkpoint\n"
            "    RuntimeError: CUDA out of memory\n"
            "\n"
            "mnist-t0003: Diverged in segment 0: the trainer reported a non-finite loss (exit "
            "code 3)\n"
            "    step 120 loss nan\n");
}

TEST(TrialsViewTest, ShowsARetryingTrialAsRunning) {
  std::vector<Event> events = Launch(0, 0, 1000, 2000);
  events.push_back(Ended(0, 0, 1010, "Error", "exit code 1", "boom"));
  events.push_back(Launch(0, 1, 1011, 2000).back());
  StatusOr<std::string> view = TrialsView(Spec(), events);
  ASSERT_TRUE(view.ok()) << view.status().message();
  EXPECT_THAT(*view, HasSubstr("mnist-t0000   Running (retrying after Error)   -"));
  EXPECT_THAT(*view, ::testing::Not(HasSubstr("boom")));
}

TEST(TrialsViewTest, SaysSoWhenThereAreNoTrials) {
  EXPECT_EQ(TrialsView(Spec(), {}).value(), "no trials yet\n");
}

TEST(TrialsViewTest, RejectsRecordsThatDoNotReplay) {
  StatusOr<std::string> view = TrialsView(Spec(), {Value(7, 1000, 1, 0.5)});
  ASSERT_FALSE(view.ok());
  EXPECT_THAT(view.status().message(), HasSubstr("ns/mnist: its records do not replay"));
}

TEST(TopFrameTest, ShowsTheLiveViewFromTheStatusAndTheRecords) {
  ReportInput input{Spec(), Events(), StatusFromEvents(Spec(), Events(), kNow).value(), kNow};
  input.status["phase"] = "Running";
  StatusOr<std::string> frame = TopFrame(input);
  ASSERT_TRUE(frame.ok()) << frame.status().message();
  EXPECT_THAT(*frame,
              ::testing::StartsWith("budgetsweep ns/mnist  Running  (asha/stop, parallelism 1)\n"
                                    "budget ["));
  EXPECT_THAT(*frame,
              HasSubstr("\ntrials: 5 created, 1 running, 0 paused, 1 completed, 2 stopped, 1 "
                        "failed\n"));
  EXPECT_THAT(*frame, HasSubstr("\nrungs: epochs 1: 3 reached, 2 continued; epochs 3: 1 "
                                "reached, 1 continued\n"));
  EXPECT_THAT(*frame, HasSubstr("\nbest: mnist-t0000 validation_accuracy=0.86 at epochs 9  "
                                "(lr=0.01 optimizer=adamw)\n"));
  EXPECT_THAT(*frame, HasSubstr("TRIAL         SEGMENT   RESOURCE   VALUE   RUNNING   DEADLINE   "
                                "PARAMS\n"
                                "mnist-t0004   0         1          0.75    100s      in 11m     "
                                "lr=0.05 optimizer=adamw\n"));
  EXPECT_THAT(*frame, HasSubstr("\nrecent failures:\n"
                                "  mnist-t0002 segment 0 Error: exit code 1\n"
                                "      loading data\n"
                                "      RuntimeError: CUDA out of memory\n"
                                "  mnist-t0002 segment 1 Error: exit code 1\n"));
  EXPECT_THAT(*frame, HasSubstr("  mnist-t0003 segment 0 Diverged: the trainer reported a "
                                "non-finite loss (exit code 3)\n"
                                "      step 120 loss nan\n"));
}

TEST(TopFrameTest, SaysHowTheSweepEnded) {
  std::vector<Event> events = Launch(0, 0, 1000, 2000);
  events.push_back(Ended(0, 0, 1100, "Error", "exit code 1"));
  event::SweepFinished finished{.at = 1101};
  finished.phase = SweepPhase::kFailed;
  finished.reason = "TooManyFailedTrials";
  finished.message = "3 trials failed";
  events.push_back(finished);
  ReportInput input{Spec(), events, {{"phase", "Failed"}}, kNow};
  StatusOr<std::string> frame = TopFrame(input);
  ASSERT_TRUE(frame.ok()) << frame.status().message();
  EXPECT_THAT(*frame, HasSubstr("\nended: TooManyFailedTrials: 3 trials failed\n"));
  EXPECT_THAT(*frame, HasSubstr("\nbest: none yet\n"));
  EXPECT_TRUE(SweepEnded(input.status));
  EXPECT_FALSE(SweepEnded({{"phase", "Running"}}));
  EXPECT_FALSE(SweepEnded(json()));
}

class KubeconfigFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("kubectl-bsw-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "config").string();
    std::ofstream(path_) << R"(
apiVersion: v1
kind: Config
current-context: team
contexts:
- name: team
  context: {cluster: c, user: u, namespace: team-ns}
- name: bare
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: abc}
)";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  kube::KubeConfig Load(const ClusterFlags& flags) {
    StatusOr<kube::KubeConfig> config = LoadClusterConfig({path_, "--kubeconfig"}, flags);
    EXPECT_TRUE(config.ok()) << config.status().message();
    return config.ok() ? *config : kube::KubeConfig{};
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(KubeconfigFlagsTest, FindsTheFileAsKubectlDoes) {
  StatusOr<KubeconfigFile> file = FindKubeconfig("/flag", "/env1:/env2", "/home/u");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->path, "/flag");
  EXPECT_EQ(file->origin, "--kubeconfig");

  file = FindKubeconfig("", "/env1:/env2", "/home/u");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->path, "/env1");
  EXPECT_EQ(file->origin, "$KUBECONFIG");
  EXPECT_EQ(FindKubeconfig("", "::/env2", "/home/u")->path, "/env2");

  for (const char* unset : {static_cast<const char*>(nullptr), "", ":"}) {
    file = FindKubeconfig("", unset, "/home/u");
    ASSERT_TRUE(file.ok());
    EXPECT_EQ(file->path, "/home/u/.kube/config");
    EXPECT_EQ(file->origin, "~/.kube/config");
  }
  file = FindKubeconfig("", nullptr, nullptr);
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr("pass --kubeconfig or set KUBECONFIG"));
}

TEST_F(KubeconfigFlagsTest, TakesTheNamespaceFromTheFlagThenTheContextThenDefault) {
  EXPECT_EQ(EffectiveNamespace({"", "", "mine"}, Load({})), "mine");
  EXPECT_EQ(EffectiveNamespace({}, Load({})), "team-ns");
  ClusterFlags bare{"", "bare", ""};
  EXPECT_EQ(EffectiveNamespace(bare, Load(bare)), "default");
  ClusterFlags bare_with_namespace{"", "bare", "mine"};
  EXPECT_EQ(EffectiveNamespace(bare_with_namespace, Load(bare_with_namespace)), "mine");
}

TEST_F(KubeconfigFlagsTest, ErrorsNameTheFlagOrVariableAndTheFile) {
  StatusOr<kube::KubeConfig> config = LoadClusterConfig({path_, "$KUBECONFIG"}, {"", "nope", ""});
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "--context nope: kubeconfig " + path_ + ": context 'nope' not found");

  std::string missing = (dir_ / "missing").string();
  config = LoadClusterConfig({missing, "$KUBECONFIG"}, {});
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(), "$KUBECONFIG: cannot read " + missing);
}

// The fake API server with the sweep and its trial records as the operator writes them.
class SweepReadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = kube::Client::Create(server_.Config(), {}).value();
    json created = client_->Create(kube::kBudgetSweeps, "ns", SweepObject()).value();
    kube::SweepOwner owner;
    owner.name = "mnist";
    owner.uid = created["metadata"]["uid"];
    kube::TrialLog log(*client_, "ns", owner, 8);
    ASSERT_TRUE(log.Append(Events()).ok());
    json status = StatusFromEvents(Spec(), Events(), kNow).value();
    ASSERT_TRUE(
        client_->PatchStatus(kube::kBudgetSweeps, "ns", "mnist", {{"status", status}}).ok());
  }

  kube::testing::FakeApiServer server_;
  std::unique_ptr<kube::Client> client_;
};

TEST_F(SweepReadsTest, ReadsTheTrialRecordsForTheTrialsView) {
  StatusOr<ReportInput> input = ReadSweep(*client_, "ns", "mnist", kNow);
  ASSERT_TRUE(input.ok()) << input.status().message();
  EXPECT_EQ(input->events.size(), Events().size());
  StatusOr<std::string> view = TrialsView(input->spec, input->events);
  ASSERT_TRUE(view.ok()) << view.status().message();
  EXPECT_THAT(*view, HasSubstr("\nmnist-t0002: Error in segment 1: exit code 1\n"
                               "    resuming from checkpoint\n"
                               "    RuntimeError: CUDA out of memory\n"));
}

TEST_F(SweepReadsTest, ListsTheSweepsOfANamespace) {
  StatusOr<json> sweeps = ListSweeps(*client_, "ns");
  ASSERT_TRUE(sweeps.ok()) << sweeps.status().message();
  ASSERT_EQ(sweeps->size(), 1u);
  EXPECT_EQ((*sweeps)[0]["metadata"]["name"], "mnist");
  EXPECT_THAT(SweepListTable(*sweeps, false, kNow), HasSubstr("\nmnist   Running   "));
  EXPECT_EQ(ListSweeps(*client_, "other").value(), json::array());
}

TEST_F(SweepReadsTest, NamesAMissingSweepAndItsNamespace) {
  StatusOr<ReportInput> input = ReadSweep(*client_, "ns", "nope", kNow);
  ASSERT_FALSE(input.ok());
  EXPECT_EQ(input.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(input.status().message(), "budgetsweep \"nope\" not found in namespace ns");
}

TEST_F(SweepReadsTest, SaysWhenTheServerLacksTheCrds) {
  server_.SetHook([](const httplib::Request&, httplib::Response& response) {
    response.status = 404;
    response.set_content(kube::testing::ApiStatusBody(
                             404, "NotFound", "the server could not find the requested resource"),
                         "application/json");
    return true;
  });
  StatusOr<json> sweeps = ListSweeps(*client_, "ns");
  ASSERT_FALSE(sweeps.ok());
  EXPECT_THAT(sweeps.status().message(),
              HasSubstr("the server lacks the budgetsweep.dev CRDs (kubectl apply -f crds/)"));
  StatusOr<ReportInput> input = ReadSweep(*client_, "ns", "mnist", kNow);
  ASSERT_FALSE(input.ok());
  EXPECT_THAT(input.status().message(), HasSubstr("the server lacks the budgetsweep.dev CRDs"));
}

}  // namespace
}  // namespace bsw::kubectl
