#include "operator/cmd/operator_command.h"

#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
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
#include "operator/controller/kube/sweep_reconciler.h"
#include "operator/core/reason.h"

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

int Fail(const std::string& event, const Status& status) {
  kube::LogEvent("error", event, {{"error", status.message()}});
  return 1;
}

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

}  // namespace

int RunOperator(const OperatorOptions& options) {
  const Clock& clock = SystemClock::Get();
  kube::InstallJsonLogger(clock);
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);

  std::string source;
  StatusOr<kube::KubeConfig> config = LoadConfig(options, &source);
  if (!config.ok()) return Fail("config_failed", config.status());
  kube::LogEvent("info", "config_loaded", {{"source", source}, {"server", config->server}});
  kube::ClientOptions client_options;
  client_options.qps = 50;
  client_options.burst = 200;
  client_options.clock = &clock;
  StatusOr<std::unique_ptr<kube::Client>> client = kube::Client::Create(*config, client_options);
  if (!client.ok()) return Fail("client_failed", client.status());
  // A server that does not prove itself with the configured CA is refused for good; one that is
  // merely unreachable may come up, and the informers keep trying.
  StatusOr<kube::Json> version = (*client)->Version();
  if (version.status().code() == StatusCode::kFailedPrecondition) {
    return Fail("api_server_untrusted", version.status());
  }
  if (!version.ok()) {
    kube::LogEvent("warn", "api_server_unreachable", {{"error", version.status().message()}});
  } else {
    kube::LogEvent("info", "api_server", {{"version", version->value("gitVersion", "")}});
  }

  // Metrics and probes come up first. A standby (waiting for the lease) is ready, as with
  // controller-runtime, so a two-replica Deployment rolls out; the leader is ready once its
  // informers have synced.
  observability::OperatorMetrics metrics;
  std::atomic<bool> leading{!options.leader_elect};
  std::atomic<bool> synced{false};
  auto ready = [&leading, &synced] { return !leading.load() || synced.load(); };
  // --metrics-secure: HTTPS, and /metrics for callers the API server says may get it.
  kube::KubeAccessReviewer reviewer(**client);
  std::unique_ptr<observability::ServingCertificate> certificate;
  std::unique_ptr<observability::RequestAuthorizer> authorizer;
  observability::SecureMetrics secure;
  if (options.metrics_secure) {
    std::string cert_source;
    StatusOr<std::unique_ptr<observability::ServingCertificate>> made =
        MetricsCertificate(options, clock, &cert_source);
    if (!made.ok()) return Fail("metrics_certificate_failed", made.status());
    certificate = std::move(made).value();
    authorizer = std::make_unique<observability::RequestAuthorizer>(
        reviewer, clock, AccessCheck::NonResource("get", "/metrics"));
    secure.certificate = certificate.get();
    secure.authorizer = authorizer.get();
    secure.on_refused = [](const std::string& remote, const observability::AuthOutcome& outcome) {
      kube::LogEvent(outcome.status == 503 ? "warn" : "info", "metrics_refused",
                     {{"remote", remote}, {"status", outcome.status}, {"reason", outcome.message}});
    };
    kube::LogEvent("info", "metrics_secure", {{"certificate", cert_source}});
  }
  StatusOr<std::unique_ptr<observability::HealthServer>> metrics_server =
      observability::HealthServer::Start(options.metrics_addr, metrics.registry(), ready,
                                         options.metrics_secure ? &secure : nullptr);
  if (!metrics_server.ok()) return Fail("metrics_server_failed", metrics_server.status());
  StatusOr<std::unique_ptr<observability::HealthServer>> health_server =
      observability::HealthServer::Start(options.health_addr, nullptr, ready);
  if (!health_server.ok()) return Fail("health_server_failed", health_server.status());
  kube::LogEvent("info", "serving",
                 {{"metrics_port", (*metrics_server)->port()},
                  {"metrics_scheme", (*metrics_server)->secure() ? "https" : "http"},
                  {"health_port", (*health_server)->port()}});

  std::atomic<bool> lost{false};
  std::unique_ptr<kube::LeaderElector> elector;
  if (options.leader_elect) {
    kube::LeaderElectionConfig election;
    election.lease_namespace = !options.leader_election_namespace.empty()
                                   ? options.leader_election_namespace
                               : !options.ns.empty() ? options.ns
                                                     : (*client)->default_namespace();
    election.lease_name = options.lease_name;
    election.identity = Identity();
    election.clock = &clock;
    kube::LeaderCallbacks callbacks;
    callbacks.on_started_leading = [&] {
      kube::LogEvent("info", "leader_elected", {{"identity", election.identity}});
      leading = true;
    };
    callbacks.on_stopped_leading = [&] {
      if (!g_stop) lost = true;
    };
    StatusOr<std::unique_ptr<kube::LeaderElector>> created =
        kube::LeaderElector::Create(*config, election, callbacks);
    if (!created.ok()) return Fail("leader_election_failed", created.status());
    elector = std::move(created).value();
    kube::LogEvent("info", "leader_election_started",
                   {{"identity", election.identity},
                    {"lease", election.lease_namespace + "/" + election.lease_name}});
    elector->Start();
  }

  while (!leading && !g_stop) clock.SleepFor(0.1);
  if (g_stop) return 0;

  ReconcilerOptions reconciler_options;
  reconciler_options.ns = options.ns;
  reconciler_options.resync_seconds = options.resync_seconds;
  reconciler_options.metrics_port = options.trial_metrics_port;
  reconciler_options.checkpoint_dir = options.checkpoint_dir;
  if (options.check_creator_rights) reconciler_options.creator_reviewer = &reviewer;
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
    const auto* stopped = std::get_if<event::TrialStopped>(&e);
    if (stopped && stopped->reason == ReasonName(Reason::kRungCutoff)) {
      const std::vector<double>& rungs = model.rungs().milestones();
      double reached = model.trial(stopped->trial).progress();
      auto rung = std::find(rungs.begin(), rungs.end(), reached) - rungs.begin();
      metrics.CountKill(ns, sweep, static_cast<int>(rung));
    }
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
  SweepReconciler reconciler(**client, clock, reconciler_options, hooks);
  if (Status s = reconciler.Start(); !s.ok()) return Fail("informers_failed", s);
  synced = true;
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
  if (lost) return Fail("leader_lost", UnavailableError("could not renew the lease; exiting"));
  if (elector) elector->Stop();
  kube::LogEvent("info", "operator_stopped", {});
  return 0;
}

}  // namespace bsw
