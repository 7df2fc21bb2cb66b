// Black-box tests of the curve-trainer fixture: it runs as a real process and is scraped over HTTP.

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "operator/adapters/local/loopback_port.h"
#include "operator/adapters/prometheus/scrape_source.h"

extern char** environ;

namespace bsw {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsNan;
using ::testing::Key;
using ::testing::Pair;

class CurveTrainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "curve-trainer-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    StatusOr<int> port = local::PickFreeLoopbackPort();
    ASSERT_TRUE(port.ok());
    port_ = *port;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Starts the fixture with `args` and the env contract; stdout goes to out.txt. Entries of `env`
  // come first in the environment, so getenv() finds them before the defaults below.
  pid_t Spawn(const std::vector<std::string>& args, std::vector<std::string> env = {}) {
    std::vector<std::string> argv = {BSW_CURVE_TRAINER_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    for (char** entry = environ; *entry != nullptr; ++entry) env.emplace_back(*entry);
    env.push_back("BUDGETSWEEP_SWEEP=s");
    env.push_back("BUDGETSWEEP_TRIAL=t");
    env.push_back("BUDGETSWEEP_CHECKPOINT_DIR=" + dir_.string());
    env.push_back("BUDGETSWEEP_METRICS_PORT=" + std::to_string(port_));
    std::vector<char*> argv_ptrs, env_ptrs;
    for (std::string& arg : argv) argv_ptrs.push_back(arg.data());
    for (std::string& var : env) env_ptrs.push_back(var.data());
    argv_ptrs.push_back(nullptr);
    env_ptrs.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    std::string out = (dir_ / "out.txt").string();
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    EXPECT_EQ(
        posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, argv_ptrs.data(), env_ptrs.data()),
        0);
    posix_spawn_file_actions_destroy(&actions);
    return pid;
  }

