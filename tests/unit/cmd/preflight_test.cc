#include "operator/cmd/preflight.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/unit/core/sweep_fixture.h"
#include "trainer-image/idx.h"

namespace bsw {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class PreflightTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bsw-preflight-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "bin");
    fs::create_directories(dir_ / "data");
    Write(dir_ / "bin" / "trainer", 0755);
    Write(dir_ / "bin" / "not-executable", 0644);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void Write(const fs::path& file, mode_t mode) {
    std::ofstream(file) << "#!/bin/sh\n";
    ::chmod(file.c_str(), mode);
  }

  // The fixture's sweep with this command and these args.
  static SweepSpec Sweep(const std::string& command, const std::vector<std::string>& args) {
    return testing::SpecWith([&](nlohmann::json& j) {
      auto& container = j["spec"]["trial"]["template"]["spec"]["containers"][0];
      container["command"] = {command};
      container["args"] = args;
    });
  }

  std::vector<std::string> Check(const std::string& command, const std::vector<std::string>& args,
                                 const std::string& dataset_dir = "") const {
    return Preflight(Sweep(command, args), (dir_ / "bin").string(),
                     dataset_dir.empty() ? (dir_ / "data").string() : dataset_dir);
  }

  fs::path dir_;
};

TEST_F(PreflightTest, ASweepWhoseTrainerAndDataAreThereHasNoProblem) {
  EXPECT_THAT(Check("trainer", {"--dataset=fashion-mnist"}), IsEmpty());
  EXPECT_THAT(Check((dir_ / "bin" / "trainer").string(), {"--data-dir", (dir_ / "data").string()}),
              IsEmpty());
}

TEST_F(PreflightTest, NamesTheCommandThatIsNotOnPathOrNotExecutable) {
  EXPECT_THAT(Check("budgetsweep-trainer", {}),
              ElementsAre("spec.trial.template.spec.containers[0].command[0]: budgetsweep-trainer "
                          "not found on PATH (give its path, or put its directory on PATH)"));
  std::string missing = (dir_ / "bin" / "missing").string();
  EXPECT_THAT(Check(missing, {}),
              ElementsAre("spec.trial.template.spec.containers[0].command[0]: " + missing +
                          ": no such file"));
  std::string plain = (dir_ / "bin" / "not-executable").string();
  EXPECT_THAT(Check(plain, {}), ElementsAre("spec.trial.template.spec.containers[0].command[0]: " +
                                            plain + ": not an executable file"));
}

TEST_F(PreflightTest, NamesTheArgOfADataDirThatIsNotThereInEitherForm) {
  EXPECT_THAT(Check("trainer", {"--model=mlp", "--data-dir=/nonexistent/fmnist"}),
              ElementsAre("spec.trial.template.spec.containers[0].args[1]: --data-dir "
                          "/nonexistent/fmnist: no such directory"));
  EXPECT_THAT(Check("trainer", {"--data-dir", "/nonexistent/fmnist", "--epochs=3"}),
              ElementsAre("spec.trial.template.spec.containers[0].args[1]: --data-dir "
                          "/nonexistent/fmnist: no such directory"));
}

TEST_F(PreflightTest, FashionMnistWithoutADataDirNeedsTheTrainersDefaultDirectory) {
  EXPECT_THAT(
      Check("trainer", {"--dataset=fashion-mnist"}, "/nonexistent/datasets/fashion-mnist"),
      ElementsAre("spec.trial.template.spec.containers[0].args[0]: --dataset=fashion-mnist needs "
                  "/nonexistent/datasets/fashion-mnist (Debian's dataset-fashion-mnist; `make "
                  "deps` installs it) or a --data-dir"));
  EXPECT_THAT(Check("trainer", {"--dataset=fashion-mnist", "--data-dir", (dir_ / "data").string()},
                    "/nonexistent/datasets/fashion-mnist"),
              IsEmpty())
      << "a --data-dir replaces the default";
}

TEST(PreflightDefaults, TheDatasetDirectoryIsTheTrainersOwnDefault) {
  EXPECT_STREQ(kTrainerFashionMnistDir, trainer::kDefaultFashionMnistDir);
}

}  // namespace
}  // namespace bsw
