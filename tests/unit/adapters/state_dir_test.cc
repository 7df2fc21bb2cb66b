// StateDirLock and RecognizeStateDir on real directories, with a second runner in a child process.

#include "operator/adapters/local/state_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace bsw::local {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class StateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "state-dir-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }

  static void Touch(const fs::path& file) { std::ofstream(file) << "x\n"; }
  static fs::perms Mode(const fs::path& path) {
    return fs::status(path).permissions() & fs::perms::mask;
  }

  fs::path root_;
};

TEST_F(StateDirTest, ANewDirectoryIsCreatedPrivateMarkedAndLockedWithThePid) {
  StatusOr<StateDirLock> held = StateDirLock::Acquire((root_ / "a/b").string());
  ASSERT_TRUE(held.ok()) << held.status().message();
  EXPECT_EQ(held->path(), fs::canonical(root_ / "a/b"));
  EXPECT_EQ(Mode(held->path()), fs::perms::owner_all);
  EXPECT_TRUE(fs::exists(held->path() / kStateMarker));
  std::ifstream lock(held->path() / kRunnerLock);
  pid_t pid = 0;
  lock >> pid;
  EXPECT_EQ(pid, getpid());
  EXPECT_TRUE(RunnerHoldsStateDir(held->path()));
}

TEST_F(StateDirTest, AnExistingStateDirectoryIsMadePrivate) {
  fs::create_directories(root_ / "s");
  fs::permissions(root_ / "s", fs::perms::all);
  Touch(root_ / "s" / kStateMarker);
  StatusOr<StateDirLock> held = StateDirLock::Acquire((root_ / "s").string());
  ASSERT_TRUE(held.ok()) << held.status().message();
  EXPECT_EQ(Mode(root_ / "s"), fs::perms::owner_all);
}

TEST_F(StateDirTest, ASecondRunnerIsRefusedNamingTheDirectoryAndTheHolder) {
  StatusOr<StateDirLock> held = StateDirLock::Acquire((root_ / "s").string());
  ASSERT_TRUE(held.ok()) << held.status().message();
  int result[2];
  ASSERT_EQ(pipe(result), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    StatusOr<StateDirLock> second = StateDirLock::Acquire((root_ / "s").string());
    std::string message = second.ok() ? "acquired" : second.status().message();
    _exit(write(result[1], message.data(), message.size()) < 0 ? 1 : 0);
  }
  close(result[1]);
  char text[1024] = {};
  ssize_t n = read(result[0], text, sizeof text - 1);
  close(result[0]);
  waitpid(child, nullptr, 0);
  ASSERT_GT(n, 0);
  EXPECT_THAT(text, HasSubstr((root_ / "s").string()));
  EXPECT_THAT(text, HasSubstr("another budgetsweep run (PID " + std::to_string(getpid()) + ")"));
}

TEST_F(StateDirTest, TheLockGoesWithItsHolder) {
  {
    StatusOr<StateDirLock> held = StateDirLock::Acquire((root_ / "s").string());
    ASSERT_TRUE(held.ok());
  }
  EXPECT_FALSE(RunnerHoldsStateDir(root_ / "s"));
  EXPECT_TRUE(StateDirLock::Acquire((root_ / "s").string()).ok());
}

TEST_F(StateDirTest, DirectoriesOfEarlierReleasesAndEmptyOnesAreStateDirectories) {
  for (const char* file : {"journal.jsonl", "sweep.json"}) {
    fs::path dir = root_ / file;
    fs::create_directories(dir);
    Touch(dir / file);
    Touch(dir / "other-file");
    EXPECT_TRUE(RecognizeStateDir(dir.string()).ok()) << file;
  }
  fs::create_directories(root_ / "empty");
  EXPECT_TRUE(RecognizeStateDir((root_ / "empty").string()).ok());
  fs::create_directories(root_ / "lock-only");
  Touch(root_ / "lock-only" / kRunnerLock);  // a run killed before it wrote the marker
  EXPECT_TRUE(RecognizeStateDir((root_ / "lock-only").string()).ok());
}

TEST_F(StateDirTest, AnUnrelatedDirectoryIsRefusedWithWhatItHolds) {
  fs::create_directories(root_ / "photos");
  for (const char* file : {"a.jpg", "b.jpg", "c.jpg", "d.jpg", "e.jpg"})
    Touch(root_ / "photos" / file);
  StatusOr<StateDirLock> held = StateDirLock::Acquire((root_ / "photos").string());
  ASSERT_FALSE(held.ok());
  EXPECT_EQ(held.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(held.status().message(),
              HasSubstr((root_ / "photos").string() + " is not a budgetsweep state directory: it "
                                                      "holds a.jpg, b.jpg, c.jpg and 2 more"));
  EXPECT_FALSE(fs::exists(root_ / "photos" / kRunnerLock));  // nothing written
  EXPECT_FALSE(fs::exists(root_ / "photos" / kStateMarker));
}

TEST_F(StateDirTest, ASymlinkIsResolvedAndItsTargetChecked) {
  fs::create_directory_symlink("/", root_ / "to-root");
  StatusOr<StateDirLock> held = StateDirLock::Acquire((root_ / "to-root").string());
  ASSERT_FALSE(held.ok());
  EXPECT_THAT(held.status().message(), HasSubstr("(which resolves to /) is not a budgetsweep"));
  EXPECT_FALSE(fs::exists(fs::path("/") / kStateMarker));

  fs::create_directories(root_ / "real");
  fs::create_directory_symlink(root_ / "real", root_ / "link");
  StatusOr<StateDirLock> linked = StateDirLock::Acquire((root_ / "link").string());
  ASSERT_TRUE(linked.ok()) << linked.status().message();
  EXPECT_EQ(linked->path(), fs::canonical(root_ / "real"));
}

TEST_F(StateDirTest, AFileIsNotAStateDirectory) {
  Touch(root_ / "file");
  StatusOr<StateDirLock> held = StateDirLock::Acquire((root_ / "file").string());
  ASSERT_FALSE(held.ok());
  EXPECT_THAT(held.status().message(), HasSubstr("file: not a directory"));
}

}  // namespace
}  // namespace bsw::local
