#ifndef BSW_ADAPTERS_KUBE_POOL_GATE_H_
#define BSW_ADAPTERS_KUBE_POOL_GATE_H_

#include <limits>
#include <optional>
#include <string>

#include "operator/adapters/kube/client.h"
#include "operator/core/pool.h"
#include "operator/ports/budget_gate.h"
#include "operator/ports/clock.h"

namespace bsw::kube {

// A BudgetPool object, read and checked: errors name the pool and the field.
struct PoolObject {
  Json object;  // as the API server returned it
  PoolSpec spec;
  PoolState state;  // from its status
};
StatusOr<PoolObject> ReadPool(Client& client, const std::string& ns, const std::string& name);

// A BudgetPool on the cluster as the budget gate of one sweep, whose account is keyed by the
// sweep's uid (a sweep recreated under the same name is another account; the old one keeps its
// charge). Acquire reads the pool, starts a new period if spec.period says so, and returns the
// sweep's cap; Commit writes the pool's status with the sweep's account by a PUT of /status that
// carries the resourceVersion Acquire read. So nothing is held between the two: when another pass
// (another sweep's, or another replica's) wrote the pool in between, Commit fails with Conflict
// (IsConflict) and the pass journals nothing and starts nothing; its next try plans on the pool as
// it then stands. The pool is never over-admitted by sweeps reconciling at once, and what a sweep
// holds is in the API server before its pods are created (docs/design.md, "Pools").
class PoolGate : public BudgetGate {
 public:
  // `client` and `clock` must outlive the gate.
  PoolGate(Client& client, const Clock& clock, std::string ns, std::string pool,
           std::string sweep_uid);

  // How often an account that counts the same (its used + reserved, active and starved
  // unchanged) is written again anyway, for the figures of the pool's status.
  static constexpr double kRefreshSeconds = 15;

  // Hands the gate the pool as this pass already read it (ReadPool): the next Acquire uses it
  // instead of reading it again.
  void UseRead(PoolObject pool) { read_ = std::move(pool); }

  StatusOr<PoolCap> Acquire(double held_device_seconds) override;
  // Writes the status unless the account counts the same as the pool has it and was written less
  // than kRefreshSeconds ago, and no period started.
  Status Commit(const PoolAccount& account) override;

  // The pool as last read or written; empty before the first Acquire.
  const PoolObject& pool() const { return pool_; }

 private:
  Client& client_;
  const Clock& clock_;
  const std::string ns_;
  const std::string name_;
  const std::string uid_;
  PoolObject pool_;
  std::optional<PoolObject> read_;           // from UseRead, for the next Acquire
  std::optional<double> read_period_start_;  // as the last Acquire read it, before RollPeriod
  double written_at_ = -std::numeric_limits<double>::infinity();  // monotonic seconds
};

// The pool's status for `state`: PoolStateJson with observedGeneration and the Available
// condition, merged into the conditions of `previous` (the status as read).
Json PoolStatus(const PoolObject& pool, const PoolState& state, double now);

// Settles, in pool `pool` of `ns` (every pool of `ns` when not known), the accounts of sweep
// `sweep`, which no longer exists: what they reserved is charged as used (their pods are deleted,
// and the real times went with them) and they stop wanting budget, so the others' fair shares no
// longer keep a part for them. Their charge stays in the pool. Retried on Conflict.
[[nodiscard]] Status SettleDeletedSweep(Client& client, const Clock& clock, const std::string& ns,
                                        const std::string& sweep,
                                        const std::optional<std::string>& pool);

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_POOL_GATE_H_
