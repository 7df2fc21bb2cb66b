#include "operator/controller/run_loop.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "operator/core/api.h"
#include "tests/fakes/memory_budget_gate.h"
#include "tests/fakes/memory_event_log.h"
#include "tests/mocks/fake_clock.h"
#include "tests/mocks/mock_metric_source.h"
#include "tests/mocks/mock_trial_backend.h"
#include "tests/unit/controller/running_segment.h"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw {
namespace {

using ::testing::_;
using ::testing::ElementsAre;
using ::testing::Invoke;
using ::testing::NiceMock;
using ::testing::Return;

// Ctrl-C and child exits, as the test says: each Wait moves the clock and then runs on_wait.
class FakeSignals final : public RunSignals {
 public:
  explicit FakeSignals(FakeClock* clock, std::vector<std::string>* said)
      : clock_(clock), said_(said) {}
  bool Interrupted() const override { return interrupted; }
  void Wait(double seconds) override {
    said_->push_back("wait " + std::to_string(seconds));
    clock_->Advance(seconds);
    ++waits;
    if (on_wait) on_wait(waits);
  }

  bool interrupted = false;
  int waits = 0;
  std::function<void(int)> on_wait;  // with the number of waits so far

 private:
  FakeClock* clock_;
  std::vector<std::string>* said_;
};

// What the loop told its user, one string a call.
class RecordingOutput final : public RunOutput {
 public:
  explicit RecordingOutput(std::vector<std::string>* said) : said_(said) {}
  void Passed(double) override { said_->push_back("passed"); }
  void PassFailed(const Status& error, double retry_seconds) override {
    said_->push_back("failed " + error.message() + " " + std::to_string(retry_seconds));
  }
  void DiskFull(const Status& error) override { said_->push_back("disk full " + error.message()); }
  void DiskBack() override { said_->push_back("disk back"); }
  void Stopping() override { said_->push_back("stopping"); }
  void Warning(const Status& error) override { said_->push_back("warning " + error.message()); }

 private:
  std::vector<std::string>* said_;
};

std::string Seconds(double seconds) { return std::to_string(seconds); }

// A RunLoop over a SweepController on mocked ports and an in-memory journal: the backend lists
// what the test says runs, and no metrics answer (the planner waits for them).
class RunLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = ParseSweep(testing::ValidSweepJson()).value();
    ON_CALL(backend_, List())
        .WillByDefault(Invoke([this]() -> StatusOr<std::vector<SegmentStatus>> {
          ++lists_;
          if (!list_errors_.empty()) {
            Status error = list_errors_.front();
            list_errors_.erase(list_errors_.begin());
            return error;
          }
          return segments_;
        }));
    ON_CALL(backend_, Start(_)).WillByDefault(Invoke([this](const SegmentSpec& s) {
      segments_.push_back(testing::RunningSegment(s, clock_.NowUnixSeconds()));
      return OkStatus();
    }));
    // A stopped segment's trainer checkpoints and exits at once.
    ON_CALL(backend_, Stop(_, _))
        .WillByDefault(Invoke([this](const std::string& trial, int segment) {
          for (SegmentStatus& s : segments_) {
            if (s.trial == trial && s.segment == segment) End(s, SegmentState::kFailed);
          }
          return OkStatus();
        }));
    ON_CALL(backend_, SetDeadline(_, _, _)).WillByDefault(Return(OkStatus()));
    ON_CALL(metrics_, Read(_, _, _))
        .WillByDefault(Return(StatusOr<TrialMetrics>(UnavailableError("no answer"))));
  }

  // A controller on the test's journal, recovered from it.
  std::unique_ptr<SweepController> Controller() {
    auto controller =
        std::make_unique<SweepController>(spec_, &backend_, &metrics_, &log_, &clock_);
    EXPECT_TRUE(controller->Recover().ok());
    return controller;
  }

  // Journals a first pass's launches and then the sweep's end, as a sweep that finished with
  // its segments still running.
  void FinishWithSegmentsRunning() {
    ASSERT_TRUE(Controller()->Pass().ok());
    ASSERT_TRUE(log_.Append({event::SweepFinished{.at = clock_.NowUnixSeconds(),
                                                  .phase = SweepPhase::kCompleted}})
                    .ok());
  }

  void End(SegmentStatus& s, SegmentState state) {
    s.state = state;
    s.finished_unix_seconds = clock_.NowUnixSeconds();
  }
  void EndSegments(SegmentState state) {
    for (SegmentStatus& s : segments_) End(s, state);
  }

  size_t Journaled(const std::string& event) const {
    size_t count = 0;
    for (const nlohmann::json& record : log_.records()) count += record["event"] == event;
    return count;
  }

  SweepSpec spec_;
  FakeClock clock_{1'000'000, /*advance_on_wait=*/true};
  MemoryEventLog log_;
  std::vector<SegmentStatus> segments_;
  std::vector<Status> list_errors_;  // what the next List calls fail with, in order
  int lists_ = 0;
  NiceMock<MockTrialBackend> backend_;
  NiceMock<MockMetricSource> metrics_;
  std::vector<std::string> said_;
  FakeSignals signals_{&clock_, &said_};
  RecordingOutput output_{&said_};
};

