#ifndef BSW_ADAPTERS_KUBE_ACCESS_REVIEW_H_
#define BSW_ADAPTERS_KUBE_ACCESS_REVIEW_H_

#include "operator/adapters/kube/client.h"
#include "operator/ports/access_reviewer.h"

namespace bsw::kube {

inline const Resource kTokenReviews{"authentication.k8s.io", "v1", "tokenreviews", false};
inline const Resource kSubjectAccessReviews{"authorization.k8s.io", "v1", "subjectaccessreviews",
                                            false};

// AccessReviewer through the API server: each call creates one TokenReview
// (authentication.k8s.io/v1, for the API server's own audiences) or SubjectAccessReview
// (authorization.k8s.io/v1). The operator's identity needs `create` on tokenreviews and
// subjectaccessreviews (the chart's <fullname>-auth ClusterRole). No caching here: callers cache.
class KubeAccessReviewer : public AccessReviewer {
 public:
  explicit KubeAccessReviewer(Client& client) : client_(client) {}

  StatusOr<TokenReviewResult> ReviewToken(const std::string& token) override;
  StatusOr<AccessDecision> Review(const UserInfo& user, const AccessCheck& check) override;

 private:
  Client& client_;
};

// The request bodies and the reading of the answers, apart for tests.
Json TokenReviewRequest(const std::string& token);
StatusOr<TokenReviewResult> ParseTokenReview(const Json& review);
Json SubjectAccessReviewRequest(const UserInfo& user, const AccessCheck& check);
StatusOr<AccessDecision> ParseSubjectAccessReview(const Json& review);

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_ACCESS_REVIEW_H_
