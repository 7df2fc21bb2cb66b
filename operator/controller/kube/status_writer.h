#ifndef BSW_CONTROLLER_KUBE_STATUS_WRITER_H_
#define BSW_CONTROLLER_KUBE_STATUS_WRITER_H_

#include <string>

#include "base/status.h"
#include "nlohmann/json.hpp"
#include "operator/adapters/kube/client.h"

namespace bsw {

// Merges `fields` into the status of BudgetSweep `ns`/`name` (a JSON merge patch on /status: a
// field set to null is removed, the others are left as they are). The API server's error, a 409
// Conflict included, is returned for the caller to retry.
[[nodiscard]] Status PatchSweepStatus(kube::Client& client, const std::string& ns,
                                      const std::string& name, nlohmann::json fields);

// Writes one sweep's whole status, only when it differs from the status written last (or read, to
// begin with), so that a pass that changed nothing writes nothing.
class StatusWriter {
 public:
  // `read`: the status as read from the object, without sweepEvents (SweepObject::status).
  StatusWriter(kube::Client& client, std::string ns, std::string name, nlohmann::json read);

  // Makes the status `status`, removing the fields of the last one it lacks. After an error the
  // status last written stays the one compared with, so the next Write tries again.
  [[nodiscard]] Status Write(nlohmann::json status);

  // The status as last written (or read).
  const nlohmann::json& written() const { return written_; }

 private:
  kube::Client& client_;
  const std::string ns_;
  const std::string name_;
  nlohmann::json written_;
};

}  // namespace bsw

#endif  // BSW_CONTROLLER_KUBE_STATUS_WRITER_H_
