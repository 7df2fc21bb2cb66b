#include "operator/adapters/observability/health_server.h"

#include <httplib.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>

#include <charconv>
#include <chrono>
#include <thread>
#include <utility>

#include "operator/adapters/observability/request_authorizer.h"
#include "operator/adapters/observability/tls_identity.h"

namespace bsw::observability {

StatusOr<ListenAddress> ParseListenAddress(const std::string& address) {
  auto invalid = [&address] {
    return InvalidArgumentError("listen address \"" + address +
                                "\": want host:port, :port or [ipv6]:port with a port 0-65535");
  };
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return invalid();
  ListenAddress out;
  out.host = address.substr(0, colon);
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  } else if (out.host.find_first_of(":[]") != std::string::npos) {
    return invalid();
  }
  if (out.host.empty()) out.host = "0.0.0.0";
  const std::string port = address.substr(colon + 1);
  const char* end = port.data() + port.size();
  auto [parsed_end, error] = std::from_chars(port.data(), end, out.port);
  if (port.empty() || error != std::errc() || parsed_end != end || out.port < 0 ||
      out.port > 65535) {
    return invalid();
  }
  return out;
}

namespace {

// A plain HTTP server, or HTTPS with the metrics certificate when `secure` is set.
StatusOr<std::unique_ptr<httplib::Server>> MakeServer(const SecureMetrics* secure) {
  if (secure == nullptr) return std::make_unique<httplib::Server>();
  if (secure->certificate == nullptr || secure->authorizer == nullptr) {
    return InvalidArgumentError("secure metrics need a certificate and an authorizer");
  }
  ServingCertificate* certificate = secure->certificate;
  auto tls = std::make_unique<httplib::SSLServer>(
      [certificate](SSL_CTX& ctx) { return certificate->Install(&ctx); });
  if (!tls->is_valid()) {
    return InvalidArgumentError("cannot set up TLS with the metrics certificate");
  }
  return std::unique_ptr<httplib::Server>(std::move(tls));
}

// /healthz answers while the process serves; /readyz asks `ready` (ready when unset).
void RouteProbes(httplib::Server& server, std::function<bool()> ready) {
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("ok", "text/plain");
  });
  server.Get("/readyz",
             [ready = std::move(ready)](const httplib::Request&, httplib::Response& response) {
               const bool is_ready = !ready || ready();
               response.status = is_ready ? 200 : 503;
               response.set_content(is_ready ? "ok" : "not ready", "text/plain");
             });
}

// /metrics serves the registry in the text format; with `secure`, only to a caller its
// authorizer lets in, telling on_refused of each one refused.
void RouteMetrics(httplib::Server& server, std::shared_ptr<prometheus::Registry> registry,
                  const SecureMetrics* secure) {
  RequestAuthorizer* authorizer = secure != nullptr ? secure->authorizer : nullptr;
  auto on_refused = secure != nullptr ? secure->on_refused : nullptr;
  server.Get("/metrics", [registry = std::move(registry), authorizer, on_refused](
                             const httplib::Request& request, httplib::Response& response) {
    if (authorizer != nullptr) {
      AuthOutcome outcome = authorizer->Authorize(request.get_header_value("Authorization"));
      if (outcome.status != 200) {
        if (on_refused) on_refused(request.remote_addr, outcome);
        response.status = outcome.status;
        if (outcome.status == 401) {
          response.set_header("WWW-Authenticate", "Bearer realm=\"budgetsweep-operator\"");
        }
        response.set_content(outcome.message + "\n", "text/plain; charset=utf-8");
        return;
      }
    }
    response.set_content(prometheus::TextSerializer().Serialize(registry->Collect()),
                         "text/plain; version=0.0.4; charset=utf-8");
  });
}

}  // namespace

struct HealthServer::Serving {
  std::unique_ptr<httplib::Server> server;
  bool secure = false;
  std::thread thread;
};

HealthServer::HealthServer(std::unique_ptr<Serving> serving, int port)
    : serving_(std::move(serving)), port_(port) {}

HealthServer::~HealthServer() {
  serving_->server->stop();
  serving_->thread.join();
}

bool HealthServer::secure() const { return serving_->secure; }

StatusOr<std::unique_ptr<HealthServer>> HealthServer::Start(
    const std::string& address, std::shared_ptr<prometheus::Registry> registry,
    std::function<bool()> ready, const SecureMetrics* secure) {
  StatusOr<ListenAddress> listen = ParseListenAddress(address);
  if (!listen.ok()) return listen.status();

  StatusOr<std::unique_ptr<httplib::Server>> made = MakeServer(secure);
  if (!made.ok()) return made.status();
  auto serving = std::make_unique<Serving>();
  serving->server = std::move(*made);
  serving->secure = secure != nullptr;
  httplib::Server& server = *serving->server;
  // httplib's default also sets SO_REUSEPORT, with which a second operator on the same port binds
  // too and silently gets half the scrapes and probes. SO_REUSEADDR alone still allows a restart
  // while old connections linger in TIME_WAIT.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  RouteProbes(server, std::move(ready));
  if (registry) RouteMetrics(server, std::move(registry), secure);

  const int port = listen->port == 0
                       ? server.bind_to_any_port(listen->host)
                       : (server.bind_to_port(listen->host, listen->port) ? listen->port : -1);
  if (port < 0) {
    return UnavailableError("cannot listen on " + address + " (host " + listen->host +
                            "): the port is taken or the host is not a local address");
  }
  serving->thread = std::thread([&server] { server.listen_after_bind(); });
  // stop() is a no-op until the loop runs: wait for it, so that the destructor always ends it.
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return std::unique_ptr<HealthServer>(new HealthServer(std::move(serving), port));
}

}  // namespace bsw::observability
