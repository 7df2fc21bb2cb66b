#include "operator/adapters/kube/errors.h"

#include <charconv>
#include <cstdio>

namespace bsw::kube {
namespace {

constexpr char kPrefix[] = "HTTP ";

std::string DefaultReason(int http_code) {
  switch (http_code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "Unknown";
  }
}

StatusCode CodeFor(int http_code, const std::string& reason) {
  if (http_code == 404) return StatusCode::kNotFound;
  if (http_code == 409) {
    return reason == "AlreadyExists" ? StatusCode::kAlreadyExists : StatusCode::kFailedPrecondition;
  }
  if (http_code == 400 || http_code == 422) return StatusCode::kInvalidArgument;
  if (http_code == 401 || http_code == 403 || http_code == 410) {
    return StatusCode::kFailedPrecondition;
  }
  if (http_code == 429) return StatusCode::kResourceExhausted;
  if (http_code >= 500) return StatusCode::kUnavailable;
  return StatusCode::kInternal;
}

Status MakeStatus(int http_code, std::string reason, double retry_after_seconds,
                  const std::string& context, const std::string& server_message) {
  if (reason.empty()) reason = DefaultReason(http_code);
  std::string message = kPrefix + std::to_string(http_code) + " " + reason;
  if (retry_after_seconds > 0) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), " retry-after=%gs", retry_after_seconds);
    message += buffer;
  }
  message += ": " + context;
  if (!server_message.empty()) message += ": " + server_message;
  return Status(CodeFor(http_code, reason), message);
}

std::string StringField(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Status StatusFromApiStatus(const nlohmann::json& api_status, const std::string& context) {
  int code = 0;
  if (api_status.is_object()) {
    auto it = api_status.find("code");
    if (it != api_status.end() && it->is_number_integer()) code = it->get<int>();
  }
  if (code == 0) return InternalError(context + ": malformed API Status " + api_status.dump());
  return MakeStatus(code, StringField(api_status, "reason"), 0, context,
                    StringField(api_status, "message"));
}

Status StatusFromResponse(int http_code, const std::string& body, double retry_after_seconds,
                          const std::string& context) {
  nlohmann::json object = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  std::string reason;
  std::string message;
  if (object.is_object() && StringField(object, "kind") == "Status") {
    reason = StringField(object, "reason");
    message = StringField(object, "message");
  } else {
    message = body.substr(0, 200);
  }
  return MakeStatus(http_code, reason, retry_after_seconds, context, message);
}

std::optional<ApiError> ApiErrorOf(const Status& status) {
  const std::string& message = status.message();
  if (status.ok() || !message.starts_with(kPrefix)) return std::nullopt;
  ApiError error;
  const char* begin = message.data() + sizeof(kPrefix) - 1;
  const char* end = message.data() + message.size();
  auto [code_end, ec] = std::from_chars(begin, end, error.http_code);
  if (ec != std::errc() || code_end == end || *code_end != ' ') return std::nullopt;
  size_t reason_begin = code_end + 1 - message.data();
  size_t reason_end = message.find_first_of(" :", reason_begin);
  if (reason_end == std::string::npos) return std::nullopt;
  error.reason = message.substr(reason_begin, reason_end - reason_begin);
  constexpr char kRetryAfter[] = " retry-after=";
  if (message.compare(reason_end, sizeof(kRetryAfter) - 1, kRetryAfter) == 0) {
    const char* value = message.data() + reason_end + sizeof(kRetryAfter) - 1;
    if (std::from_chars(value, end, error.retry_after_seconds).ec != std::errc()) {
      error.retry_after_seconds = 0;
    }
  }
  return error;
}

bool IsNotFound(const Status& status) {
  std::optional<ApiError> error = ApiErrorOf(status);
  return error && error->http_code == 404;
}

bool IsAlreadyExists(const Status& status) {
  std::optional<ApiError> error = ApiErrorOf(status);
  return error && error->http_code == 409 && error->reason == "AlreadyExists";
}

bool IsConflict(const Status& status) {
  std::optional<ApiError> error = ApiErrorOf(status);
  return error && error->http_code == 409 && error->reason != "AlreadyExists";
}

bool IsGone(const Status& status) {
  std::optional<ApiError> error = ApiErrorOf(status);
  return error && (error->http_code == 410 || error->reason == "Expired");
}

bool IsTooManyRequests(const Status& status) {
  std::optional<ApiError> error = ApiErrorOf(status);
  return error && error->http_code == 429;
}

}  // namespace bsw::kube
