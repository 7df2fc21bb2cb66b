#ifndef BSW_ADAPTERS_KUBE_LEADER_ELECTION_H_
#define BSW_ADAPTERS_KUBE_LEADER_ELECTION_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "operator/adapters/kube/client.h"
#include "operator/ports/clock.h"

namespace bsw::kube {

inline const Resource kLeases{"coordination.k8s.io", "v1", "leases", true};

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;  // unique per candidate, e.g. the pod name
  // A holder that has not renewed for this long may be replaced.
  double lease_duration_seconds = 15;
  // The leader gives up when it could not renew for this long.
  double renew_deadline_seconds = 10;
  // Time between attempts to acquire or renew; also each request's timeout.
  double retry_period_seconds = 2;
  // Times the attempts, the expiry and the lease's timestamps; must outlive the elector.
  // Default: SystemClock::Get().
  const Clock* clock = nullptr;
};

struct LeaderCallbacks {
  // Called on the elector's thread once this candidate holds the lease.
  std::function<void()> on_started_leading;
  // Called once when leadership ends: renewal failed for renew_deadline (the operator exits) or
  // Stop() released the lease.
  std::function<void()> on_stopped_leading;
};

// Leader election on a coordination.k8s.io/v1 Lease. Every write carries the resourceVersion it
// read, so of two candidates racing for an expired lease only one can win. A candidate judges
// expiry by when it saw the lease last change on its own clock, never by the holder's clock.
// Not fencing: a deposed leader may act until it notices, so writes must be idempotent.
class LeaderElector {
 public:
  // Makes its own client from `kubeconfig`, with request timeouts of one retry period and no
  // retries, so that a hung request cannot stretch past the renew deadline.
  // InvalidArgument: durations not ordered lease > renew deadline > retry period > 0, or an empty
  // name or identity.
  [[nodiscard]] static StatusOr<std::unique_ptr<LeaderElector>> Create(const KubeConfig& kubeconfig,
                                                                       LeaderElectionConfig config,
                                                                       LeaderCallbacks callbacks);
  ~LeaderElector();  // Stops.
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Starts campaigning on a thread of its own. REQUIRES: called once.
  void Start();
  // Stops campaigning; a leader releases the lease so that another candidate takes over at once.
  void Stop();
  bool IsLeader() const;

 private:
  LeaderElector(std::unique_ptr<Client> client, LeaderElectionConfig config,
                LeaderCallbacks callbacks);
  void Run();
  // One attempt to take or renew the lease; true when this candidate holds it afterwards.
  bool TryAcquireOrRenew();
  void Release();
  // Waits `seconds`; false when stopped meanwhile.
  bool SleepUnlessStopped(double seconds);
  // The clock's wall time as the lease's MicroTime.
  std::string NowMicroTime() const;

  std::unique_ptr<Client> client_;
  const LeaderElectionConfig config_;
  const LeaderCallbacks callbacks_;
  const Clock& clock_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
  bool leader_ = false;

  // The lease as last seen, and when (monotonic seconds), to judge expiry.
  std::string observed_resource_version_;
  double observed_at_ = 0;

  std::thread thread_;
};

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_LEADER_ELECTION_H_
