#ifndef BSW_ADAPTERS_OBSERVABILITY_REQUEST_AUTHORIZER_H_
#define BSW_ADAPTERS_OBSERVABILITY_REQUEST_AUTHORIZER_H_

#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include "operator/ports/access_reviewer.h"
#include "operator/ports/clock.h"

namespace bsw::observability {

// What to answer a request: 200 (let it through), 401 (no token, or one the API server does not
// know), 403 (a known user without the right) or 503 (a review could not be made).
struct AuthOutcome {
  int status = 0;
  std::string message;  // why, for the response body and the log; never the token
};

// The filter in front of the operator's /metrics, as kube-rbac-proxy and controller-runtime's
// WithAuthenticationAndAuthorization do it: the caller's bearer token must pass a TokenReview,
// and its user a SubjectAccessReview for `check` (get on the non-resource URL /metrics).
// Outcomes 200, 401 and 403 are cached per token (by its SHA-256, never the token itself) for
// `ttl_seconds` (10 s: the API server's own defaults for delegated authentication and
// authorization), so a scrape every few seconds costs two reviews per token per TTL, and a
// revoked binding or token stops working within a TTL. 503s are not cached. At most
// `max_entries` tokens are remembered; a full cache drops its expired entries, then everything.
// Thread-safe.
class RequestAuthorizer {
 public:
  RequestAuthorizer(AccessReviewer& reviewer, const Clock& clock, AccessCheck check,
                    double ttl_seconds = 10, size_t max_entries = 1024);

  // `authorization` is the request's Authorization header (empty when it had none).
  AuthOutcome Authorize(const std::string& authorization);

  // Reviews made so far (TokenReviews + SubjectAccessReviews), for tests.
  size_t reviews() const;

 private:
  struct Entry {
    AuthOutcome outcome;
    double expires = 0;
  };
  AuthOutcome Review(const std::string& token);

  AccessReviewer& reviewer_;
  const Clock& clock_;
  const AccessCheck check_;
  const double ttl_seconds_;
  const size_t max_entries_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> cache_;  // by SHA-256 of the token
  size_t reviews_ = 0;
};

// The bearer token of an Authorization header ("Bearer <token>", the scheme in any case), or "".
std::string BearerToken(const std::string& authorization);

}  // namespace bsw::observability

#endif  // BSW_ADAPTERS_OBSERVABILITY_REQUEST_AUTHORIZER_H_
