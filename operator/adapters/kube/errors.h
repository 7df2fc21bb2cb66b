#ifndef BSW_ADAPTERS_KUBE_ERRORS_H_
#define BSW_ADAPTERS_KUBE_ERRORS_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/status.h"

namespace bsw::kube {

// What the API server said about a failed request: the HTTP code, the API Status reason
// (NotFound, AlreadyExists, Conflict, Expired, TooManyRequests, ...) and Retry-After.
struct ApiError {
  int http_code = 0;
  std::string reason;
  double retry_after_seconds = 0;
};

// The Status for a failed API request. Its code is mapped from the HTTP code (404 NotFound, 409
// AlreadyExists/Conflict -> AlreadyExists/FailedPrecondition, 410 FailedPrecondition, 429
// ResourceExhausted, 5xx Unavailable, 400/422 InvalidArgument) and its message reads
// "HTTP <code> <Reason>[ retry-after=<s>s]: <context>: <server message>", which ApiErrorOf reads
// back. `body` is the response body, a k8s Status object when the server sent one.
[[nodiscard]] Status StatusFromResponse(int http_code, const std::string& body,
                                        double retry_after_seconds, const std::string& context);
// The same for a k8s Status object (the object of a watch ERROR event).
[[nodiscard]] Status StatusFromApiStatus(const nlohmann::json& api_status,
                                         const std::string& context);

// The API error a Status from this module carries; nullopt for OK and for transport errors.
std::optional<ApiError> ApiErrorOf(const Status& status);

bool IsNotFound(const Status& status);
bool IsAlreadyExists(const Status& status);
// 409 Conflict: the object changed since it was read (stale resourceVersion).
bool IsConflict(const Status& status);
// 410 Gone or reason Expired: the resourceVersion is too old to watch or list from.
bool IsGone(const Status& status);
bool IsTooManyRequests(const Status& status);

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_ERRORS_H_
