#include "operator/adapters/kube/client.h"

#include <httplib.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "operator/adapters/kube/json_log.h"
#include "operator/adapters/kube/rate_limit.h"
#include "operator/adapters/kube/resources.h"
#include "operator/adapters/system_clock.h"

namespace bsw::kube {
namespace {

constexpr double kMaxRetryBackoffSeconds = 30;
constexpr size_t kMaxIdleConnections = 8;
// A watch's connection may stay quiet until the server's timeoutSeconds; read past it.
constexpr int kWatchReadGraceSeconds = 30;

struct X509Deleter {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct KeyDeleter {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

BioPtr MemoryBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

struct ServerUrl {
  bool tls = true;
  std::string host;
  int port = 443;
  std::string base_path;
};

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

// Takes the scheme off `server` and sets url.tls and the scheme's default port; returns what
// follows the scheme, or nullopt when the scheme is neither https:// nor http://.
std::optional<std::string> StripScheme(const std::string& server, ServerUrl& url) {
  if (server.starts_with("https://")) return server.substr(8);
  if (!server.starts_with("http://")) return std::nullopt;
  url.tls = false;
  url.port = 80;
  return server.substr(7);
}

// Moves the path after the authority, less trailing slashes, into url.base_path; returns the
// authority ("host" or "host:port").
std::string StripBasePath(const std::string& rest, ServerUrl& url) {
  size_t path_start = rest.find('/');
  if (path_start == std::string::npos) return rest;
  url.base_path = rest.substr(path_start);
  while (url.base_path.ends_with('/')) url.base_path.pop_back();
  return rest.substr(0, path_start);
}

// Takes a ":port" suffix (not a colon inside an IPv6 literal's brackets) off `authority` into
// `port`; false when the suffix is not a port number from 1 to 65535.
bool StripPort(std::string& authority, int& port) {
  size_t port_sep = authority.rfind(':');
  size_t bracket_end = authority.rfind(']');
  if (port_sep == std::string::npos ||
      (bracket_end != std::string::npos && port_sep < bracket_end)) {
    return true;
  }
  std::string digits = authority.substr(port_sep + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  authority = authority.substr(0, port_sep);
  return ec == std::errc() && end == digits.data() + digits.size() && port > 0 && port <= 65535;
}

StatusOr<ServerUrl> ParseServer(const std::string& server) {
  ServerUrl url;
  std::optional<std::string> rest = StripScheme(server, url);
  if (!rest) return InvalidArgumentError("server '" + server + "' is not an https:// URL");
  std::string host = StripBasePath(*rest, url);
  if (!StripPort(host, url.port)) {
    return InvalidArgumentError("server '" + server + "' has a bad port");
  }
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  if (host.empty()) return InvalidArgumentError("server '" + server + "' has no host");
  url.host = host;
  if (!url.tls && !IsLoopbackHost(url.host)) {
    return InvalidArgumentError("server '" + server +
                                "' uses plain http, which is allowed only on loopback");
  }
  return url;
}

std::string PercentEncode(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

class Query {
 public:
  Query& Add(const std::string& key, const std::string& value) {
    if (value.empty()) return *this;
    text_ += (text_.empty() ? "?" : "&") + key + "=" + PercentEncode(value);
    return *this;
  }
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

// The events of one watch response: its body cut at newlines, however the bytes were chunked,
// each line handed on as an event; a malformed or ERROR event stops the stream.
class WatchStream {
 public:
  WatchStream(const std::string& context, const std::function<void(const WatchEvent&)>& on_event)
      : context_(context), on_event_(on_event) {}

  // Takes the next chunk of the body; false once an event stopped the stream (error() says why).
  bool Consume(std::string_view chunk) {
    pending_.append(chunk);
    size_t line_start = 0;
    for (size_t newline; (newline = pending_.find('\n', line_start)) != std::string::npos;
         line_start = newline + 1) {
      if (!ConsumeLine(std::string_view(pending_.data() + line_start, newline - line_start))) {
        return false;
      }
    }
    pending_.erase(0, line_start);
    return true;
  }

  const Status& error() const { return error_; }

  // "; dropped N bytes of an incomplete event" when the body ended inside an event, else "".
  std::string Dropped() const {
    if (pending_.find_first_not_of(" \t\r") == std::string::npos) return std::string();
    return "; dropped " + std::to_string(pending_.size()) + " bytes of an incomplete event";
  }

 private:
  bool ConsumeLine(std::string_view line) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return true;
    Json event = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!event.is_object() || !event.contains("type") || !event["type"].is_string() ||
        !event.contains("object")) {
      error_ = UnavailableError(context_ +
                                ": malformed watch event: " + std::string(line.substr(0, 200)));
      return false;
    }
    std::string type = event["type"].get<std::string>();
    if (type == "ERROR") {
      error_ = StatusFromApiStatus(event["object"], context_ + ": watch ERROR event");
      return false;
    }
    on_event_(WatchEvent{std::move(type), std::move(event["object"])});
    return true;
  }

  const std::string context_;
  const std::function<void(const WatchEvent&)>& on_event_;
  std::string pending_;  // bytes of an event whose newline has not arrived yet
  Status error_;
};

std::string Trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return std::string();
  return text.substr(begin, text.find_last_not_of(" \t\r\n") + 1 - begin);
}

double RetryAfterSeconds(const httplib::Response& response) {
  std::string value = response.get_header_value("Retry-After");
  int seconds = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  return ec == std::errc() && seconds > 0 ? seconds : 0;
}

// How long to wait before retrying a request the server answered with `http_status` (other than
// a 401): its Retry-After for a 429 or a 5xx, else the backoff for a 429 and for a read-only 5xx;
// -1 when the answer is final.
double RetryWaitSeconds(int http_status, double retry_after, double backoff, bool read_only) {
  if (http_status == 429) return retry_after > 0 ? retry_after : backoff;
  if (http_status < 500) return -1;
  if (retry_after > 0) return retry_after;
  return read_only ? backoff : -1;
}

std::string Name(const Json& object) {
  if (!object.is_object()) return std::string();
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return std::string();
  auto name = metadata->find("name");
  return name != metadata->end() && name->is_string() ? name->get<std::string>() : std::string();
}

// The bearer token, re-read from its file once it is older than the refresh period.
class TokenSource {
 public:
  TokenSource(std::string token, std::string file, double refresh_seconds, const Clock& clock)
      : token_(std::move(token)),
        file_(std::move(file)),
        refresh_seconds_(refresh_seconds),
        clock_(clock) {}

