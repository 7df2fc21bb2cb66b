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

// "host:port", ":port" (every interface) or "[v6-address]:port", split. Port 0 asks for a free
// port. InvalidArgument for anything else, naming `address`.
struct ListenAddress {
  std::string host;
  int port = 0;
};
[[nodiscard]] StatusOr<ListenAddress> ParseListenAddress(const std::string& address);

// An HTTP server on its own thread for the operator's probes and metrics:
//   GET /metrics  the registry in the Prometheus text format (404 when started without one)
//   GET /healthz  200 "ok" while the process serves
//   GET /readyz   200 "ok" when `ready` returns true, else 503 "not ready"
// The operator starts one on --metrics-addr (with the registry) and one on --health-addr
// (without); both answer all three paths.
class HealthServer {
 public:
  // Binds `address` (see ParseListenAddress) and starts serving. `registry` may be null; a null
  // `ready` means always ready. `ready` runs on a server thread and must be thread-safe.
  // InvalidArgument for a malformed address; Unavailable when it cannot be bound.
  [[nodiscard]] static StatusOr<std::unique_ptr<HealthServer>> Start(
      const std::string& address, std::shared_ptr<prometheus::Registry> registry,
      std::function<bool()> ready);

  // Stops serving and joins the thread.
  ~HealthServer();
  HealthServer(const HealthServer&) = delete;
  HealthServer& operator=(const HealthServer&) = delete;

  // The port actually bound (the free port picked for port 0).
  int port() const { return port_; }

 private:
  struct Serving;
  explicit HealthServer(std::unique_ptr<Serving> serving, int port);

  std::unique_ptr<Serving> serving_;
  int port_;
};

}  // namespace bsw::observability

#endif  // BSW_ADAPTERS_OBSERVABILITY_HEALTH_SERVER_H_
