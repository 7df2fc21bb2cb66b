#include "operator/adapters/kube/access_review.h"

namespace bsw::kube {

Json TokenReviewRequest(const std::string& token) {
  return Json{{"apiVersion", "authentication.k8s.io/v1"},
              {"kind", "TokenReview"},
              {"spec", {{"token", token}}}};
}

StatusOr<TokenReviewResult> ParseTokenReview(const Json& review) {
  const Json status = review.value("status", Json::object());
  if (!status.is_object()) return InternalError("TokenReview: the answer has no status");
  TokenReviewResult result;
  result.authenticated = status.value("authenticated", false);
  result.error = status.value("error", "");
  if (result.authenticated) {
    const Json user = status.value("user", Json::object());
    result.user.username = user.value("username", "");
    result.user.uid = user.value("uid", "");
    for (const Json& group : user.value("groups", Json::array())) {
      if (group.is_string()) result.user.groups.push_back(group.get<std::string>());
    }
    if (result.user.username.empty()) {
      return InternalError("TokenReview: authenticated, but without a username");
    }
  }
  return result;
}

Json SubjectAccessReviewRequest(const UserInfo& user, const AccessCheck& check) {
  Json spec = {{"user", user.username}};
  if (!user.uid.empty()) spec["uid"] = user.uid;
  if (!user.groups.empty()) spec["groups"] = user.groups;
  if (!check.path.empty()) {
    spec["nonResourceAttributes"] = {{"path", check.path}, {"verb", check.verb}};
  } else {
    Json attributes = {{"verb", check.verb}, {"resource", check.resource}};
    if (!check.ns.empty()) attributes["namespace"] = check.ns;
    if (!check.group.empty()) attributes["group"] = check.group;
    if (!check.subresource.empty()) attributes["subresource"] = check.subresource;
    if (!check.name.empty()) attributes["name"] = check.name;
    spec["resourceAttributes"] = std::move(attributes);
  }
  return Json{{"apiVersion", "authorization.k8s.io/v1"},
              {"kind", "SubjectAccessReview"},
              {"spec", std::move(spec)}};
}

StatusOr<AccessDecision> ParseSubjectAccessReview(const Json& review) {
  const Json status = review.value("status", Json::object());
  if (!status.is_object()) return InternalError("SubjectAccessReview: the answer has no status");
  AccessDecision decision;
  // `denied` true is a definite no; allowed false alone means no authorizer said yes. Either way
  // the right is missing.
  decision.allowed = status.value("allowed", false) && !status.value("denied", false);
  decision.reason = status.value("reason", "");
  std::string error = status.value("evaluationError", "");
  if (!decision.allowed && !error.empty()) {
    decision.reason += (decision.reason.empty() ? "" : "; ") + error;
  }
  return decision;
}

StatusOr<TokenReviewResult> KubeAccessReviewer::ReviewToken(const std::string& token) {
  StatusOr<Json> review = client_.Create(kTokenReviews, "", TokenReviewRequest(token));
  if (!review.ok()) return review.status();
  return ParseTokenReview(*review);
}

StatusOr<AccessDecision> KubeAccessReviewer::Review(const UserInfo& user,
                                                    const AccessCheck& check) {
  StatusOr<Json> review =
      client_.Create(kSubjectAccessReviews, "", SubjectAccessReviewRequest(user, check));
  if (!review.ok()) return review.status();
  return ParseSubjectAccessReview(*review);
}

}  // namespace bsw::kube
