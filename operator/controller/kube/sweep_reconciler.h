#ifndef BSW_CONTROLLER_KUBE_SWEEP_RECONCILER_H_
#define BSW_CONTROLLER_KUBE_SWEEP_RECONCILER_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/events.h"
#include "operator/adapters/kube/informer.h"
#include "operator/adapters/kube/pod_backend.h"
#include "operator/adapters/kube/pool_gate.h"
#include "operator/adapters/kube/trial_log.h"
#include "operator/adapters/kube/workqueue.h"
#include "operator/controller/kube/sweep_object.h"
#include "operator/controller/sweep_controller.h"
#include "operator/ports/access_reviewer.h"
#include "operator/ports/clock.h"
#include "operator/ports/metric_source.h"

namespace bsw {

struct ReconcilerOptions {
  std::string ns;               // the namespace to serve; empty: all
  double resync_seconds = 0.5;  // how often a running sweep is passed without a watch event
  int metrics_port = 9400;      // the trainer's port in trial pods
  std::string checkpoint_dir = "/checkpoints";
  std::string collect_image;  // PodBackendOptions::collect_image
  // Set: before a sweep's first pod, its recorded creator's rights are checked with it
  // (creator_rights.h); a sweep whose creator lacks one stays Pending with condition
  // CreatorAuthorized False and is checked again every creator_recheck_seconds. Must outlive the
  // reconciler. Null: no check.
  AccessReviewer* creator_reviewer = nullptr;
  double creator_recheck_seconds = 30;
  // How often a sweep whose BudgetPool is missing or invalid looks for it again.
  double pool_recheck_seconds = 10;
};

// What the reconciler did, for the operator's own metrics and logs. Any member may be empty;
// called on the worker thread.
struct ReconcilerHooks {
  // After each reconcile of a sweep that exists: its status as written (or unchanged).
  std::function<void(const std::string& ns, const std::string& sweep, const nlohmann::json&)>
      on_status;
  std::function<void(const std::string& ns, const std::string& sweep)> on_sweep_gone;
  // Each journaled decision of a sweep, with the model it was applied to.
  std::function<void(const std::string& ns, const std::string& sweep, const SweepModel&,
                     const Event&)>
      on_event;
  // A metrics read that failed (the trial's value is Unknown this pass).
  std::function<void(const std::string& ns, const std::string& sweep, const Status&)>
      on_metrics_error;
  std::function<void(double seconds, size_t queue_depth)> on_reconciled;
  // A BudgetPool object as a sweep's pass last read or wrote it.
  std::function<void(const std::string& ns, const std::string& pool, const nlohmann::json&)>
      on_pool;
  // A BudgetPool that a sweep names was found missing (deleted, or never created).
  std::function<void(const std::string& ns, const std::string& pool)> on_pool_gone;
  // A sweep newly denied by its pool (`reason`: PoolExhausted, PoolFairShare, PoolMaxPerSweep):
  // once until the sweep is admitted again or denied for another reason.
  std::function<void(const std::string& ns, const std::string& pool, const std::string& reason)>
      on_pool_denial;
};

// The BudgetSweep controller on Kubernetes: informers on BudgetSweeps and on trial pods feed a
// work queue of sweep keys. Run may be called on several threads: the queue hands a sweep to one
// of them at a time, so sweeps reconcile side by side. Reconcile is level-triggered
// (docs/design.md, "Data flow"): each pass rebuilds what it needs from the API, so any replica that
// becomes leader, or a restarted one, carries on where the last one stopped.
//
// Per sweep: read the object once (SweepObject: a malformed field becomes condition InvalidSpec
// naming it, never a retry); parse and validate the spec (what the CRD's schema and CEL cannot
// check becomes condition InvalidSpec, and so does a new generation that changes an immutable
// field: only the editable ones of spec_edits.h take effect); keep its decisions in
// BudgetSweepTrial objects (kube::TrialLog); run its trials as pods (kube::PodBackend, budget
// enforced by activeDeadlineSeconds, so deadlines only ever shrink); read metrics by scraping the
// pods (or from Prometheus when spec.metrics.prometheus.url is set); write status through /status
// when it changed (StatusWriter); record Kubernetes Events for starts, promotions, stops and the
// end. A sweep with spec.budget.poolRef admits work through its BudgetPool (kube::PoolGate): its
// account is written to the pool's status before its pods are created. A deleted sweep's pods are
// deleted and released, so none is orphaned, and its charge stays in its pool.
class SweepReconciler {
 public:
  SweepReconciler(kube::Client& client, const Clock& clock, ReconcilerOptions options,
                  ReconcilerHooks hooks = {});
  ~SweepReconciler();  // Stops.
  SweepReconciler(const SweepReconciler&) = delete;
  SweepReconciler& operator=(const SweepReconciler&) = delete;

