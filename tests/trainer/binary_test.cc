// Runs budgetsweep-trainer as the sweep runner does and checks the process contract: exit codes,
// one-line reasons, pause/resume and SIGTERM.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/trainer/trainer_process.h"

namespace bsw::trainer::testing {
namespace {

std::vector<std::string> With(std::vector<std::string> flags,
                              const std::vector<std::string>& more) {
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

void ExpectBadInput(const ProcessResult& result, const std::string& named) {
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find(named), std::string::npos) << result.err;
  const std::string last_line = result.err.substr(0, result.err.size() - 1);
  EXPECT_EQ(last_line.find('\n'), std::string::npos) << "not one line: " << result.err;
}

void WriteText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string ReadBytes(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

nlohmann::json Summary(const ProcessResult& result, const std::string& key) {
  return nlohmann::json::parse(SummaryField(result.out, key), nullptr, false);
}

TEST(TrainerBinary, VersionNamesTheLibTorchAndDeviceRuntimeOfTheBuild) {
  ProcessResult result = RunTrainer({"--version"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out,
              ::testing::MatchesRegex(
                  "budgetsweep-trainer [0-9.]+ \\(LibTorch [0-9.]+, (CPU|CUDA [0-9.]+)\\)\n"));
}

TEST(TrainerBinary, BadFlagsExitTwoNamingTheFlag) {
  ExpectBadInput(RunTrainer({"--model=vgg"}), "--model");
  ExpectBadInput(RunTrainer({"--no-such-flag=1"}), "--no-such-flag");
  ExpectBadInput(RunTrainer({"--epochs=2", "--until=3"}), "--until");
  ExpectBadInput(RunTrainer({"--precision=fp16", "--device=cpu"}), "--precision");
  ExpectBadInput(RunTrainer({"--validation-size=70000"}), "--validation-size");
  ExpectBadInput(RunTrainer({}, {"BUDGETSWEEP_MAX_RESOURCE=many"}), "--epochs");
  ExpectBadInput(RunTrainer({"--dataset=image-folder"}), "--data-dir");
}

TEST(TrainerBinary, MissingOrCorruptDatasetExitsTwoNamingTheFile) {
  ExpectBadInput(RunTrainer({"--data-dir=/nonexistent/fmnist"}), "/nonexistent/fmnist");
  const std::string dir = FreshDir("corrupt_idx");
  for (const char* name : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                           "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"}) {
    WriteText(std::filesystem::path(dir) / name, "this is not gzip data");
  }
  ExpectBadInput(RunTrainer({"--data-dir=" + dir}), "train-images-idx3-ubyte.gz");
  ExpectBadInput(RunTrainer({"--dataset=image-folder", "--data-dir=" + dir}), "dataset.json");
}

TEST(TrainerBinary, CorruptImageInAnImageFolderExitsTwoNamingTheFile) {
  const std::string out = FreshDir("folder_export");
  const ProcessResult exported =
      RunTrainer({"export", "--out=" + out, "--size=32", "--limit=40", "--format=png"});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  ASSERT_TRUE(std::filesystem::exists(std::filesystem::path(out) / "train" / "00039.png"));
  WriteText(std::filesystem::path(out) / "train" / "00003.png", "\x89PNG\r\n\x1a\ntruncated");
  ExpectBadInput(RunTrainer({"--dataset=image-folder", "--data-dir=" + out, "--validation-size=8",
                             "--epochs=1", "--threads=1", "--workers=2", "--batch-size=8"}),
                 "00003.png");
}

TEST(TrainerBinary, ImageFolderTrainsWithDecodingWorkers) {
  const std::string out = FreshDir("folder_train");
  ASSERT_EQ(RunTrainer({"export", "--out=" + out, "--size=40", "--limit=256"}).exit_code, 0);
  const ProcessResult result = RunTrainer(
      {"--dataset=image-folder", "--data-dir=" + out, "--validation-size=64", "--epochs=1",
       "--threads=1", "--workers=2", "--batch-size=32", "--summary-json", "--linger-seconds=0"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(SummaryField(result.out, "epochs"), "1");
}

TEST(TrainerBinary, CorruptCheckpointExitsTwoNamingTheFile) {
  const std::string dir = FreshDir("corrupt_ckpt");
  WriteText(std::filesystem::path(dir) / "checkpoint.pt", "garbage");
  ExpectBadInput(RunTrainer(With(SmallRunFlags(), {"--checkpoint-dir=" + dir})), "checkpoint.pt");
}

TEST(TrainerBinary, NonFiniteLossExitsThreeSayingDiverged) {
  const ProcessResult result =
      RunTrainer(With(SmallRunFlags(), {"--optimizer=sgd", "--lr=1e12", "--epochs=2"}));
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.err.find("diverged"), std::string::npos) << result.err;
}

TEST(TrainerBinary, PausedAndResumedRunReproducesTheUninterruptedLossTrajectory) {
  const ProcessResult whole = RunTrainer(With(SmallRunFlags(), {"--epochs=3"}));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;

  const std::string dir = FreshDir("pause_resume");
  const ProcessResult first =
      RunTrainer(With(SmallRunFlags(), {"--epochs=3"}),
                 {"BUDGETSWEEP_UNTIL=1", "BUDGETSWEEP_CHECKPOINT_DIR=" + dir});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("paused at epoch 1"), std::string::npos) << first.err;
  EXPECT_EQ(SummaryField(first.out, "test_accuracy"), "null");  // no test pass at a pause
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / "checkpoint.pt"));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(dir) / "snapshot-1.pt"));

  const ProcessResult second =
      RunTrainer(With(SmallRunFlags(), {"--epochs=3", "--until=3", "--checkpoint-dir=" + dir}));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("resumed"), std::string::npos) << second.err;
  EXPECT_EQ(SummaryField(second.out, "train_loss"), SummaryField(whole.out, "train_loss"));
  EXPECT_EQ(SummaryField(second.out, "validation_accuracy"),
            SummaryField(whole.out, "validation_accuracy"));
  EXPECT_EQ(SummaryField(second.out, "epochs"), "3");
  EXPECT_EQ(SummaryField(second.out, "test_accuracy"), SummaryField(whole.out, "test_accuracy"));
  EXPECT_NE(SummaryField(whole.out, "test_accuracy"), "null");

  ExpectBadInput(
      RunTrainer(With(SmallRunFlags(), {"--epochs=3", "--lr=0.5", "--checkpoint-dir=" + dir})),
      "--lr");
}

