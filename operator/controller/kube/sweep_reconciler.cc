#include "operator/controller/kube/sweep_reconciler.h"

#include <utility>
#include <variant>

#include "operator/adapters/kube/errors.h"
#include "operator/adapters/kube/json_log.h"
#include "operator/adapters/kube/resources.h"
#include "operator/adapters/prometheus/api_source.h"
#include "operator/controller/kube/creator_rights.h"
#include "operator/controller/kube/status_writer.h"
#include "operator/controller/kube/trial_pod.h"
#include "operator/core/api.h"
#include "operator/core/spec_edits.h"
#include "operator/core/sweep_status.h"

namespace bsw {
namespace {

using kube::Json;

constexpr char kComponent[] = "budgetsweep-operator";

std::string KeyOf(const std::string& ns, const std::string& name) { return ns + "/" + name; }

std::pair<std::string, std::string> SplitKey(const std::string& key) {
  size_t slash = key.find('/');
  return {key.substr(0, slash), key.substr(slash + 1)};
}

// The sweep key a trial pod belongs to; empty for a pod without the label.
std::string SweepKeyOfPod(const Json& pod) {
  TrialPod read = ReadTrialPod(pod);
  return read.sweep.empty() ? "" : KeyOf(read.ns, read.sweep);
}

struct EventNote {
  kube::EventType type = kube::EventType::kNormal;
  std::string reason;  // empty: no Kubernetes Event, only the log line
  std::string message;
};

EventNote Note(const SweepModel& model, const event::SegmentLaunched& e) {
  char figures[160];
  std::snprintf(figures, sizeof figures, " from %s %g to %g", model.spec().resource_unit.c_str(),
                e.from, e.until);
  return {kube::EventType::kNormal, e.segment == 0 ? "TrialStarted" : "TrialResumed",
          model.trial(e.trial).name + figures};
}

EventNote Note(const SweepModel& model, const event::TrialPromoted& e) {
  char figures[160];
  std::snprintf(figures, sizeof figures, " past rung %d (%s %g)", e.rung,
                model.spec().resource_unit.c_str(), model.rungs().at(e.rung));
  return {kube::EventType::kNormal, "TrialPromoted",
          model.trial(e.trial).name + figures + (e.message.empty() ? "" : " " + e.message)};
}

EventNote Note(const SweepModel& model, const event::TrialStopped& e) {
  return {e.reason == ReasonName(Reason::kBudgetExhausted) ? kube::EventType::kWarning
                                                           : kube::EventType::kNormal,
          "TrialStopped", model.trial(e.trial).name + ": " + e.reason + ": " + e.message};
}

EventNote Note(const SweepModel& model, const event::SegmentEnded& e) {
  if (!TrainerFailed(e.reason) && e.reason != ReasonName(Reason::kMetricsMissing)) return {};
  std::string last_line = e.output.substr(e.output.rfind('\n') + 1);
  return {kube::EventType::kWarning, "TrialFailed",
          model.trial(e.trial).name + ": " + e.reason + ": " + e.message +
              (last_line.empty() ? "" : ": " + last_line)};
}

EventNote Note(const SweepModel&, const event::SweepFinished& e) {
  bool completed = e.phase == SweepPhase::kCompleted;
  return {completed ? kube::EventType::kNormal : kube::EventType::kWarning,
          completed ? "SweepCompleted" : SweepPhaseName(e.phase), e.reason + ": " + e.message};
}

EventNote Note(const SweepModel&, const event::ThroughputDecided& e) {
  return {e.probe >= 0 ? kube::EventType::kNormal : kube::EventType::kWarning, "ThroughputDecided",
          e.reason + ": " + e.message};
}

// What Admit returns for a sweep that waits, once `reported` says why.
StatusOr<std::optional<SweepSpec>> Waits(Status reported) {
  if (!reported.ok()) return reported;
  return std::optional<SweepSpec>();
}

// The other kinds make no Kubernetes Event.
template <class E>
EventNote Note(const SweepModel&, const E&) {
  return {};
}

}  // namespace

struct SweepReconciler::Runtime {
  std::string uid;
  int64_t generation = 0;
  std::unique_ptr<kube::PodBackend> backend;
  std::unique_ptr<kube::TrialLog> log;
  std::unique_ptr<MetricSource> metrics;
  std::unique_ptr<kube::PoolGate> gate;  // with spec.budget.poolRef; outlives the controller
  std::unique_ptr<SweepController> controller;
  std::string pool_denial;  // the reason and message of the pool's denial last recorded
  Json object;              // the sweep as last read, for Events
  std::optional<StatusWriter> status;
};

SweepReconciler::SweepReconciler(kube::Client& client, const Clock& clock,
                                 ReconcilerOptions options, ReconcilerHooks hooks)
    : client_(client),
      clock_(clock),
      options_(std::move(options)),
      hooks_(std::move(hooks)),
      queue_(kube::WorkQueueOptions{.clock = &clock}),
      recorder_(client, kComponent, clock) {}

SweepReconciler::~SweepReconciler() { Stop(); }

Status SweepReconciler::Start(double sync_timeout_seconds) {
  kube::InformerOptions sweep_options;
  sweep_options.ns = options_.ns;
  sweep_options.clock = &clock_;
  auto enqueue = [this](const Json& object) { queue_.Add(kube::ObjectKey(object)); };
  sweeps_ = std::make_unique<kube::Informer>(
      client_, kube::kBudgetSweeps, sweep_options,
      kube::InformerHandlers{enqueue, [enqueue](const Json&, const Json& now) { enqueue(now); },
                             enqueue});
  kube::InformerOptions pod_options;
  pod_options.ns = options_.ns;
  pod_options.label_selector = kube::kSweepLabel;
  pod_options.clock = &clock_;
  auto enqueue_owner = [this](const Json& pod) {
    std::string key = SweepKeyOfPod(pod);
    if (!key.empty()) queue_.Add(key);
  };
  pods_ = std::make_unique<kube::Informer>(
      client_, kube::kPods, pod_options,
      kube::InformerHandlers{enqueue_owner,
                             [enqueue_owner](const Json&, const Json& now) { enqueue_owner(now); },
                             enqueue_owner});
  sweeps_->Start();
  pods_->Start();
  if (!sweeps_->WaitForSync(sync_timeout_seconds) || !pods_->WaitForSync(sync_timeout_seconds)) {
    return UnavailableError("the BudgetSweep and pod informers did not sync within " +
                            std::to_string(sync_timeout_seconds) + " s");
  }
  return OkStatus();
}

bool SweepReconciler::Synced() const {
  return sweeps_ && pods_ && sweeps_->HasSynced() && pods_->HasSynced();
}

void SweepReconciler::Run() {
  while (std::optional<std::string> key = queue_.Get()) {
    const double started = clock_.MonotonicSeconds();
    Status s = Reconcile(*key);
    if (s.ok()) {
      queue_.Forget(*key);
    } else {
      kube::LogEvent("warn", "reconcile_failed", {{"sweep", *key}, {"error", s.message()}});
      queue_.AddRateLimited(*key);
    }
    queue_.Done(*key);
    if (hooks_.on_reconciled) {
      hooks_.on_reconciled(clock_.MonotonicSeconds() - started, queue_.Len());
    }
    if (stopped_) break;
  }
}

void SweepReconciler::Stop() {
  stopped_ = true;
  queue_.ShutDown();
  if (sweeps_) sweeps_->Stop();
  if (pods_) pods_->Stop();
}

StatusOr<std::vector<Json>> SweepReconciler::PodsOf(const std::string& ns,
                                                    const std::string& sweep) const {
  std::vector<Json> pods;
  std::string key = KeyOf(ns, sweep);
  for (Json& pod : pods_->List()) {
    if (SweepKeyOfPod(pod) == key) pods.push_back(std::move(pod));
  }
  return pods;
}

Status SweepReconciler::Reconcile(const std::string& key) {
  StatusOr<std::optional<Json>> object = Fetch(key);
  if (!object.ok()) return object.status();
  if (!*object) return OkStatus();
  SweepObject sweep;
  if (Status read = ReadSweepObject(**object, &sweep); !read.ok()) {
    return ReportInvalid(key, sweep, read.message());
  }
  std::optional<kube::PoolObject> pool;
  StatusOr<std::optional<SweepSpec>> spec = Admit(key, sweep, &pool);
  if (!spec.ok()) return spec.status();
  if (!*spec) return OkStatus();
  StatusOr<Runtime*> runtime = RuntimeFor(key, sweep, **spec);
  if (!runtime.ok()) return runtime.status();
  Runtime& rt = **runtime;
  rt.object = std::move(sweep.object);
  if (rt.gate && pool) rt.gate->UseRead(std::move(*pool));
  return RunPass(key, rt);
}

StatusOr<std::optional<Json>> SweepReconciler::Fetch(const std::string& key) {
  if (std::optional<Json> cached = sweeps_->Get(key)) return cached;
  // The cache may lag a sweep just created: only the server may say it is gone.
  auto [ns, name] = SplitKey(key);
  StatusOr<Json> live = client_.Get(kube::kBudgetSweeps, ns, name);
  if (live.ok()) return std::optional<Json>(std::move(live).value());
  if (!kube::IsNotFound(live.status())) return live.status();
  std::optional<std::string> pool = EraseRuntime(key);
  if (hooks_.on_sweep_gone) hooks_.on_sweep_gone(ns, name);
  if (Status s = Cleanup(ns, name, pool); !s.ok()) return s;
  return std::optional<Json>();
}

StatusOr<std::optional<SweepSpec>> SweepReconciler::Admit(const std::string& key,
                                                          const SweepObject& sweep,
                                                          std::optional<kube::PoolObject>* pool) {
  // A spec error keeps the runtime: it holds the spec the recorded history was decided under,
  // which an edit that fixes the error is checked against.
  StatusOr<SweepSpec> spec = ParseSweep(sweep.object);
  if (!spec.ok()) return Waits(ReportInvalid(key, sweep, spec.status().message()));
  StatusOr<bool> bound = PoolBound(key, sweep, *spec, pool);
  if (!bound.ok()) return bound.status();
  if (!*bound) return std::optional<SweepSpec>();
  // A new generation of a sweep this process runs takes effect in its editable fields only. One
  // that changes an immutable field (the CRD's transition rules bypassed, or an object written
  // before them) would re-decide the recorded history: it is refused, and the sweep waits for the
  // edit to be undone.
  if (Runtime* running = FindRuntime(key);
      running != nullptr && running->uid == sweep.uid && running->generation != spec->generation) {
    spec = ApplySpecEdit(running->controller->model().spec(), *spec);
    if (!spec.ok()) return Waits(ReportInvalid(key, sweep, spec.status().message()));
  }
  StatusOr<bool> cleared = CreatorCleared(key, sweep, *spec);
  if (!cleared.ok()) return cleared.status();
  if (!*cleared) return std::optional<SweepSpec>();
  return std::optional<SweepSpec>(std::move(spec).value());
}

Status SweepReconciler::RunPass(const std::string& key, Runtime& rt) {
  auto [ns, name] = SplitKey(key);
  // A copy: the pass replaces the controller's model, and with it the spec it holds.
  const std::string pool_name = rt.controller->model().spec().pool_name;
  StatusOr<Step> plan = rt.controller->Pass();
  if (rt.gate && hooks_.on_pool && !rt.gate->pool().object.empty()) {
    hooks_.on_pool(ns, pool_name, rt.gate->pool().object);
  }
  if (kube::IsConflict(plan.status())) {
    // Another pass wrote the pool since this one read it: nothing was journaled or started, and
    // the next pass plans on the pool as it now stands.
    kube::LogEvent("info", "pool_conflict", {{"sweep", key}, {"pool", pool_name}});
    queue_.Add(key);
    return OkStatus();
  }
  if (!plan.ok()) return plan.status();
  for (const Denial& d : plan->denials) {
    kube::LogEvent("info", "admission_denied",
                   {{"sweep", key}, {"reason", ReasonName(d.reason)}, {"message", d.Figures()}});
  }
  RecordPoolDenials(rt, plan->denials);
  RecordHeldUpTrials(rt, plan->conditions);
  Json status = rt.controller->StatusJson();
  if (hooks_.on_status) hooks_.on_status(ns, name, status);
  if (Status s = rt.status->Write(std::move(status)); !s.ok()) return s;

  StatusOr<bool> done = rt.controller->Done();
  if (!done.ok()) return done.status();
  if (!*done) queue_.AddAfter(key, options_.resync_seconds);
  return OkStatus();
}

StatusOr<SweepReconciler::Runtime*> SweepReconciler::RuntimeFor(const std::string& key,
                                                                const SweepObject& sweep,
                                                                const SweepSpec& spec) {
  const std::string& uid = sweep.uid;
  if (Runtime* found = FindRuntime(key);
      found != nullptr && found->uid == uid && found->generation == spec.generation) {
    return found;
  }
  // New to this process, recreated under the same name, or a new generation (whose immutable
  // fields Reconcile checked): rebuild the model from the recorded events under `spec`.
  auto rt = std::make_unique<Runtime>();
  rt->uid = uid;
  rt->generation = spec.generation;
  rt->status.emplace(client_, spec.namespace_name, spec.name, sweep.status);
  kube::SweepOwner owner;
  owner.name = spec.name;
  owner.uid = uid;
  StatusOr<std::unique_ptr<kube::PodBackend>> backend =
      kube::PodBackend::Create(PodOptionsFor(spec, owner));
  if (!backend.ok()) return backend.status();
  rt->backend = std::move(backend).value();
  rt->log = std::make_unique<kube::TrialLog>(client_, spec.namespace_name, owner,
                                             2 * static_cast<size_t>(spec.parallelism));
  rt->metrics = prom::MetricSourceFor(spec, clock_);
  PlannerOptions planner;
  planner.deadlines_only_shrink = true;
  rt->controller = std::make_unique<SweepController>(spec, rt->backend.get(), rt->metrics.get(),
                                                     rt->log.get(), &clock_, planner);
  if (!spec.pool_name.empty()) {
    rt->gate =
        std::make_unique<kube::PoolGate>(client_, clock_, spec.namespace_name, spec.pool_name, uid);
    rt->controller->SetBudgetGate(rt->gate.get());
  }
  if (Status s = rt->controller->Recover(); !s.ok()) return s;
  Runtime* raw = rt.get();
  rt->controller->OnEvent([this, raw](const Event& e) { RecordEvent(*raw, e); });
  if (hooks_.on_metrics_error) {
    rt->controller->OnMetricsError([this, ns = spec.namespace_name, name = spec.name](
                                       const Status& s) { hooks_.on_metrics_error(ns, name, s); });
  }
  kube::LogEvent("info", "sweep_loaded",
                 {{"sweep", key},
                  {"generation", spec.generation},
                  {"trials", rt->controller->model().trial_count()}});
  std::unique_ptr<Runtime> replaced;  // destroyed without the lock: it waits for its reads
  {
    std::lock_guard<std::mutex> lock(runtimes_mu_);
    replaced = std::exchange(runtimes_[key], std::move(rt));
    deleted_pools_.erase(key);
  }
  return raw;
}

kube::PodBackendOptions SweepReconciler::PodOptionsFor(const SweepSpec& spec,
                                                       const kube::SweepOwner& owner) {
  kube::PodBackendOptions pod_options;
  pod_options.client = &client_;
  pod_options.ns = spec.namespace_name;
  pod_options.owner = owner;
  pod_options.trial_template = spec.trial_template;
  pod_options.metrics_port = options_.metrics_port;
  pod_options.checkpoint_dir = options_.checkpoint_dir;
  pod_options.collect_image = options_.collect_image;
  pod_options.clock = &clock_;
  pod_options.list_pods = [this, ns = spec.namespace_name, name = spec.name] {
    return PodsOf(ns, name);
  };
  return pod_options;
}

SweepReconciler::Runtime* SweepReconciler::FindRuntime(const std::string& key) {
  std::lock_guard<std::mutex> lock(runtimes_mu_);
  auto it = runtimes_.find(key);
  return it == runtimes_.end() ? nullptr : it->second.get();
}

std::optional<std::string> SweepReconciler::EraseRuntime(const std::string& key) {
  decltype(runtimes_)::node_type erased;  // destroyed without the lock
  std::lock_guard<std::mutex> lock(runtimes_mu_);
  erased = runtimes_.extract(key);
  if (!erased.empty()) {
    deleted_pools_[key] = erased.mapped()->controller->model().spec().pool_name;
  }
  auto known = deleted_pools_.find(key);
  if (known == deleted_pools_.end()) return std::nullopt;
  return known->second;
}

void SweepReconciler::RecordHeldUpTrials(Runtime& rt, const std::vector<Condition>& conditions) {
  for (const Condition& c : conditions) {
    if (c.type != "TrialsScheduled" || c.status != "False") continue;
    // An Event too, as kubectl describe shows them, once per new reason or message: the
    // condition is already in the status written last.
    for (const Json& written : rt.status->written().value("conditions", Json::array())) {
      if (written.value("type", "") == c.type && written.value("status", "") == c.status &&
          written.value("message", "") == c.message) {
        return;
      }
    }
    recorder_.Record(rt.object, kube::EventType::kWarning, c.reason, c.message);
  }
}

void SweepReconciler::RecordEvent(Runtime& rt, const Event& e) {
  const SweepModel& model = rt.controller->model();
  std::string key = kube::ObjectKey(rt.object);
  kube::LogEvent("info", "decision", {{"sweep", key}, {"record", EventToJson(e)}});
  if (hooks_.on_event) {
    auto [ns, name] = SplitKey(key);
    hooks_.on_event(ns, name, model, e);
  }
  EventNote note = std::visit([&model](const auto& one) { return Note(model, one); }, e);
  if (!note.reason.empty()) recorder_.Record(rt.object, note.type, note.reason, note.message);
}

Status SweepReconciler::Report(const std::string& key, const SweepObject& sweep,
                               const Condition& condition, const std::optional<std::string>& phase,
                               const char* log_event) {
  Json conditions =
      MergeConditions(sweep.conditions, {condition}, clock_.NowUnixSeconds(), sweep.generation);
  if ((!phase || sweep.phase == *phase) && sweep.conditions == conditions &&
      sweep.observed_generation == sweep.generation) {
    return OkStatus();
  }
  kube::LogEvent("warn", log_event,
                 {{"sweep", key}, {"reason", condition.reason}, {"message", condition.message}});
  recorder_.Record(sweep.object, kube::EventType::kWarning, condition.reason, condition.message);
  Json status = {{"observedGeneration", sweep.generation}, {"conditions", std::move(conditions)}};
  if (phase) status["phase"] = *phase;
  auto [ns, name] = SplitKey(key);
  return PatchSweepStatus(client_, ns, name, std::move(status));
}

Status SweepReconciler::ReportInvalid(const std::string& key, const SweepObject& sweep,
                                      const std::string& message) {
  return Report(key, sweep, Condition{"InvalidSpec", "True", "InvalidSpec", message}, "Failed",
                "invalid_spec");
}

Status SweepReconciler::ReportWaiting(const std::string& key, const SweepObject& sweep,
                                      const Condition& condition, const char* log_event) {
  return Report(key, sweep, condition,
                sweep.Started() ? std::nullopt : std::optional<std::string>("Pending"), log_event);
}

StatusOr<bool> SweepReconciler::CreatorCleared(const std::string& key, const SweepObject& sweep,
                                               const SweepSpec& spec) {
  if (options_.creator_reviewer == nullptr) return true;
  // Checked before the first pod only: once this process runs the sweep, or the sweep has had
  // trials or probe runs (a restart, or a sweep from before the check), it goes on.
  if (Runtime* running = FindRuntime(key); running != nullptr && running->uid == sweep.uid) {
    return true;
  }
  if (sweep.Started()) return true;
  StatusOr<CreatorVerdict> verdict = CheckCreatorRights(*options_.creator_reviewer, sweep.object,
                                                        spec.namespace_name, spec.trial_template);
  if (!verdict.ok()) return verdict.status();
  if (verdict->allowed) {
    kube::LogEvent("info", "creator_authorized", {{"sweep", key}, {"message", verdict->message}});
    return true;
  }
  queue_.AddAfter(key, options_.creator_recheck_seconds);
  Status written = ReportWaiting(
      key, sweep, Condition{"CreatorAuthorized", "False", verdict->reason, verdict->message},
      "creator_not_authorized");
  if (!written.ok()) return written;
  return false;
}

Status SweepReconciler::Cleanup(const std::string& ns, const std::string& name,
                                const std::optional<std::string>& pool) {
  StatusOr<std::vector<Json>> pods = PodsOf(ns, name);
  if (!pods.ok()) return pods.status();
  for (const Json& object : *pods) {
    TrialPod pod = ReadTrialPod(object);
    if (!pod.ended && !pod.deleting) {
      Status deleted = client_.Delete(kube::kPods, ns, pod.name);
      if (!deleted.ok() && !kube::IsNotFound(deleted)) return deleted;
    }
    if (Status s = kube::ReleasePod(client_, ns, pod.name); !s.ok()) return s;
    kube::LogEvent("info", "pod_released", {{"sweep", KeyOf(ns, name)}, {"pod", pod.name}});
  }
  if (pool && pool->empty()) return OkStatus();  // it drew on no pool
  return kube::SettleDeletedSweep(client_, clock_, ns, name, pool);
}

StatusOr<bool> SweepReconciler::PoolBound(const std::string& key, const SweepObject& sweep,
                                          SweepSpec& spec, std::optional<kube::PoolObject>* read) {
  if (spec.pool_name.empty()) return true;
  StatusOr<kube::PoolObject> pool = kube::ReadPool(client_, spec.namespace_name, spec.pool_name);
  if (pool.ok()) {
    BindPool(pool->spec, &spec);
    *read = std::move(pool).value();
    return true;
  }
  const bool missing = kube::IsNotFound(pool.status());
  if (!missing && pool.status().code() != StatusCode::kInvalidArgument) return pool.status();
  if (missing && hooks_.on_pool_gone) hooks_.on_pool_gone(spec.namespace_name, spec.pool_name);
  queue_.AddAfter(key, options_.pool_recheck_seconds);
  Condition unbound{"PoolBound", "False", missing ? "PoolNotFound" : "InvalidPool",
                    missing ? "spec.budget.poolRef.name: BudgetPool \"" + spec.pool_name +
                                  "\" does not exist in namespace " + spec.namespace_name +
                                  "; the sweep waits for it"
                            : "spec.budget.poolRef.name: " + pool.status().message()};
  if (Status s = ReportWaiting(key, sweep, unbound, "pool_unbound"); !s.ok()) return s;
  return false;
}

void SweepReconciler::RecordPoolDenials(Runtime& rt, const std::vector<Denial>& denials) {
  const SweepSpec& spec = rt.controller->model().spec();
  std::string denial;
  for (const Denial& d : denials) {
    if (!PoolLimit(d.reason)) continue;
    const std::string reason = ReasonName(d.reason);
    std::string message = "BudgetPool " + spec.pool_name + ": " + d.Figures();
    denial = reason + ": " + message;
    if (denial == rt.pool_denial) break;
    recorder_.Record(rt.object, kube::EventType::kWarning, reason, message);
    if (rt.gate) {
      recorder_.Record(rt.gate->pool().object, kube::EventType::kWarning, reason,
                       "sweep " + spec.name + ": " + d.Figures());
    }
    if (hooks_.on_pool_denial) hooks_.on_pool_denial(spec.namespace_name, spec.pool_name, reason);
    break;
  }
  rt.pool_denial = denial;
}

}  // namespace bsw
