// The BudgetGate contract (operator/ports/budget_gate.h), run against the memory pool that
// controller tests use and against the local pool file it stands in for, so that the two cannot
// drift apart; then what the memory gate adds for tests.
#include "tests/fakes/memory_budget_gate.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "nlohmann/json.hpp"
#include "operator/adapters/local/pool_file.h"
#include "operator/adapters/local/state_dir.h"
#include "tests/mocks/fake_clock.h"

namespace bsw {
namespace {

namespace fs = std::filesystem;

constexpr double kHour = 3600;

// Pool "team" of one GPU-hour.
PoolSpec TeamPool(std::optional<double> max_per_sweep_gpu_hours = std::nullopt,
                  std::string period = "") {
  PoolSpec spec;
  spec.name = "team";
  spec.gpu_hours = 1;
  spec.max_per_sweep_gpu_hours = max_per_sweep_gpu_hours;
  spec.period = std::move(period);
  return spec;
}

// A pool file in a directory of its own, each sweep's runner holding its state directory (so
// every account stays active, as in the memory pool).
class PoolFileGates {
 public:
  PoolFileGates(const PoolSpec& spec, const Clock& clock) : clock_(clock) {
    std::string tmpl = (fs::temp_directory_path() / "bsw-budget-gate-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    dir_ = tmpl;
    nlohmann::json object = {{"apiVersion", "budgetsweep.dev/v1alpha1"},
                             {"kind", "BudgetPool"},
                             {"metadata", {{"name", spec.name}}},
                             {"spec", {{"gpuHours", spec.gpu_hours}}}};
    if (spec.max_per_sweep_gpu_hours) {
      object["spec"]["maxPerSweepGpuHours"] = *spec.max_per_sweep_gpu_hours;
    }
    if (!spec.period.empty()) object["spec"]["period"] = spec.period;
    std::ofstream(dir_ / "pool.json") << object.dump();
  }
  ~PoolFileGates() { fs::remove_all(dir_); }

  std::unique_ptr<BudgetGate> Open(const std::string& sweep) {
    const fs::path state = dir_ / sweep;
    fs::create_directories(state);
    StatusOr<local::StateDirLock> held = local::StateDirLock::Acquire(state.string());
    EXPECT_TRUE(held.ok()) << held.status().message();
    if (held.ok()) locks_.emplace(sweep, std::move(held).value());
    StatusOr<std::unique_ptr<local::PoolFile>> gate =
        local::PoolFile::Open((dir_ / "pool.json").string(), sweep, "", state.string(), clock_);
    EXPECT_TRUE(gate.ok()) << gate.status().message();
    return gate.ok() ? std::move(*gate) : nullptr;
  }

 private:
  const Clock& clock_;
  fs::path dir_;
  std::map<std::string, local::StateDirLock> locks_;
};

class MemoryGates {
 public:
  MemoryGates(const PoolSpec& spec, const Clock& clock) : pool_(spec, clock) {}

  std::unique_ptr<BudgetGate> Open(const std::string& sweep) {
    return std::make_unique<MemoryBudgetGate>(pool_, sweep);
  }

 private:
  MemoryPool pool_;
};

template <typename Gates>
class BudgetGateContract : public ::testing::Test {
 protected:
  // A pass of the sweep behind `gate` that holds `held` device-seconds and then commits
  // `account`: the cap Acquire gave it.
  static PoolCap Pass(BudgetGate& gate, double held, const PoolAccount& account) {
    StatusOr<PoolCap> cap = gate.Acquire(held);
    EXPECT_TRUE(cap.ok()) << cap.status().message();
    EXPECT_TRUE(gate.Commit(account).ok());
    return cap.ok() ? *cap : PoolCap{};
  }

