#ifndef BSW_PORTS_BUDGET_GATE_H_
#define BSW_PORTS_BUDGET_GATE_H_

#include "base/status.h"
#include "operator/core/pool.h"

namespace bsw {

// A budget shared with other sweeps (a BudgetPool), which one sweep's passes go through: Acquire
// before admitting anything, Commit what the sweep then holds before any segment it admitted
// starts. Between the two the gate is held, so no other sweep decides on the same remainder.
class BudgetGate {
 public:
  virtual ~BudgetGate() = default;

  // Takes the gate and returns the cap of a sweep that holds `held_device_seconds` now
  // (CapOf). REQUIRES: the gate is not held.
  [[nodiscard]] virtual StatusOr<PoolCap> Acquire(double held_device_seconds) = 0;

  // Records durably what the sweep holds after the pass, then gives the gate back. Whatever it
  // returns, the gate is no longer held. REQUIRES: the gate is held.
  [[nodiscard]] virtual Status Commit(const PoolAccount& account) = 0;
};

}  // namespace bsw

#endif  // BSW_PORTS_BUDGET_GATE_H_
