// Runs budgetsweep-trainer as the sweep runner does and checks the process contract: exit codes,
// one-line reasons, pause/resume and SIGTERM.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
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
