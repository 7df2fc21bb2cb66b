#ifndef BSW_ADAPTERS_OBSERVABILITY_OPERATOR_METRICS_H_
#define BSW_ADAPTERS_OBSERVABILITY_OPERATOR_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "nlohmann/json.hpp"

namespace bsw::observability {

// The operator's own Prometheus series (served on --metrics-addr by HealthServer). Per-sweep
// series carry the labels `namespace` and `sweep`:
//
//   budgetsweep_sweep_budget_gpu_seconds            gauge   spec.budget.gpuHours
//   budgetsweep_sweep_budget_used_gpu_seconds       gauge   status.budget.used
//   budgetsweep_sweep_budget_reserved_gpu_seconds   gauge   status.budget.reserved
//   budgetsweep_sweep_budget_remaining_gpu_seconds  gauge   status.budget.remaining
//   budgetsweep_sweep_trials                      gauge   + state (running, paused, completed,
//                                                           stopped, failed): status.trials
//   budgetsweep_sweep_created_trials              gauge   status.trials.created
//   budgetsweep_sweep_rung_reached_trials         gauge   + rung, resource: status.rungs[].reached
//   budgetsweep_sweep_rung_promoted_trials        gauge   + rung, resource: status.rungs[].promoted
//   budgetsweep_sweep_best_objective              gauge   status.best.value (absent until a
//                                                           finite best exists)
//   budgetsweep_sweep_phase                       gauge   + phase: 1 for status.phase, else 0
// from status.throughput (a sweep with spec.throughput.enabled):
//   budgetsweep_sweep_throughput_samples_per_second     gauge  + run: <run>.samplesPerSecond
//   budgetsweep_sweep_throughput_utilization            gauge  + run: <run>.utilization
//   budgetsweep_sweep_throughput_data_wait_ratio        gauge  + run: <run>.dataWaitRatio
//   budgetsweep_sweep_throughput_target_utilization     gauge  targetUtilization
//   budgetsweep_sweep_throughput_probe_used_gpu_seconds   gauge  budgetUsed
//   budgetsweep_sweep_throughput_probe_limit_gpu_seconds  gauge  budgetLimit
//   budgetsweep_sweep_throughput_target_met             gauge  targetMet: 1 or 0 (absent until
//                                                              decided)
// and the counters:
//   budgetsweep_trial_promotions_total            counter + rung
//   budgetsweep_trial_kills_total                 counter + rung
//   budgetsweep_decisions_total                   counter + kind
//   budgetsweep_prometheus_query_errors_total     counter
// Per-pool series (a BudgetPool's spec and status) carry the labels `namespace` and `pool`:
//   budgetsweep_pool_budget_gpu_seconds           gauge   spec.gpuHours (per period)
//   budgetsweep_pool_used_gpu_seconds             gauge   status.usedGpuHours (this period)
//   budgetsweep_pool_reserved_gpu_seconds         gauge   status.reservedGpuHours
//   budgetsweep_pool_remaining_gpu_seconds        gauge   status.remainingGpuHours
//   budgetsweep_pool_active_sweeps                gauge   status.activeSweeps
//   budgetsweep_pool_sweep_used_gpu_seconds       gauge   + sweep: status.sweeps[]
//                                                         .usedDeviceSeconds
//   budgetsweep_pool_sweep_reserved_gpu_seconds   gauge   + sweep: status.sweeps[]
//                                                         .reservedDeviceSeconds
//                                                         (the accounts of one sweep name, a
//                                                         sweep deleted and created again, are
//                                                         added up)
//   budgetsweep_pool_denials_total                counter + reason (PoolExhausted, PoolFairShare,
//                                                         PoolMaxPerSweep): trials the pool
//                                                         refused
// and, for the whole process:
//   budgetsweep_reconcile_duration_seconds        histogram
//   budgetsweep_workqueue_depth                   gauge
//
// GPU time is in GPU-seconds, Prometheus's base unit: the status's GPU-hours times 3,600 (the
// dashboard shows hours again).
// `rung` is the rung index ("0" is the first rung); `resource` its resource in the sweep's unit.
// `run` is "baseline" (the template's own settings, once measured) or "chosen" (the winning
// candidate, once decided).
// Thread-safe.
class OperatorMetrics {
 public:
  OperatorMetrics();
  OperatorMetrics(const OperatorMetrics&) = delete;
  OperatorMetrics& operator=(const OperatorMetrics&) = delete;

  // The registry to serve (HealthServer::Start) or to collect in tests.
  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

  // Sets the sweep's gauges from its status object as BuildStatus (operator/core/sweep_status.h)
  // makes it. Fields that are missing or not numbers leave their series as they were; rung series
  // of rungs no longer in the status are removed.
  void ObserveSweep(const std::string& ns, const std::string& sweep, const nlohmann::json& status);
  // Removes every series of the sweep (gauges and counters), e.g. once the sweep is deleted.
  void ForgetSweep(const std::string& ns, const std::string& sweep);

  void CountPromotion(const std::string& ns, const std::string& sweep, int rung);
  void CountKill(const std::string& ns, const std::string& sweep, int rung);
  // `kind` names the planner's action, e.g. "start", "resume", "stop", "finish".
  void CountDecision(const std::string& ns, const std::string& sweep, const std::string& kind);
  void CountQueryError(const std::string& ns, const std::string& sweep);