  // Starts the informers and waits up to `sync_timeout_seconds` for their first lists.
  // Unavailable when they did not sync in time.
  [[nodiscard]] Status Start(double sync_timeout_seconds = 60);
  // Processes keys until Stop. REQUIRES: Start succeeded.
  void Run();
  // Ends Run (after the key in hand) and stops the informers.
  void Stop();
  bool Synced() const;
  size_t QueueDepth() const { return queue_.Len(); }

  // One reconcile of "namespace/name" (exposed for tests); requeues itself while the sweep runs.
  [[nodiscard]] Status Reconcile(const std::string& key);

 private:
  struct Runtime;

  // The sweep of `key`, from the cache or else the server; nullopt once the server says it is gone
  // (its runtime forgotten, its pods deleted and released: Cleanup).
  StatusOr<std::optional<nlohmann::json>> Fetch(const std::string& key);
  // The spec to pass `sweep` under when it may run now; nullopt while it waits, with the reason
  // reported: a spec error, an edit of an immutable field, its pool missing or invalid (the pool
  // it read goes in `pool`), its creator not cleared.
  StatusOr<std::optional<SweepSpec>> Admit(const std::string& key, const SweepObject& sweep,
                                           std::optional<kube::PoolObject>* pool);
  // One SweepController pass, then its Events, status write and next resync.
  Status RunPass(const std::string& key, Runtime& rt);
  // Deletes and releases the pods of a deleted sweep and settles its pool accounts.
  Status Cleanup(const std::string& ns, const std::string& name,
                 const std::optional<std::string>& pool);
  // Writes `condition` (and phase `phase`, when set) to the status of sweep `key`, with a Warning
  // Event and log line `log_event` naming its reason and message, unless the status says so
  // already.
  Status Report(const std::string& key, const SweepObject& sweep, const Condition& condition,
                const std::optional<std::string>& phase, const char* log_event);
  // Condition InvalidSpec and phase Failed: a malformed object, a spec error or a refused edit.
  Status ReportInvalid(const std::string& key, const SweepObject& sweep,
                       const std::string& message);
  // Condition `condition`, and phase Pending while the sweep has not started.
  Status ReportWaiting(const std::string& key, const SweepObject& sweep, const Condition& condition,
                       const char* log_event);
  // Whether the creator of `sweep` may have its trials run (options_.creator_reviewer); when not,
  // records why (condition, Event) and schedules the next check.
  StatusOr<bool> CreatorCleared(const std::string& key, const SweepObject& sweep,
                                const SweepSpec& spec);
  // Binds a sweep with spec.budget.poolRef to its pool (BindPool): false, with condition PoolBound
  // False and an Event, while the pool is missing or invalid, and the sweep is looked at again
  // after options_.pool_recheck_seconds. The pool it read goes in `read`, for the pass's gate.
  StatusOr<bool> PoolBound(const std::string& key, const SweepObject& sweep, SweepSpec& spec,
                           std::optional<kube::PoolObject>* read);
  // The Events, log lines and hooks of the pool's denials in `plan`, once per new denial.
  void RecordPoolDenials(Runtime& rt, const std::vector<Denial>& denials);
  StatusOr<Runtime*> RuntimeFor(const std::string& key, const SweepObject& sweep,
                                const SweepSpec& spec);
  kube::PodBackendOptions PodOptionsFor(const SweepSpec& spec, const kube::SweepOwner& owner);
  // A Warning Event when the plan says a trial is held up before it starts (TrialsScheduled
  // False) with a message the status written last did not have yet.
  void RecordHeldUpTrials(Runtime& rt, const std::vector<Condition>& conditions);
  void RecordEvent(Runtime& runtime, const Event& event);
  StatusOr<std::vector<nlohmann::json>> PodsOf(const std::string& ns,
                                               const std::string& sweep) const;
  // The runtime of `key`, or nullptr. Only the worker that holds `key` may use it.
  Runtime* FindRuntime(const std::string& key);
  // Forgets the runtime of a deleted sweep. Returns the pool it drew on ("" for none), as its
  // runtime or an earlier erase knew it; nullopt when this process never ran it.
  std::optional<std::string> EraseRuntime(const std::string& key);

  kube::Client& client_;
  const Clock& clock_;
  const ReconcilerOptions options_;
  const ReconcilerHooks hooks_;
  kube::WorkQueue queue_;
  kube::EventRecorder recorder_;
  std::unique_ptr<kube::Informer> sweeps_;
  std::unique_ptr<kube::Informer> pods_;
  std::mutex runtimes_mu_;                                    // guards the map, not the runtimes
  std::map<std::string, std::unique_ptr<Runtime>> runtimes_;  // by key
  // The pools of the deleted sweeps this process ran, by key (a sweep's pod events reconcile its
  // key again after it is gone): a deleted sweep is settled only in its own pool.
  std::map<std::string, std::string> deleted_pools_;
  std::atomic<bool> stopped_{false};
};

}  // namespace bsw

#endif  // BSW_CONTROLLER_KUBE_SWEEP_RECONCILER_H_
