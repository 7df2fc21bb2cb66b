#ifndef BSW_ADAPTERS_OBSERVABILITY_HEALTH_SERVER_H_
#define BSW_ADAPTERS_OBSERVABILITY_HEALTH_SERVER_H_

#include <functional>
#include <memory>
#include <string>

#include "base/status.h"

namespace prometheus {
class Registry;
}
namespace httplib {
class Server;
}

namespace bsw::observability {

class RequestAuthorizer;
class ServingCertificate;
struct AuthOutcome;

// "host:port", ":port" (every interface) or "[v6-address]:port", split. Port 0 asks for a free
// port. InvalidArgument for anything else, naming `address`.
struct ListenAddress {
  std::string host;
  int port = 0;
};
[[nodiscard]] StatusOr<ListenAddress> ParseListenAddress(const std::string& address);

// HTTPS with an authorized /metrics (--metrics-secure): the server presents `certificate`, and
// /metrics answers only requests that `authorizer` lets through (200), else its 401 (with
// `WWW-Authenticate: Bearer`), 403 or 503 and a one-line reason. Both must outlive the server.
// `on_refused`, when set, hears of every refused request (remote address, outcome), on a server
// thread. /healthz and /readyz stay open.
struct SecureMetrics {
  ServingCertificate* certificate = nullptr;
  RequestAuthorizer* authorizer = nullptr;
  std::function<void(const std::string& remote_addr, const AuthOutcome&)> on_refused;
};

// An HTTP server on its own thread for the operator's probes and metrics:
//   GET /metrics  the registry in the Prometheus text format (404 when started without one)
//   GET /healthz  200 "ok" while the process serves
//   GET /readyz   200 "ok" when `ready` returns true, else 503 "not ready"
// The operator starts one on --metrics-addr (with the registry; HTTPS with SecureMetrics under
// --metrics-secure) and one on --health-addr (without, plain HTTP); both answer all three paths,
// and only /metrics ever asks for credentials.
class HealthServer {
 public:
  // Binds `address` (see ParseListenAddress) and starts serving. `registry` may be null; a null
  // `ready` means always ready. `ready` runs on a server thread and must be thread-safe. With
  // `secure`, serves HTTPS and authorizes /metrics (see SecureMetrics).
  // InvalidArgument for a malformed address or an unusable certificate; Unavailable when it
  // cannot be bound.
  [[nodiscard]] static StatusOr<std::unique_ptr<HealthServer>> Start(
      const std::string& address, std::shared_ptr<prometheus::Registry> registry,
      std::function<bool()> ready, const SecureMetrics* secure = nullptr);

  // Stops serving and joins the thread.
  ~HealthServer();
  HealthServer(const HealthServer&) = delete;
  HealthServer& operator=(const HealthServer&) = delete;

  // The port actually bound (the free port picked for port 0).
  int port() const { return port_; }
  // Whether it serves HTTPS.
  bool secure() const;

 private:
  struct Serving;
  explicit HealthServer(std::unique_ptr<Serving> serving, int port);

  std::unique_ptr<Serving> serving_;
  int port_;
};

}  // namespace bsw::observability

#endif  // BSW_ADAPTERS_OBSERVABILITY_HEALTH_SERVER_H_
