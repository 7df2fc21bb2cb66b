#include "operator/controller/kube/creator_rights.h"

namespace bsw {
namespace {

using Json = nlohmann::json;

std::string Annotation(const Json& sweep, const char* key) {
  const Json* annotations = nullptr;
  if (sweep.contains("metadata") && sweep["metadata"].is_object() &&
      sweep["metadata"].contains("annotations") && sweep["metadata"]["annotations"].is_object()) {
    annotations = &sweep["metadata"]["annotations"];
  }
  if (annotations == nullptr || !annotations->contains(key) || !(*annotations)[key].is_string()) {
    return "";
  }
  return (*annotations)[key].get<std::string>();
}

}  // namespace

StatusOr<std::vector<std::string>> SplitGroups(const std::string& joined) {
  std::vector<std::string> groups;
  if (joined.empty()) return groups;
  std::string current;
  for (size_t i = 0; i < joined.size(); ++i) {
    char c = joined[i];
    if (c == '\\') {
      if (i + 1 == joined.size()) {
        return InvalidArgumentError(std::string(kCreatorGroupsAnnotation) +
                                    ": a backslash ends the value");
      }
      current.push_back(joined[++i]);
    } else if (c == ',') {
      groups.push_back(std::move(current));
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  groups.push_back(std::move(current));
  return groups;
}

StatusOr<UserInfo> RecordedCreator(const Json& sweep) {
  UserInfo user;
  user.username = Annotation(sweep, kCreatorAnnotation);
  if (user.username.empty()) {
    return NotFoundError(std::string("no creator recorded (annotation ") + kCreatorAnnotation +
                         ")");
  }
  user.uid = Annotation(sweep, kCreatorUidAnnotation);
  StatusOr<std::vector<std::string>> groups =
      SplitGroups(Annotation(sweep, kCreatorGroupsAnnotation));
  if (!groups.ok()) return groups.status();
  user.groups = std::move(groups).value();
  return user;
}

std::vector<AccessCheck> RightsNeeded(const std::string& ns, const Json& trial_template) {
  AccessCheck pods;
  pods.verb = "create";
  pods.ns = ns;
  pods.resource = "pods";
  std::vector<AccessCheck> rights = {pods};
  const Json spec =
      trial_template.is_object() ? trial_template.value("spec", Json::object()) : Json::object();
  std::string account = spec.is_object() ? spec.value("serviceAccountName", "") : "";
  if (account.empty() && spec.is_object()) account = spec.value("serviceAccount", "");
  if (!account.empty() && account != "default") {
    AccessCheck token;
    token.verb = "create";
    token.ns = ns;
    token.resource = "serviceaccounts";
    token.subresource = "token";
    token.name = account;
    rights.push_back(token);
  }
  return rights;
}

StatusOr<CreatorVerdict> CheckCreatorRights(AccessReviewer& reviewer, const Json& sweep,
                                            const std::string& ns, const Json& trial_template) {
  StatusOr<UserInfo> creator = RecordedCreator(sweep);
  if (!creator.ok()) {
    return CreatorVerdict{
        false, "CreatorUnknown",
        creator.status().message() +
            ": the chart's MutatingAdmissionPolicy <release>-budgetsweep-creator records it when "
            "a sweep is created; a sweep created without it cannot be checked, so it gets no pod: "
            "create it again with the policy installed"};
  }
  std::vector<std::string> missing;
  for (const AccessCheck& right : RightsNeeded(ns, trial_template)) {
    StatusOr<AccessDecision> decision = reviewer.Review(*creator, right);
    if (!decision.ok()) return decision.status();
    if (!decision->allowed) missing.push_back(right.Describe());
  }
  const std::string who = "the sweep's creator \"" + creator->username + "\"";
  if (missing.empty()) {
    return CreatorVerdict{true, "CreatorAuthorized",
                          who + " may create its trial pods and use their service account"};
  }
  std::string message = who + " may not ";
  for (size_t i = 0; i < missing.size(); ++i) message += (i == 0 ? "" : ", nor ") + missing[i];
  message += ": the operator creates no trial pod for it (SubjectAccessReview)";
  return CreatorVerdict{false, "CreatorForbidden", message};
}

}  // namespace bsw