TEST_F(RunLoopTest, Done_EndsAfterOneMorePassThatJournalsTheSegmentsThatEnded) {
  FinishWithSegmentsRunning();
  std::unique_ptr<SweepController> controller = Controller();
  ON_CALL(backend_, Stop(_, _)).WillByDefault(Return(OkStatus()));
  // The segments end between the pass's list and the done check's: only one more pass sees it.
  int ending_list = -1;
  signals_.on_wait = [&](int) { ending_list = lists_ + 2; };
  ON_CALL(backend_, List()).WillByDefault(Invoke([&]() -> StatusOr<std::vector<SegmentStatus>> {
    if (++lists_ == ending_list) EndSegments(SegmentState::kSucceeded);
    return segments_;
  }));
  RunLoop loop(controller.get(), &clock_, &signals_, &output_);
  StatusOr<RunEnd> end = loop.Run();
  ASSERT_TRUE(end.ok()) << end.status().message();
  EXPECT_EQ(*end, RunEnd::kDone);
  EXPECT_THAT(said_, ElementsAre("passed", "wait " + Seconds(0.25), "passed"));
  EXPECT_EQ(Journaled("SegmentEnded"), static_cast<size_t>(spec_.parallelism));
}

TEST_F(RunLoopTest, FailedPasses_BackOffDoublingToThirtySecondsAndResetOnceOnePasses) {
  for (int i = 0; i < 9; ++i) list_errors_.push_back(UnavailableError("down"));
  signals_.on_wait = [&](int waits) {
    if (waits == 1) list_errors_.push_back(UnavailableError("down"));
    if (waits == 2) signals_.interrupted = true;
  };
  std::unique_ptr<SweepController> controller = Controller();
  RunLoop loop(controller.get(), &clock_, &signals_, &output_);
  StatusOr<RunEnd> end = loop.Run();
  ASSERT_TRUE(end.ok()) << end.status().message();
  EXPECT_EQ(*end, RunEnd::kInterrupted);
  std::vector<std::string> failed;
  for (double s : {0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0}) {
    failed.push_back("failed down " + Seconds(s));
  }
  std::vector<std::string> expected = failed;
  for (const char* said :
       {"passed", "wait 0.250000", "failed down 0.250000", "passed", "wait 0.250000", "stopping"}) {
    expected.push_back(said);
  }
  EXPECT_EQ(said_, expected);
  EXPECT_THAT(clock_.waits(), ElementsAre(0.25, 0.5, 1, 2, 4, 8, 16, 30, 30, 0.25));
}

