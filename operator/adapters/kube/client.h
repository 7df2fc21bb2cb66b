#ifndef BSW_ADAPTERS_KUBE_CLIENT_H_
#define BSW_ADAPTERS_KUBE_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/status.h"
#include "operator/adapters/kube/config.h"
#include "operator/adapters/kube/errors.h"
#include "operator/ports/clock.h"

namespace httplib {
class ClientImpl;
}

namespace bsw::kube {

using Json = nlohmann::json;

// A kind of object, by group/version/resource. The core group "" lives under /api/v1, the others
// under /apis/<group>/<version>.
struct Resource {
  std::string group;
  std::string version;
  std::string plural;
  bool namespaced = true;
};

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;
  int64_t limit = 0;  // 0: no paging
  std::string continue_token;
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;
  int timeout_seconds = 300;  // the server ends the watch after this long
};

struct DeleteOptions {
  std::optional<int64_t> grace_period_seconds;
  std::string precondition_uid;
  std::string precondition_resource_version;
};

// One event of a watch stream: ADDED, MODIFIED, DELETED or BOOKMARK (ERROR events end the watch
// with their Status instead).
struct WatchEvent {
  std::string type;
  Json object;
};

struct ClientOptions {
  // Client-side rate limit on every request, watches included.
  double qps = 10;
  int burst = 100;
  double connect_timeout_seconds = 5;
  // Bounds each read and write on a connection; a slower response fails with Unavailable.
  double request_timeout_seconds = 30;
  // Extra attempts after a 429 (any verb, after its Retry-After), a 5xx with Retry-After (any
  // verb), or a 5xx / transport error on a GET (backing off from retry_backoff_seconds, doubling,
  // up to 30 s). Other failures are returned at once.
  int max_retries = 3;
  double retry_backoff_seconds = 0.8;
  // Retry-After values above this are clamped.
  double max_retry_after_seconds = 60;
  // Times the waits between retries and for rate-limit tokens, and the token file's refresh; must
  // outlive the client. Default: SystemClock::Get().
  const Clock* clock = nullptr;
};

// Cancels a Watch from another thread: Cancel() closes its connection, so the Watch returns
// promptly, and a Watch started after Cancel() returns at once. Thread-safe.
class WatchCancel {
 public:
  void Cancel();
  bool cancelled() const;

 private:
  friend class Client;
  mutable std::mutex mu_;
  bool cancelled_ = false;
  httplib::ClientImpl* connection_ = nullptr;
};

// A Kubernetes REST client over HTTPS (cpp-httplib + OpenSSL). Objects are JSON. Thread-safe:
// requests share a small pool of keep-alive connections; each watch has its own.
//
// Credentials: the client certificate and key are handed to OpenSSL in memory (never written to
// disk); the CA bundle, which is public, is written to a private temporary file because
// cpp-httplib 0.11 trusts only a file given by path without also loading the system store.
//
// Errors carry the HTTP code and API reason: see errors.h (IsNotFound, IsConflict, ...).
// The first Create installs a no-op SIGPIPE handler when SIGPIPE has its default action, since
// OpenSSL's socket writes would otherwise kill the process when a server closes a connection.
// Transport failures and timeouts are Unavailable. A server whose certificate does not verify
// (another CA, another name) is FailedPrecondition, with OpenSSL's reason, and is not retried.
class Client {
 public:
  // InvalidArgument: an unusable server URL, CA, certificate or key.
  [[nodiscard]] static StatusOr<std::unique_ptr<Client>> Create(const KubeConfig& config,
                                                                ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // The namespace of the configuration's context.
  const std::string& default_namespace() const;

  // GET /version: the server's build (gitVersion, ...). Any client may read it, so it shows
  // whether the server is reachable and trusted before anything else is asked.
  [[nodiscard]] StatusOr<Json> Version();

  // `ns` is ignored for cluster-scoped resources. For List and Watch, an empty `ns` means all
  // namespaces.
  [[nodiscard]] StatusOr<Json> Get(const Resource& resource, const std::string& ns,
                                   const std::string& name);
  // Returns the list object: items, metadata.resourceVersion and metadata.continue.
  [[nodiscard]] StatusOr<Json> List(const Resource& resource, const std::string& ns,
                                    const ListOptions& options = {});
  [[nodiscard]] StatusOr<Json> Create(const Resource& resource, const std::string& ns,
                                      const Json& object);
  // PUT of the whole object, named by its metadata.name. With metadata.resourceVersion set, a
  // stale object fails with Conflict (IsConflict).
  [[nodiscard]] StatusOr<Json> Update(const Resource& resource, const std::string& ns,
                                      const Json& object);
  // PUT to the /status subresource.
  [[nodiscard]] StatusOr<Json> UpdateStatus(const Resource& resource, const std::string& ns,
                                            const Json& object);
  // A JSON merge patch (RFC 7386, application/merge-patch+json).
  [[nodiscard]] StatusOr<Json> Patch(const Resource& resource, const std::string& ns,
                                     const std::string& name, const Json& merge_patch);
  // A JSON merge patch of the /status subresource.
  [[nodiscard]] StatusOr<Json> PatchStatus(const Resource& resource, const std::string& ns,
                                           const std::string& name, const Json& merge_patch);
  [[nodiscard]] Status Delete(const Resource& resource, const std::string& ns,
                              const std::string& name, const DeleteOptions& options = {});

  // The last `tail_lines` lines of a pod's container's log, at most `limit_bytes` of them from
  // their start (the server cuts the rest): GET .../pods/POD/log.
  [[nodiscard]] StatusOr<std::string> PodLog(const std::string& ns, const std::string& pod,
                                             const std::string& container, int tail_lines,
                                             int64_t limit_bytes);

  // Watches from options.resource_version, with bookmarks, calling `on_event` for each event in
  // order until the stream ends. Returns OK when the server ended the watch cleanly; the Status
  // of an HTTP error or of an ERROR event (IsGone: re-list); Unavailable when the stream broke
  // (an event cut in the middle is dropped, never delivered) or was cancelled.
  [[nodiscard]] Status Watch(const Resource& resource, const std::string& ns,
                             const WatchOptions& options,
                             const std::function<void(const WatchEvent&)>& on_event,
                             WatchCancel& cancel);

 private:
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Runs `attempt` (re-read the object, re-apply the change, write it) until it succeeds, fails
// with something other than a Conflict, or `max_attempts` attempts are spent, pausing briefly on
// `clock` (default: SystemClock::Get()) between attempts; returns its last Status.
[[nodiscard]] Status RetryOnConflict(const std::function<Status()>& attempt, int max_attempts = 5,
                                     const Clock* clock = nullptr);

// "namespace/name", or "name" for a cluster-scoped object.
std::string ObjectKey(const Json& object);

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_CLIENT_H_