  static int WaitExitCode(pid_t pid) {
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  // Scrapes until `done` holds for the metrics, or 5 s pass.
  template <typename Predicate>
  TrialMetrics ScrapeUntil(Predicate done) {
    prom::ScrapeMetricSource source(0.5);
    SegmentStatus segment;
    segment.trial = "t";
    segment.metrics_url = "http://127.0.0.1:" + std::to_string(port_) + "/metrics";
    TrialMetrics last;
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < give_up) {
      StatusOr<TrialMetrics> metrics = source.Read("s", segment, "validation_accuracy");
      if (metrics.ok()) {
        last = *metrics;
        if (done(last)) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return last;
  }

  std::string Stdout() const {
    std::ifstream in(dir_ / "out.txt");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::string Checkpoint() const {
    std::ifstream in(dir_ / "curve-trainer.epoch");
    std::string text;
    in >> text;
    return text;
  }
  std::string LastLine() const {
    std::string text = Stdout();
    size_t end = text.find_last_not_of('\n');
    return text.substr(text.rfind('\n', end) + 1, end - text.rfind('\n', end));
  }

  std::filesystem::path dir_;
  int port_ = 0;
};

TEST_F(CurveTrainerTest, ServesEachEpochsObjectiveAndExitsZeroAtUntil) {
  pid_t pid = Spawn({"--seconds-per-epoch=0.05", "--lr=0.003"},
                    {"BUDGETSWEEP_MAX_RESOURCE=9", "BUDGETSWEEP_UNTIL=2"});
  TrialMetrics metrics =
      ScrapeUntil([](const TrialMetrics& m) { return m.resource_completed == 2.0; });
  EXPECT_THAT(metrics.objective_by_resource, ElementsAre(Key(1.0), Key(2.0)));
  EXPECT_GT(metrics.objective_by_resource[2.0], metrics.objective_by_resource[1.0]);
  EXPECT_TRUE(metrics.loss.has_value());
  EXPECT_TRUE(metrics.samples_per_second.has_value());
  EXPECT_TRUE(metrics.data_wait_ratio.has_value());
  EXPECT_EQ(WaitExitCode(pid), 0);
  EXPECT_EQ(Checkpoint(), "2");
}

TEST_F(CurveTrainerTest, SameParamsAndSeedGiveTheSameCurve) {
  auto final_line = [&](const std::vector<std::string>& args) {
    std::vector<std::string> all = {"--seconds-per-epoch=0", "--weight-decay=0.01"};
    all.insert(all.end(), args.begin(), args.end());
    EXPECT_EQ(
        WaitExitCode(Spawn(all, {"BUDGETSWEEP_MAX_RESOURCE=3", "BUDGETSWEEP_CHECKPOINT_DIR="})), 0);
    std::string line = LastLine();
    EXPECT_THAT(line, HasSubstr(" visible_at="));
    return line.substr(0, line.find(" visible_at="));  // the curve, without the wall clock
  };
  std::string first = final_line({"--lr=0.001", "--seed=1"});
  EXPECT_THAT(first, HasSubstr("epoch 3/3"));
  EXPECT_EQ(final_line({"--lr=0.001", "--seed=1"}), first);
  EXPECT_NE(final_line({"--lr=0.001", "--seed=2"}), first);
}

TEST_F(CurveTrainerTest, LearningRateNearOptimumScoresHigher) {
  auto accuracy = [&](const std::string& lr) {
    EXPECT_EQ(WaitExitCode(Spawn({"--seconds-per-epoch=0", "--lr=" + lr},
                                 {"BUDGETSWEEP_MAX_RESOURCE=9", "BUDGETSWEEP_CHECKPOINT_DIR="})),
              0);
    std::string line = LastLine();
    return std::stod(line.substr(line.find('=') + 1));
  };
  double good = accuracy("0.003");
  EXPECT_GT(good, accuracy("0.0001"));
  EXPECT_GT(good, accuracy("0.1"));
}

TEST_F(CurveTrainerTest, ResumesFromItsCheckpoint) {
  ASSERT_EQ(WaitExitCode(Spawn({"--seconds-per-epoch=0"},
                               {"BUDGETSWEEP_MAX_RESOURCE=4", "BUDGETSWEEP_UNTIL=2"})),
            0);
  ASSERT_EQ(WaitExitCode(Spawn({"--seconds-per-epoch=0"}, {"BUDGETSWEEP_MAX_RESOURCE=4"})), 0);
  EXPECT_THAT(Stdout(), ::testing::StartsWith("epoch 3/4"));
  EXPECT_EQ(Checkpoint(), "4");
}

// The snapshot contract of pbt and pb2 (docs/trainer-contract.md).
TEST_F(CurveTrainerTest, KeepsASnapshotAtUntilAndAnotherTrialGoesOnFromItOnce) {
  std::filesystem::path donor = dir_ / "donor";
  ASSERT_EQ(WaitExitCode(
                Spawn({"--seconds-per-epoch=0"},
                      {"BUDGETSWEEP_CHECKPOINT_DIR=" + donor.string(), "BUDGETSWEEP_MAX_RESOURCE=6",
                       "BUDGETSWEEP_UNTIL=3", "BUDGETSWEEP_SNAPSHOTS=1"})),
            0);
  EXPECT_TRUE(std::filesystem::exists(donor / "snapshot-3.epoch"));
  // This trial's own checkpoint is at epoch 1; the exploit starts it from the donor's epoch 3.
  ASSERT_EQ(WaitExitCode(Spawn({"--seconds-per-epoch=0"},
                               {"BUDGETSWEEP_MAX_RESOURCE=6", "BUDGETSWEEP_UNTIL=1"})),
            0);
  const std::vector<std::string> exploit = {"BUDGETSWEEP_EXPLOIT_DIR=" + donor.string(),
                                            "BUDGETSWEEP_EXPLOIT_AT=3",
                                            "BUDGETSWEEP_MAX_RESOURCE=6"};
  std::vector<std::string> to_four = exploit;
  to_four.push_back("BUDGETSWEEP_UNTIL=4");
  ASSERT_EQ(WaitExitCode(Spawn({"--seconds-per-epoch=0"}, to_four)), 0);
  EXPECT_THAT(Stdout(), ::testing::StartsWith("exploited " + (donor / "snapshot-3.epoch").string() +
                                              " at epoch 3\nepoch 4/6"));
  EXPECT_EQ(Checkpoint(), "4");
  // The next segment, with the same exploit, goes on from its own checkpoint.
  ASSERT_EQ(WaitExitCode(Spawn({"--seconds-per-epoch=0"}, exploit)), 0);
  EXPECT_THAT(Stdout(), ::testing::StartsWith("epoch 5/6"));
  // A snapshot that is not there is an error naming it.
  std::vector<std::string> missing = {"BUDGETSWEEP_EXPLOIT_DIR=" + donor.string(),
                                      "BUDGETSWEEP_EXPLOIT_AT=2", "BUDGETSWEEP_MAX_RESOURCE=6"};
  EXPECT_EQ(WaitExitCode(Spawn({"--seconds-per-epoch=0"}, missing)), 1);
}

TEST_F(CurveTrainerTest, SigtermCheckpointsAndExitsZero) {
  pid_t pid = Spawn({"--seconds-per-epoch=0.05"}, {"BUDGETSWEEP_MAX_RESOURCE=1000"});
  ScrapeUntil([](const TrialMetrics& m) { return m.resource_completed >= 2.0; });
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  EXPECT_EQ(WaitExitCode(pid), 0);
  EXPECT_GE(std::stoi(Checkpoint()), 2);
}

TEST_F(CurveTrainerTest, FailAtEpochExitsOne) {
  EXPECT_EQ(WaitExitCode(Spawn({"--seconds-per-epoch=0", "--fail-at-epoch=2"})), 1);
  EXPECT_EQ(Checkpoint(), "1");
}

TEST_F(CurveTrainerTest, DivergeAtEpochReportsNanAndExitsThree) {
  pid_t pid = Spawn({"--seconds-per-epoch=0.05", "--diverge-at-epoch=2"});
  TrialMetrics metrics =
      ScrapeUntil([](const TrialMetrics& m) { return m.objective_by_resource.contains(2.0); });
  EXPECT_THAT(metrics.objective_by_resource, ElementsAre(Key(1.0), Pair(2.0, IsNan())));
  EXPECT_EQ(WaitExitCode(pid), 3);
}

TEST_F(CurveTrainerTest, NoMetricsAtEpochSkipsThatObjective) {
  pid_t pid = Spawn({"--seconds-per-epoch=0.05", "--no-metrics-at-epoch=2"},
                    {"BUDGETSWEEP_MAX_RESOURCE=3"});
  TrialMetrics metrics =
      ScrapeUntil([](const TrialMetrics& m) { return m.resource_completed == 3.0; });
  EXPECT_THAT(metrics.objective_by_resource, ElementsAre(Key(1.0), Key(3.0)));
  EXPECT_EQ(WaitExitCode(pid), 0);
}

TEST_F(CurveTrainerTest, BadArgumentExitsTwoWithReason) {
  EXPECT_EQ(WaitExitCode(Spawn({"--lr=fast"})), 2);
}

TEST_F(CurveTrainerTest, EpochLogAppendsTheEpochLinesAsPrinted) {
  std::filesystem::path log = dir_ / "epochs.log";
  std::vector<std::string> args = {"--seconds-per-epoch=0", "--epoch-log=" + log.string()};
  ASSERT_EQ(WaitExitCode(Spawn(args, {"BUDGETSWEEP_MAX_RESOURCE=3", "BUDGETSWEEP_UNTIL=2"})), 0);
  std::string first_run = Stdout();
  ASSERT_EQ(WaitExitCode(Spawn(args, {"BUDGETSWEEP_MAX_RESOURCE=3"})), 0);  // resumes at epoch 3
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), first_run + Stdout()) << "both runs' lines, appended";
  EXPECT_THAT(text.str(), HasSubstr("epoch 3/3 "));

  EXPECT_EQ(WaitExitCode(Spawn({"--epoch-log=" + (dir_ / "no" / "such").string()})), 2)
      << "an epoch log that cannot be opened";
}

}  // namespace
}  // namespace bsw
