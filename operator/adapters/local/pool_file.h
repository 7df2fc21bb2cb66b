#ifndef BSW_ADAPTERS_LOCAL_POOL_FILE_H_
#define BSW_ADAPTERS_LOCAL_POOL_FILE_H_

#include <memory>
#include <string>

#include "base/status.h"
#include "nlohmann/json.hpp"
#include "operator/core/pool.h"
#include "operator/ports/budget_gate.h"
#include "operator/ports/clock.h"

namespace bsw::local {

// A BudgetPool shared by the local sweeps of one machine (`budgetsweep run --pool FILE`): the
// pool in FILE (a BudgetPool object, YAML or JSON), what each sweep holds in FILE.ledger.json,
// and the lock FILE.lock (flock) that every sweep's pass takes before it admits anything and
// gives back once the ledger records what it then holds (docs/design.md, "Pools").
//
// A sweep's account is keyed by its state directory. Its runner holds the directory's lock
// (StateDirLock) for as long as it lives, so a run killed with kill -9 is told apart from
// a live one: its account stays charged in full (its supervisors may still run what it reserved)
// but stops counting in the fair share, until a run resumes the sweep and settles the account to
// what its journal and its segments show.
class PoolFile : public BudgetGate {
 public:
  // Reads and checks the pool file (errors name it and the field), and binds sweep `sweep_name`
  // of state directory `state_dir` to it. `pool_ref` is the sweep's spec.budget.poolRef.name, if
  // any, which must name this pool. `clock` dates the pool's periods and must outlive the
  // PoolFile. REQUIRES: this process holds `state_dir`'s StateDirLock.
  static StatusOr<std::unique_ptr<PoolFile>> Open(const std::string& path,
                                                  const std::string& sweep_name,
                                                  const std::string& pool_ref,
                                                  const std::string& state_dir, const Clock& clock);
  ~PoolFile() override;
  PoolFile(const PoolFile&) = delete;
  PoolFile& operator=(const PoolFile&) = delete;

  // Takes FILE.lock, reads the pool (edits of its spec apply from the next pass) and the ledger,
  // starts a new period if spec.period says so (RollPeriod), and returns this sweep's cap.
  StatusOr<PoolCap> Acquire(double held_device_seconds) override;
  // Writes the ledger with this sweep's account (fsynced, replaced atomically), then unlocks.
  Status Commit(const PoolAccount& account) override;

  const PoolSpec& spec() const { return spec_; }
  // The pool's object as Open read it from the file.
  const nlohmann::json& object() const { return object_; }
  // The accounts as the last Acquire read them, this sweep's as it last committed it.
  const PoolAccounts& accounts() const { return state_.accounts; }

 private:
  PoolFile(std::string path, std::string key, int lock_fd, const Clock& clock);
  void Unlock();

  std::string path_;
  std::string key_;
  int lock_fd_;
  const Clock& clock_;
  nlohmann::json object_;
  PoolSpec spec_;
  PoolState state_;
};

// The pool in `path`, checked; errors name the file and the field. The object read goes in
// `object` unless that is null.
StatusOr<PoolSpec> ReadPoolFile(const std::string& path, nlohmann::json* object = nullptr);

}  // namespace bsw::local

#endif  // BSW_ADAPTERS_LOCAL_POOL_FILE_H_
