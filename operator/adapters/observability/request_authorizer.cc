#include "operator/adapters/observability/request_authorizer.h"

#include <openssl/evp.h>

#include <cctype>
#include <utility>

namespace bsw::observability {
namespace {

std::string Sha256(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

std::string Quote(const std::string& text) { return "\"" + text + "\""; }

}  // namespace

std::string BearerToken(const std::string& authorization) {
  size_t space = authorization.find(' ');
  if (space == std::string::npos) return "";
  std::string scheme = authorization.substr(0, space);
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "bearer") return "";
  size_t begin = authorization.find_first_not_of(' ', space);
  if (begin == std::string::npos) return "";
  size_t end = authorization.find_last_not_of(" \t\r\n");
  return authorization.substr(begin, end + 1 - begin);
}

RequestAuthorizer::RequestAuthorizer(AccessReviewer& reviewer, const Clock& clock,
                                     AccessCheck check, double ttl_seconds, size_t max_entries)
    : reviewer_(reviewer),
      clock_(clock),
      check_(std::move(check)),
      ttl_seconds_(ttl_seconds),
      max_entries_(max_entries) {}

size_t RequestAuthorizer::reviews() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reviews_;
}

AuthOutcome RequestAuthorizer::Authorize(const std::string& authorization) {
  const std::string token = BearerToken(authorization);
  if (token.empty()) {
    return {401, authorization.empty() ? "no bearer token (Authorization: Bearer <token>)"
                                       : "the Authorization header is not \"Bearer <token>\""};
  }
  const std::string key = Sha256(token);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = cache_.find(key);
    if (found != cache_.end() && found->second.expires > clock_.MonotonicSeconds()) {
      return found->second.outcome;
    }
  }
  // Reviewed without the lock: a slow API server must not hold up scrapes with cached tokens.
  AuthOutcome outcome = Review(token);
  if (outcome.status == 503) return outcome;
  std::lock_guard<std::mutex> lock(mu_);
  const double now = clock_.MonotonicSeconds();
  if (cache_.size() >= max_entries_) {
    std::erase_if(cache_, [now](const auto& entry) { return entry.second.expires <= now; });
    if (cache_.size() >= max_entries_) cache_.clear();
  }
  cache_[key] = Entry{outcome, now + ttl_seconds_};
  return outcome;
}

AuthOutcome RequestAuthorizer::Review(const std::string& token) {
  StatusOr<TokenReviewResult> who = reviewer_.ReviewToken(token);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++reviews_;
  }
  if (!who.ok()) return {503, "TokenReview failed: " + who.status().message()};
  if (!who->authenticated) {
    return {401, "the API server does not authenticate this token" +
                     (who->error.empty() ? std::string() : ": " + who->error)};
  }
  StatusOr<AccessDecision> decision = reviewer_.Review(who->user, check_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++reviews_;
  }
  if (!decision.ok()) return {503, "SubjectAccessReview failed: " + decision.status().message()};
  if (!decision->allowed) {
    return {403, "user " + Quote(who->user.username) + " may not " + check_.Describe() +
                     (decision->reason.empty() ? std::string() : ": " + decision->reason)};
  }
  return {200, "user " + Quote(who->user.username) + " may " + check_.Describe()};
}

}  // namespace bsw::observability
