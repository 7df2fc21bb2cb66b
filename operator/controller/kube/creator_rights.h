#ifndef BSW_CONTROLLER_KUBE_CREATOR_RIGHTS_H_
#define BSW_CONTROLLER_KUBE_CREATOR_RIGHTS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "operator/ports/access_reviewer.h"

namespace bsw {

// Who created a sweep, as the chart's MutatingAdmissionPolicy (templates/creator-policy.yaml)
// records it from the API server's request.userInfo. Nobody but the API server writes them: the
// policy overwrites them on CREATE and restores them on UPDATE.
inline constexpr char kCreatorAnnotation[] = "budgetsweep.dev/creator";
inline constexpr char kCreatorUidAnnotation[] = "budgetsweep.dev/creator-uid";
// The groups joined with ",", each "\" and "," in a name escaped with a backslash.
inline constexpr char kCreatorGroupsAnnotation[] = "budgetsweep.dev/creator-groups";

// The creator the sweep's annotations record. NotFound when there is no creator annotation (the
// policy is not installed, or the sweep predates it); InvalidArgument for a malformed group list.
[[nodiscard]] StatusOr<UserInfo> RecordedCreator(const nlohmann::json& sweep);

// Splits kCreatorGroupsAnnotation's value. InvalidArgument for a dangling backslash.
[[nodiscard]] StatusOr<std::vector<std::string>> SplitGroups(const std::string& joined);

// The rights a sweep's creator needs for the operator to run its trials in namespace `ns`: create
// pods there, and, when the trial template (a PodTemplateSpec) names a serviceAccountName other
// than "default", create serviceaccounts/token for it: a pod that runs as a ServiceAccount hands
// its containers that account's token, which is exactly what TokenRequest grants (SECURITY.md).
std::vector<AccessCheck> RightsNeeded(const std::string& ns, const nlohmann::json& trial_template);

// The verdict on a sweep's creator: allowed, or why not. `reason` is CreatorAuthorized,
// CreatorForbidden (a right is missing; `message` names the user and each missing right) or
// CreatorUnknown (no creator recorded).
struct CreatorVerdict {
  bool allowed = false;
  std::string reason;
  std::string message;
};

// Asks `reviewer` about each right of RightsNeeded for the creator of `sweep`. An error Status
// only when a review could not be made (the caller retries).
[[nodiscard]] StatusOr<CreatorVerdict> CheckCreatorRights(AccessReviewer& reviewer,
                                                          const nlohmann::json& sweep,
                                                          const std::string& ns,
                                                          const nlohmann::json& trial_template);

}  // namespace bsw

#endif  // BSW_CONTROLLER_KUBE_CREATOR_RIGHTS_H_
