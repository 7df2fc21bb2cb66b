#ifndef BSW_TESTS_FAKES_MEMORY_BUDGET_GATE_H_
#define BSW_TESTS_FAKES_MEMORY_BUDGET_GATE_H_

#include <optional>
#include <string>
#include <utility>

#include "base/status.h"
#include "operator/core/pool.h"
#include "operator/ports/budget_gate.h"
#include "operator/ports/clock.h"

namespace bsw {

// A BudgetPool in memory, for controller tests: what a pool file and its ledger, or a BudgetPool
// object, hold, without a file or an API server. Sweeps share it through a MemoryBudgetGate each.
class MemoryPool {
 public:
  // `clock` dates the pool's periods and must outlive the pool.
  MemoryPool(PoolSpec spec, const Clock& clock) : spec_(std::move(spec)), clock_(clock) {}
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  const PoolSpec& spec() const { return spec_; }
  // The accounts and periods as the last Commit left them.
  const PoolState& state() const { return state_; }

 private:
  friend class MemoryBudgetGate;

  PoolSpec spec_;
  const Clock& clock_;
  PoolState state_;
  std::optional<std::string> holder_;  // the key of the gate held between Acquire and Commit
};

// The gate of sweep `key` to a MemoryPool, as a pool file's lock is: between Acquire and Commit no
// other gate of the pool is let in. A test's sweeps run one after another, so instead of waiting,
// an Acquire while another sweep holds the gate fails with Unavailable; a misuse of the port (an
// Acquire while this gate is held, a Commit while it is not) fails with FailedPrecondition.
class MemoryBudgetGate final : public BudgetGate {
 public:
  // `pool` must outlive the gate.
  MemoryBudgetGate(MemoryPool& pool, std::string key) : pool_(pool), key_(std::move(key)) {}

  // Starts a new period if spec.period says so (RollPeriod), then returns this sweep's cap.
  StatusOr<PoolCap> Acquire(double held_device_seconds) override {
    if (pool_.holder_) {
      if (*pool_.holder_ == key_) {
        return FailedPreconditionError("the gate of " + key_ + " is held already");
      }
      return UnavailableError("the pool's gate is held by " + *pool_.holder_);
    }
    if (!acquire_error_.ok()) return acquire_error_;
    pool_.holder_ = key_;
    RollPeriod(pool_.spec_, pool_.clock_.NowUnixSeconds(), &pool_.state_);
    return CapOf(pool_.spec_, pool_.state_.accounts, key_, held_device_seconds);
  }

  // Stores `account` as this sweep's (StoreAccount) unless commits fail, and gives the gate back.
  Status Commit(const PoolAccount& account) override {
    if (pool_.holder_ != key_)
      return FailedPreconditionError("the gate of " + key_ + " is not held");
    pool_.holder_.reset();
    if (!commit_error_.ok()) return commit_error_;
    StoreAccount(key_, account, &pool_.state_);
    return OkStatus();
  }

  // Makes every Acquire from now on fail with `error` without taking the gate (a pool that cannot
  // be read); OkStatus() lets them succeed again.
  void FailAcquires(Status error) { acquire_error_ = std::move(error); }
  // Makes every Commit from now on give the gate back without storing the account and fail with
  // `error` (a ledger that cannot be written, a status written by another pass since);
  // OkStatus() lets them succeed again.
  void FailCommits(Status error) { commit_error_ = std::move(error); }

 private:
  MemoryPool& pool_;
  const std::string key_;
  Status acquire_error_ = OkStatus();
  Status commit_error_ = OkStatus();
};

}  // namespace bsw

#endif  // BSW_TESTS_FAKES_MEMORY_BUDGET_GATE_H_
