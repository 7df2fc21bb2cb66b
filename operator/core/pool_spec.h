#ifndef BSW_CORE_POOL_SPEC_H_
#define BSW_CORE_POOL_SPEC_H_

// Reading a BudgetPool: its object (ParsePool) and its state (ParsePoolState), validated the way
// ParseSweep validates a BudgetSweep (api.h).

#include <string>

#include "base/status.h"
#include "nlohmann/json.hpp"
#include "operator/core/pool.h"

namespace bsw {

// Reads and validates a BudgetPool object (apiVersion, kind, metadata, spec; status is ignored).
// On failure the InvalidArgument message lists every problem, one per line, as "path: message";
// unknown fields are errors.
StatusOr<PoolSpec> ParsePool(const nlohmann::json& object);

// Reads a pool's state as PoolStateJson writes it (a BudgetPool's status, a pool ledger); errors
// name the field under `where` (e.g. "status"). Derived fields (the totals, conditions) are not
// read: they follow from the accounts.
StatusOr<PoolState> ParsePoolState(const nlohmann::json& state, const std::string& where);

}  // namespace bsw

#endif  // BSW_CORE_POOL_SPEC_H_
