// LocalBackend with real supervisor and curve-trainer processes, in real time.

#include "operator/adapters/local/local_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "operator/adapters/local/process.h"
#include "operator/adapters/local/segment_files.h"
#include "operator/adapters/prometheus/scrape_source.h"

namespace bsw::local {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr double kHeartbeatSeconds = 0.5;
// Slack for scheduling on a loaded machine when comparing recorded times with expectations.
constexpr double kSlackSeconds = 0.3;

nlohmann::json ReadJson(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
}

class LocalBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "local-backend-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    state_dir_ = pattern;
    backend_ = MakeBackend();
  }

  // Leaves no process behind, whatever the test did.
  void TearDown() override {
    if (backend_ == nullptr) backend_ = MakeBackend();
    StatusOr<std::vector<SegmentStatus>> segments = backend_->List();
    ASSERT_TRUE(segments.ok());
    for (const SegmentStatus& segment : *segments) {
      if (segment.state != SegmentState::kRunning) continue;
      EXPECT_TRUE(backend_->Stop(segment.trial, segment.segment).ok());
      WaitFinished(segment.trial, segment.segment);
    }
    fs::remove_all(state_dir_);
  }

  std::unique_ptr<LocalBackend> MakeBackend(int gpu_count = 0,
                                            std::vector<std::string> supervisor = {
                                                BSW_SUPERVISOR_PATH}) {
    LocalBackendOptions options;
    options.state_dir = state_dir_;
    options.supervisor_command = std::move(supervisor);
    options.gpu_count = gpu_count;
    options.heartbeat_interval_seconds = kHeartbeatSeconds;
    StatusOr<std::unique_ptr<LocalBackend>> backend = LocalBackend::Create(options);
    EXPECT_TRUE(backend.ok()) << backend.status().message();
    return backend.ok() ? std::move(backend).value() : nullptr;
  }

  // A segment of the fixture that runs `epochs` epochs of 0.05 s, then lingers 0.5 s.
  static SegmentSpec Spec(const std::string& trial, double epochs = 3,
                          std::vector<std::string> extra_args = {}) {
    SegmentSpec spec;
    spec.sweep = "sweep";
    spec.trial = trial;
    spec.command = {BSW_CURVE_TRAINER_PATH, "--seconds-per-epoch=0.05"};
    spec.extra_args = std::move(extra_args);
    spec.max_resource = epochs;
    spec.until_resource = epochs;
    spec.milestones = {1, 3, 9};
    spec.deadline_unix_seconds = NowUnixSeconds() + 60;
    spec.grace_seconds = 0.5;
    return spec;
  }

  static SegmentSpec LongSpec(const std::string& trial, std::vector<std::string> extra_args = {}) {
    return Spec(trial, 100000, std::move(extra_args));
  }

  SegmentStatus Get(const std::string& trial, int segment = 0) {
    StatusOr<std::vector<SegmentStatus>> segments = backend_->List();
    EXPECT_TRUE(segments.ok()) << segments.status().message();
    if (segments.ok()) {
      for (const SegmentStatus& s : *segments) {
        if (s.trial == trial && s.segment == segment) return s;
      }
    }
    ADD_FAILURE() << "no segment " << segment << " of " << trial;
    return {};
  }

  SegmentStatus WaitFinished(const std::string& trial, int segment = 0, double timeout = 5) {
    auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
    SegmentStatus status = Get(trial, segment);
    while (status.state == SegmentState::kRunning && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      status = Get(trial, segment);
    }
    EXPECT_NE(status.state, SegmentState::kRunning) << trial << " did not finish in time";
    return status;
  }

  // Waits until the segment's trainer answers on its metrics endpoint.
  void WaitServing(const std::string& trial) {
    prom::ScrapeMetricSource source(0.5);
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (!source.Read("sweep", Get(trial), "validation_accuracy").ok()) {
      ASSERT_LT(std::chrono::steady_clock::now(), give_up) << trial << " never served metrics";
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  fs::path SegmentDir(const std::string& trial, int segment = 0) const {
    return state_dir_ / "trials" / trial / ("seg-" + std::to_string(segment));
  }

  fs::path state_dir_;
  std::unique_ptr<LocalBackend> backend_;
};

TEST_F(LocalBackendTest, RunsSegmentToSuccessWithRealTimes) {
  double before = NowUnixSeconds();
  ASSERT_TRUE(backend_->Start(Spec("t1")).ok());

  SegmentStatus running = Get("t1");
  EXPECT_EQ(running.state, SegmentState::kRunning);
  ASSERT_TRUE(running.started_unix_seconds.has_value());
  EXPECT_GE(*running.started_unix_seconds, before);
  EXPECT_LE(*running.started_unix_seconds, NowUnixSeconds());
  EXPECT_THAT(running.metrics_url, ::testing::StartsWith("http://127.0.0.1:"));

  SegmentStatus done = WaitFinished("t1");
  double after = NowUnixSeconds();
  EXPECT_EQ(done.state, SegmentState::kSucceeded);
  EXPECT_EQ(done.exit_code, 0);
  EXPECT_EQ(done.reason, Reason::kNone);
  ASSERT_TRUE(done.finished_unix_seconds.has_value());
  // 3 epochs of 0.05 s plus 0.5 s of lingering metrics.
  EXPECT_GE(*done.finished_unix_seconds - *done.started_unix_seconds, 0.65);
  EXPECT_LE(*done.finished_unix_seconds, after);
}

TEST_F(LocalBackendTest, DeliversTheEnvContractAndParameters) {
  setenv("BSW_TEST_RUNNER_VAR", "from-runner", 1);
  setenv("LC_BSW_TEST", "inherited", 1);
  fs::path dump = state_dir_ / "env.json";
  SegmentSpec spec = Spec("t-env", 9, {"--dump-env-to=" + dump.string()});
  spec.until_resource = 1;
  spec.params = {{"lr", "0.003"}, {"batch-size", "128"}, {"optimizer", "adamw"}};
  spec.param_args = {"--lr=0.003", "--batch-size=128", "--optimizer=adamw"};
  spec.env = {{"EXTRA", "x"}};
  ASSERT_TRUE(backend_->Start(spec).ok());
  SegmentStatus done = WaitFinished("t-env");
  EXPECT_EQ(done.state, SegmentState::kSucceeded);

  nlohmann::json dumped = ReadJson(dump);
  ASSERT_TRUE(dumped.is_object());
  EXPECT_THAT(dumped["argv"].get<std::vector<std::string>>(),
              ElementsAre(BSW_CURVE_TRAINER_PATH, "--seconds-per-epoch=0.05",
                          "--dump-env-to=" + dump.string(), "--lr=0.003", "--batch-size=128",
                          "--optimizer=adamw"));
  const nlohmann::json& env = dumped["env"];
  EXPECT_FALSE(env.contains("BSW_TEST_RUNNER_VAR"));  // not on the inherited list
  EXPECT_EQ(env["LC_BSW_TEST"], "inherited");
  EXPECT_EQ(env["PATH"], std::getenv("PATH"));
  EXPECT_EQ(env["EXTRA"], "x");
  EXPECT_EQ(env["BUDGETSWEEP_SWEEP"], "sweep");
  EXPECT_EQ(env["BUDGETSWEEP_TRIAL"], "t-env");
  EXPECT_EQ(nlohmann::json::parse(env["BUDGETSWEEP_PARAMS"].get<std::string>()),
            (nlohmann::json{{"lr", 0.003}, {"batch-size", 128}, {"optimizer", "adamw"}}));
  EXPECT_EQ(env["BUDGETSWEEP_MILESTONES"], "1,3,9");
  EXPECT_EQ(env["BUDGETSWEEP_UNTIL"], "1");
  EXPECT_EQ(env["BUDGETSWEEP_MAX_RESOURCE"], "9");
  EXPECT_EQ(env["BUDGETSWEEP_CHECKPOINT_DIR"], (state_dir_ / "trials/t-env/checkpoint").string());
  EXPECT_EQ(env["BUDGETSWEEP_METRICS_HOST"], "127.0.0.1");
  EXPECT_EQ(done.metrics_url,
            "http://127.0.0.1:" + env["BUDGETSWEEP_METRICS_PORT"].get<std::string>() + "/metrics");
  EXPECT_FALSE(env.contains("CUDA_VISIBLE_DEVICES"));
  // The fixture honoured UNTIL and checkpointed into the trial's checkpoint directory.
  std::ifstream checkpoint(state_dir_ / "trials/t-env/checkpoint/curve-trainer.epoch");
  int epochs = 0;
  checkpoint >> epochs;
  EXPECT_EQ(epochs, 1);
}

TEST_F(LocalBackendTest, ATrialGetsOnlyTheInheritedAndPassedVariablesAndItsRecordHoldsThem) {
  setenv("BSW_TEST_API_TOKEN", "secret", 1);
  setenv("BSW_TEST_PASSED", "passed", 1);
  LocalBackendOptions options;
  options.state_dir = state_dir_;
  options.supervisor_command = {BSW_SUPERVISOR_PATH};
  options.pass_env = {"BSW_TEST_PASSED"};
  options.trial_umask = 027;
  StatusOr<std::unique_ptr<LocalBackend>> backend = LocalBackend::Create(options);
  ASSERT_TRUE(backend.ok());
  fs::path dump = state_dir_ / "env.json";
  SegmentSpec spec = Spec("t-pass", 1, {"--dump-env-to=" + dump.string()});
  ASSERT_TRUE((*backend)->Start(spec).ok());
  EXPECT_EQ(WaitFinished("t-pass").state, SegmentState::kSucceeded);

  const nlohmann::json env = ReadJson(dump)["env"];
  EXPECT_FALSE(env.contains("BSW_TEST_API_TOKEN"));
  EXPECT_EQ(env["BSW_TEST_PASSED"], "passed");
  // The launch record holds exactly what the trial got: a re-issued launch gets the same.
  nlohmann::json launch = ReadJson(SegmentDir("t-pass") / "launch.json");
  std::map<std::string, std::string> recorded;
  for (const std::string& var : launch["env"].get<std::vector<std::string>>()) {
    recorded[var.substr(0, var.find('='))] = var.substr(var.find('=') + 1);
  }
  EXPECT_EQ(nlohmann::json(recorded), env);
  EXPECT_EQ(launch["umask"], 027);
  // The trainer's checkpoint was made under the trial's own mask.
  fs::path checkpoint = state_dir_ / "trials/t-pass/checkpoint/curve-trainer.epoch";
  EXPECT_EQ(fs::status(checkpoint).permissions() & fs::perms::mask,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

TEST_F(LocalBackendTest, InheritsTheDocumentedVariablesOnly) {
  for (const char* name : {"PATH", "HOME", "LANG", "LC_ALL", "CUDA_HOME", "NVIDIA_VISIBLE_DEVICES",
                           "OMP_NUM_THREADS", "OPENBLAS_CORETYPE", "https_proxy", "NO_PROXY"}) {
    EXPECT_TRUE(InheritsVariable(name, {})) << name;
  }
  for (const char* name : {"AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "KUBECONFIG", "LC", "PATHX",
                           "SSH_AUTH_SOCK", "BUDGETSWEEP_TOKEN"}) {
    EXPECT_FALSE(InheritsVariable(name, {})) << name;
  }
  EXPECT_TRUE(InheritsVariable("KUBECONFIG", {"KUBECONFIG"}));
}

TEST_F(LocalBackendTest, DeliversThePopulationContract) {
  fs::path dump = state_dir_ / "env.json";
  SegmentSpec spec = Spec("t-pbt", 9, {"--dump-env-to=" + dump.string()});
  spec.until_resource = 1;
  spec.snapshots = true;
  spec.mutable_flags = {"lr", "weight-decay"};
  spec.exploit_trial = "t-donor";
  spec.exploit_at = 3;
  ASSERT_TRUE(backend_->Start(spec).ok());
  WaitFinished("t-pbt");
  const nlohmann::json env = ReadJson(dump)["env"];
  EXPECT_EQ(env["BUDGETSWEEP_SNAPSHOTS"], "1");
  EXPECT_EQ(env["BUDGETSWEEP_MUTABLE"], "lr,weight-decay");
  EXPECT_EQ(env["BUDGETSWEEP_EXPLOIT_DIR"], (state_dir_ / "trials/t-donor/checkpoint").string());
  EXPECT_EQ(env["BUDGETSWEEP_EXPLOIT_AT"], "3");
}

TEST_F(LocalBackendTest, RunningSegmentIsScrapedThroughItsMetricsUrl) {
  ASSERT_TRUE(backend_->Start(LongSpec("t-scrape")).ok());
  prom::ScrapeMetricSource source(0.5);
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  TrialMetrics metrics;
  while (std::chrono::steady_clock::now() < give_up) {
    StatusOr<TrialMetrics> read = source.Read("sweep", Get("t-scrape"), "validation_accuracy");
    if (read.ok() && read->objective_by_resource.contains(2)) {
      metrics = *read;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(metrics.objective_by_resource.contains(1));
  EXPECT_TRUE(metrics.objective_by_resource.contains(2));
}

TEST_F(LocalBackendTest, DeadlineSendsSigtermAtDeadlineMinusGrace) {
  SegmentSpec spec = LongSpec("t-deadline");
  spec.deadline_unix_seconds = NowUnixSeconds() + 1.0;
  spec.grace_seconds = 0.5;
  ASSERT_TRUE(backend_->Start(spec).ok());
  SegmentStatus done = WaitFinished("t-deadline");
  EXPECT_EQ(done.state, SegmentState::kFailed);
  EXPECT_EQ(done.reason, Reason::kDeadlineExceeded);
  EXPECT_EQ(done.exit_code, 0);  // the fixture checkpointed and exited on SIGTERM
  ASSERT_TRUE(done.finished_unix_seconds.has_value());
  EXPECT_GE(*done.finished_unix_seconds, spec.deadline_unix_seconds - spec.grace_seconds);
  EXPECT_LE(*done.finished_unix_seconds,
            spec.deadline_unix_seconds - spec.grace_seconds + kSlackSeconds);
}

TEST_F(LocalBackendTest, DeadlineSigkillsTrainerThatIgnoresSigterm) {
  SegmentSpec spec = LongSpec("t-stubborn", {"--ignore-sigterm"});
  spec.deadline_unix_seconds = NowUnixSeconds() + 1.0;
  spec.grace_seconds = 0.4;
  ASSERT_TRUE(backend_->Start(spec).ok());
  SegmentStatus done = WaitFinished("t-stubborn");
  EXPECT_EQ(done.state, SegmentState::kFailed);
  EXPECT_EQ(done.reason, Reason::kDeadlineExceeded);
  EXPECT_EQ(done.exit_code, 128 + SIGKILL);
  ASSERT_TRUE(done.finished_unix_seconds.has_value());
  EXPECT_GE(*done.finished_unix_seconds, spec.deadline_unix_seconds);
  EXPECT_LE(*done.finished_unix_seconds, spec.deadline_unix_seconds + kSlackSeconds);
}

TEST_F(LocalBackendTest, SetDeadlineMovesTheHardStopOfARunningSegment) {
  ASSERT_TRUE(backend_->Start(LongSpec("t-moved")).ok());
  double deadline = NowUnixSeconds() + 0.8;
  ASSERT_TRUE(backend_->SetDeadline("t-moved", 0, deadline).ok());
  EXPECT_EQ(Get("t-moved").deadline_unix_seconds, deadline);
  SegmentStatus done = WaitFinished("t-moved");
  EXPECT_EQ(done.reason, Reason::kDeadlineExceeded);
  EXPECT_LE(*done.finished_unix_seconds, deadline + kSlackSeconds);
}

TEST_F(LocalBackendTest, SetDeadlineCanGiveARunningSegmentMoreTime) {
  SegmentSpec spec = LongSpec("t-extended");
  spec.deadline_unix_seconds = NowUnixSeconds() + 1.0;
  ASSERT_TRUE(backend_->Start(spec).ok());
  double deadline = NowUnixSeconds() + 2.0;
  ASSERT_TRUE(backend_->SetDeadline("t-extended", 0, deadline).ok());
  SegmentStatus done = WaitFinished("t-extended");
  EXPECT_EQ(done.reason, Reason::kDeadlineExceeded);
  EXPECT_GE(*done.finished_unix_seconds, deadline - spec.grace_seconds - 0.01);
  EXPECT_LE(*done.finished_unix_seconds, deadline + kSlackSeconds);
}

// Issue 39: a trainer rewrote its deadline file to a far-off time and ran on past its budget.
TEST_F(LocalBackendTest, ATrainerCannotPutItsDeadlineOffThroughItsFiles) {
  SegmentSpec spec = LongSpec("t-rewrite");
  spec.command.insert(spec.command.begin(), {BSW_HOSTILE_TRAINER_PATH, "rewrite-deadline", "--"});
  spec.deadline_unix_seconds = NowUnixSeconds() + 1.5;
  ASSERT_TRUE(backend_->Start(spec).ok());
  backend_.reset();  // the runner is gone: only the supervisor holds the deadline
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  backend_ = MakeBackend();
  SegmentStatus done = WaitFinished("t-rewrite", 0, 5);
  EXPECT_EQ(done.reason, Reason::kDeadlineExceeded);
  ASSERT_TRUE(done.finished_unix_seconds.has_value());
  EXPECT_LE(*done.finished_unix_seconds, spec.deadline_unix_seconds + kSlackSeconds);
}

TEST_F(LocalBackendTest, AStatusRecordTheTrialRewritesDoesNotEndItsSegment) {
  ASSERT_TRUE(backend_->Start(LongSpec("t-forged")).ok());
  const fs::path record = SegmentDir("t-forged") / "status.json";
  nlohmann::json forged = ReadJson(record);
  forged["state"] = "succeeded";
  forged["exit_code"] = 0;
  forged["finished_unix_seconds"] = forged["started_unix_seconds"].get<double>() + 0.01;
  std::ofstream(record) << forged.dump();
  SegmentStatus seen = Get("t-forged");
  EXPECT_EQ(seen.state, SegmentState::kRunning) << "its supervisor still runs it";
  EXPECT_FALSE(seen.finished_unix_seconds.has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(backend_->Stop("t-forged", 0).ok());
  SegmentStatus done = WaitFinished("t-forged");
  EXPECT_EQ(done.reason, Reason::kStopped);
  EXPECT_GE(*done.finished_unix_seconds - *done.started_unix_seconds, 0.3)  // charged as it ran
      << "the forged end was taken";
}

// The pids the hostile trainer's escape mode wrote for trial `trial`.
std::vector<pid_t> Escapees(const fs::path& state_dir, const std::string& trial) {
  std::ifstream in(state_dir / "trials" / trial / "checkpoint/escapee.pid");
  std::vector<pid_t> pids;
  for (pid_t pid; in >> pid;) pids.push_back(pid);
  return pids;
}

TEST_F(LocalBackendTest, ProcessesATrainerLeavesBehindAreKilledAndCharged) {
  SegmentSpec spec = Spec("t-escape");
  spec.command.insert(spec.command.begin(), {BSW_HOSTILE_TRAINER_PATH, "escape", "--"});
  double before = NowUnixSeconds();
  ASSERT_TRUE(backend_->Start(spec).ok());
  SegmentStatus done = WaitFinished("t-escape");
  EXPECT_EQ(done.state, SegmentState::kSucceeded);
  std::vector<pid_t> escapees = Escapees(state_dir_, "t-escape");
  ASSERT_EQ(escapees.size(), 1u);
  EXPECT_FALSE(RunningProcessStartTicks(escapees[0]).has_value()) << "the escapee outlived it";
  // Charged until the escapee, which ignores SIGTERM, was killed a grace period after the
  // trainer's exit: 3 epochs of 0.05 s and the fixture's 0.5 s linger before that.
  EXPECT_GE(*done.finished_unix_seconds - before, 0.15 + 0.5 + spec.grace_seconds);
}

TEST_F(LocalBackendTest, KilledSupervisorTakesTheTrialsEscapedProcessesAlong) {
  SegmentSpec spec = LongSpec("t-escape-lost");
  spec.command.insert(spec.command.begin(), {BSW_HOSTILE_TRAINER_PATH, "escape", "--"});
  ASSERT_TRUE(backend_->Start(spec).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::vector<pid_t> escapees = Escapees(state_dir_, "t-escape-lost");
  ASSERT_EQ(escapees.size(), 1u);
  nlohmann::json status = ReadJson(SegmentDir("t-escape-lost") / "status.json");
  ASSERT_EQ(kill(status["supervisor_pid"].get<pid_t>(), SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(RunningProcessStartTicks(escapees[0]).has_value());  // orphaned, not yet found

  double settled_at = NowUnixSeconds();
  SegmentStatus lost = Get("t-escape-lost");
  EXPECT_EQ(lost.reason, Reason::kLost);
  ASSERT_TRUE(lost.finished_unix_seconds.has_value());
  EXPECT_GE(*lost.finished_unix_seconds, settled_at);  // charged until it was found and killed
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (RunningProcessStartTicks(escapees[0]) && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(RunningProcessStartTicks(escapees[0]).has_value()) << "the escapee outlived it";
}

TEST_F(LocalBackendTest, StopEndsSegmentAsStoppedEvenWhenTrainerExitsZero) {
  ASSERT_TRUE(backend_->Start(LongSpec("t-stop")).ok());
  WaitServing("t-stop");  // a trainer signalled before it handles SIGTERM dies of it
  double stopped_at = NowUnixSeconds();
  ASSERT_TRUE(backend_->Stop("t-stop", 0).ok());
  SegmentStatus done = WaitFinished("t-stop");
  EXPECT_EQ(done.state, SegmentState::kFailed);
  EXPECT_EQ(done.reason, Reason::kStopped);
  EXPECT_EQ(done.exit_code, 0);
  EXPECT_EQ(done.output_tail, "") << "only a failure carries the trainer's output";
  EXPECT_LE(*done.finished_unix_seconds, stopped_at + kSlackSeconds);
  EXPECT_TRUE(backend_->Stop("t-stop", 0).ok());  // stopping a finished segment is a no-op
}

TEST_F(LocalBackendTest, FailingTrainerIsFailedWithError) {
  ASSERT_TRUE(backend_->Start(Spec("t-fail", 3, {"--fail-at-epoch=2"})).ok());
  SegmentStatus done = WaitFinished("t-fail");
  EXPECT_EQ(done.state, SegmentState::kFailed);
  EXPECT_EQ(done.reason, Reason::kError);
  EXPECT_EQ(done.exit_code, 1);
  EXPECT_THAT(done.output_tail, ::testing::EndsWith("curve-trainer: injected failure at epoch 2"))
      << "the end of trainer.log";
}

TEST_F(LocalBackendTest, MissingTrainerProgramIsFailedWithErrorAndLogged) {
  SegmentSpec spec = Spec("t-missing");
  spec.command = {"/nonexistent/trainer"};
  ASSERT_TRUE(backend_->Start(spec).ok());
  SegmentStatus done = WaitFinished("t-missing");
  EXPECT_EQ(done.state, SegmentState::kFailed);
  EXPECT_EQ(done.reason, Reason::kError);
  EXPECT_EQ(done.exit_code, 127);
  std::ifstream log(SegmentDir("t-missing") / "trainer.log");
  std::string line;
  std::getline(log, line);
  EXPECT_THAT(line, HasSubstr("cannot run /nonexistent/trainer"));
  EXPECT_THAT(done.output_tail, HasSubstr("cannot run /nonexistent/trainer"));
}

TEST_F(LocalBackendTest, StartIsIdempotent) {
  ASSERT_TRUE(backend_->Start(LongSpec("t-once")).ok());
  nlohmann::json first = ReadJson(SegmentDir("t-once") / "status.json");
  ASSERT_TRUE(backend_->Start(LongSpec("t-once")).ok());
  nlohmann::json second = ReadJson(SegmentDir("t-once") / "status.json");
  EXPECT_EQ(second["supervisor_pid"], first["supervisor_pid"]);
  EXPECT_EQ(second["started_unix_seconds"], first["started_unix_seconds"]);
  StatusOr<std::vector<SegmentStatus>> segments = backend_->List();
  ASSERT_TRUE(segments.ok());
  EXPECT_EQ(segments->size(), 1u);
}

TEST_F(LocalBackendTest, SupervisorRunsInItsOwnSessionSoCtrlCDoesNotReachIt) {
  ASSERT_TRUE(backend_->Start(LongSpec("t-session")).ok());
  pid_t supervisor = ReadJson(SegmentDir("t-session") / "status.json")["supervisor_pid"];
  EXPECT_EQ(getsid(supervisor), supervisor);
  EXPECT_NE(getsid(supervisor), getsid(0));
}

TEST_F(LocalBackendTest, NewInstanceListsStopsAndRedeadlinesSegmentsOfThePreviousOne) {
  ASSERT_TRUE(backend_->Start(LongSpec("t-a")).ok());
  ASSERT_TRUE(backend_->Start(LongSpec("t-b")).ok());
  backend_.reset();  // the runner goes away; its segments keep running

  backend_ = MakeBackend();
  EXPECT_EQ(Get("t-a").state, SegmentState::kRunning);
  EXPECT_EQ(Get("t-b").state, SegmentState::kRunning);
  ASSERT_TRUE(backend_->Stop("t-a", 0).ok());
  EXPECT_EQ(WaitFinished("t-a").reason, Reason::kStopped);
  double deadline = NowUnixSeconds() + 0.7;
  ASSERT_TRUE(backend_->SetDeadline("t-b", 0, deadline).ok());
  EXPECT_EQ(WaitFinished("t-b").reason, Reason::kDeadlineExceeded);
}

TEST_F(LocalBackendTest, ALaunchNoSupervisorClaimedIsRunByTheNextInstance) {
  // A runner that wrote the launch record and died before its supervisor claimed the segment:
  // here a "supervisor" that exits at once.
  std::unique_ptr<LocalBackend> dead = MakeBackend(0, {"/bin/true"});
  EXPECT_EQ(dead->Start(Spec("t-unclaimed")).code(), StatusCode::kInternal);
  ASSERT_TRUE(fs::exists(SegmentDir("t-unclaimed") / "launch.json"));
  ASSERT_FALSE(fs::exists(SegmentDir("t-unclaimed") / "status.json"));

  backend_ = MakeBackend();
  SegmentStatus ended = WaitFinished("t-unclaimed");
  EXPECT_EQ(ended.state, SegmentState::kSucceeded);
  EXPECT_EQ(ReadJson(SegmentDir("t-unclaimed") / "status.json")["state"], "succeeded");
}

TEST_F(LocalBackendTest, KilledSupervisorTakesItsTrainerAlongAndIsChargedConservatively) {
  ASSERT_TRUE(backend_->Start(LongSpec("t-lost")).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  nlohmann::json status = ReadJson(SegmentDir("t-lost") / "status.json");
  pid_t supervisor = status["supervisor_pid"].get<pid_t>();
  pid_t trainer = status["trainer_pid"].get<pid_t>();
  ASSERT_GT(trainer, 0);
  ASSERT_EQ(kill(supervisor, SIGKILL), 0);
  double killed_at = NowUnixSeconds();

  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (RunningProcessStartTicks(trainer) && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(RunningProcessStartTicks(trainer).has_value()) << "the trainer outlived it";

  SegmentStatus lost = Get("t-lost");
  EXPECT_EQ(lost.state, SegmentState::kFailed);
  EXPECT_EQ(lost.reason, Reason::kLost);
  ASSERT_TRUE(lost.finished_unix_seconds.has_value());
  EXPECT_GE(*lost.finished_unix_seconds, killed_at);  // never under-charged
  EXPECT_LE(*lost.finished_unix_seconds, killed_at + kHeartbeatSeconds + kSlackSeconds);
  EXPECT_EQ(Get("t-lost").finished_unix_seconds, lost.finished_unix_seconds);  // final
}

TEST_F(LocalBackendTest, AssignsFreeGpusThroughCudaVisibleDevices) {
  backend_ = MakeBackend(/*gpu_count=*/3);
  auto visible_devices = [&](const std::string& trial, int devices) -> std::string {
    fs::path dump = state_dir_ / (trial + ".json");
    SegmentSpec spec = LongSpec(trial, {"--dump-env-to=" + dump.string()});
    spec.devices = devices;
    Status started = backend_->Start(spec);
    if (!started.ok()) return started.message();
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (!fs::exists(dump) && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return ReadJson(dump)["env"].value("CUDA_VISIBLE_DEVICES", "<unset>");
  };
  EXPECT_EQ(visible_devices("t-g1", 2), "0,1");
  EXPECT_EQ(visible_devices("t-g2", 1), "2");
  EXPECT_THAT(visible_devices("t-g3", 1), HasSubstr("needs 1 GPUs; 0 of 3 are free"));
  ASSERT_TRUE(backend_->Stop("t-g1", 0).ok());
  WaitFinished("t-g1");
  EXPECT_EQ(visible_devices("t-g3", 1), "0");
}

TEST_F(LocalBackendTest, RejectsUnusableSpecsAndUnknownSegments) {
  SegmentSpec no_deadline = Spec("t");
  no_deadline.deadline_unix_seconds = 0;
  EXPECT_EQ(backend_->Start(no_deadline).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(backend_->Start(Spec("../escape")).code(), StatusCode::kInvalidArgument);
  SegmentSpec no_command = Spec("t");
  no_command.command.clear();
  EXPECT_EQ(backend_->Start(no_command).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(backend_->Stop("unknown", 0).code(), StatusCode::kNotFound);
  EXPECT_EQ(backend_->SetDeadline("unknown", 0, NowUnixSeconds()).code(), StatusCode::kNotFound);
}

TEST_F(LocalBackendTest, UnrunnableSupervisorFailsStart) {
  Status started = MakeBackend(0, {"/nonexistent/budgetsweep-supervise"})->Start(Spec("t"));
  EXPECT_EQ(started.code(), StatusCode::kInternal);
  EXPECT_THAT(started.message(),
              HasSubstr("cannot run supervisor /nonexistent/budgetsweep-supervise"));
}

// Issue 39: a release that took gpuHours 1e305 wrote "deadline_unix_seconds": null, and the
// state directory could not be resumed even after the sweep file was fixed.
TEST(StatusRecordTest, ANullDeadlineOfAnEarlierReleaseReadsAsLongPast) {
  StatusRecord status;
  status.trial = "t";
  status.state = SegmentState::kSucceeded;
  status.finished_unix_seconds = 20;
  nlohmann::json record = nlohmann::json::parse(ToJson(status));
  record["deadline_unix_seconds"] = nullptr;
  StatusOr<StatusRecord> parsed = ParseStatusRecord(record.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->deadline_unix_seconds, 0);
  EXPECT_EQ(parsed->finished_unix_seconds, 20);
}

TEST(DetectGpuCount, CountsNvidiaDeviceNodesOnly) {
  std::string pattern = ::testing::TempDir() + "dev-XXXXXX";
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  fs::path dev = pattern;
  for (const char* name : {"nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-modeset"}) {
    std::ofstream(dev / name) << "";
  }
  EXPECT_EQ(DetectGpuCount(dev), 2);
  EXPECT_EQ(DetectGpuCount(dev / "missing"), 0);
  fs::remove_all(dev);
}

TEST(ResolveProgramTest, FindsWhatExecvpWouldRun) {
  std::string dir_template = ::testing::TempDir() + "resolve-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template.data()), nullptr);
  fs::path dir = dir_template;
  fs::path tool = dir / "tool";
  std::ofstream(tool) << "#!/bin/sh\n";
  fs::create_directory(dir / "plain");
  std::ofstream(dir / "plain" / "tool") << "not executable\n";
  fs::permissions(tool, fs::perms::owner_all);

  // PATH order, skipping a missing directory and a file that is not executable.
  std::string path = "/no/such/dir:" + (dir / "plain").string() + ":" + dir.string();
  StatusOr<fs::path> found = ResolveProgram("tool", path);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, tool);
  StatusOr<fs::path> sh = ResolveProgram("sh", "/no/such/dir:/bin");
  ASSERT_TRUE(sh.ok()) << sh.status().message();
  EXPECT_EQ(*sh, "/bin/sh");

  StatusOr<fs::path> missing = ResolveProgram("tool", (dir / "plain").string());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "tool not found on PATH");
  EXPECT_EQ(ResolveProgram("tool", "").status().code(), StatusCode::kNotFound)
      << "an empty PATH is the working directory, which holds no tool";

  // A name with a slash is a path, whatever PATH says.
  StatusOr<fs::path> by_path = ResolveProgram(tool.string(), "");
  ASSERT_TRUE(by_path.ok()) << by_path.status().message();
  EXPECT_EQ(*by_path, tool);
  EXPECT_EQ(ResolveProgram((dir / "plain" / "tool").string(), dir.string()).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(ResolveProgram((dir / "plain").string(), "").status().code(),
            StatusCode::kFailedPrecondition)
      << "a directory";
  EXPECT_EQ(ResolveProgram((dir / "none").string(), "").status().message(),
            (dir / "none").string() + ": no such file");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace bsw::local
