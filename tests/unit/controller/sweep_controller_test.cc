#include "operator/controller/sweep_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "operator/core/api.h"
#include "tests/fakes/memory_event_log.h"
#include "tests/mocks/fake_clock.h"
#include "tests/mocks/mock_metric_source.h"
#include "tests/mocks/mock_trial_backend.h"
#include "tests/unit/controller/running_segment.h"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw {
namespace {

using ::testing::_;
using ::testing::Invoke;
using ::testing::NiceMock;
using ::testing::Return;

// Drives a SweepController over mocked ports: the backend reports what the test says is
// running, and the metric source answers per trial.
class SweepControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<SweepSpec> spec = ParseSweep(testing::ValidSweepJson());
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    spec_ = *spec;
    ON_CALL(backend_, List()).WillByDefault(Invoke([this] {
      return StatusOr<std::vector<SegmentStatus>>(segments_);
    }));
    ON_CALL(backend_, Start(_)).WillByDefault(Invoke([this](const SegmentSpec& s) {
      RunSegment(s);
      return OkStatus();
    }));
    ON_CALL(backend_, Stop(_, _)).WillByDefault(Return(OkStatus()));
    ON_CALL(backend_, SetDeadline(_, _, _)).WillByDefault(Return(OkStatus()));
    ON_CALL(metrics_, Read(_, _, _))
        .WillByDefault(
            Invoke([this](const std::string&, const SegmentStatus& s, const std::string&) {
              TrialMetrics m;
              if (auto probe = probe_figures_.find(s.trial); probe != probe_figures_.end()) {
                m.samples_per_second = probe->second.samples_per_second;
                m.data_wait_ratio = probe->second.data_wait_ratio;
                m.probe_measured_steps = spec_.throughput.probe_steps;
                return StatusOr<TrialMetrics>(m);
              }
              auto it = values_.find(s.trial);
              if (it == values_.end()) return StatusOr<TrialMetrics>(UnavailableError("no answer"));
              m.objective_by_resource = {{1.0, it->second}};
              m.resource_completed = 1;
              return StatusOr<TrialMetrics>(m);
            }));
  }

  // What the backend reports from now on: the segment running since now.
  void RunSegment(const SegmentSpec& s) {
    SegmentStatus st = testing::RunningSegment(s, clock_.NowUnixSeconds());
    st.metrics_url = "http://127.0.0.1:1/metrics";
    segments_.push_back(st);
  }

  // The sweep gets a probe phase: the naive baseline, then workers 2.
  void UseProbePhase() {
    nlohmann::json j = testing::ValidSweepJson();
    j["spec"]["throughput"] = {{"enabled", true}, {"candidates", {{"workers", {2}}}}};
    spec_ = ParseSweep(j).value();
  }

  // The journal's lines, as a Journal on disk would hold them.
  std::string JournalText() const {
    std::string text;
    for (const nlohmann::json& record : log_.records()) text += record.dump() + "\n";
    return text;
  }

  MemoryEventLog log_;
  SweepSpec spec_;
  FakeClock clock_{1'000'000};
  std::vector<SegmentStatus> segments_;
  std::map<std::string, double> values_;
  std::map<std::string, ProbeFigures> probe_figures_;  // what a probe run reports, by name
  NiceMock<MockTrialBackend> backend_;
  NiceMock<MockMetricSource> metrics_;
};

TEST_F(SweepControllerTest, FirstPass_JournalsEachLaunchBeforeStartingIt) {
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  int started = 0;
  EXPECT_CALL(backend_, Start(_))
      .Times(spec_.parallelism)
      .WillRepeatedly(Invoke([&](const SegmentSpec& s) {
        ++started;
        EXPECT_NE(JournalText().find("\"event\":\"SegmentLaunched\""), std::string::npos)
            << "Start of " << s.trial << " before its launch was journaled";
        EXPECT_EQ(s.command.front(), "budgetsweep-trainer");
        EXPECT_EQ(s.params.size(), spec_.search_space.size());
        return OkStatus();
      }));
  StatusOr<Step> plan = controller.Pass();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(started, spec_.parallelism);
  EXPECT_EQ(controller.model().trial_count(), spec_.parallelism);
}