  FakeClock clock_{1'764'547'200};  // 2025-12-01T00:00:00Z
};

using Implementations = ::testing::Types<PoolFileGates, MemoryGates>;
TYPED_TEST_SUITE(BudgetGateContract, Implementations);

TYPED_TEST(BudgetGateContract, ASweepAloneMayTakeTheWholePool) {
  TypeParam gates(TeamPool(), this->clock_);
  std::unique_ptr<BudgetGate> a = gates.Open("a");
  ASSERT_TRUE(a);
  PoolCap cap = this->Pass(*a, 0, {.sweep = "a", .reserved_device_seconds = 1000});
  EXPECT_DOUBLE_EQ(cap.cap_device_seconds, kHour);
  EXPECT_FALSE(cap.waits);
}

// Commit gives the gate back, and what it recorded is what the next sweep's cap counts.
TYPED_TEST(BudgetGateContract, ACommittedAccountCountsInEveryOtherSweepsCap) {
  TypeParam gates(TeamPool(), this->clock_);
  std::unique_ptr<BudgetGate> a = gates.Open("a");
  std::unique_ptr<BudgetGate> b = gates.Open("b");
  ASSERT_TRUE(a && b);
  this->Pass(*a, 0, {.sweep = "a", .reserved_device_seconds = 1000});
  // a's part of the pool (half of it) is kept for it, less the 1000 it took.
  PoolCap cap = this->Pass(*b, 0, {.sweep = "b", .reserved_device_seconds = 500});
  EXPECT_DOUBLE_EQ(cap.cap_device_seconds, kHour - 1000 - 800);
  EXPECT_TRUE(cap.waits);
  cap = this->Pass(*a, 1000, {.sweep = "a", .reserved_device_seconds = 1000});
  EXPECT_DOUBLE_EQ(cap.cap_device_seconds, kHour - 500 - 1300);
}

TYPED_TEST(BudgetGateContract, WhatASweepHoldsNowReplacesWhatItsAccountSays) {
  TypeParam gates(TeamPool(), this->clock_);
  std::unique_ptr<BudgetGate> a = gates.Open("a");
  ASSERT_TRUE(a);
  this->Pass(*a, 0, {.sweep = "a", .reserved_device_seconds = 3000});
  EXPECT_DOUBLE_EQ(this->Pass(*a, 200, {.sweep = "a"}).cap_device_seconds, kHour);
  // Beyond the pool, the cap still covers what the sweep holds: running work is never cut.
  EXPECT_DOUBLE_EQ(this->Pass(*a, 5000, {.sweep = "a"}).cap_device_seconds, 5000);
}

TYPED_TEST(BudgetGateContract, MaxPerSweepCapsEachSweepForGood) {
  TypeParam gates(TeamPool(0.25), this->clock_);
  std::unique_ptr<BudgetGate> a = gates.Open("a");
  ASSERT_TRUE(a);
  PoolCap cap = this->Pass(*a, 100, {.sweep = "a", .reserved_device_seconds = 100});
  EXPECT_DOUBLE_EQ(cap.cap_device_seconds, kHour / 4);
  EXPECT_FALSE(cap.waits);
}

TYPED_TEST(BudgetGateContract, WhatWasUsedInAnEndedPeriodNoLongerCounts) {
  TypeParam gates(TeamPool(std::nullopt, "720h"), this->clock_);
  std::unique_ptr<BudgetGate> a = gates.Open("a");
  std::unique_ptr<BudgetGate> b = gates.Open("b");
  ASSERT_TRUE(a && b);
  this->Pass(*a, 0, {.sweep = "a", .used_device_seconds = kHour, .active = false});
  EXPECT_DOUBLE_EQ(this->Pass(*b, 0, {.sweep = "b"}).cap_device_seconds, 0);
  this->clock_.Advance(721 * kHour);
  EXPECT_DOUBLE_EQ(this->Pass(*b, 0, {.sweep = "b"}).cap_device_seconds, kHour);
}

class MemoryBudgetGateTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  MemoryPool pool_{TeamPool(), clock_};
  MemoryBudgetGate a_{pool_, "ns/a"};
  MemoryBudgetGate b_{pool_, "ns/b"};
};

TEST_F(MemoryBudgetGateTest, AnotherSweepIsRefusedWhileTheGateIsHeld) {
  ASSERT_TRUE(a_.Acquire(0).ok());
  StatusOr<PoolCap> refused = b_.Acquire(0);
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.status().message().find("ns/a"), std::string::npos)
      << refused.status().message();
  ASSERT_TRUE(a_.Commit({.sweep = "a"}).ok());
  EXPECT_TRUE(b_.Acquire(0).ok());
}

TEST_F(MemoryBudgetGateTest, AMisuseOfThePortIsAnError) {
  EXPECT_EQ(a_.Commit({.sweep = "a"}).code(), StatusCode::kFailedPrecondition)
      << "a commit without its acquire";
  ASSERT_TRUE(a_.Acquire(0).ok());
  EXPECT_EQ(a_.Acquire(0).status().code(), StatusCode::kFailedPrecondition)
      << "an acquire while held";
}

TEST_F(MemoryBudgetGateTest, TheAccountsAreKeyedByTheGatesKey) {
  ASSERT_TRUE(a_.Acquire(0).ok());
  ASSERT_TRUE(a_.Commit({.sweep = "a", .reserved_device_seconds = 600}).ok());
  ASSERT_EQ(pool_.state().accounts.count("ns/a"), 1u);
  EXPECT_EQ(pool_.state().accounts.at("ns/a").held(), 600);
}

TEST_F(MemoryBudgetGateTest, AFailingAcquireTakesNothing) {
  a_.FailAcquires(UnavailableError("the pool cannot be read"));
  EXPECT_EQ(a_.Acquire(0).status().message(), "the pool cannot be read");
  EXPECT_TRUE(b_.Acquire(0).ok()) << "the gate is free";
  ASSERT_TRUE(b_.Commit({.sweep = "b"}).ok());
  a_.FailAcquires(OkStatus());
  EXPECT_TRUE(a_.Acquire(0).ok());
}

TEST_F(MemoryBudgetGateTest, AFailingCommitGivesTheGateBackAndStoresNothing) {
  a_.FailCommits(UnavailableError("conflict"));
  ASSERT_TRUE(a_.Acquire(0).ok());
  EXPECT_EQ(a_.Commit({.sweep = "a", .reserved_device_seconds = 600}).message(), "conflict");
  EXPECT_TRUE(pool_.state().accounts.empty());
  EXPECT_TRUE(b_.Acquire(0).ok()) << "the gate is free";
}

}  // namespace
}  // namespace bsw
