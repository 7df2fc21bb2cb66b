#include "operator/cmd/operator_command.h"

#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <variant>
#include <vector>

#include "operator/adapters/kube/access_review.h"
#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/config.h"
#include "operator/adapters/kube/json_log.h"
#include "operator/adapters/kube/leader_election.h"
#include "operator/adapters/observability/health_server.h"
#include "operator/adapters/observability/operator_metrics.h"
#include "operator/adapters/observability/request_authorizer.h"
#include "operator/adapters/observability/tls_identity.h"
#include "operator/adapters/system_clock.h"
#include "operator/controller/cutoff_rung.h"
#include "operator/controller/kube/sweep_reconciler.h"

namespace bsw {
namespace {

// Sweeps reconciled side by side: the work queue hands each sweep to one worker at a time, so a
// slow pass of one sweep does not hold up the others.
constexpr int kReconcileWorkers = 4;

std::atomic<bool> g_stop{false};

void OnStopSignal(int) { g_stop = true; }

// The kubeconfig of --kubeconfig or $KUBECONFIG, else the in-cluster configuration; *source
// says which, for the log.
StatusOr<kube::KubeConfig> LoadConfig(const OperatorOptions& options, std::string* source) {
  std::string path = options.kubeconfig;
  if (path.empty()) {
    const char* env = std::getenv("KUBECONFIG");
    if (env != nullptr) path = env;
  }
  if (!path.empty()) {
    *source = "kubeconfig " + path;
    return kube::LoadKubeconfig(path);
  }
  *source = "in-cluster";
  return kube::LoadInClusterConfig();
}

std::string Identity() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string(host) + "_" + std::to_string(getpid());
}

// Logs that the step `event` failed with `status`: the operator then exits with kExitFailed.
void LogFailure(const std::string& event, const Status& status) {
  kube::LogEvent("error", event, {{"error", status.message()}});
}

constexpr int kExitFailed = 1;

// The certificate of --metrics-secure: the files', else a self-signed one for this host's name
// and the pod's address ($POD_IP, when set).
StatusOr<std::unique_ptr<observability::ServingCertificate>> MetricsCertificate(
    const OperatorOptions& options, const Clock& clock, std::string* source) {
  if (options.metrics_cert_file.empty() != options.metrics_key_file.empty()) {
    return InvalidArgumentError("--metrics-cert-file and --metrics-key-file go together");
  }
  if (!options.metrics_cert_file.empty()) {
    *source = options.metrics_cert_file;
    return observability::ServingCertificate::FromFiles(options.metrics_cert_file,
                                                        options.metrics_key_file, clock);
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::vector<std::string> dns = {"localhost"};
  if (*host != '\0' && std::string(host) != "localhost") dns.emplace_back(host);
  std::vector<std::string> ips = {"127.0.0.1"};
  const char* pod_ip = std::getenv("POD_IP");
  if (pod_ip != nullptr && *pod_ip != '\0' && std::string(pod_ip).find(':') == std::string::npos) {
    ips.emplace_back(pod_ip);
  }
  *source = "self-signed";
  StatusOr<observability::TlsIdentity> identity = observability::SelfSignedIdentity(dns, ips);
  if (!identity.ok()) return identity.status();
  return observability::ServingCertificate::Fixed(*identity);
}

void InstallStopHandlers() {
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

// A client of the API server; *config is its configuration. A server that does not prove itself
// with the configured CA is refused for good; one that is merely unreachable may come up, and the
// informers keep trying. Null after a logged failure.
std::unique_ptr<kube::Client> Connect(const OperatorOptions& options, const Clock& clock,
                                      kube::KubeConfig* config) {
  std::string source;
  StatusOr<kube::KubeConfig> loaded = LoadConfig(options, &source);
  if (!loaded.ok()) {
    LogFailure("config_failed", loaded.status());
    return nullptr;
  }
  *config = *loaded;
  kube::LogEvent("info", "config_loaded", {{"source", source}, {"server", config->server}});
  kube::ClientOptions client_options;
  client_options.qps = 50;
  client_options.burst = 200;
  client_options.clock = &clock;
  StatusOr<std::unique_ptr<kube::Client>> client = kube::Client::Create(*config, client_options);
  if (!client.ok()) {
    LogFailure("client_failed", client.status());
    return nullptr;
  }
  StatusOr<kube::Json> version = (*client)->Version();
  if (version.status().code() == StatusCode::kFailedPrecondition) {
    LogFailure("api_server_untrusted", version.status());
    return nullptr;
  }
  if (!version.ok()) {
    kube::LogEvent("warn", "api_server_unreachable", {{"error", version.status().message()}});
  } else {
    kube::LogEvent("info", "api_server", {{"version", version->value("gitVersion", "")}});
  }
  return std::move(client).value();
}

// The metrics and probe servers, and what --metrics-secure serves them with.
struct Serving {
  std::unique_ptr<observability::ServingCertificate> certificate;
  std::unique_ptr<observability::RequestAuthorizer> authorizer;
  observability::SecureMetrics secure;
  std::unique_ptr<observability::HealthServer> metrics_server;
  std::unique_ptr<observability::HealthServer> health_server;
};

// --metrics-secure: HTTPS, and /metrics for callers the API server says may get it. False after
// a logged failure.
bool SecureServing(const OperatorOptions& options, const Clock& clock,
                   kube::KubeAccessReviewer& reviewer, Serving* serving) {
  std::string cert_source;
  StatusOr<std::unique_ptr<observability::ServingCertificate>> made =
      MetricsCertificate(options, clock, &cert_source);
  if (!made.ok()) {
    LogFailure("metrics_certificate_failed", made.status());
    return false;
  }
  serving->certificate = std::move(made).value();
  serving->authorizer = std::make_unique<observability::RequestAuthorizer>(
      reviewer, clock, AccessCheck::NonResource("get", "/metrics"));
  serving->secure.certificate = serving->certificate.get();
  serving->secure.authorizer = serving->authorizer.get();
  serving->secure.on_refused = [](const std::string& remote,
                                  const observability::AuthOutcome& outcome) {
    kube::LogEvent(outcome.status == 503 ? "warn" : "info", "metrics_refused",
                   {{"remote", remote}, {"status", outcome.status}, {"reason", outcome.message}});
  };
  kube::LogEvent("info", "metrics_secure", {{"certificate", cert_source}});
  return true;
}

// Starts the metrics server (on `metrics`' registry) and the probe server, both ready when
// `ready` says. False after a logged failure.
bool StartServing(const OperatorOptions& options, const Clock& clock,
                  kube::KubeAccessReviewer& reviewer, observability::OperatorMetrics& metrics,
                  const std::function<bool()>& ready, Serving* serving) {
  if (options.metrics_secure && !SecureServing(options, clock, reviewer, serving)) return false;
  StatusOr<std::unique_ptr<observability::HealthServer>> metrics_server =
      observability::HealthServer::Start(options.metrics_addr, metrics.registry(), ready,
                                         options.metrics_secure ? &serving->secure : nullptr);
  if (!metrics_server.ok()) {
    LogFailure("metrics_server_failed", metrics_server.status());
    return false;
  }
  serving->metrics_server = std::move(metrics_server).value();
  StatusOr<std::unique_ptr<observability::HealthServer>> health_server =
      observability::HealthServer::Start(options.health_addr, nullptr, ready);
  if (!health_server.ok()) {
    LogFailure("health_server_failed", health_server.status());
    return false;
  }
  serving->health_server = std::move(health_server).value();
  kube::LogEvent("info", "serving",
                 {{"metrics_port", serving->metrics_server->port()},
                  {"metrics_scheme", serving->metrics_server->secure() ? "https" : "http"},
                  {"health_port", serving->health_server->port()}});
  return true;
}

// Starts electing this replica through the Lease of the options: *leading once it leads, *lost
// once it stopped leading before a stop signal. Null after a logged failure.
std::unique_ptr<kube::LeaderElector> StartElection(const OperatorOptions& options,
                                                   const kube::KubeConfig& config,
                                                   const kube::Client& client, const Clock& clock,
                                                   std::atomic<bool>* leading,
                                                   std::atomic<bool>* lost) {
  kube::LeaderElectionConfig election;
  election.lease_namespace = !options.leader_election_namespace.empty()
                                 ? options.leader_election_namespace
                             : !options.ns.empty() ? options.ns
                                                   : client.default_namespace();
  election.lease_name = options.lease_name;
  election.identity = Identity();
  election.clock = &clock;
  kube::LeaderCallbacks callbacks;
  callbacks.on_started_leading = [identity = election.identity, leading] {
    kube::LogEvent("info", "leader_elected", {{"identity", identity}});
    *leading = true;
  };
  callbacks.on_stopped_leading = [lost] {
    if (!g_stop) *lost = true;
  };
  StatusOr<std::unique_ptr<kube::LeaderElector>> elector =
      kube::LeaderElector::Create(config, election, callbacks);
  if (!elector.ok()) {
    LogFailure("leader_election_failed", elector.status());
    return nullptr;
  }
  kube::LogEvent("info", "leader_election_started",
                 {{"identity", election.identity},
                  {"lease", election.lease_namespace + "/" + election.lease_name}});
  (*elector)->Start();
  return std::move(elector).value();
}

// The reconciler's hooks that feed the operator's own metrics.
ReconcilerHooks MetricsHooks(observability::OperatorMetrics& metrics) {
  ReconcilerHooks hooks;
  hooks.on_status = [&metrics](const std::string& ns, const std::string& sweep,
                               const nlohmann::json& status) {
    metrics.ObserveSweep(ns, sweep, status);
  };
  hooks.on_sweep_gone = [&metrics](const std::string& ns, const std::string& sweep) {
    metrics.ForgetSweep(ns, sweep);
  };
  hooks.on_event = [&metrics](const std::string& ns, const std::string& sweep,
                              const SweepModel& model, const Event& e) {
    metrics.CountDecision(ns, sweep, EventName(e));
    if (const auto* promoted = std::get_if<event::TrialPromoted>(&e)) {
      metrics.CountPromotion(ns, sweep, promoted->rung);
    }
    if (std::optional<int> rung = CutoffRung(model, e)) metrics.CountKill(ns, sweep, *rung);
  };
  hooks.on_metrics_error = [&metrics](const std::string& ns, const std::string& sweep,
                                      const Status&) { metrics.CountQueryError(ns, sweep); };
  hooks.on_reconciled = [&metrics](double seconds, size_t depth) {
    metrics.ObserveReconcile(seconds);
    metrics.SetQueueDepth(depth);
  };
  hooks.on_pool = [&metrics](const std::string& ns, const std::string& pool,
                             const nlohmann::json& object) {
    metrics.ObservePool(ns, pool, object);
  };
  hooks.on_pool_gone = [&metrics](const std::string& ns, const std::string& pool) {
    metrics.ForgetPool(ns, pool);
  };
  hooks.on_pool_denial = [&metrics](const std::string& ns, const std::string& pool,
                                    const std::string& reason) {
    metrics.CountPoolDenial(ns, pool, reason);
  };
  return hooks;
}

// Reconciles sweeps on kReconcileWorkers threads until a stop signal or *lost; *synced once the
// informers have synced. Fails when the informers could not start.
Status Reconcile(const OperatorOptions& options, kube::Client& client, const Clock& clock,
                 AccessReviewer* creator_reviewer, ReconcilerHooks hooks, std::atomic<bool>* synced,
                 const std::atomic<bool>& lost) {
  ReconcilerOptions reconciler_options;
  reconciler_options.ns = options.ns;
  reconciler_options.resync_seconds = options.resync_seconds;
  reconciler_options.metrics_port = options.trial_metrics_port;
  reconciler_options.checkpoint_dir = options.checkpoint_dir;
  reconciler_options.collect_image = options.collect_image;
  reconciler_options.creator_reviewer = creator_reviewer;
  SweepReconciler reconciler(client, clock, reconciler_options, std::move(hooks));
  if (Status s = reconciler.Start(); !s.ok()) return s;
  *synced = true;
  kube::LogEvent("info", "operator_started",
                 {{"namespace", options.ns.empty() ? "(all)" : options.ns}});
  std::vector<std::thread> workers;
  for (int i = 0; i < kReconcileWorkers; ++i)
    workers.emplace_back([&reconciler] { reconciler.Run(); });
  for (int tick = 1; !g_stop && !lost; ++tick) {
    clock.SleepFor(0.1);
    // Watch events, pod lists and API responses churn through many short-lived allocations;
    // every 10 s the allocator gives its free pages back, so that they do not stay resident.
    if (tick % 100 == 0) malloc_trim(0);
  }
  reconciler.Stop();
  for (std::thread& worker : workers) worker.join();
  return OkStatus();
}

}  // namespace

int RunOperator(const OperatorOptions& options) {
  const Clock& clock = SystemClock::Get();
  kube::InstallJsonLogger(clock);
  InstallStopHandlers();
  kube::KubeConfig config;
  std::unique_ptr<kube::Client> client = Connect(options, clock, &config);
  if (!client) return kExitFailed;

  // Metrics and probes come up first. A standby (waiting for the lease) is ready, as with
  // controller-runtime, so a two-replica Deployment rolls out; the leader is ready once its
  // informers have synced.
  observability::OperatorMetrics metrics;
  std::atomic<bool> leading{!options.leader_elect};
  std::atomic<bool> synced{false};
  auto ready = [&leading, &synced] { return !leading.load() || synced.load(); };
  kube::KubeAccessReviewer reviewer(*client);
  Serving serving;
  if (!StartServing(options, clock, reviewer, metrics, ready, &serving)) return kExitFailed;

  std::atomic<bool> lost{false};
  std::unique_ptr<kube::LeaderElector> elector;
  if (options.leader_elect) {
    elector = StartElection(options, config, *client, clock, &leading, &lost);
    if (!elector) return kExitFailed;
  }
  while (!leading && !g_stop) clock.SleepFor(0.1);
  if (g_stop) return 0;

  Status reconciled =
      Reconcile(options, *client, clock, options.check_creator_rights ? &reviewer : nullptr,
                MetricsHooks(metrics), &synced, lost);
  if (!reconciled.ok()) {
    LogFailure("informers_failed", reconciled);
    return kExitFailed;
  }
  if (lost) {
    LogFailure("leader_lost", UnavailableError("could not renew the lease; exiting"));
    return kExitFailed;
  }
  if (elector) elector->Stop();
  kube::LogEvent("info", "operator_stopped", {});
  return 0;
}

}  // namespace bsw
