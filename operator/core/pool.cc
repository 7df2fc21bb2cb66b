#include "operator/core/pool.h"

#include <algorithm>
#include <vector>

namespace bsw {

double PoolHeld(const PoolAccounts& accounts) {
  double held = 0;
  for (const auto& [key, account] : accounts) held += account.held();
  return held;
}

PoolCap CapOf(const PoolSpec& pool, const PoolAccounts& accounts, const std::string& key,
              double held) {
  const double budget = pool.gpu_hours * 3600;
  double others_held = 0;
  double others_reserved = 0;
  double inactive_held = 0;
  std::vector<double> others_active_held;
  bool starved = false;
  for (const auto& [k, account] : accounts) {
    if (k == key) {
      starved = account.starved;
      continue;
    }
    others_held += account.held();
    others_reserved += account.reserved_device_seconds;
    if (account.active) {
      others_active_held.push_back(account.held());
    } else {
      inactive_held += account.held();
    }
  }
  double pool_left = std::max(0.0, budget - others_held - held);
  double sweep_left = pool.max_per_sweep_gpu_hours
                          ? std::max(0.0, *pool.max_per_sweep_gpu_hours * 3600 - held)
                          : pool_left;

  // Each active sweep is entitled to an equal part of what the inactive ones do not hold; the
  // part another active sweep has not taken yet is kept for it, scaled down when sweeps that
  // took more than theirs left too little to keep every part whole.
  double entitlement =
      std::max(0.0, budget - inactive_held) / static_cast<double>(others_active_held.size() + 1);
  double others_unused = 0;
  for (double h : others_active_held) others_unused += std::max(0.0, entitlement - h);
  double unused = others_unused + std::max(0.0, entitlement - held);
  double kept = unused <= pool_left ? others_unused : pool_left * others_unused / unused;
  double share = starved && others_reserved <= 0 ? pool_left : pool_left - kept;

  PoolCap cap;
  if (share < std::min(pool_left, sweep_left)) {
    cap.cap_device_seconds = held + share;
    cap.limit = "PoolFairShare";
    cap.waits = true;
  } else if (sweep_left < pool_left) {
    cap.cap_device_seconds = held + sweep_left;
    cap.limit = "PoolMaxPerSweep";  // the sweep's own: nothing comes back
  } else {
    cap.cap_device_seconds = held + pool_left;
    cap.limit = "PoolExhausted";
    cap.waits = others_reserved > 0;
  }
  return cap;
}

}  // namespace bsw
