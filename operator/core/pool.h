#ifndef BSW_CORE_POOL_H_
#define BSW_CORE_POOL_H_

// A BudgetPool: one GPU-hour quota that many sweeps draw on. Each sweep keeps its own ledger; the
// pool keeps what each sweep holds (used + reserved) and caps what a sweep may hold next, so that
// the sum over its sweeps never exceeds the pool (docs/design.md, "Pools").

#include <limits>
#include <map>
#include <optional>
#include <string>

namespace bsw {

struct PoolSpec {
  std::string name;
  double gpu_hours = 0;
  std::optional<double> max_per_sweep_gpu_hours;
};

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

  double held() const { return used_device_seconds + reserved_device_seconds; }
};

// Every sweep's account, keyed by an identity unique to the sweep (its state directory locally,
// namespace/name on a cluster).
using PoolAccounts = std::map<std::string, PoolAccount>;

// The most sweep `key` may hold after its next pass, and which limit set it.
struct PoolCap {
  double cap_device_seconds = std::numeric_limits<double>::infinity();
  // The denial reason of a request beyond the cap: PoolExhausted, PoolMaxPerSweep or
  // PoolFairShare.
  std::string limit;
  // Whether a request beyond the cap waits (the sweep goes on to a later pass) rather than
  // ending the sweep: beyond a fair share, and beyond the pool's remainder while other sweeps
  // hold reservations, which come back in part or in full.
  bool waits = false;
};

// The cap of sweep `key`, which holds `held_device_seconds` now (its own ledger's used +
// reserved, which replaces what its account says): what it holds plus the least of
//  - the pool's remainder: gpuHours minus what every sweep holds;
//  - its own remainder of maxPerSweepGpuHours;
//  - its fair share: the pool's remainder less what is kept for the other active sweeps. Every
//    active sweep (itself included) is entitled to an equal part of what the inactive sweeps do
//    not hold; the part of its entitlement another active sweep has not taken yet is kept for it
//    (scaled down in proportion when sweeps that took more than theirs left too little to keep
//    every part whole). So a sweep cannot take what others wait for, and what nobody else is
//    entitled to is open to it. A sweep refused for its fair share in its last pass (starved)
//    gets the whole remainder once no other sweep holds a reservation, so sweeps whose next step
//    each costs more than their share cannot wait on one another for ever.
// The cap is never below what the sweep holds: a sweep's running work is never cut for others.
// A sweep refused by the pool ends (BudgetExhausted) only once no other sweep holds a reservation
// that could come back and its fair share did not refuse it (PoolCap::waits), or when its own
// maxPerSweepGpuHours refused it.
PoolCap CapOf(const PoolSpec& pool, const PoolAccounts& accounts, const std::string& key,
              double held_device_seconds);

// What every sweep holds, in device-seconds.
double PoolHeld(const PoolAccounts& accounts);

}  // namespace bsw

#endif  // BSW_CORE_POOL_H_
