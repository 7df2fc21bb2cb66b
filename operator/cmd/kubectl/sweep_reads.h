#ifndef BSW_CMD_KUBECTL_SWEEP_READS_H_
#define BSW_CMD_KUBECTL_SWEEP_READS_H_

#include <string>

#include "base/status.h"
#include "nlohmann/json.hpp"
#include "operator/adapters/kube/client.h"
#include "operator/report/report.h"

namespace bsw::kubectl {

// The BudgetSweeps of namespace `ns` (every namespace when empty), every page of the list, as a
// JSON array of objects. NotFound names the missing CRDs when the server lacks them.
[[nodiscard]] StatusOr<nlohmann::json> ListSweeps(kube::Client& client, const std::string& ns);

// The sweep `name` with its status and the events of its BudgetSweepTrial records
// (LoadClusterSweep; nothing is written). NotFound reads `budgetsweep "NAME" not found in
// namespace NS`, or names the missing CRDs.
[[nodiscard]] StatusOr<ReportInput> ReadSweep(kube::Client& client, const std::string& ns,
                                              const std::string& name, double now_unix_seconds);

}  // namespace bsw::kubectl

#endif  // BSW_CMD_KUBECTL_SWEEP_READS_H_