TEST_F(SweepControllerTest, APrintingTrainerRunsUnderTheCollectorWithItsParametersPlaced) {
  nlohmann::json j = testing::ValidSweepJson();
  nlohmann::json& container = j["spec"]["trial"]["template"]["spec"]["containers"][0];
  container["command"] = {"python3", "train.py"};
  container["args"] = {"--learning-rate=${trialParameters.lr}"};
  container["env"] = {{{"name", "BATCH"}, {"value", "${trialParameters.batch-size}"}}};
  j["spec"]["metrics"]["collector"] = {{"kind", "StdOut"}, {"resourceKey", "epoch"}};
  spec_ = ParseSweep(j).value();
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  std::vector<SegmentSpec> started;
  EXPECT_CALL(backend_, Start(_)).WillRepeatedly(Invoke([&](const SegmentSpec& s) {
    started.push_back(s);
    return OkStatus();
  }));
  ASSERT_TRUE(controller.Pass().ok());
  ASSERT_FALSE(started.empty());
  const SegmentSpec& s = started.front();
  std::string lr, batch;
  for (const auto& [name, value] : s.params) {
    if (name == "lr") lr = value;
    if (name == "batch-size") batch = value;
  }
  ASSERT_FALSE(lr.empty());
  EXPECT_EQ(s.command, (std::vector<std::string>{"python3", "train.py", "--learning-rate=" + lr}));
  EXPECT_EQ(s.env, (std::vector<std::pair<std::string, std::string>>{{"BATCH", batch}}));
  // Only the parameters the template does not place are appended.
  for (const std::string& arg : s.param_args) {
    EXPECT_FALSE(arg.starts_with("--lr=") || arg.starts_with("--batch-size=")) << arg;
  }
  EXPECT_EQ(s.param_args.size(), s.params.size() - 2);
  EXPECT_EQ(s.collector_args,
            (std::vector<std::string>{"--source=stdout", "--objective=" + spec_.objective_metric,
                                      "--resource-key=epoch"}));
}

TEST_F(SweepControllerTest, RungCutoff_StopIsAskedOncePerControllerRun) {
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  ASSERT_TRUE(controller.Pass().ok());
  // The first value continues; the next three are worse and each falls outside the top 1/3.
  values_ = {{"fmnist-cnn-t0000", 0.9},
             {"fmnist-cnn-t0001", 0.5},
             {"fmnist-cnn-t0002", 0.4},
             {"fmnist-cnn-t0003", 0.3}};
  clock_.Advance(30);
  EXPECT_CALL(backend_, Stop("fmnist-cnn-t0000", _)).Times(0);
  EXPECT_CALL(backend_, Stop("fmnist-cnn-t0001", 0)).Times(1);
  EXPECT_CALL(backend_, Stop("fmnist-cnn-t0002", 0)).Times(1);
  EXPECT_CALL(backend_, Stop("fmnist-cnn-t0003", 0)).Times(1);
  ASSERT_TRUE(controller.Pass().ok());
  clock_.Advance(1);
  ASSERT_TRUE(controller.Pass().ok()) << "the segments still run: the stop is not asked again";
  EXPECT_EQ(controller.model().trial(1).reason, "RungCutoff");
}

