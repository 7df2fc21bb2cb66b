#include "operator/adapters/observability/operator_metrics.h"

#include <cmath>
#include <initializer_list>

#include "operator/core/sweep_model.h"

namespace bsw::observability {
namespace {

using nlohmann::json;
using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Labels;

// The status says GPU-hours; the series are in GPU-seconds, Prometheus's base unit.
constexpr double kSecondsPerHour = 3600;

Family<Gauge>& GaugeFamily(prometheus::Registry& registry, const std::string& name,
                           const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry);
}

Family<Counter>& CounterFamily(prometheus::Registry& registry, const std::string& name,
                               const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

// From 1 ms to 10 s: a pass over a cached sweep up to one slowed by API round trips.
prometheus::Histogram::BucketBoundaries ReconcileBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

// The member `key` of `object`, or null when `object` is no object or lacks it.
const json& MemberAt(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it != object.end() ? *it : kNull;
}

// The number at `key` of `object`, or nullptr when it is absent or not a number.
const json* NumberAt(const json& object, const char* key) {
  const json& value = MemberAt(object, key);
  return value.is_number() ? &value : nullptr;
}

// The phases a sweep can be in; every one gets a series so that a query never misses a phase.
constexpr std::initializer_list<SweepPhase> kSweepPhases = {
    SweepPhase::kPending,   SweepPhase::kProbing,         SweepPhase::kRunning,
    SweepPhase::kCompleted, SweepPhase::kBudgetExhausted, SweepPhase::kFailed};

// The probe runs status.throughput reports figures of, by their `run` label.
constexpr std::initializer_list<const char*> kProbeRuns = {"baseline", "chosen"};

// The pool limits that refuse a trial (PoolCap::limit); each gets a denial counter at 0 from the
// pool's first observation, so that increase() and the dashboard see a series before the first.
constexpr std::initializer_list<Reason> kPoolDenialReasons = {
    Reason::kPoolExhausted, Reason::kPoolFairShare, Reason::kPoolMaxPerSweep};

// A rung's resource as a label value: "1", "3", "0.5" (no trailing zeros).
std::string ResourceLabel(double resource) {
  std::string text = json(resource).dump();
  if (text.size() > 2 && text.ends_with(".0")) text.resize(text.size() - 2);
  return text;
}

}  // namespace

OperatorMetrics::OperatorMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      budget_total_(GaugeFamily(*registry_, "budgetsweep_sweep_budget_gpu_seconds",
                                "The sweep's hard budget (spec.budget.gpuHours), in GPU-seconds")),
      budget_used_(GaugeFamily(*registry_, "budgetsweep_sweep_budget_used_gpu_seconds",
                               "GPU-seconds charged to the sweep so far (status.budget.used)")),
      budget_reserved_(GaugeFamily(*registry_, "budgetsweep_sweep_budget_reserved_gpu_seconds",
                                   "GPU-seconds reserved by the deadlines of running trials "
                                   "(status.budget.reserved)")),
      budget_remaining_(
          GaugeFamily(*registry_, "budgetsweep_sweep_budget_remaining_gpu_seconds",
                      "GPU-seconds neither used nor reserved (status.budget.remaining)")),
      trials_(GaugeFamily(*registry_, "budgetsweep_sweep_trials",
                          "The sweep's trials in each state (status.trials)")),
      created_trials_(GaugeFamily(*registry_, "budgetsweep_sweep_created_trials",
                                  "Trials the sweep created so far (status.trials.created)")),
      rung_reached_(GaugeFamily(*registry_, "budgetsweep_sweep_rung_reached_trials",
                                "Trials that recorded a value at the rung (status.rungs)")),
      rung_promoted_(GaugeFamily(*registry_, "budgetsweep_sweep_rung_promoted_trials",
                                 "Trials the rung promoted or let continue (status.rungs)")),
      best_objective_(GaugeFamily(*registry_, "budgetsweep_sweep_best_objective",
                                  "The best objective value so far (status.best.value)")),
      phase_(GaugeFamily(*registry_, "budgetsweep_sweep_phase",
                         "1 for the sweep's current phase (status.phase), 0 for the others")),
      throughput_samples_(GaugeFamily(
          *registry_, "budgetsweep_sweep_throughput_samples_per_second",
          "Training samples per second the probe phase measured (status.throughput.<run>)")),
      throughput_utilization_(GaugeFamily(
          *registry_, "budgetsweep_sweep_throughput_utilization",
          "Utilization the probe phase measured, the gate's figure (status.throughput.<run>)")),
      throughput_data_wait_(GaugeFamily(
          *registry_, "budgetsweep_sweep_throughput_data_wait_ratio",
          "Fraction of step time spent waiting for data in the probe (status.throughput.<run>)")),
      throughput_target_(
          GaugeFamily(*registry_, "budgetsweep_sweep_throughput_target_utilization",
                      "The probe phase's gate (status.throughput.targetUtilization)")),
      probe_used_(GaugeFamily(*registry_, "budgetsweep_sweep_throughput_probe_used_gpu_seconds",
                              "GPU-seconds the probe runs used (status.throughput.budgetUsed)")),
      probe_limit_(
          GaugeFamily(*registry_, "budgetsweep_sweep_throughput_probe_limit_gpu_seconds",
                      "The most GPU-seconds probing may use (status.throughput.budgetLimit)")),
      target_met_(GaugeFamily(*registry_, "budgetsweep_sweep_throughput_target_met",
                              "1 when the chosen settings met the target utilization, 0 when "
                              "not (status.throughput.targetMet)")),
      promotions_(CounterFamily(*registry_, "budgetsweep_trial_promotions_total",
                                "Trials promoted (pause mode) or continued (stop mode) at a rung")),
      kills_(CounterFamily(*registry_, "budgetsweep_trial_kills_total",
                           "Trials stopped by a rung decision")),
      decisions_(CounterFamily(*registry_, "budgetsweep_decisions_total",
                               "Actions the planner decided, by kind")),
      query_errors_(CounterFamily(*registry_, "budgetsweep_prometheus_query_errors_total",
                                  "Prometheus HTTP API queries that failed")),
      pool_budget_(GaugeFamily(*registry_, "budgetsweep_pool_budget_gpu_seconds",
                               "The BudgetPool's budget per period (spec.gpuHours), in "
                               "GPU-seconds")),
      pool_used_(GaugeFamily(*registry_, "budgetsweep_pool_used_gpu_seconds",
                             "GPU-seconds the pool's sweeps used this period "
                             "(status.usedGpuHours)")),
      pool_reserved_(GaugeFamily(*registry_, "budgetsweep_pool_reserved_gpu_seconds",
                                 "GPU-seconds of the pool reserved by the deadlines of running "
                                 "trials (status.reservedGpuHours)")),
      pool_remaining_(GaugeFamily(*registry_, "budgetsweep_pool_remaining_gpu_seconds",
                                  "GPU-seconds of the pool neither used nor reserved this period "
                                  "(status.remainingGpuHours)")),
      pool_active_sweeps_(GaugeFamily(*registry_, "budgetsweep_pool_active_sweeps",
                                      "Sweeps that still want budget from the pool "
                                      "(status.activeSweeps)")),
      pool_sweep_used_(GaugeFamily(*registry_, "budgetsweep_pool_sweep_used_gpu_seconds",
                                   "GPU-seconds one sweep used of the pool this period "
                                   "(status.sweeps[].usedDeviceSeconds)")),
      pool_sweep_reserved_(GaugeFamily(*registry_, "budgetsweep_pool_sweep_reserved_gpu_seconds",
                                       "GPU-seconds of the pool one sweep's running trials "
                                       "reserved (status.sweeps[].reservedDeviceSeconds)")),
      pool_denials_(CounterFamily(*registry_, "budgetsweep_pool_denials_total",
                                  "Trials the BudgetPool refused, by the limit that refused them")),
      reconcile_seconds_(prometheus::BuildHistogram()
                             .Name("budgetsweep_reconcile_duration_seconds")
                             .Help("Wall-clock duration of one reconcile pass")
                             .Register(*registry_)
                             .Add({}, ReconcileBuckets())),
      queue_depth_(
          GaugeFamily(*registry_, "budgetsweep_workqueue_depth", "Sweeps waiting in the work queue")
              .Add({})) {}

Gauge& OperatorMetrics::SweepGauge(Family<Gauge>& family, const SweepKey& key, Labels extra) {
  extra.emplace("namespace", key.first);
  extra.emplace("sweep", key.second);
  Gauge& gauge = family.Add(extra);
  sweeps_[key].gauges.emplace(&family, &gauge);
  return gauge;
}

void OperatorMetrics::ObserveSweep(const std::string& ns, const std::string& sweep,
                                   const json& status) {
  const SweepKey key{ns, sweep};
  std::lock_guard lock(mutex_);
  sweeps_.try_emplace(key);

  const json& budget = MemberAt(status, "budget");
  SetNumbers(key, budget,
             {{"gpuHours", &budget_total_},
              {"used", &budget_used_},
              {"reserved", &budget_reserved_},
              {"remaining", &budget_remaining_}},
             {}, kSecondsPerHour);
  if (NumberAt(budget, "gpuHours") != nullptr) {
    // Present at 0 from the first real status, like the rung counters: no errors is a value too.
    sweeps_[key].counters.emplace(&query_errors_,
                                  &query_errors_.Add({{"namespace", ns}, {"sweep", sweep}}));
  }

  const json& trials = MemberAt(status, "trials");
  if (trials.is_object()) {
    for (const auto& [state, count] : trials.items()) {
      if (!count.is_number()) continue;
      if (state == "created") {
        SweepGauge(created_trials_, key).Set(count.get<double>());
      } else {
        SweepGauge(trials_, key, {{"state", state}}).Set(count.get<double>());
      }
    }
  }

  if (status.is_object() && status.contains("rungs")) ObserveRungs(key, status["rungs"]);

  if (const json* value = NumberAt(MemberAt(status, "best"), "value");
      value && std::isfinite(value->get<double>())) {
    SweepGauge(best_objective_, key).Set(value->get<double>());
  }

  if (status.is_object() && status.contains("phase") && status["phase"].is_string()) {
    const std::string current = status["phase"].get<std::string>();
    for (SweepPhase phase : kSweepPhases) {
      std::string name = SweepPhaseName(phase);
      SweepGauge(phase_, key, {{"phase", name}}).Set(name == current ? 1 : 0);
    }
  }

  ObserveThroughput(key, MemberAt(status, "throughput"));
}

void OperatorMetrics::SetNumbers(
    const SweepKey& key, const json& object,
    std::initializer_list<std::pair<const char*, Family<Gauge>*>> fields, const Labels& extra,
    double scale) {
  // REQUIRES: mutex_ held (by ObserveSweep).
  for (auto [field, family] : fields) {
    if (const json* value = NumberAt(object, field)) {
      SweepGauge(*family, key, extra).Set(value->get<double>() * scale);
    }
  }
}

void OperatorMetrics::ObserveThroughput(const SweepKey& key, const json& throughput) {
  // REQUIRES: mutex_ held (by ObserveSweep).
  SetNumbers(key, throughput, {{"targetUtilization", &throughput_target_}});
  SetNumbers(key, throughput, {{"budgetUsed", &probe_used_}, {"budgetLimit", &probe_limit_}}, {},
             kSecondsPerHour);
  for (const char* run : kProbeRuns) {
    SetNumbers(key, MemberAt(throughput, run),
               {{"samplesPerSecond", &throughput_samples_},
                {"utilization", &throughput_utilization_},
                {"dataWaitRatio", &throughput_data_wait_}},
               {{"run", run}});
  }
  if (const json& met = MemberAt(throughput, "targetMet"); met.is_boolean()) {
    SweepGauge(target_met_, key).Set(met.get<bool>() ? 1 : 0);
  }
}

void OperatorMetrics::ObserveRungs(const SweepKey& key, const json& rungs) {
  // REQUIRES: mutex_ held (by ObserveSweep).
  std::set<GaugeSeries> fresh;
  if (rungs.is_array()) {
    for (size_t index = 0; index < rungs.size(); ++index) {
      const json* resource = NumberAt(rungs[index], "resource");
      if (resource == nullptr) continue;
      // Every rung's promotion and kill counters exist from the start, at 0, so that rate() and
      // the dashboard see a series before the first one (and a stop-mode sweep never promotes).
      for (Family<Counter>* family : {&promotions_, &kills_}) {
        sweeps_[key].counters.emplace(family, &family->Add({{"namespace", key.first},
                                                            {"sweep", key.second},
                                                            {"rung", std::to_string(index)}}));
      }
      const Labels labels = {{"namespace", key.first},
                             {"sweep", key.second},
                             {"rung", std::to_string(index)},
                             {"resource", ResourceLabel(resource->get<double>())}};
      for (auto [field, family] :
           {std::pair{"reached", &rung_reached_}, std::pair{"promoted", &rung_promoted_}}) {
        if (const json* value = NumberAt(rungs[index], field)) {
          Gauge& gauge = family->Add(labels);
          gauge.Set(value->get<double>());
          fresh.emplace(family, &gauge);
        }
      }
    }
  }
  SweepSeries& series = sweeps_[key];
  for (const auto& [family, gauge] : series.rungs) {
    if (!fresh.contains({family, gauge})) family->Remove(gauge);
  }
  series.rungs = std::move(fresh);
}

void OperatorMetrics::ForgetSweep(const std::string& ns, const std::string& sweep) {
  std::lock_guard lock(mutex_);
  auto it = sweeps_.find({ns, sweep});
  if (it == sweeps_.end()) return;
  for (const auto& [family, gauge] : it->second.gauges) family->Remove(gauge);
  for (const auto& [family, gauge] : it->second.rungs) family->Remove(gauge);
  for (const auto& [family, counter] : it->second.counters) family->Remove(counter);
  sweeps_.erase(it);
}

void OperatorMetrics::Count(Family<Counter>& family, const std::string& ns,
                            const std::string& sweep, Labels extra) {
  extra.emplace("namespace", ns);
  extra.emplace("sweep", sweep);
  std::lock_guard lock(mutex_);
  Counter& counter = family.Add(extra);
  counter.Increment();
  sweeps_[{ns, sweep}].counters.emplace(&family, &counter);
}

void OperatorMetrics::CountPromotion(const std::string& ns, const std::string& sweep, int rung) {
  Count(promotions_, ns, sweep, {{"rung", std::to_string(rung)}});
}

void OperatorMetrics::CountKill(const std::string& ns, const std::string& sweep, int rung) {
  Count(kills_, ns, sweep, {{"rung", std::to_string(rung)}});
}

void OperatorMetrics::CountDecision(const std::string& ns, const std::string& sweep,
                                    const std::string& kind) {
  Count(decisions_, ns, sweep, {{"kind", kind}});
}

void OperatorMetrics::CountQueryError(const std::string& ns, const std::string& sweep) {
  Count(query_errors_, ns, sweep, {});
}

Gauge& OperatorMetrics::PoolGauge(Family<Gauge>& family, const PoolKey& key) {
  // REQUIRES: mutex_ held.
  Gauge& gauge = family.Add({{"namespace", key.first}, {"pool", key.second}});
  pools_[key].gauges.emplace(&family, &gauge);
  return gauge;
}

Counter& OperatorMetrics::PoolDenials(const PoolKey& key, const std::string& reason) {
  // REQUIRES: mutex_ held.
  Counter& counter =
      pool_denials_.Add({{"namespace", key.first}, {"pool", key.second}, {"reason", reason}});
  pools_[key].counters.emplace(&pool_denials_, &counter);
  return counter;
}

void OperatorMetrics::ObservePool(const std::string& ns, const std::string& pool,
                                  const json& object) {
  const PoolKey key{ns, pool};
  std::lock_guard lock(mutex_);
  pools_.try_emplace(key);

  if (const json* hours = NumberAt(MemberAt(object, "spec"), "gpuHours")) {
    PoolGauge(pool_budget_, key).Set(hours->get<double>() * kSecondsPerHour);
    for (Reason reason : kPoolDenialReasons) PoolDenials(key, ReasonName(reason));
  }
  const json& status = MemberAt(object, "status");
  for (auto [field, family] :
       {std::pair{"usedGpuHours", &pool_used_}, std::pair{"reservedGpuHours", &pool_reserved_},
        std::pair{"remainingGpuHours", &pool_remaining_}}) {
    if (const json* value = NumberAt(status, field)) {
      PoolGauge(*family, key).Set(value->get<double>() * kSecondsPerHour);
    }
  }
  if (const json* active = NumberAt(status, "activeSweeps")) {
    PoolGauge(pool_active_sweeps_, key).Set(active->get<double>());
  }
  if (status.is_object() && status.contains("sweeps")) ObservePoolSweeps(key, status["sweeps"]);
}

void OperatorMetrics::ObservePoolSweeps(const PoolKey& key, const json& sweeps) {
  // REQUIRES: mutex_ held (by ObservePool).
  // Accounts by sweep name: a sweep deleted and created again under its name has two accounts
  // (by uid), and both count against the pool.
  std::map<std::string, std::map<Family<Gauge>*, double>> by_name;
  if (sweeps.is_array()) {
    for (const json& account : sweeps) {
      const json& name = MemberAt(account, "sweep");
      const json& uid = MemberAt(account, "key");
      std::string label = name.is_string()  ? name.get<std::string>()
                          : uid.is_string() ? uid.get<std::string>()
                                            : std::string();
      if (label.empty()) continue;
      for (auto [field, family] : {std::pair{"usedDeviceSeconds", &pool_sweep_used_},
                                   std::pair{"reservedDeviceSeconds", &pool_sweep_reserved_}}) {
        if (const json* value = NumberAt(account, field)) {
          by_name[label][family] += value->get<double>();
        }
      }
    }
  }
  std::set<GaugeSeries> fresh;
  for (const auto& [name, values] : by_name) {
    for (const auto& [family, value] : values) {
      Gauge& gauge = family->Add({{"namespace", key.first}, {"pool", key.second}, {"sweep", name}});
      gauge.Set(value);
      fresh.emplace(family, &gauge);
    }
  }
  PoolSeries& series = pools_[key];
  for (const auto& [family, gauge] : series.sweeps) {
    if (!fresh.contains({family, gauge})) family->Remove(gauge);
  }
  series.sweeps = std::move(fresh);
}

void OperatorMetrics::CountPoolDenial(const std::string& ns, const std::string& pool,
                                      const std::string& reason) {
  std::lock_guard lock(mutex_);
  PoolDenials({ns, pool}, reason).Increment();
}

void OperatorMetrics::ForgetPool(const std::string& ns, const std::string& pool) {
  std::lock_guard lock(mutex_);
  auto it = pools_.find({ns, pool});
  if (it == pools_.end()) return;
  for (const auto& [family, gauge] : it->second.gauges) family->Remove(gauge);
  for (const auto& [family, gauge] : it->second.sweeps) family->Remove(gauge);
  for (const auto& [family, counter] : it->second.counters) family->Remove(counter);
  pools_.erase(it);
}

void OperatorMetrics::ObserveReconcile(double seconds) { reconcile_seconds_.Observe(seconds); }

void OperatorMetrics::SetQueueDepth(size_t depth) { queue_depth_.Set(static_cast<double>(depth)); }

}  // namespace bsw::observability
