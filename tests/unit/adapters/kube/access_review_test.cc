// The TokenReview and SubjectAccessReview bodies KubeAccessReviewer sends, and how it reads the
// answers. Against the real API server: tests/cluster/metrics_auth_test.sh and
// tests/cluster/creator_rights_test.sh.
#include "operator/adapters/kube/access_review.h"

#include <gtest/gtest.h>

namespace bsw::kube {
namespace {

TEST(AccessReview, TokenReviewCarriesTheTokenForTheApiServersAudiences) {
  EXPECT_EQ(TokenReviewRequest("t0k"), Json::parse(R"({"apiVersion": "authentication.k8s.io/v1",
    "kind": "TokenReview", "spec": {"token": "t0k"}})"));
}

TEST(AccessReview, AnAuthenticatedTokenGivesItsUser) {
  StatusOr<TokenReviewResult> result = ParseTokenReview(Json::parse(R"({"status": {
    "authenticated": true, "audiences": ["https://kubernetes.default.svc"],
    "user": {"username": "system:serviceaccount:mon:prometheus", "uid": "u-1",
             "groups": ["system:serviceaccounts", "system:authenticated"]}}})"));
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(result->authenticated);
  EXPECT_EQ(result->user.username, "system:serviceaccount:mon:prometheus");
  EXPECT_EQ(result->user.uid, "u-1");
  EXPECT_EQ(result->user.groups,
            (std::vector<std::string>{"system:serviceaccounts", "system:authenticated"}));
}

TEST(AccessReview, AnUnknownTokenIsNotAuthenticatedWithTheReason) {
  StatusOr<TokenReviewResult> result = ParseTokenReview(
      Json::parse(R"({"status": {"authenticated": false, "error": "invalid bearer token"}})"));
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->authenticated);
  EXPECT_EQ(result->error, "invalid bearer token");
  // An empty status (the API server's answer to an unknown token can omit everything).
  result = ParseTokenReview(Json::parse(R"({"status": {}})"));
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->authenticated);
}

TEST(AccessReview, ANonResourceCheckAsksAboutThePath) {
  UserInfo user{"alice", "", {"team-a", "system:authenticated"}};
  EXPECT_EQ(SubjectAccessReviewRequest(user, AccessCheck::NonResource("get", "/metrics")),
            Json::parse(R"({"apiVersion": "authorization.k8s.io/v1",
    "kind": "SubjectAccessReview", "spec": {"user": "alice",
    "groups": ["team-a", "system:authenticated"],
    "nonResourceAttributes": {"path": "/metrics", "verb": "get"}}})"));
}

TEST(AccessReview, AResourceCheckNamesOnlyWhatIsSet) {
  UserInfo user{"system:serviceaccount:ml:ci", "uid-7", {}};
  AccessCheck check;
  check.verb = "create";
  check.ns = "ml";
  check.resource = "serviceaccounts";
  check.subresource = "token";
  check.name = "trainer";
  EXPECT_EQ(SubjectAccessReviewRequest(user, check), Json::parse(R"({
    "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
    "spec": {"user": "system:serviceaccount:ml:ci", "uid": "uid-7",
             "resourceAttributes": {"verb": "create", "namespace": "ml",
                                    "resource": "serviceaccounts", "subresource": "token",
                                    "name": "trainer"}}})"));
  EXPECT_EQ(check.Describe(), "create serviceaccounts/token trainer in namespace ml");
}

TEST(AccessReview, AllowedOnlyWhenAllowedAndNotDenied) {
  StatusOr<AccessDecision> yes = ParseSubjectAccessReview(Json::parse(
      R"({"status": {"allowed": true, "reason": "RBAC: allowed by ClusterRoleBinding"}})"));
  ASSERT_TRUE(yes.ok());
  EXPECT_TRUE(yes->allowed);
  StatusOr<AccessDecision> no =
      ParseSubjectAccessReview(Json::parse(R"({"status": {"allowed": false}})"));
  ASSERT_TRUE(no.ok());
  EXPECT_FALSE(no->allowed);
  StatusOr<AccessDecision> denied = ParseSubjectAccessReview(Json::parse(
      R"({"status": {"allowed": false, "denied": true, "reason": "policy",
          "evaluationError": "webhook down"}})"));
  ASSERT_TRUE(denied.ok());
  EXPECT_FALSE(denied->allowed);
  EXPECT_EQ(denied->reason, "policy; webhook down");
}

}  // namespace
}  // namespace bsw::kube