TEST_F(SweepControllerTest, Recover_RebuildsTheSweepAndStartsNothingTwice) {
  {
    SweepController first(spec_, &backend_, &metrics_, &log_, &clock_);
    ASSERT_TRUE(first.Recover().ok());
    ASSERT_TRUE(first.Pass().ok());
  }
  SweepController second(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(second.Recover().ok());
  EXPECT_EQ(second.model().trial_count(), spec_.parallelism);
  EXPECT_CALL(backend_, Start(_)).Times(0);
  clock_.Advance(1);
  ASSERT_TRUE(second.Pass().ok());
  EXPECT_EQ(second.model().trial_count(), spec_.parallelism);
}

TEST_F(SweepControllerTest, HeldCharge_IsReleasedOnlyAfterTheEndIsRecordedAndOutlivesTheSegment) {
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  ASSERT_TRUE(controller.Pass().ok());
  // Trial 0's pod failed after 40 s; the backend holds it (and its charge) until released.
  SegmentStatus& first = segments_.front();
  first.state = SegmentState::kFailed;
  first.reason = Reason::kError;
  first.exit_code = 1;
  first.finished_unix_seconds = *first.started_unix_seconds + 40;
  first.charge_held = true;
  clock_.Advance(41);
  EXPECT_CALL(backend_, ReleaseCharge(first.trial, 0))
      .WillOnce(Invoke([&](const std::string&, int) {
        EXPECT_NE(JournalText().find("\"event\":\"SegmentEnded\""), std::string::npos)
            << "released before the segment's end was journaled";
        EXPECT_NE(JournalText().find("\"started\""), std::string::npos)
            << "released before the segment's charge was journaled";
        return OkStatus();
      }));
  ASSERT_TRUE(controller.Pass().ok());
  double used = controller.ledger().used();
  EXPECT_GE(used, 40 * ChargedDevices(spec_.trial_gpus));

  // Released, the pod is gone from the backend; the recorded charge stays, also after a restart.
  segments_.erase(segments_.begin());
  clock_.Advance(1);
  ASSERT_TRUE(controller.Pass().ok());
  EXPECT_GE(controller.ledger().used(), 40 * ChargedDevices(spec_.trial_gpus));
  SweepController restarted(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(restarted.Recover().ok());
  ASSERT_TRUE(restarted.Refresh().ok());
  EXPECT_GE(restarted.ledger().used(), 40 * ChargedDevices(spec_.trial_gpus));
}

TEST_F(SweepControllerTest, UnansweredMetrics_AreUnknownAndStopNothing) {
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  ASSERT_TRUE(controller.Pass().ok());
  EXPECT_CALL(backend_, Stop(_, _)).Times(0);
  clock_.Advance(spec_.metrics_missing_timeout_seconds - 1);
  StatusOr<Step> plan = controller.Pass();
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->unknown.size(), static_cast<size_t>(spec_.parallelism));
  nlohmann::json status = controller.StatusJson();
  bool metrics_missing = false;
  for (const nlohmann::json& c : status["conditions"]) {
    if (c["type"] == "MetricsAvailable") metrics_missing = c["status"] == "False";
  }
  EXPECT_TRUE(metrics_missing);
}

TEST_F(SweepControllerTest, Interrupt_StopsEveryLiveSegmentAndDecidesNothing) {
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  ASSERT_TRUE(controller.Pass().ok());
  std::string before = JournalText();
  EXPECT_CALL(backend_, Stop(_, 0)).Times(spec_.parallelism);
  ASSERT_TRUE(controller.Interrupt().ok());
  EXPECT_EQ(JournalText(), before) << "an interrupt is not a decision about any trial";
}

TEST_F(SweepControllerTest, Interrupt_StatusSaysInterruptedAndCountsOnlyLiveSegmentsRunning) {
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  ASSERT_TRUE(controller.Pass().ok());
  ASSERT_TRUE(controller.Interrupt().ok());
  for (SegmentStatus& s : segments_) {
    s.state = SegmentState::kFailed;
    s.reason = Reason::kStopped;
    s.finished_unix_seconds = clock_.NowUnixSeconds();
  }
  ASSERT_TRUE(controller.Refresh().ok());
  nlohmann::json status = controller.StatusJson();
  EXPECT_EQ(status["phase"], "Running") << "not finished: the next run resumes it";
  EXPECT_EQ(status["trials"]["running"], 0);
  EXPECT_EQ(status["trials"]["interrupted"], spec_.parallelism);
  EXPECT_TRUE(status["runningTrials"].empty());
  ASSERT_EQ(status["conditions"][0]["type"], "Progressing");
  EXPECT_EQ(status["conditions"][0]["status"], "False");
  EXPECT_EQ(status["conditions"][0]["reason"], "Interrupted");
}

TEST_F(SweepControllerTest, ProbePhase_ProbesRunTheCandidateAndEveryTrialGetsTheChoice) {
  UseProbePhase();
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  std::vector<SegmentSpec> started;
  ON_CALL(backend_, Start(_)).WillByDefault(Invoke([&](const SegmentSpec& s) {
    EXPECT_NE(JournalText().find(s.trial.find("-p") != std::string::npos ? "ProbeLaunched"
                                                                         : "SegmentLaunched"),
              std::string::npos)
        << "Start of " << s.trial << " before its launch was journaled";
    started.push_back(s);
    RunSegment(s);
    return OkStatus();
  }));
  // Each probe: launched, measured (then stopped by the sweep), ended.
  for (double rate : {1000.0, 1900.0}) {
    ASSERT_TRUE(controller.Pass().ok());
    ASSERT_EQ(controller.model().phase(), SweepPhase::kProbing);
    const std::string name = started.back().trial;
    probe_figures_[name] = ProbeFigures{rate, rate < 1500 ? 0.4 : 0.05, std::nullopt};
    clock_.Advance(5);
    EXPECT_CALL(backend_, Stop(name, 0)).WillOnce(Invoke([&](const std::string&, int) {
      segments_.back().state = SegmentState::kFailed;
      segments_.back().reason = Reason::kStopped;
      segments_.back().finished_unix_seconds = clock_.NowUnixSeconds();
      return OkStatus();
    }));
    ASSERT_TRUE(controller.Pass().ok());
    ASSERT_TRUE(controller.Pass().ok());
  }
  ASSERT_EQ(started.size(), 2u);
  EXPECT_EQ(started[0].trial, "fmnist-cnn-p0000");
  EXPECT_TRUE(started[0].params.empty());
  EXPECT_THAT(started[0].command,
              ::testing::ElementsAre("budgetsweep-trainer", "--dataset=fashion-mnist"));
  EXPECT_THAT(started[0].extra_args,
              ::testing::ElementsAre("--probe-steps=30", "--linger-seconds=30"));
  EXPECT_LE(started[0].grace_seconds, kProbeGraceSeconds);
  EXPECT_THAT(started[1].extra_args, ::testing::Contains("--workers=2"));

  ASSERT_TRUE(controller.Pass().ok());  // decides
  EXPECT_EQ(controller.model().phase(), SweepPhase::kRunning);
  EXPECT_EQ(controller.StatusJson()["throughput"]["trialArgs"], nlohmann::json({"--workers=2"}));
  ASSERT_TRUE(controller.Pass().ok());  // the first trials
  ASSERT_EQ(started.size(), 2u + static_cast<size_t>(spec_.parallelism));
  for (size_t i = 2; i < started.size(); ++i) {
    EXPECT_THAT(started[i].command,
                ::testing::ElementsAre("budgetsweep-trainer", "--dataset=fashion-mnist"));
    EXPECT_THAT(started[i].extra_args, ::testing::ElementsAre("--workers=2"));
    EXPECT_EQ(started[i].params.size(), spec_.search_space.size());
  }

  // A controller started on the journal neither probes again nor decides again.
  SweepController second(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(second.Recover().ok());
  EXPECT_EQ(second.model().probes().size(), 2u);
  clock_.Advance(1);
  StatusOr<Step> plan = second.Pass();
  ASSERT_TRUE(plan.ok());
  for (const Event& e : plan->events) {
    EXPECT_FALSE(std::holds_alternative<event::ProbeLaunched>(e));
    EXPECT_FALSE(std::holds_alternative<event::ThroughputDecided>(e));
  }
}

TEST_F(SweepControllerTest, ProbePhase_AnEndedProbeIsReleasedAndItsChargeOutlivesIt) {
  UseProbePhase();
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  ASSERT_TRUE(controller.Pass().ok());  // the baseline probe runs
  ASSERT_EQ(segments_.size(), 1u);
  const std::string name = segments_.front().trial;
  probe_figures_[name] = ProbeFigures{1000, 0.4, std::nullopt};
  clock_.Advance(5);
  ON_CALL(backend_, Stop(name, 0)).WillByDefault(Invoke([&](const std::string&, int) {
    segments_.front().state = SegmentState::kFailed;
    segments_.front().reason = Reason::kStopped;
    segments_.front().finished_unix_seconds = clock_.NowUnixSeconds();
    segments_.front().charge_held = true;
    return OkStatus();
  }));
  ASSERT_TRUE(controller.Pass().ok());  // measured, so stopped
  // Its end is journaled in the same pass that releases it, never before.
  EXPECT_CALL(backend_, ReleaseCharge(name, 0)).WillOnce(Invoke([&](const std::string&, int) {
    EXPECT_NE(JournalText().find("\"event\":\"ProbeEnded\""), std::string::npos)
        << "released before the probe's end was journaled";
    return OkStatus();
  }));
  ASSERT_TRUE(controller.Pass().ok());
  const double charged = 5 * ChargedDevices(spec_.trial_gpus);
  EXPECT_DOUBLE_EQ(controller.ledger().used(), charged);

  // Released, the probe's pod is gone; its charge stays, also for a controller started again.
  segments_.erase(segments_.begin());
  clock_.Advance(1);
  ASSERT_TRUE(controller.Pass().ok());
  EXPECT_GE(controller.ledger().used(), charged);
  SweepController restarted(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(restarted.Recover().ok());
  ASSERT_TRUE(restarted.Refresh().ok());
  EXPECT_GE(restarted.ledger().used(), charged);
}

TEST_F(SweepControllerTest, BackendErrors_ArePassedUpAndNothingIsDecided) {
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  EXPECT_CALL(backend_, List())
      .WillOnce(Return(StatusOr<std::vector<SegmentStatus>>(UnavailableError("down"))));
  EXPECT_CALL(backend_, Start(_)).Times(0);
  StatusOr<Step> plan = controller.Pass();
  EXPECT_FALSE(plan.ok());
  EXPECT_EQ(JournalText(), "");
}

TEST_F(SweepControllerTest, JournalDown_AValueReadMeanwhileIsRecordedOnceItsSegmentHasEnded) {
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  ASSERT_TRUE(controller.Pass().ok());
  // Trial 0 reports its objective at the full resource while the journal cannot be written (on a
  // cluster, the API server is away): that pass fails, and then the trainer exits.
  const std::string first_trial = "fmnist-cnn-t0000";
  ON_CALL(metrics_, Read(_, _, _))
      .WillByDefault(Invoke([&](const std::string&, const SegmentStatus& s, const std::string&) {
        if (s.trial != first_trial) return StatusOr<TrialMetrics>(UnavailableError("no answer"));
        TrialMetrics m;
        m.objective_by_resource = {{27.0, 0.9}};
        m.resource_completed = 27;
        return StatusOr<TrialMetrics>(m);
      }));
  log_.FailAppends(UnavailableError("the API server is away"));
  clock_.Advance(5);
  EXPECT_FALSE(controller.Pass().ok());
  SegmentStatus& first = segments_.front();
  first.state = SegmentState::kSucceeded;
  first.exit_code = 0;
  first.finished_unix_seconds = *first.started_unix_seconds + 6;

  // A minute later the journal is back: the pass that finds the segment ended records the value,
  // reached by the segment's end, and the trial completes instead of failing as a short exit.
  log_.FailAppends(OkStatus());
  clock_.Advance(60);
  ASSERT_TRUE(controller.Pass().ok());
  const Trial& t = controller.model().trial(0);
  ASSERT_TRUE(t.rung_values.contains(27));
  EXPECT_DOUBLE_EQ(t.rung_values.at(27), 0.9);
  EXPECT_EQ(t.phase, TrialPhase::kCompleted) << t.reason << ": " << t.message;
  for (const nlohmann::json& r : log_.records()) {
    if (r["event"] == "ValueRecorded" && r["trial"] == 0) {
      EXPECT_DOUBLE_EQ(r["seconds"], 6);
    }
  }
}

TEST_F(SweepControllerTest, JournalDown_ATrialLastReadLongBeforeItsEndWasFoundIsNoShortExit) {
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  ASSERT_TRUE(controller.Pass().ok());
  values_ = {{"fmnist-cnn-t0000", 0.9}};  // its value at epoch 1: it said it had done 1 of 27
  clock_.Advance(1);
  ASSERT_TRUE(controller.Pass().ok());
  // No pass can read it for 30 s, during which it runs to the end and exits 0: the controller did
  // not see where it stopped.
  bool away = true;
  ON_CALL(backend_, List()).WillByDefault(Invoke([&] {
    return away ? StatusOr<std::vector<SegmentStatus>>(UnavailableError("the API server is away"))
                : StatusOr<std::vector<SegmentStatus>>(segments_);
  }));
  values_.clear();
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(10);
    EXPECT_FALSE(controller.Pass().ok());
  }
  SegmentStatus& first = segments_.front();
  first.state = SegmentState::kSucceeded;
  first.exit_code = 0;
  first.finished_unix_seconds = clock_.NowUnixSeconds() - 5;
  away = false;
  clock_.Advance(1);
  ASSERT_TRUE(controller.Pass().ok());
  const Trial& t = controller.model().trial(0);
  EXPECT_NE(t.phase, TrialPhase::kFailed) << t.reason << ": " << t.message;
  EXPECT_NE(t.reason, "ExitedShort");
}

TEST_F(SweepControllerTest, ATrainerThatNeverAnsweredIsNoShortExitButOneThatDidIs) {
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  ASSERT_TRUE(controller.Pass().ok());
  // Every pass finds nothing listening at t0000's endpoint (it lingered less than a pass apart,
  // or was busy starting up): it may have reached its `until` and gone. t0001 answers once.
  values_ = {{"fmnist-cnn-t0001", 0.9}};
  clock_.Advance(1);
  ASSERT_TRUE(controller.Pass().ok());
  values_.clear();
  clock_.Advance(1);
  ASSERT_TRUE(controller.Pass().ok());
  for (int i : {0, 1}) {
    segments_[i].state = SegmentState::kSucceeded;
    segments_[i].exit_code = 0;
    segments_[i].finished_unix_seconds = clock_.NowUnixSeconds();
  }
  clock_.Advance(1);
  ASSERT_TRUE(controller.Pass().ok());
  const Trial& unseen = controller.model().trial(0);
  EXPECT_EQ(unseen.reason, "MetricsMissing") << unseen.message;
  const Trial& seen = controller.model().trial(1);
  EXPECT_EQ(seen.reason, "ExitedShort") << seen.message;
}

TEST_F(SweepControllerTest, Done_OnlyOnceFinishedAndEverySegmentEnded) {
  MemoryEventLog log;
  SweepController controller(spec_, &backend_, &metrics_, &log, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  ASSERT_TRUE(controller.Pass().ok());
  EXPECT_FALSE(controller.Done().value()) << "running, not finished";

  ASSERT_TRUE(log.Append({event::SweepFinished{.at = clock_.NowUnixSeconds(),
                                               .phase = SweepPhase::kCompleted}})
                  .ok());
  SweepController finished(spec_, &backend_, &metrics_, &log, &clock_);
  ASSERT_TRUE(finished.Recover().ok());
  ASSERT_TRUE(finished.model().finished());
  EXPECT_FALSE(finished.Done().value()) << "finished, but its segments still run";

  for (SegmentStatus& s : segments_) s.state = SegmentState::kSucceeded;
  EXPECT_TRUE(finished.Done().value());

  EXPECT_CALL(backend_, List())
      .WillOnce(Return(StatusOr<std::vector<SegmentStatus>>(UnavailableError("down"))));
  EXPECT_EQ(finished.Done().status().code(), StatusCode::kUnavailable);
}

// Issue #23: a trial pod that admission refuses (Pod Security "restricted" and a root user) can
// never start. Its segments fail without running, the trial's retries with them, and the sweep
// ends Failed through spec.maxFailedTrials with the API server's words in its recent failures,
// instead of a start retried on every pass.
TEST_F(SweepControllerTest, StartRefusedForGood_FailsTheTrialsAndTheSweepWithTheReason) {
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  const std::string refusal =
      "the API server refused the pod: HTTP 403 Forbidden: pods \"fmnist-cnn-t000000-s0\" is "
      "forbidden: violates PodSecurity \"restricted:latest\": runAsUser=0";
  int starts = 0;
  ON_CALL(backend_, Start(_)).WillByDefault(Invoke([&](const SegmentSpec&) {
    ++starts;
    return InvalidArgumentError(refusal);
  }));
  for (int pass = 0; pass < 10 && !controller.model().finished(); ++pass) {
    StatusOr<Step> plan = controller.Pass();
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    clock_.Advance(1);
  }
  ASSERT_TRUE(controller.model().finished());
  EXPECT_EQ(controller.model().phase(), SweepPhase::kFailed);
  // Three trials (spec.maxFailedTrials), each started once and retried once (maxRetries 1); the
  // fourth of the first wave fails along.
  EXPECT_GE(starts, spec_.max_failed_trials * (spec_.max_retries + 1));
  EXPECT_LE(starts, spec_.parallelism * (spec_.max_retries + 1));
  ASSERT_FALSE(controller.model().recent_failures().empty());
  const FailureRecord& failure = controller.model().recent_failures().back();
  EXPECT_EQ(failure.reason, "Error");
  EXPECT_EQ(failure.message, "not started: " + refusal);
  EXPECT_EQ(controller.ledger().used(), 0);
  EXPECT_NE(controller.StatusJson().dump().find("violates PodSecurity"), std::string::npos);
}

TEST_F(SweepControllerTest, StartRefusedForGood_EndsProbeRunsToo) {
  UseProbePhase();
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  ON_CALL(backend_, Start(_)).WillByDefault(Return(InvalidArgumentError("refused")));
  for (int pass = 0; pass < 20 && !controller.model().finished(); ++pass) {
    ASSERT_TRUE(controller.Pass().ok());
    clock_.Advance(1);
  }
  EXPECT_EQ(controller.model().phase(), SweepPhase::kFailed);
  EXPECT_NE(JournalText().find(R"("event":"ProbeEnded")"), std::string::npos);
}

TEST_F(SweepControllerTest, StartErrorsThatMayPass_FailThePassAndAreTriedAgain) {
  SweepController controller(spec_, &backend_, &metrics_, &log_, &clock_);
  ASSERT_TRUE(controller.Recover().ok());
  EXPECT_CALL(backend_, Start(_))
      .WillOnce(Return(FailedPreconditionError("HTTP 403 Forbidden: exceeded quota")))
      .WillRepeatedly(Invoke([this](const SegmentSpec& s) {
        RunSegment(s);
        return OkStatus();
      }));
  EXPECT_FALSE(controller.Pass().ok());
  clock_.Advance(1);
  ASSERT_TRUE(controller.Pass().ok());
  EXPECT_EQ(JournalText().find("SegmentEnded"), std::string::npos);
  EXPECT_EQ(segments_.size(), static_cast<size_t>(spec_.parallelism));
}

}  // namespace
}  // namespace bsw