TEST_F(RunLoopTest, FailedPrecondition_EndsTheRunWithTheErrorAndStopsNothing) {
  list_errors_.push_back(FailedPreconditionError("the journal is from a newer release"));
  EXPECT_CALL(backend_, Stop(_, _)).Times(0);
  std::unique_ptr<SweepController> controller = Controller();
  RunLoop loop(controller.get(), &clock_, &signals_, &output_);
  StatusOr<RunEnd> end = loop.Run();
  EXPECT_EQ(end.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(end.status().message(), "the journal is from a newer release");
  EXPECT_TRUE(said_.empty());
}

TEST_F(RunLoopTest, DiskFull_SaysSoOnceWaitsWithoutBackingOffAndSaysWhenItIsBack) {
  for (int i = 0; i < 3; ++i) list_errors_.push_back(UnavailableError("No space left on device"));
  signals_.on_wait = [&](int) { signals_.interrupted = true; };
  std::unique_ptr<SweepController> controller = Controller();
  RunLoopOptions options;
  options.disk_full = [](const Status& s) { return s.message() == "No space left on device"; };
  RunLoop loop(controller.get(), &clock_, &signals_, &output_, options);
  ASSERT_TRUE(loop.Run().ok());
  EXPECT_THAT(said_, ElementsAre("disk full No space left on device", "disk back", "passed",
                                 "wait " + Seconds(0.25), "stopping"));
  EXPECT_THAT(clock_.waits(), ElementsAre(0.25, 0.25, 0.25));
}

TEST_F(RunLoopTest, DiskFull_WaitsAtMostTheDiskFullWaitOnceBackedOff) {
  list_errors_ = {UnavailableError("down"), UnavailableError("down"), UnavailableError("down"),
                  UnavailableError("down"), UnavailableError("down"), UnavailableError("full")};
  signals_.on_wait = [&](int) { signals_.interrupted = true; };
  std::unique_ptr<SweepController> controller = Controller();
  RunLoopOptions options;
  options.disk_full = [](const Status& s) { return s.message() == "full"; };
  RunLoop loop(controller.get(), &clock_, &signals_, &output_, options);
  ASSERT_TRUE(loop.Run().ok());
  EXPECT_THAT(clock_.waits(), ElementsAre(0.25, 0.5, 1, 2, 4, 5));
}

TEST_F(RunLoopTest, SegmentEnded_NextPassComesAtOnceButOnlyOnceInARow) {
  std::unique_ptr<SweepController> controller = Controller();
  signals_.on_wait = [&](int waits) {
    if (waits == 1) {
      segments_.front().state = SegmentState::kFailed;
      segments_.front().finished_unix_seconds = clock_.NowUnixSeconds();
    }
    if (waits == 2) signals_.interrupted = true;
  };
  RunLoop loop(controller.get(), &clock_, &signals_, &output_);
  ASSERT_TRUE(loop.Run().ok());
  ASSERT_EQ(Journaled("SegmentEnded"), 1u);
  EXPECT_THAT(said_, ElementsAre("passed", "wait " + Seconds(0.25), "passed", "passed",
                                 "wait " + Seconds(0.25), "stopping"));
}

TEST_F(RunLoopTest, Interrupt_StopsTheRunningSegmentsWaitsForThemAndSettlesTheGate) {
  PoolSpec pool_spec;
  pool_spec.name = "team";
  pool_spec.gpu_hours = 100;
  MemoryPool pool(pool_spec, clock_);
  MemoryBudgetGate gate(pool, spec_.name);
  std::unique_ptr<SweepController> controller = Controller();
  controller->SetBudgetGate(&gate);
  signals_.on_wait = [&](int) { signals_.interrupted = true; };
  int stops = 0;
  ON_CALL(backend_, Stop(_, _)).WillByDefault(Invoke([&](const std::string&, int) {
    // The last segment ends a second after it was asked to.
    if (++stops == spec_.parallelism) {
      clock_.Advance(1);
      EndSegments(SegmentState::kFailed);
    }
    return OkStatus();
  }));
  RunLoop loop(controller.get(), &clock_, &signals_, &output_);
  StatusOr<RunEnd> end = loop.Run();
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(*end, RunEnd::kInterrupted);
  EXPECT_EQ(stops, spec_.parallelism);
  EXPECT_THAT(said_, ElementsAre("passed", "wait " + Seconds(0.25), "stopping"));
  EXPECT_EQ(clock_.waits().size(), 0u) << "the segments had ended: no wait for them";
  ASSERT_TRUE(pool.state().accounts.contains(spec_.name));
  const PoolAccount& account = pool.state().accounts.at(spec_.name);
  EXPECT_FALSE(account.active);
  EXPECT_EQ(account.reserved_device_seconds, 0);
  EXPECT_GT(account.used_device_seconds, 0) << "the seconds the stopped segments ran";
}

TEST_F(RunLoopTest, Interrupt_WaitsForSegmentsThatDoNotEndForTheGracePeriodAndFiveSeconds) {
  std::unique_ptr<SweepController> controller = Controller();
  ON_CALL(backend_, Stop(_, _)).WillByDefault(Return(OkStatus()));
  signals_.on_wait = [&](int) { signals_.interrupted = true; };
  RunLoop loop(controller.get(), &clock_, &signals_, &output_);
  const double interrupted_at = clock_.MonotonicSeconds() + 0.25;
  StatusOr<RunEnd> end = loop.Run();
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(*end, RunEnd::kInterrupted);
  EXPECT_NEAR(clock_.MonotonicSeconds() - interrupted_at, spec_.grace_seconds + 5, 0.2 + 1e-9);
  for (double wait : clock_.waits()) EXPECT_NEAR(wait, 0.2, 1e-9);
}

TEST_F(RunLoopTest, Interrupt_BackendErrorsAreWarningsAndTheRunStillEnds) {
  std::unique_ptr<SweepController> controller = Controller();
  signals_.on_wait = [&](int) {
    signals_.interrupted = true;
    list_errors_.assign(1000, UnavailableError("down"));
  };
  RunLoop loop(controller.get(), &clock_, &signals_, &output_);
  StatusOr<RunEnd> end = loop.Run();
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(*end, RunEnd::kInterrupted);
  EXPECT_THAT(said_, ElementsAre("passed", "wait " + Seconds(0.25), "stopping", "warning down",
                                 "warning down"));
}

}  // namespace
}  // namespace bsw
