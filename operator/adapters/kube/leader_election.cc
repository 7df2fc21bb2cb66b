#include "operator/adapters/kube/leader_election.h"

#include <spdlog/spdlog.h>

#include <cmath>

#include "operator/adapters/system_clock.h"
#include "operator/core/rfc3339.h"

namespace bsw::kube {
namespace {

std::string StringAt(const Json& object, const char* section, const char* key) {
  auto outer = object.find(section);
  if (outer == object.end() || !outer->is_object()) return std::string();
  auto value = outer->find(key);
  return value != outer->end() && value->is_string() ? value->get<std::string>() : std::string();
}

}  // namespace

StatusOr<std::unique_ptr<LeaderElector>> LeaderElector::Create(const KubeConfig& kubeconfig,
                                                               LeaderElectionConfig config,
                                                               LeaderCallbacks callbacks) {
  if (config.lease_name.empty() || config.lease_namespace.empty() || config.identity.empty()) {
    return InvalidArgumentError("leader election needs a lease name, namespace and identity");
  }
  if (!(config.lease_duration_seconds > config.renew_deadline_seconds &&
        config.renew_deadline_seconds > config.retry_period_seconds &&
        config.retry_period_seconds > 0)) {
    return InvalidArgumentError(
        "leader election needs lease duration > renew deadline > retry period > 0");
  }
  ClientOptions options;
  options.connect_timeout_seconds = config.retry_period_seconds;
  options.request_timeout_seconds = config.retry_period_seconds;
  options.max_retries = 0;
  options.clock = config.clock;
  StatusOr<std::unique_ptr<Client>> client = Client::Create(kubeconfig, options);
  if (!client.ok()) return client.status();
  return std::unique_ptr<LeaderElector>(
      new LeaderElector(std::move(*client), std::move(config), std::move(callbacks)));
}

LeaderElector::LeaderElector(std::unique_ptr<Client> client, LeaderElectionConfig config,
                             LeaderCallbacks callbacks)
    : client_(std::move(client)),
      config_(std::move(config)),
      callbacks_(std::move(callbacks)),
      clock_(config_.clock != nullptr ? *config_.clock : SystemClock::Get()) {}

LeaderElector::~LeaderElector() { Stop(); }

void LeaderElector::Start() {
  thread_ = std::thread([this] { Run(); });
}

void LeaderElector::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool LeaderElector::IsLeader() const {
  std::lock_guard<std::mutex> lock(mu_);
  return leader_;
}

bool LeaderElector::SleepUnlessStopped(double seconds) {
  std::unique_lock<std::mutex> lock(mu_);
  return !clock_.WaitUntil(cv_, lock, clock_.MonotonicSeconds() + seconds,
                           [this] { return stopped_; });
}

std::string LeaderElector::NowMicroTime() const {
  return Rfc3339(clock_.NowUnixSeconds(), /*microseconds=*/true);
}

void LeaderElector::Run() {
  while (!TryAcquireOrRenew()) {
    if (!SleepUnlessStopped(config_.retry_period_seconds)) return;
  }
  bool stopped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped = stopped_;
    leader_ = !stopped;
  }
  if (stopped) return Release();
  spdlog::info("leader election: {} leads {}/{}", config_.identity, config_.lease_namespace,
               config_.lease_name);
  if (callbacks_.on_started_leading) callbacks_.on_started_leading();
  // The start of the last successful renewal: the lease is ours until then + lease duration.
  double renewed = clock_.MonotonicSeconds();
  while (SleepUnlessStopped(config_.retry_period_seconds)) {
    double attempt = clock_.MonotonicSeconds();
    if (TryAcquireOrRenew()) {
      renewed = attempt;
    } else if (clock_.MonotonicSeconds() - renewed >= config_.renew_deadline_seconds) {
      spdlog::error("leader election: {} could not renew {}/{} within {}s; leadership lost",
                    config_.identity, config_.lease_namespace, config_.lease_name,
                    config_.renew_deadline_seconds);
      {
        std::lock_guard<std::mutex> lock(mu_);
        leader_ = false;
      }
      if (callbacks_.on_stopped_leading) callbacks_.on_stopped_leading();
      return;
    }
  }
  Release();
  {
    std::lock_guard<std::mutex> lock(mu_);
    leader_ = false;
  }
  if (callbacks_.on_stopped_leading) callbacks_.on_stopped_leading();
}

bool LeaderElector::TryAcquireOrRenew() {
  const std::string now = NowMicroTime();
  const int duration_seconds = static_cast<int>(std::ceil(config_.lease_duration_seconds));
  StatusOr<Json> current = client_->Get(kLeases, config_.lease_namespace, config_.lease_name);
  if (!current.ok()) {
    if (!IsNotFound(current.status())) {
      spdlog::warn("leader election: {}", current.status().message());
      return false;
    }
    Json lease = {
        {"apiVersion", "coordination.k8s.io/v1"},
        {"kind", "Lease"},
        {"metadata", {{"name", config_.lease_name}, {"namespace", config_.lease_namespace}}},
        {"spec",
         {{"holderIdentity", config_.identity},
          {"leaseDurationSeconds", duration_seconds},
          {"acquireTime", now},
          {"renewTime", now},
          {"leaseTransitions", 0}}}};
    StatusOr<Json> created = client_->Create(kLeases, config_.lease_namespace, lease);
    if (!created.ok()) return false;
    observed_resource_version_ = StringAt(*created, "metadata", "resourceVersion");
    observed_at_ = clock_.MonotonicSeconds();
    return true;
  }

  Json lease = std::move(*current);
  std::string resource_version = StringAt(lease, "metadata", "resourceVersion");
  if (resource_version != observed_resource_version_) {
    observed_resource_version_ = resource_version;
    observed_at_ = clock_.MonotonicSeconds();
  }
  std::string holder = StringAt(lease, "spec", "holderIdentity");
  if (!holder.empty() && holder != config_.identity &&
      clock_.MonotonicSeconds() < observed_at_ + config_.lease_duration_seconds) {
    return false;
  }
  Json& spec = lease["spec"];
  if (!spec.is_object()) spec = Json::object();
  if (holder != config_.identity) {
    auto found = spec.find("leaseTransitions");
    int transitions = found != spec.end() && found->is_number_integer() ? found->get<int>() : 0;
    spec["leaseTransitions"] = holder.empty() ? transitions : transitions + 1;
    spec["acquireTime"] = now;
  }
  spec["holderIdentity"] = config_.identity;
  spec["leaseDurationSeconds"] = duration_seconds;
  spec["renewTime"] = now;
  // A concurrent writer changed the lease since our Get: Update fails with Conflict and the
  // other candidate has won this round.
  StatusOr<Json> updated = client_->Update(kLeases, config_.lease_namespace, lease);
  if (!updated.ok()) {
    if (!IsConflict(updated.status()))
      spdlog::warn("leader election: {}", updated.status().message());
    return false;
  }
  observed_resource_version_ = StringAt(*updated, "metadata", "resourceVersion");
  observed_at_ = clock_.MonotonicSeconds();
  return true;
}

void LeaderElector::Release() {
  StatusOr<Json> current = client_->Get(kLeases, config_.lease_namespace, config_.lease_name);
  if (!current.ok() || StringAt(*current, "spec", "holderIdentity") != config_.identity) return;
  Json lease = std::move(*current);
  const std::string now = NowMicroTime();
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  lease["spec"]["renewTime"] = now;
  Status released = client_->Update(kLeases, config_.lease_namespace, lease).status();
  if (!released.ok()) spdlog::warn("leader election: releasing: {}", released.message());
}

}  // namespace bsw::kube