  // Sets the pool's gauges from a BudgetPool object (spec and status) as the API server returns
  // it. Fields that are missing or not numbers leave their series as they were; per-sweep series
  // of sweeps no longer in status.sweeps are removed. The denial counters of the three reasons
  // exist, at 0, from the first object with a numeric spec.gpuHours.
  void ObservePool(const std::string& ns, const std::string& pool, const nlohmann::json& object);
  // `reason` is the pool limit that refused a trial: PoolExhausted, PoolFairShare or
  // PoolMaxPerSweep (PoolCap::limit).
  void CountPoolDenial(const std::string& ns, const std::string& pool, const std::string& reason);
  // Removes every series of the pool (gauges and counters), e.g. once the pool is deleted.
  void ForgetPool(const std::string& ns, const std::string& pool);

  void ObserveReconcile(double seconds);
  void SetQueueDepth(size_t depth);

 private:
  using SweepKey = std::pair<std::string, std::string>;
  using PoolKey = std::pair<std::string, std::string>;  // namespace, pool
  using GaugeSeries = std::pair<prometheus::Family<prometheus::Gauge>*, prometheus::Gauge*>;
  // Every series created for one sweep, so that ForgetSweep can remove them.
  struct SweepSeries {
    std::set<GaugeSeries> gauges;
    std::set<GaugeSeries> rungs;  // replaced as a whole by each ObserveSweep
    std::set<std::pair<prometheus::Family<prometheus::Counter>*, prometheus::Counter*>> counters;
  };
  // Every series created for one pool, so that ForgetPool can remove them.
  struct PoolSeries {
    std::set<GaugeSeries> gauges;
    std::set<GaugeSeries> sweeps;  // replaced as a whole by each ObservePool with status.sweeps
    std::set<std::pair<prometheus::Family<prometheus::Counter>*, prometheus::Counter*>> counters;
  };

  // REQUIRES: mutex_ held.
  prometheus::Gauge& SweepGauge(prometheus::Family<prometheus::Gauge>& family, const SweepKey& key,
                                prometheus::Labels extra = {});
  // Sets each family's gauge, with `extra` labels, from the number at its field of `object`
  // times `scale`. REQUIRES: mutex_ held.
  void SetNumbers(
      const SweepKey& key, const nlohmann::json& object,
      std::initializer_list<std::pair<const char*, prometheus::Family<prometheus::Gauge>*>> fields,
      const prometheus::Labels& extra = {}, double scale = 1);
  // The pool's gauge of `family` with the labels namespace and pool. REQUIRES: mutex_ held.
  prometheus::Gauge& PoolGauge(prometheus::Family<prometheus::Gauge>& family, const PoolKey& key);
  // REQUIRES: mutex_ held.
  prometheus::Counter& PoolDenials(const PoolKey& key, const std::string& reason);
  // REQUIRES: mutex_ held.
  void ObservePoolSweeps(const PoolKey& key, const nlohmann::json& sweeps);
  // REQUIRES: mutex_ held.
  void ObserveRungs(const SweepKey& key, const nlohmann::json& rungs);
  // REQUIRES: mutex_ held.
  void ObserveThroughput(const SweepKey& key, const nlohmann::json& throughput);
  void Count(prometheus::Family<prometheus::Counter>& family, const std::string& ns,
             const std::string& sweep, prometheus::Labels extra);

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Gauge>& budget_total_;
  prometheus::Family<prometheus::Gauge>& budget_used_;
  prometheus::Family<prometheus::Gauge>& budget_reserved_;
  prometheus::Family<prometheus::Gauge>& budget_remaining_;
  prometheus::Family<prometheus::Gauge>& trials_;
  prometheus::Family<prometheus::Gauge>& created_trials_;
  prometheus::Family<prometheus::Gauge>& rung_reached_;
  prometheus::Family<prometheus::Gauge>& rung_promoted_;
  prometheus::Family<prometheus::Gauge>& best_objective_;
  prometheus::Family<prometheus::Gauge>& phase_;
  prometheus::Family<prometheus::Gauge>& throughput_samples_;
  prometheus::Family<prometheus::Gauge>& throughput_utilization_;
  prometheus::Family<prometheus::Gauge>& throughput_data_wait_;
  prometheus::Family<prometheus::Gauge>& throughput_target_;
  prometheus::Family<prometheus::Gauge>& probe_used_;
  prometheus::Family<prometheus::Gauge>& probe_limit_;
  prometheus::Family<prometheus::Gauge>& target_met_;
  prometheus::Family<prometheus::Counter>& promotions_;
  prometheus::Family<prometheus::Counter>& kills_;
  prometheus::Family<prometheus::Counter>& decisions_;
  prometheus::Family<prometheus::Counter>& query_errors_;
  prometheus::Family<prometheus::Gauge>& pool_budget_;
  prometheus::Family<prometheus::Gauge>& pool_used_;
  prometheus::Family<prometheus::Gauge>& pool_reserved_;
  prometheus::Family<prometheus::Gauge>& pool_remaining_;
  prometheus::Family<prometheus::Gauge>& pool_active_sweeps_;
  prometheus::Family<prometheus::Gauge>& pool_sweep_used_;
  prometheus::Family<prometheus::Gauge>& pool_sweep_reserved_;
  prometheus::Family<prometheus::Counter>& pool_denials_;
  prometheus::Histogram& reconcile_seconds_;
  prometheus::Gauge& queue_depth_;

  std::mutex mutex_;
  std::map<SweepKey, SweepSeries> sweeps_;
  std::map<PoolKey, PoolSeries> pools_;
};

}  // namespace bsw::observability

#endif  // BSW_ADAPTERS_OBSERVABILITY_OPERATOR_METRICS_H_
