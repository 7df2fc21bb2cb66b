#ifndef BSW_PORTS_ACCESS_REVIEWER_H_
#define BSW_PORTS_ACCESS_REVIEWER_H_

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace bsw {

// Who a request comes from, as the API server authenticated it (authentication.k8s.io UserInfo,
// without `extra`).
struct UserInfo {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
};

// What a TokenReview said of a bearer token.
struct TokenReviewResult {
  bool authenticated = false;
  UserInfo user;
  std::string error;  // the API server's reason when not authenticated (may be empty)
};

// One question for a SubjectAccessReview: a verb on a resource (namespace, group, resource,
// subresource, name), or on a non-resource URL when `path` is set.
struct AccessCheck {
  std::string verb;
  std::string ns;
  std::string group;
  std::string resource;
  std::string subresource;
  std::string name;
  std::string path;  // non-empty: a nonResourceAttributes check of this URL path

  static AccessCheck NonResource(std::string verb, std::string path) {
    AccessCheck check;
    check.verb = std::move(verb);
    check.path = std::move(path);
    return check;
  }

  // "create pods in namespace ml", "create serviceaccounts/token trainer in namespace ml",
  // "get /metrics": the right, for messages.
  std::string Describe() const {
    if (!path.empty()) return verb + " " + path;
    std::string what = resource + (subresource.empty() ? "" : "/" + subresource);
    if (!group.empty()) what += "." + group;
    if (!name.empty()) what += " " + name;
    return verb + " " + what + (ns.empty() ? "" : " in namespace " + ns);
  }
};

struct AccessDecision {
  bool allowed = false;
  std::string reason;  // the authorizer's reason, when it gave one
};

// The API server's answers to "who is this token?" (TokenReview) and "may this user do that?"
// (SubjectAccessReview). The Kubernetes implementation is kube::KubeAccessReviewer; tests use a
// fake. Thread-safe.
class AccessReviewer {
 public:
  virtual ~AccessReviewer() = default;
  // An error Status when the review itself failed (API server unreachable, the operator not
  // allowed to create TokenReviews); a token the API server does not know is OK with
  // authenticated false.
  [[nodiscard]] virtual StatusOr<TokenReviewResult> ReviewToken(const std::string& token) = 0;
  [[nodiscard]] virtual StatusOr<AccessDecision> Review(const UserInfo& user,
                                                        const AccessCheck& check) = 0;
};

}  // namespace bsw

#endif  // BSW_PORTS_ACCESS_REVIEWER_H_