  std::string Token() {
    if (file_.empty()) return token_;
    std::lock_guard<std::mutex> lock(mu_);
    double now = clock_.MonotonicSeconds();
    if (read_at_ < 0 || now - read_at_ >= refresh_seconds_) ReadLocked(now);
    return token_;
  }

  // Re-reads the file now (after a 401: the kubelet may have rotated the token since the last
  // read). Returns whether the token changed.
  bool Reload() {
    if (file_.empty()) return false;
    std::lock_guard<std::mutex> lock(mu_);
    return ReadLocked(clock_.MonotonicSeconds());
  }

 private:
  bool ReadLocked(double now) {
    read_at_ = now;
    std::ifstream in(file_);
    std::ostringstream text;
    text << in.rdbuf();
    std::string token = Trim(text.str());
    // A failed read keeps the last token: the file is being rotated.
    if (!in || token.empty() || token == token_) return false;
    if (!token_.empty()) LogEvent("info", "token_reloaded", {{"file", file_}});
    token_ = std::move(token);
    return true;
  }

  std::mutex mu_;
  std::string token_;
  std::string file_;
  double refresh_seconds_;
  const Clock& clock_;
  double read_at_ = -1;
};

void NoteBrokenPipe(int) {}

// OpenSSL writes to sockets without MSG_NOSIGNAL, so a peer that closed a TLS connection would
// kill the process with SIGPIPE. A handler that does nothing turns that into EPIPE; unlike
// SIG_IGN it is reset by exec, so child processes still get the default. A disposition the
// program chose itself is left alone.
void DivertSigpipe() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (sigaction(SIGPIPE, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) return;
    struct sigaction divert {};
    divert.sa_handler = NoteBrokenPipe;
    sigemptyset(&divert.sa_mask);
    divert.sa_flags = SA_RESTART;
    sigaction(SIGPIPE, &divert, nullptr);
  });
}

// The query of a watch: bookmarks on, so that a quiet watch still moves its resourceVersion on.
Query WatchQuery(const WatchOptions& options) {
  Query query;
  query.Add("watch", "true")
      .Add("allowWatchBookmarks", "true")
      .Add("labelSelector", options.label_selector)
      .Add("fieldSelector", options.field_selector)
      .Add("resourceVersion", options.resource_version)
      .Add("timeoutSeconds", std::to_string(options.timeout_seconds));
  return query;
}

}  // namespace

void WatchCancel::Cancel() {
  // httplib's stop() shuts a socket that is open: a watch that registered its connection but has
  // not opened the socket yet would go on to block for its whole read timeout. So stop again
  // until the watch has let go of its connection (it does as soon as its socket is shut).
  // Never called from the watch's own thread.
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
      if (connection_ == nullptr) return;
      connection_->stop();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool WatchCancel::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

struct Client::Impl {
  KubeConfig config;
  ClientOptions options;
  const Clock& clock;
  ServerUrl url;
  std::unique_ptr<X509, X509Deleter> client_cert;
  std::unique_ptr<EVP_PKEY, KeyDeleter> client_key;
  // The CA bundle for OpenSSL, which reads it from a path: an anonymous memory file
  // (/proc/self/fd/N), so that a read-only root filesystem with no writable /tmp works too.
  int ca_fd = -1;
  std::string ca_file;
  std::unique_ptr<TokenSource> token;
  TokenBucket bucket;

  std::mutex pool_mu;
  std::vector<std::unique_ptr<httplib::ClientImpl>> idle;

  Impl(KubeConfig c, ClientOptions o)
      : config(std::move(c)),
        options(std::move(o)),
        clock(options.clock != nullptr ? *options.clock : SystemClock::Get()),
        bucket(options.qps, options.burst) {}

  ~Impl() {
    if (ca_fd >= 0) close(ca_fd);
  }

  Status LoadCredentials() {
    if (!config.client_cert_pem.empty() || !config.client_key_pem.empty()) {
      BioPtr cert_bio = MemoryBio(config.client_cert_pem);
      client_cert.reset(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
      if (!client_cert) return InvalidArgumentError("the client certificate is not valid PEM");
      BioPtr key_bio = MemoryBio(config.client_key_pem);
      client_key.reset(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
      if (!client_key) return InvalidArgumentError("the client key is not valid PEM");
      if (X509_check_private_key(client_cert.get(), client_key.get()) != 1) {
        return InvalidArgumentError("the client key does not match the client certificate");
      }
    }
    if (!config.ca_pem.empty()) {
      BioPtr ca_bio = MemoryBio(config.ca_pem);
      std::unique_ptr<X509, X509Deleter> ca(
          PEM_read_bio_X509(ca_bio.get(), nullptr, nullptr, nullptr));
      if (!ca) return InvalidArgumentError("the CA bundle holds no valid PEM certificate");
      ca_fd = memfd_create("bsw-kube-ca", MFD_CLOEXEC);
      if (ca_fd < 0) return InternalError("cannot create a memory file for the CA bundle");
      if (write(ca_fd, config.ca_pem.data(), config.ca_pem.size()) !=
          static_cast<ssize_t>(config.ca_pem.size())) {
        return InternalError("cannot write the CA bundle to its memory file");
      }
      ca_file = "/proc/self/fd/" + std::to_string(ca_fd);
    }
    token = std::make_unique<TokenSource>(config.token, config.token_file,
                                          config.token_refresh_seconds, clock);
    return OkStatus();
  }

  void Sleep(double seconds) { clock.SleepFor(seconds); }

  void Throttle() { Sleep(bucket.Reserve(clock.MonotonicSeconds())); }

  std::unique_ptr<httplib::ClientImpl> Connect(double read_timeout_seconds) {
    std::unique_ptr<httplib::ClientImpl> connection;
    if (url.tls) {
      auto tls = std::make_unique<httplib::SSLClient>(url.host, url.port, client_cert.get(),
                                                      client_key.get());
      if (!ca_file.empty()) tls->set_ca_cert_path(ca_file);
      tls->enable_server_certificate_verification(true);
      connection = std::move(tls);
    } else {
      connection = std::make_unique<httplib::ClientImpl>(url.host, url.port);
    }
    auto connect_timeout = std::chrono::duration<double>(options.connect_timeout_seconds);
    auto read_timeout = std::chrono::duration<double>(read_timeout_seconds);
    connection->set_connection_timeout(
        std::chrono::duration_cast<std::chrono::microseconds>(connect_timeout));
    connection->set_read_timeout(
        std::chrono::duration_cast<std::chrono::microseconds>(read_timeout));
    connection->set_write_timeout(
        std::chrono::duration_cast<std::chrono::microseconds>(read_timeout));
    connection->set_keep_alive(true);
    connection->set_tcp_nodelay(true);
    connection->set_url_encode(false);
    return connection;
  }

  httplib::Headers Headers() {
    httplib::Headers headers = {{"Accept", "application/json"},
                                {"User-Agent", "budgetsweep-operator"}};
    std::string bearer = token->Token();
    if (!bearer.empty()) headers.emplace("Authorization", "Bearer " + bearer);
    return headers;
  }

  std::string Path(const Resource& resource, const std::string& ns, const std::string& name) const {
    std::string path = url.base_path + (resource.group.empty()
                                            ? "/api/" + resource.version
                                            : "/apis/" + resource.group + "/" + resource.version);
    if (resource.namespaced && !ns.empty()) path += "/namespaces/" + PercentEncode(ns);
    path += "/" + resource.plural;
    if (!name.empty()) path += "/" + PercentEncode(name);
    return path;
  }

  // Why the server's certificate failed verification on `connection`, for the error message.
  std::string VerifyFailure(const httplib::ClientImpl& connection) const {
    const auto* tls = dynamic_cast<const httplib::SSLClient*>(&connection);
    long code = tls != nullptr ? tls->get_openssl_verify_result() : X509_V_OK;
    if (code != X509_V_OK) return X509_verify_cert_error_string(code);
    return "its certificate does not name host " + url.host;
  }

  // The error of a request that got no response. A server certificate that does not verify is
  // FailedPrecondition (never retried: nothing will change until the configuration does).
  Status TransportError(const std::string& context, const httplib::Result& result,
                        const httplib::ClientImpl& connection) const {
    if (result.error() == httplib::Error::SSLServerVerification) {
      return FailedPreconditionError(
          context + ": refusing the API server at " + config.server + ": " +
          VerifyFailure(connection) +
          (config.ca_pem.empty() ? " (checked against the system's trusted CAs)"
                                 : " (checked against the configured certificate-authority)") +
          "; TLS verification is never skipped");
    }
    return UnavailableError(context + ": " + httplib::to_string(result.error()));
  }

  // How a watch whose response was a 200 ended: a broken stream or one that ended inside an
  // event (`dropped` says how many bytes it left) is Unavailable, so the informer watches again.
  Status WatchEnd(const std::string& context, const httplib::Result& result,
                  httplib::ClientImpl& connection, const std::string& dropped) {
    if (!result) {
      if (result.error() == httplib::Error::SSLServerVerification) {
        return TransportError(context, result, connection);
      }
      return UnavailableError(
          context + ": watch stream broke: " + httplib::to_string(result.error()) + dropped);
    }
    if (!dropped.empty()) return UnavailableError(context + ": watch stream ended" + dropped);
    return OkStatus();
  }

  // Sends one request on a pooled connection. Returns the response, or the transport error in
  // *error.
  httplib::Result Send(const std::string& method, const std::string& path, const std::string& body,
                       const std::string& content_type, const std::string& context, Status* error) {
    std::unique_ptr<httplib::ClientImpl> connection;
    {
      std::lock_guard<std::mutex> lock(pool_mu);
      if (!idle.empty()) {
        connection = std::move(idle.back());
        idle.pop_back();
      }
    }
    if (!connection) connection = Connect(options.request_timeout_seconds);
    httplib::Headers headers = Headers();
    httplib::Result result = [&] {
      if (method == "GET") return connection->Get(path, headers);
      if (method == "POST") return connection->Post(path, headers, body, content_type);
      if (method == "PUT") return connection->Put(path, headers, body, content_type);
      if (method == "PATCH") return connection->Patch(path, headers, body, content_type);
      return connection->Delete(path, headers, body, content_type);
    }();
    if (result) {
      std::lock_guard<std::mutex> lock(pool_mu);
      if (idle.size() < kMaxIdleConnections) idle.push_back(std::move(connection));
    } else {
      *error = TransportError(context, result, *connection);
    }
    return result;
  }

  StatusOr<Json> Do(const std::string& method, const std::string& path, const Json* body,
                    const std::string& content_type = "application/json") {
    StatusOr<std::string> text = DoText(method, path, body, content_type);
    if (!text.ok()) return text.status();
    Json object = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (object.is_discarded())
      return InternalError(method + " " + path + ": the response is not JSON");
    return object;
  }

  // A request whose successful response is returned as it came (a pod's log is text).
  StatusOr<std::string> DoText(const std::string& method, const std::string& path, const Json* body,
                               const std::string& content_type) {
    const std::string context = method + " " + path;
    const std::string payload = body != nullptr ? body->dump() : std::string();
    const bool read_only = method == "GET";
    double backoff = options.retry_backoff_seconds;
    bool reloaded_after_401 = false;
    for (int attempt = 0;; ++attempt) {
      Throttle();
      Status error;
      httplib::Result result = Send(method, path, payload, content_type, context, &error);
      double wait = -1;
      if (!result) {
        if (read_only && error.code() == StatusCode::kUnavailable) wait = backoff;
      } else if (result->status >= 200 && result->status < 300) {
        return std::move(result->body);
      } else {
        double retry_after = std::min(RetryAfterSeconds(*result), options.max_retry_after_seconds);
        error = StatusFromResponse(result->status, result->body, retry_after, context);
        if (result->status == 401 && !reloaded_after_401) {
          // An expired token whose successor the kubelet wrote since the last read: once.
          reloaded_after_401 = true;
          if (token->Reload()) wait = 0;
        } else {
          wait = RetryWaitSeconds(result->status, retry_after, backoff, read_only);
        }
      }
      if (wait < 0 || attempt >= options.max_retries) return error;
      Sleep(wait);
      backoff = std::min(backoff * 2, kMaxRetryBackoffSeconds);
    }
  }
};

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;

StatusOr<std::unique_ptr<Client>> Client::Create(const KubeConfig& config, ClientOptions options) {
  StatusOr<ServerUrl> url = ParseServer(config.server);
  if (!url.ok()) return url.status();
  DivertSigpipe();
  auto impl = std::make_unique<Impl>(config, std::move(options));
  impl->url = *url;
  Status loaded = impl->LoadCredentials();
  if (!loaded.ok()) return loaded;
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

const std::string& Client::default_namespace() const { return impl_->config.namespace_name; }

StatusOr<Json> Client::Version() {
  return impl_->Do("GET", impl_->url.base_path + "/version", nullptr);
}

StatusOr<Json> Client::Get(const Resource& resource, const std::string& ns,
                           const std::string& name) {
  return impl_->Do("GET", impl_->Path(resource, ns, name), nullptr);
}

StatusOr<std::string> Client::PodLog(const std::string& ns, const std::string& pod,
                                     const std::string& container, int tail_lines,
                                     int64_t limit_bytes) {
  Query query;
  query.Add("container", container)
      .Add("tailLines", std::to_string(tail_lines))
      .Add("limitBytes", std::to_string(limit_bytes));
  return impl_->DoText("GET", impl_->Path(kPods, ns, pod) + "/log" + query.str(), nullptr,
                       "application/json");
}

StatusOr<Json> Client::List(const Resource& resource, const std::string& ns,
                            const ListOptions& options) {
  Query query;
  query.Add("labelSelector", options.label_selector)
      .Add("fieldSelector", options.field_selector)
      .Add("resourceVersion", options.resource_version)
      .Add("limit", options.limit > 0 ? std::to_string(options.limit) : "")
      .Add("continue", options.continue_token);
  return impl_->Do("GET", impl_->Path(resource, ns, "") + query.str(), nullptr);
}

StatusOr<Json> Client::Create(const Resource& resource, const std::string& ns, const Json& object) {
  return impl_->Do("POST", impl_->Path(resource, ns, ""), &object);
}

StatusOr<Json> Client::Update(const Resource& resource, const std::string& ns, const Json& object) {
  std::string name = Name(object);
  if (name.empty()) return InvalidArgumentError("Update: the object has no metadata.name");
  return impl_->Do("PUT", impl_->Path(resource, ns, name), &object);
}

StatusOr<Json> Client::UpdateStatus(const Resource& resource, const std::string& ns,
                                    const Json& object) {
  std::string name = Name(object);
  if (name.empty()) return InvalidArgumentError("UpdateStatus: the object has no metadata.name");
  return impl_->Do("PUT", impl_->Path(resource, ns, name) + "/status", &object);
}

StatusOr<Json> Client::Patch(const Resource& resource, const std::string& ns,
                             const std::string& name, const Json& merge_patch) {
  return impl_->Do("PATCH", impl_->Path(resource, ns, name), &merge_patch,
                   "application/merge-patch+json");
}

StatusOr<Json> Client::PatchStatus(const Resource& resource, const std::string& ns,
                                   const std::string& name, const Json& merge_patch) {
  return impl_->Do("PATCH", impl_->Path(resource, ns, name) + "/status", &merge_patch,
                   "application/merge-patch+json");
}

Status Client::Delete(const Resource& resource, const std::string& ns, const std::string& name,
                      const DeleteOptions& options) {
  Json body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (options.grace_period_seconds) body["gracePeriodSeconds"] = *options.grace_period_seconds;
  if (!options.precondition_uid.empty()) {
    body["preconditions"]["uid"] = options.precondition_uid;
  }
  if (!options.precondition_resource_version.empty()) {
    body["preconditions"]["resourceVersion"] = options.precondition_resource_version;
  }
  return impl_->Do("DELETE", impl_->Path(resource, ns, name), &body).status();
}

Status Client::Watch(const Resource& resource, const std::string& ns, const WatchOptions& options,
                     const std::function<void(const WatchEvent&)>& on_event, WatchCancel& cancel) {
  const std::string path = impl_->Path(resource, ns, "") + WatchQuery(options).str();
  const std::string context = "GET " + path;

  impl_->Throttle();
  std::unique_ptr<httplib::ClientImpl> connection =
      impl_->Connect(options.timeout_seconds + kWatchReadGraceSeconds);
  {
    std::lock_guard<std::mutex> lock(cancel.mu_);
    if (cancel.cancelled_) return UnavailableError(context + ": cancelled");
    cancel.connection_ = connection.get();
  }

  int http_status = 0;
  std::string error_body;
  WatchStream stream(context, on_event);
  auto on_response = [&](const httplib::Response& response) {
    http_status = response.status;
    return true;
  };
  auto on_data = [&](const char* data, size_t length) {
    if (http_status != 200) {
      if (error_body.size() < 64 * 1024) error_body.append(data, length);
      return true;
    }
    return stream.Consume(std::string_view(data, length)) && !cancel.cancelled();
  };
  httplib::Result result = connection->Get(path, impl_->Headers(), on_response, on_data);
  {
    std::lock_guard<std::mutex> lock(cancel.mu_);
    cancel.connection_ = nullptr;
  }
  if (!stream.error().ok()) return stream.error();
  if (cancel.cancelled()) return UnavailableError(context + ": cancelled");
  if (http_status != 0 && http_status != 200) {
    double retry_after = result ? RetryAfterSeconds(*result) : 0;
    return StatusFromResponse(http_status, error_body, retry_after, context);
  }
  return impl_->WatchEnd(context, result, *connection, stream.Dropped());
}

Status RetryOnConflict(const std::function<Status()>& attempt, int max_attempts,
                       const Clock* clock) {
  const Clock& pause = clock != nullptr ? *clock : SystemClock::Get();
  Status status;
  for (int i = 0; i < max_attempts; ++i) {
    status = attempt();
    if (!IsConflict(status)) return status;
    // A short pause lets the competing writer finish; the next attempt re-reads anyway.
    pause.SleepFor(0.01 * (i + 1));
  }
  return status;
}

std::string ObjectKey(const Json& object) {
  std::string name = Name(object);
  if (name.empty()) return name;
  const Json& metadata = object.at("metadata");
  auto ns = metadata.find("namespace");
  if (ns != metadata.end() && ns->is_string() && !ns->get<std::string>().empty()) {
    return ns->get<std::string>() + "/" + name;
  }
  return name;
}

}  // namespace bsw::kube
