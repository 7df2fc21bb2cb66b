#include "trainer-image/options.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

namespace bsw::trainer {
namespace {

StatusOr<Command> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "budgetsweep-trainer");
  return ParseCommandLine(static_cast<int>(args.size()), args.data());
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(Options, SweepParametersArriveAsNameEqualsValueFlags) {
  StatusOr<Command> command =
      Parse({"--lr=0.003", "--weight-decay=0.02", "--warmup-fraction=0.1", "--batch-size=256"});
  ASSERT_TRUE(command.ok()) << command.status().message();
  const auto& o = std::get<TrainOptions>(*command);
  EXPECT_DOUBLE_EQ(o.lr, 0.003);
  EXPECT_DOUBLE_EQ(o.weight_decay, 0.02);
  EXPECT_DOUBLE_EQ(o.warmup_fraction, 0.1);
  EXPECT_EQ(o.batch_size, 256);
  EXPECT_EQ(o.until, o.epochs);
}

TEST(Options, VersionPrintsTheBuildDescriptionItIsGiven) {
  std::vector<const char*> args = {"budgetsweep-trainer", "--version"};
  StatusOr<Command> command = ParseCommandLine(static_cast<int>(args.size()), args.data(),
                                               "budgetsweep-trainer 9.9 (LibTorch 0.1, CPU)");
  ASSERT_TRUE(command.ok()) << command.status().message();
  EXPECT_EQ(std::get<HelpRequested>(*command).text,
            "budgetsweep-trainer 9.9 (LibTorch 0.1, CPU)\n");
}

TEST(Options, EnvironmentGivesDefaultsAndExplicitFlagsWin) {
  ScopedEnv max("BUDGETSWEEP_MAX_RESOURCE", "27.0");
  ScopedEnv until("BUDGETSWEEP_UNTIL", "9");
  ScopedEnv dir("BUDGETSWEEP_CHECKPOINT_DIR", "/tmp/ckpt");
  ScopedEnv port("BUDGETSWEEP_METRICS_PORT", "9400");
  ScopedEnv sweep("BUDGETSWEEP_SWEEP", "s1");
  ScopedEnv milestones("BUDGETSWEEP_MILESTONES", "1,3,9,27");
  StatusOr<Command> command = Parse({"--until=3"});
  ASSERT_TRUE(command.ok()) << command.status().message();
  const auto& o = std::get<TrainOptions>(*command);
  EXPECT_EQ(o.epochs, 27);
  EXPECT_EQ(o.until, 3);
  EXPECT_EQ(o.checkpoint_dir, "/tmp/ckpt");
  EXPECT_EQ(o.metrics_port, 9400);
  EXPECT_EQ(o.sweep, "s1");
  EXPECT_EQ(o.trial, "");
  EXPECT_EQ(o.milestones, (std::vector<int>{1, 3, 9, 27}));
}

TEST(Options, PopulationBasedTrainingArrivesThroughTheEnvironment) {
  ScopedEnv dir("BUDGETSWEEP_CHECKPOINT_DIR", "/ckpt/trial-4");
  ScopedEnv snapshots("BUDGETSWEEP_SNAPSHOTS", "1");
  ScopedEnv exploit_dir("BUDGETSWEEP_EXPLOIT_DIR", "/ckpt/trial-3");
  ScopedEnv exploit_at("BUDGETSWEEP_EXPLOIT_AT", "9.0");
  ScopedEnv mutable_flags("BUDGETSWEEP_MUTABLE", "lr,weight-decay");
  StatusOr<Command> command = Parse({});
  ASSERT_TRUE(command.ok()) << command.status().message();
  const auto& o = std::get<TrainOptions>(*command);
  EXPECT_TRUE(o.keep_snapshots);
  EXPECT_EQ(o.exploit_dir, "/ckpt/trial-3");
  EXPECT_EQ(o.exploit_at, 9);
  EXPECT_EQ(o.mutable_flags, (std::vector<std::string>{"lr", "weight-decay"}));
}

TEST(Options, SnapshotsAreOffAndNothingIsExploitedByDefault) {
  StatusOr<Command> command = Parse({});
  ASSERT_TRUE(command.ok()) << command.status().message();
  const auto& o = std::get<TrainOptions>(*command);
  EXPECT_FALSE(o.keep_snapshots);
  EXPECT_EQ(o.exploit_dir, "");
  EXPECT_TRUE(o.mutable_flags.empty());
}

TEST(Options, EmptyEnvironmentValuesAreIgnored) {
  ScopedEnv until("BUDGETSWEEP_UNTIL", "");
  StatusOr<Command> command = Parse({});
  ASSERT_TRUE(command.ok()) << command.status().message();
  EXPECT_EQ(std::get<TrainOptions>(*command).until, 10);
}

TEST(Options, BadValuesNameTheirFlagOnOneLine) {
  const std::vector<std::pair<std::vector<const char*>, std::string>> cases = {
      {{"--model=vgg"}, "--model"},
      {{"--precision=fp8"}, "--precision"},
      {{"--lr=-1"}, "--lr"},
      {{"--lr=abc"}, "--lr"},
      {{"--epochs=2.5"}, "--epochs"},
      {{"--epochs=3", "--until=4"}, "--until"},
      {{"--warmup-fraction=1.5"}, "--warmup-fraction"},
      {{"--batch-size=0"}, "--batch-size"},
      {{"--no-such-flag=1"}, "--no-such-flag"},
      {{"--optimizer=adam"}, "--optimizer"},
      {{"--accumulation-steps=0"}, "--accumulation-steps"},
      {{"--width=0"}, "--width"},
      {{"--width=32"}, "--width"},
      {{"--width=wide"}, "--width"},
      {{"--exploit-dir=/ckpt/trial-3", "--checkpoint-dir=/ckpt/trial-4"}, "--exploit-at"},
      {{"--exploit-dir=/ckpt/trial-3", "--exploit-at=1.5"}, "--exploit-at"},
      {{"--exploit-dir=/ckpt/trial-3", "--exploit-at=1"}, "--checkpoint-dir"},
  };
  for (const auto& [args, flag] : cases) {
    StatusOr<Command> command = Parse(args);
    ASSERT_FALSE(command.ok()) << flag;
    EXPECT_NE(command.status().message().find(flag), std::string::npos)
        << command.status().message();
    EXPECT_EQ(command.status().message().find('\n'), std::string::npos);
  }
}

TEST(Options, ExportSubcommandParsesItsOwnFlags) {
  StatusOr<Command> command = Parse({"export", "--out=/tmp/x", "--size=64", "--format=png"});
  ASSERT_TRUE(command.ok()) << command.status().message();
  const auto& o = std::get<ExportOptions>(*command);
  EXPECT_EQ(o.out_dir, "/tmp/x");
  EXPECT_EQ(o.size, 64);
  EXPECT_EQ(o.format, "png");
}

}  // namespace
}  // namespace bsw::trainer
