#include "operator/cmd/kubectl/sweep_reads.h"

#include "operator/adapters/kube/errors.h"
#include "operator/adapters/kube/resources.h"

namespace bsw::kubectl {
namespace {

// A 404 for a whole resource type (the API server's "the server could not find the requested
// resource"), as opposed to one for a named object.
bool MissingResourceType(const Status& status) {
  return kube::IsNotFound(status) &&
         status.message().find("could not find the requested resource") != std::string::npos;
}

Status NoCrdError(const Status& status) {
  return NotFoundError("the server lacks the budgetsweep.dev CRDs (kubectl apply -f crds/): " +
                       status.message());
}

}  // namespace

StatusOr<nlohmann::json> ListSweeps(kube::Client& client, const std::string& ns) {
  nlohmann::json sweeps = nlohmann::json::array();
  kube::ListOptions options;
  options.limit = 500;
  do {
    StatusOr<nlohmann::json> page = client.List(kube::kBudgetSweeps, ns, options);
    if (!page.ok())
      return MissingResourceType(page.status()) ? NoCrdError(page.status()) : page.status();
    for (const nlohmann::json& item : page->value("items", nlohmann::json::array())) {
      sweeps.push_back(item);
    }
    options.continue_token = page->value("/metadata/continue"_json_pointer, "");
  } while (!options.continue_token.empty());
  return sweeps;
}

StatusOr<ReportInput> ReadSweep(kube::Client& client, const std::string& ns,
                                const std::string& name, double now_unix_seconds) {
  StatusOr<ReportInput> input = LoadClusterSweep(client, ns, name, now_unix_seconds);
  if (input.ok() || !kube::IsNotFound(input.status())) return input;
  if (MissingResourceType(input.status())) return NoCrdError(input.status());
  return NotFoundError("budgetsweep \"" + name + "\" not found in namespace " + ns);
}

}  // namespace bsw::kubectl
