// local::PoolFile against the real file system and real processes: accounts survive in the
// ledger, a live run is told apart from one killed with kill -9, and bad files are named.
#include "operator/adapters/local/pool_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "nlohmann/json.hpp"
#include "operator/adapters/local/state_dir.h"
#include "tests/mocks/fake_clock.h"

namespace bsw::local {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class PoolFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/bsw-pool-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    pool_ = (dir_ / "pool.yaml").string();
    WritePool("1");
  }
  void WritePool(const std::string& gpu_hours, const std::string& more = "") {
    Write(pool_,
          "apiVersion: budgetsweep.dev/v1alpha1\nkind: BudgetPool\nmetadata: {name: team}\n"
          "spec: {gpuHours: " +
              gpu_hours + more + "}\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  std::string StateDir(const std::string& name) const {
    fs::create_directories(dir_ / name);
    return (dir_ / name).string();
  }
  // Opens the pool for `sweep` as its runner does, holding the sweep's state directory.
  std::unique_ptr<PoolFile> Open(const std::string& sweep) {
    if (!locks_.contains(sweep)) {
      StatusOr<StateDirLock> held = StateDirLock::Acquire(StateDir(sweep));
      EXPECT_TRUE(held.ok()) << held.status().message();
      if (held.ok()) locks_.emplace(sweep, std::move(held).value());
    }
    StatusOr<std::unique_ptr<PoolFile>> pool =
        PoolFile::Open(pool_, sweep, "", StateDir(sweep), clock_);
    EXPECT_TRUE(pool.ok()) << pool.status().message();
    return pool.ok() ? std::move(*pool) : nullptr;
  }
  // Takes the gate as `pool`'s sweep holding nothing, and commits `reserved` device-seconds.
  static PoolCap Reserve(PoolFile& pool, const std::string& sweep, double reserved) {
    StatusOr<PoolCap> cap = pool.Acquire(0);
    EXPECT_TRUE(cap.ok()) << cap.status().message();
    PoolAccount account{.sweep = sweep, .reserved_device_seconds = reserved};
    EXPECT_TRUE(pool.Commit(account).ok());
    return cap.ok() ? *cap : PoolCap{};
  }

  FakeClock clock_{1'764'547'200};  // 2025-12-01T00:00:00Z
  fs::path dir_;
  std::map<std::string, StateDirLock> locks_;
  std::string pool_;
};

TEST_F(PoolFileTest, ALiveRunsReservationIsKeptAndItsPartKeptForIt) {
  std::unique_ptr<PoolFile> a = Open("a");
  std::unique_ptr<PoolFile> b = Open("b");
  ASSERT_TRUE(a && b);
  EXPECT_DOUBLE_EQ(Reserve(*a, "a", 1000).cap_device_seconds, 3600);  // alone: the whole pool
  // b sees a's reservation and its part (half of the pool, 1800) of which a has 800 left.
  PoolCap cap = Reserve(*b, "b", 0);
  EXPECT_DOUBLE_EQ(cap.cap_device_seconds, 3600 - 1000 - 800);
  EXPECT_EQ(cap.limit, Reason::kPoolFairShare);
  EXPECT_EQ(b->accounts().at(fs::canonical(dir_ / "a").string()).held(), 1000);
}

TEST_F(PoolFileTest, ARunKilledWithKillDashNineStaysChargedButTakesNoPart) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  std::string state = StateDir("killed");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    StatusOr<StateDirLock> held = StateDirLock::Acquire(state);
    StatusOr<std::unique_ptr<PoolFile>> pool = PoolFile::Open(pool_, "killed", "", state, clock_);
    if (!held.ok() || !pool.ok() || !(*pool)->Acquire(0).ok()) _exit(1);
    if (!(*pool)->Commit(PoolAccount{.sweep = "killed", .reserved_device_seconds = 600}).ok())
      _exit(1);
    if (write(ready[1], "x", 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  std::unique_ptr<PoolFile> b = Open("b");
  ASSERT_TRUE(b);
  // Alive: its part (1800, of which it holds 600) is kept for it.
  EXPECT_DOUBLE_EQ(Reserve(*b, "b", 0).cap_device_seconds, 3600 - 600 - 1200);

  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
  // Dead: its reservation stays charged, but nothing is kept for it.
  EXPECT_DOUBLE_EQ(Reserve(*b, "b", 0).cap_device_seconds, 3600 - 600);
  EXPECT_FALSE(b->accounts().at(fs::canonical(state).string()).active);
  // Resumed: the new run settles the account to what the sweep holds.
  StatusOr<StateDirLock> relocked = StateDirLock::Acquire(state);  // the killed runner's is gone
  ASSERT_TRUE(relocked.ok()) << relocked.status().message();
  StatusOr<std::unique_ptr<PoolFile>> resumed = PoolFile::Open(pool_, "killed", "", state, clock_);
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  ASSERT_TRUE((*resumed)->Acquire(250).ok());
  ASSERT_TRUE((*resumed)->Commit(PoolAccount{.sweep = "killed", .used_device_seconds = 250}).ok());
  EXPECT_DOUBLE_EQ(PoolHeld((*resumed)->accounts()), 250);
}

TEST_F(PoolFileTest, BadFilesAreNamed) {
  WritePool("0");
  StatusOr<std::unique_ptr<PoolFile>> bad = PoolFile::Open(pool_, "a", "", StateDir("a"), clock_);
  EXPECT_THAT(bad.status().message(), HasSubstr(pool_ + " is not a valid BudgetPool"));
  EXPECT_THAT(bad.status().message(), HasSubstr("spec.gpuHours: must be greater than 0, got 0"));

  WritePool("1");
  StatusOr<std::unique_ptr<PoolFile>> other =
      PoolFile::Open(pool_, "a", "team-b", StateDir("a"), clock_);
  EXPECT_THAT(other.status().message(),
              HasSubstr("the pool is \"team\", but spec.budget.poolRef.name of sweep \"a\" is "
                        "\"team-b\""));

  std::unique_ptr<PoolFile> a = Open("a");
  ASSERT_TRUE(a);
  Write(pool_ + ".ledger.json", "{\"sweeps\": [{\"key\": \"x\", \"sweep\": 1}]}");
  StatusOr<PoolCap> cap = a->Acquire(0);
  EXPECT_THAT(cap.status().message(),
              HasSubstr(pool_ + ".ledger.json.sweeps[0].sweep: must be a string, got number 1"));
  EXPECT_THAT(cap.status().message(),
              HasSubstr(pool_ + ".ledger.json.sweeps[0].usedDeviceSeconds: required"));
  // Waiting cannot heal a damaged ledger: the runner ends on FailedPrecondition.
  EXPECT_EQ(cap.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(cap.status().message(), HasSubstr("the pool's ledger is damaged"));
  Write(pool_ + ".ledger.json", "{\"sweeps\": [");
  EXPECT_THAT(a->Acquire(0).status().message(), HasSubstr(pool_ + ".ledger.json: not JSON"));
  // The gate was given back: a fixed ledger is read at once.
  fs::remove(pool_ + ".ledger.json");
  EXPECT_TRUE(a->Acquire(0).ok());
  EXPECT_TRUE(a->Commit(PoolAccount{.sweep = "a"}).ok());
}

TEST_F(PoolFileTest, APeriodStartsTheUsedAgainFromZeroAndKeepsTheOneThatEnded) {
  WritePool("1", ", period: calendarMonth");
  std::unique_ptr<PoolFile> a = Open("a");
  ASSERT_TRUE(a);
  ASSERT_TRUE(a->Acquire(0).ok());
  ASSERT_TRUE(a->Commit(PoolAccount{.sweep = "a", .used_device_seconds = 3000}).ok());
  // Later in December the pool has 600 left.
  clock_.Advance(20 * 86400);
  EXPECT_DOUBLE_EQ(a->Acquire(3000)->cap_device_seconds, 3600);
  ASSERT_TRUE(a->Commit(PoolAccount{.sweep = "a", .used_device_seconds = 3000}).ok());
  // In January all of it again, on top of what the sweep used before.
  clock_.Advance(15 * 86400);
  EXPECT_DOUBLE_EQ(a->Acquire(3000)->cap_device_seconds, 3000 + 3600);
  ASSERT_TRUE(a->Commit(PoolAccount{.sweep = "a", .used_device_seconds = 3100}).ok());
  std::ifstream in(pool_ + ".ledger.json");
  nlohmann::json ledger = nlohmann::json::parse(in);
  EXPECT_EQ(ledger["period"],
            nlohmann::json({{"start", "2026-01-01T00:00:00Z"}, {"end", "2026-02-01T00:00:00Z"}}));
  ASSERT_EQ(ledger["previousPeriods"].size(), 1u);
  const nlohmann::json& december = ledger["previousPeriods"][0];
  EXPECT_EQ(december["start"], "2025-12-01T00:00:00Z");
  EXPECT_EQ(december["end"], "2026-01-01T00:00:00Z");
  EXPECT_DOUBLE_EQ(december["usedGpuHours"].get<double>(), 0.8333);
  EXPECT_DOUBLE_EQ(ledger["usedGpuHours"].get<double>(), 0.0278) << "rounded for people";
}

}  // namespace
}  // namespace bsw::local
