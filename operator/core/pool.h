#ifndef BSW_CORE_POOL_H_
#define BSW_CORE_POOL_H_

// A BudgetPool: one GPU-hour quota that many sweeps draw on. Each sweep keeps its own ledger; the
// pool keeps what each sweep holds (used + reserved) and caps what a sweep may hold next, so that
// the sum over its sweeps never exceeds the pool (docs/design.md, "Pools").

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "operator/core/reason.h"

namespace bsw {

struct PoolSpec {
  std::string name;
  double gpu_hours = 0;
  std::optional<double> max_per_sweep_gpu_hours;
  // spec.period: empty (the pool never starts again), "calendarMonth" (UTC months) or a duration
  // such as "720h" or "30d" (PeriodSeconds), after which what was used is carried out of the pool.
  std::string period{};
};

// The length of a spec.period that is a duration ("90m", "720h", "30d"); nullopt for anything
// else, calendarMonth included.
std::optional<double> PeriodSeconds(const std::string& period);

// What one sweep holds of a pool, in device-seconds.
struct PoolAccount {
  std::string sweep;  // the sweep's name, for people
  double used_device_seconds = 0;
  double reserved_device_seconds = 0;
  // Whether the sweep still wants budget: its runner is alive and it has not finished. Only these
  // count in the fair share; every account's charge counts in the pool, whatever its state.
  bool active = true;
  // Whether the sweep's last pass was refused for its fair share alone (PoolCap::waits).
  bool starved = false;
  // What the sweep had used when the pool's current period started: counted in earlier periods,
  // not in this one.
  double carried_device_seconds = 0;

  // What the account counts in the pool's current period.
  double held() const {
    return used_device_seconds + reserved_device_seconds - carried_device_seconds;
  }
};

// Every sweep's account, keyed by an identity unique to the sweep (its state directory locally,
// namespace/name on a cluster).
using PoolAccounts = std::map<std::string, PoolAccount>;

// A pool period that has ended, and what the sweeps used in it.
struct PastPeriod {
  double start = 0;  // unix seconds
  double end = 0;
  double used_device_seconds = 0;
};

inline constexpr size_t kMaxPastPeriods = 12;

// What a pool keeps besides its spec: the accounts and, with spec.period, its periods. Kept in the
// BudgetPool's status on a cluster and in the pool file's ledger locally, in the same JSON
// (PoolStateJson).
struct PoolState {
  PoolAccounts accounts;
  std::optional<double> period_start;  // unix seconds; set once a pool with spec.period is used
  std::optional<double> period_end;
  std::vector<PastPeriod> past;  // newest first, at most kMaxPastPeriods
};

// Starts the period `now` falls in when spec.period is set and the current one has ended (or none
// has started): a duration period starts when the pool is first used and follows on from the last
// one; a calendarMonth period is the UTC month. What every account used so far is carried; the
// ended period and what was used in it go first in `past`, and accounts that are inactive and
// reserve nothing are dropped (their charge is in that period's total). A segment that runs across
// the change counts in the new period for what it had not used by its last commit. Without
// spec.period nothing changes.
void RollPeriod(const PoolSpec& pool, double now, PoolState* state);

// Stores `account` as sweep `key`'s: what it carries from earlier periods stays the pool's.
// Returns the account it replaced (a default one for a new sweep).
PoolAccount StoreAccount(const std::string& key, const PoolAccount& account, PoolState* state);

// The pool's state as JSON: the totals of the current period in GPU-hours (usedGpuHours,
// reservedGpuHours, remainingGpuHours), activeSweeps, period {start, end} with spec.period,
// previousPeriods, and sweeps: one account per sweep, in device-seconds, under its key. The
// BudgetPool's status (less conditions and observedGeneration), and the local pool ledger.
nlohmann::json PoolStateJson(const PoolSpec& pool, const PoolState& state);

// The most sweep `key` may hold after its next pass, and which limit set it.
struct PoolCap {
  double cap_device_seconds = std::numeric_limits<double>::infinity();
  // The denial reason of a request beyond the cap: PoolExhausted, PoolMaxPerSweep or
  // PoolFairShare.
  Reason limit = Reason::kPoolExhausted;
  // Whether a request beyond the cap waits (the sweep goes on to a later pass) rather than
  // ending the sweep: beyond a fair share, and beyond the pool's remainder while other sweeps
  // hold reservations, which come back in part or in full.
  bool waits = false;
};

// The cap of sweep `key`, which holds `held_device_seconds` now (its own ledger's used +
// reserved, which replaces what its account says, less what its account carries from earlier
// periods): what it holds plus the least of
//  - the pool's remainder: gpuHours minus what every sweep holds;
//  - its own remainder of maxPerSweepGpuHours;
//  - its fair share: the pool's remainder less what is kept for the other active sweeps. Every
//    active sweep (itself included) is entitled to an equal part of what the inactive sweeps do
//    not hold; the part of its entitlement another active sweep has not taken yet is kept for it
//    (scaled down in proportion when sweeps that took more than theirs left too little to keep
//    every part whole). So a sweep cannot take what others wait for, and what nobody else is
//    entitled to is open to it. A sweep refused for its fair share in its last pass (starved)
//    gets the whole remainder once no other sweep holds a reservation, so sweeps whose next step
//    each costs more than their share cannot wait on one another for ever; of several starved
//    sweeps, the one holding least (then the first key) goes first.
// The cap is never below what the sweep holds: a sweep's running work is never cut for others.
// A sweep refused by the pool ends (BudgetExhausted) only once no other sweep holds a reservation
// that could come back and its fair share did not refuse it (PoolCap::waits), or when its own
// maxPerSweepGpuHours refused it.
PoolCap CapOf(const PoolSpec& pool, const PoolAccounts& accounts, const std::string& key,
              double held_device_seconds);

// What every sweep holds in the current period, in device-seconds.
double PoolHeld(const PoolAccounts& accounts);

}  // namespace bsw

#endif  // BSW_CORE_POOL_H_