TEST(TrainerBinary, WidthChangesTheModelAndACheckpointOfAnotherWidthIsRefused) {
  const ProcessResult narrow = RunTrainer(With(SmallRunFlags(), {"--epochs=1", "--width=0.25"}));
  ASSERT_EQ(narrow.exit_code, 0) << narrow.err;
  const ProcessResult standard = RunTrainer(With(SmallRunFlags(), {"--epochs=1"}));
  ASSERT_EQ(standard.exit_code, 0) << standard.err;
  EXPECT_NE(SummaryField(narrow.out, "train_loss"), SummaryField(standard.out, "train_loss"));

  const std::string dir = FreshDir("width_resume");
  const ProcessResult wide = RunTrainer(
      With(SmallRunFlags(), {"--epochs=3", "--until=1", "--width=2", "--checkpoint-dir=" + dir}));
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  ExpectBadInput(RunTrainer(With(SmallRunFlags(), {"--epochs=3", "--checkpoint-dir=" + dir})),
                 "--width=2, not 1");
  const ProcessResult resumed = RunTrainer(
      With(SmallRunFlags(), {"--epochs=3", "--until=2", "--width=2", "--checkpoint-dir=" + dir}));
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resumed"), std::string::npos) << resumed.err;
}

TEST(TrainerBinary, SigtermCheckpointsMidEpochAndTheResumedRunMatches) {
  const std::vector<std::string> flags =
      With(SmallRunFlags(), {"--train-limit=4096", "--epochs=20", "--until=2"});
  const ProcessResult whole = RunTrainer(flags);
  ASSERT_EQ(whole.exit_code, 0) << whole.err;

  const std::string dir = FreshDir("sigterm");
  TrainerProcess process(With(flags, {"--checkpoint-dir=" + dir}));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (process.StderrSoFar().find("epoch 1/20") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto signalled = std::chrono::steady_clock::now();
  process.Signal(SIGTERM);
  const ProcessResult stopped = process.Wait();
  EXPECT_LT(std::chrono::steady_clock::now() - signalled, std::chrono::seconds(10));
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  ASSERT_NE(stopped.err.find("checkpointed at epoch 1, micro-batch"), std::string::npos)
      << stopped.err;

  const ProcessResult resumed = RunTrainer(With(flags, {"--checkpoint-dir=" + dir}));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(SummaryField(resumed.out, "train_loss"), SummaryField(whole.out, "train_loss"));
  EXPECT_EQ(SummaryField(resumed.out, "validation_accuracy"),
            SummaryField(whole.out, "validation_accuracy"));
}

// Population-based training: a donor trial keeps a snapshot at each --until, and other trials
// continue from one with some flags changed. The learning rates are powers of two, so the
// trainer's exact formatting of them is short.
class TrainerExploit : public ::testing::Test {
 protected:
  static constexpr const char* kNewLr = "--lr=0.001953125";

  // The donor trains to epoch 1 keeping snapshots, then on to epoch 2.
  static void SetUpTestSuite() {
    donor_dir_ = FreshDir("exploit_donor");
    const std::vector<std::string> env = {"BUDGETSWEEP_SNAPSHOTS=1",
                                          "BUDGETSWEEP_CHECKPOINT_DIR=" + donor_dir_};
    donor_to_1_ = RunTrainer(Trial({"--until=1"}), env);
    checkpoint_at_1_ = ReadBytes(std::filesystem::path(donor_dir_) / "checkpoint.pt");
    donor_to_2_ = RunTrainer(Trial({"--until=2"}), env);
  }

  void SetUp() override {
    ASSERT_EQ(donor_to_1_.exit_code, 0) << donor_to_1_.err;
    ASSERT_EQ(donor_to_2_.exit_code, 0) << donor_to_2_.err;
  }

  static std::vector<std::string> Trial(const std::vector<std::string>& flags) {
    return With(With(SmallRunFlags(), {"--epochs=3", "--lr=0.0078125"}), flags);
  }

  // The environment of a segment of the trial in `dir` after it exploited the donor at
  // `epochs`.
  static std::vector<std::string> ExploitEnv(const std::string& dir, int epochs,
                                             const std::string& mutable_flags) {
    return {"BUDGETSWEEP_CHECKPOINT_DIR=" + dir, "BUDGETSWEEP_EXPLOIT_DIR=" + donor_dir_,
            "BUDGETSWEEP_EXPLOIT_AT=" + std::to_string(epochs),
            "BUDGETSWEEP_MUTABLE=" + mutable_flags};
  }

  static std::string ExploitedLine(const std::string& changes) {
    return "exploited " + (std::filesystem::path(donor_dir_) / "snapshot-1.pt").string() +
           " at epoch 1 (changed: " + changes + ")";
  }

  static inline std::string donor_dir_;
  static inline ProcessResult donor_to_1_;
  static inline ProcessResult donor_to_2_;
  static inline std::string checkpoint_at_1_;
};

TEST_F(TrainerExploit, KeepSnapshotsLeavesAnUnchangingCopyOfTheCheckpointAtEachUntil) {
  const std::filesystem::path dir = donor_dir_;
  EXPECT_FALSE(checkpoint_at_1_.empty());
  EXPECT_EQ(ReadBytes(dir / "snapshot-1.pt"), checkpoint_at_1_);
  EXPECT_EQ(ReadBytes(dir / "snapshot-2.pt"), ReadBytes(dir / "checkpoint.pt"));
  EXPECT_FALSE(std::filesystem::exists(dir / "snapshot-3.pt"));
}

TEST_F(TrainerExploit, ExploitWithTheDonorsFlagsContinuesTheDonorsRunExactly) {
  const ProcessResult result =
      RunTrainer(Trial({"--until=2"}), ExploitEnv(FreshDir("exploit_same"), 1, "lr"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find(ExploitedLine("none")), std::string::npos) << result.err;
  EXPECT_EQ(SummaryField(result.out, "train_loss"), SummaryField(donor_to_2_.out, "train_loss"));
  EXPECT_EQ(SummaryField(result.out, "validation_accuracy"),
            SummaryField(donor_to_2_.out, "validation_accuracy"));
}

TEST_F(TrainerExploit, ExploitTrainsOnWithTheNewLrAndLaterSegmentsResumeTheTrialsOwnCheckpoint) {
  const std::string dir = FreshDir("exploit_lr");
  const std::vector<std::string> env = ExploitEnv(dir, 1, "lr");
  const ProcessResult exploited = RunTrainer(Trial({"--until=2", kNewLr}), env);
  ASSERT_EQ(exploited.exit_code, 0) << exploited.err;
  EXPECT_NE(exploited.err.find(ExploitedLine("--lr 0.0078125 -> 0.001953125")), std::string::npos)
      << exploited.err;
  const nlohmann::json loss = Summary(exploited, "train_loss");
  const nlohmann::json donor_loss = Summary(donor_to_2_, "train_loss");
  ASSERT_EQ(loss.size(), 2u) << exploited.out;
  EXPECT_EQ(loss[0], donor_loss[0]);
  EXPECT_NE(loss[1], donor_loss[1]);

  ExpectBadInput(RunTrainer(Trial({"--checkpoint-dir=" + dir})), "--lr=0.001953125, not 0.0078125");

  const ProcessResult later = RunTrainer(Trial({"--until=3", kNewLr}), env);
  ASSERT_EQ(later.exit_code, 0) << later.err;
  EXPECT_NE(later.err.find("resumed from " + dir + " at epoch 2"), std::string::npos) << later.err;
  EXPECT_EQ(later.err.find("exploited"), std::string::npos) << later.err;
  const nlohmann::json later_loss = Summary(later, "train_loss");
  ASSERT_EQ(later_loss.size(), 3u) << later.out;
  EXPECT_EQ(later_loss[0], loss[0]);
  EXPECT_EQ(later_loss[1], loss[1]);
}

TEST_F(TrainerExploit, ExploitSetsTheOptimizersWeightDecayFromTheNewFlag) {
  const ProcessResult result = RunTrainer(Trial({"--until=2", "--weight-decay=0.5"}),
                                          ExploitEnv(FreshDir("exploit_wd"), 1, "weight-decay"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json loss = Summary(result, "train_loss");
  const nlohmann::json donor_loss = Summary(donor_to_2_, "train_loss");
  ASSERT_EQ(loss.size(), 2u) << result.out;
  EXPECT_EQ(loss[0], donor_loss[0]);
  EXPECT_NE(loss[1], donor_loss[1]);  // the donor's weight decay would reproduce its epoch 2
}

TEST_F(TrainerExploit, ExploitRefusesAChangedFlagThatIsNotMutable) {
  ExpectBadInput(RunTrainer(Trial({kNewLr, "--weight-decay=0.5"}),
                            ExploitEnv(FreshDir("exploit_refused"), 1, "lr")),
                 "--weight-decay");
}

TEST_F(TrainerExploit, ExploitOfAMissingSnapshotFailsNamingTheFile) {
  ExpectBadInput(RunTrainer(Trial({}), ExploitEnv(FreshDir("exploit_missing"), 3, "lr")),
                 "snapshot-3.pt");
}

TEST(TrainerBinary, ProfileTraceSeparatesDataWaitFromCompute) {
  const std::string trace = FreshDir("profile") + "/trace.json";
  const ProcessResult result = RunTrainer(
      With(SmallRunFlags(), {"--epochs=1", "--profile-steps=3", "--profile-out=" + trace}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::ifstream file(trace);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"name\": \"data_wait\""), std::string::npos);
  EXPECT_NE(text.find("\"name\": \"train_step\""), std::string::npos);
  EXPECT_NE(text.find("aten::convolution"), std::string::npos);
}

TEST(TrainerBinary, HelpListsFlagsWithDefaults) {
  const ProcessResult result = RunTrainer({"--help"});
  EXPECT_EQ(result.exit_code, 0);
  for (const char* flag : {"--accumulation-steps", "--lr-scaling", "--profile-steps",
                           "--checkpoint-dir", "--metrics-port", "--batch-size INT=128"}) {
    EXPECT_NE(result.out.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace bsw::trainer::testing
