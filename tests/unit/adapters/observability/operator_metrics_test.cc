#include "operator/adapters/observability/operator_metrics.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "operator/adapters/observability/health_server.h"
#include "tests/fixtures/operator-metrics/example_status.h"
#include "tests/unit/adapters/observability/scrape.h"

namespace bsw::observability {
namespace {

using nlohmann::json;
using testing::CountWithLabel;
using testing::Value;

constexpr double kNow = 1767000000;

// The example status (tests/fixtures/operator-metrics): budget 4 GPU-h; used 1.0, reserved 0.5.
json RealStatus() { return bsw::testing::ExampleStatus("fmnist-cnn", kNow, 1800); }

class OperatorMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<HealthServer>> server =
        HealthServer::Start("127.0.0.1:0", metrics_.registry(), nullptr);
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(server).value();
  }
  std::vector<prom::Sample> Scrape() { return testing::Scrape(server_->port()); }

  OperatorMetrics metrics_;
  std::unique_ptr<HealthServer> server_;
};

const std::map<std::string, std::string> kSweep = {{"namespace", "ml"}, {"sweep", "fmnist-cnn"}};
std::map<std::string, std::string> SweepAnd(std::map<std::string, std::string> extra) {
  extra.insert(kSweep.begin(), kSweep.end());
  return extra;
}

TEST_F(OperatorMetricsTest, ObserveSweep_ExposesBudgetTrialsRungsBestAndPhaseOfBuildStatus) {
  const json status = RealStatus();
  ASSERT_EQ(status["budget"]["used"], 1.0) << status.dump();
  metrics_.ObserveSweep("ml", "fmnist-cnn", status);
  const std::vector<prom::Sample> samples = Scrape();

  EXPECT_EQ(Value(samples, "budgetsweep_sweep_budget_gpu_seconds", kSweep), 4 * 3600);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_budget_used_gpu_seconds", kSweep), 3600);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_budget_reserved_gpu_seconds", kSweep), 1800);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_budget_remaining_gpu_seconds", kSweep), 9000);

  EXPECT_EQ(Value(samples, "budgetsweep_sweep_created_trials", kSweep), 3);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_trials", SweepAnd({{"state", "running"}})), 2);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_trials", SweepAnd({{"state", "stopped"}})), 1);
  for (const char* state : {"paused", "completed", "failed"}) {
    EXPECT_EQ(Value(samples, "budgetsweep_sweep_trials", SweepAnd({{"state", state}})), 0) << state;
  }

  const auto rung0 = SweepAnd({{"rung", "0"}, {"resource", "1"}});
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_rung_reached_trials", rung0), 3);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_rung_promoted_trials", rung0), 1);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_rung_reached_trials",
                  SweepAnd({{"rung", "2"}, {"resource", "9"}})),
            0);
  EXPECT_FALSE(Value(samples, "budgetsweep_sweep_rung_reached_trials",
                     SweepAnd({{"rung", "3"}, {"resource", "27"}})))
      << "the last rung decides nothing; BuildStatus gives it no counts";

  EXPECT_EQ(Value(samples, "budgetsweep_sweep_best_objective", kSweep), 0.8);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_phase", SweepAnd({{"phase", "Running"}})), 1);
  for (const char* phase : {"Pending", "Probing", "Completed", "BudgetExhausted", "Failed"}) {
    EXPECT_EQ(Value(samples, "budgetsweep_sweep_phase", SweepAnd({{"phase", phase}})), 0) << phase;
  }
}

TEST_F(OperatorMetricsTest, ObserveSweep_ExposesTheProbePhasesBaselineChoiceTargetAndBudget) {
  metrics_.ObserveSweep("ml", "fmnist-cnn", RealStatus());
  const std::vector<prom::Sample> samples = Scrape();
  const auto baseline = SweepAnd({{"run", "baseline"}});
  const auto chosen = SweepAnd({{"run", "chosen"}});

  EXPECT_EQ(Value(samples, "budgetsweep_sweep_throughput_samples_per_second", baseline), 950);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_throughput_samples_per_second", chosen), 1800);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_throughput_utilization", baseline), 0.48);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_throughput_utilization", chosen), 0.90);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_throughput_data_wait_ratio", baseline), 0.42);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_throughput_data_wait_ratio", chosen), 0.06);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_throughput_target_utilization", kSweep), 0.85);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_throughput_probe_used_gpu_seconds", kSweep), 180);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_throughput_probe_limit_gpu_seconds", kSweep), 720);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_throughput_target_met", kSweep), 1);
}

TEST_F(OperatorMetricsTest,
       ObserveSweep_WhileProbingThePhaseIsProbingAndTheChoiceComesOnceDecided) {
  json probing = RealStatus();
  probing["phase"] = "Probing";
  for (const char* field : {"chosen", "targetMet", "reason", "message", "trialArgs"}) {
    probing["throughput"].erase(field);
  }
  probing["throughput"]["phase"] = "Probing";
  metrics_.ObserveSweep("ml", "fmnist-cnn", probing);
  std::vector<prom::Sample> samples = Scrape();

  EXPECT_EQ(Value(samples, "budgetsweep_sweep_phase", SweepAnd({{"phase", "Probing"}})), 1);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_phase", SweepAnd({{"phase", "Running"}})), 0);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_throughput_samples_per_second",
                  SweepAnd({{"run", "baseline"}})),
            950);
  EXPECT_FALSE(Value(samples, "budgetsweep_sweep_throughput_samples_per_second",
                     SweepAnd({{"run", "chosen"}})));
  EXPECT_FALSE(Value(samples, "budgetsweep_sweep_throughput_target_met", kSweep));

  metrics_.ObserveSweep("ml", "fmnist-cnn", RealStatus());
  samples = Scrape();
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_phase", SweepAnd({{"phase", "Probing"}})), 0);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_phase", SweepAnd({{"phase", "Running"}})), 1);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_throughput_samples_per_second",
                  SweepAnd({{"run", "chosen"}})),
            1800);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_throughput_target_met", kSweep), 1);
}

TEST_F(OperatorMetricsTest, ObserveSweep_ANewStatusReplacesTheValuesAndDropsVanishedRungs) {
  metrics_.ObserveSweep("ml", "fmnist-cnn", RealStatus());
  json later = RealStatus();
  later["budget"]["used"] = 3.5;
  later["phase"] = "BudgetExhausted";
  later["rungs"] = json::array({{{"resource", 1}, {"reached", 5}, {"promoted", 2}}});
  metrics_.ObserveSweep("ml", "fmnist-cnn", later);
  const std::vector<prom::Sample> samples = Scrape();

  EXPECT_EQ(Value(samples, "budgetsweep_sweep_budget_used_gpu_seconds", kSweep), 3.5 * 3600);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_phase", SweepAnd({{"phase", "BudgetExhausted"}})), 1);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_phase", SweepAnd({{"phase", "Running"}})), 0);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_rung_reached_trials",
                  SweepAnd({{"rung", "0"}, {"resource", "1"}})),
            5);
  EXPECT_FALSE(Value(samples, "budgetsweep_sweep_rung_reached_trials",
                     SweepAnd({{"rung", "1"}, {"resource", "3"}})));
  // Counters a dashboard rates exist at 0 before anything happened.
  EXPECT_EQ(Value(samples, "budgetsweep_trial_promotions_total", SweepAnd({{"rung", "0"}})), 0);
  EXPECT_EQ(Value(samples, "budgetsweep_trial_kills_total", SweepAnd({{"rung", "0"}})), 0);
  EXPECT_EQ(Value(samples, "budgetsweep_prometheus_query_errors_total", SweepAnd({})), 0);
}

TEST_F(OperatorMetricsTest, ObserveSweep_AnEmptyOrMalformedStatusCreatesNoSeries) {
  metrics_.ObserveSweep("ml", "fresh", json::object());
  metrics_.ObserveSweep("ml", "odd", json::array({1, 2}));
  metrics_.ObserveSweep(
      "ml", "wrong-types",
      {{"budget", {{"used", "1"}}},
       {"trials", 3},
       {"rungs", {{"resource", "x"}}},
       {"phase", 2},
       {"throughput", {{"baseline", 950}, {"budgetUsed", "0.05"}, {"targetMet", 1}}}});
  const std::vector<prom::Sample> samples = Scrape();
  for (const char* sweep : {"fresh", "odd", "wrong-types"}) {
    EXPECT_EQ(CountWithLabel(samples, "sweep", sweep), 0) << sweep;
  }
}

TEST_F(OperatorMetricsTest, ObserveSweep_NoBestSeriesUntilAFiniteBestExists) {
  json status = RealStatus();
  status.erase("best");
  metrics_.ObserveSweep("ml", "fmnist-cnn", status);
  EXPECT_FALSE(Value(Scrape(), "budgetsweep_sweep_best_objective", kSweep));
  status["best"] = {{"trial", "fmnist-cnn-t0000"}, {"value", nullptr}};
  metrics_.ObserveSweep("ml", "fmnist-cnn", status);
  EXPECT_FALSE(Value(Scrape(), "budgetsweep_sweep_best_objective", kSweep));
}

TEST_F(OperatorMetricsTest, Counters_CountPromotionsKillsDecisionsAndQueryErrorsPerSweep) {
  metrics_.CountPromotion("ml", "fmnist-cnn", 0);
  metrics_.CountPromotion("ml", "fmnist-cnn", 0);
  metrics_.CountPromotion("ml", "fmnist-cnn", 1);
  metrics_.CountKill("ml", "fmnist-cnn", 0);
  metrics_.CountDecision("ml", "fmnist-cnn", "start");
  metrics_.CountDecision("ml", "fmnist-cnn", "start");
  metrics_.CountDecision("ml", "fmnist-cnn", "stop");
  metrics_.CountQueryError("ml", "fmnist-cnn");
  metrics_.CountQueryError("other", "fmnist-cnn");
  const std::vector<prom::Sample> samples = Scrape();

  EXPECT_EQ(Value(samples, "budgetsweep_trial_promotions_total", SweepAnd({{"rung", "0"}})), 2);
  EXPECT_EQ(Value(samples, "budgetsweep_trial_promotions_total", SweepAnd({{"rung", "1"}})), 1);
  EXPECT_EQ(Value(samples, "budgetsweep_trial_kills_total", SweepAnd({{"rung", "0"}})), 1);
  EXPECT_EQ(Value(samples, "budgetsweep_decisions_total", SweepAnd({{"kind", "start"}})), 2);
  EXPECT_EQ(Value(samples, "budgetsweep_decisions_total", SweepAnd({{"kind", "stop"}})), 1);
  EXPECT_EQ(Value(samples, "budgetsweep_prometheus_query_errors_total", kSweep), 1);
  EXPECT_EQ(Value(samples, "budgetsweep_prometheus_query_errors_total",
                  {{"namespace", "other"}, {"sweep", "fmnist-cnn"}}),
            1);
}

TEST_F(OperatorMetricsTest, ForgetSweep_RemovesEverySeriesOfThatSweepOnly) {
  metrics_.ObserveSweep("ml", "fmnist-cnn", RealStatus());
  metrics_.ObserveSweep("ml", "kept", RealStatus());
  metrics_.CountKill("ml", "fmnist-cnn", 0);
  metrics_.CountDecision("ml", "fmnist-cnn", "stop");
  metrics_.CountQueryError("ml", "fmnist-cnn");
  metrics_.CountKill("ml", "kept", 0);
  const std::vector<prom::Sample> before = Scrape();
  ASSERT_GT(CountWithLabel(before, "sweep", "fmnist-cnn"), 20);
  ASSERT_TRUE(Value(before, "budgetsweep_sweep_throughput_target_met", kSweep));

  metrics_.ForgetSweep("ml", "fmnist-cnn");
  const std::vector<prom::Sample> samples = Scrape();
  EXPECT_EQ(CountWithLabel(samples, "sweep", "fmnist-cnn"), 0);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_budget_gpu_seconds",
                  {{"namespace", "ml"}, {"sweep", "kept"}}),
            4 * 3600);
  EXPECT_EQ(Value(samples, "budgetsweep_trial_kills_total",
                  {{"namespace", "ml"}, {"sweep", "kept"}, {"rung", "0"}}),
            1);

  metrics_.ForgetSweep("ml", "never-seen");
  metrics_.CountKill("ml", "fmnist-cnn", 0);
  EXPECT_EQ(Value(Scrape(), "budgetsweep_trial_kills_total", SweepAnd({{"rung", "0"}})), 1)
      << "a sweep of the same name starts again from zero";
}

// A BudgetPool as the API server returns it, with the status the operator writes: 10 GPU-h per
// calendar month, 2.5 used and 1.5 reserved by three accounts (one of a deleted sweep whose name
// came back: two accounts named lr-search).
json PoolObject() {
  return json::parse(R"({
    "apiVersion": "budgetsweep.dev/v1alpha1", "kind": "BudgetPool",
    "metadata": {"name": "team-a", "namespace": "ml", "generation": 2, "uid": "p-1"},
    "spec": {"gpuHours": 10, "maxPerSweepGpuHours": 6, "period": "calendarMonth"},
    "status": {
      "observedGeneration": 2, "usedGpuHours": 2.5, "reservedGpuHours": 1.5,
      "remainingGpuHours": 6, "activeSweeps": 2,
      "period": {"start": "2026-12-01T00:00:00Z", "end": "2027-01-01T00:00:00Z"},
      "previousPeriods": [{"start": "2026-11-01T00:00:00Z", "end": "2026-12-01T00:00:00Z",
                           "usedGpuHours": 9.5}],
      "sweeps": [
        {"key": "u-1", "sweep": "lr-search", "usedDeviceSeconds": 3600,
         "reservedDeviceSeconds": 5400, "carriedDeviceSeconds": 0, "active": true, "starved": false},
        {"key": "u-2", "sweep": "mlp-search", "usedDeviceSeconds": 3600,
         "reservedDeviceSeconds": 0, "carriedDeviceSeconds": 7200, "active": true, "starved": true},
        {"key": "u-0", "sweep": "lr-search", "usedDeviceSeconds": 1800,
         "reservedDeviceSeconds": 0, "carriedDeviceSeconds": 0, "active": false, "starved": false}],
      "conditions": [{"type": "Available", "status": "True", "reason": "BudgetRemains",
                      "message": "6 of 10 GPU-hours remain",
                      "lastTransitionTime": "2026-12-01T00:00:00Z", "observedGeneration": 2}]}})");
}

const std::map<std::string, std::string> kPool = {{"namespace", "ml"}, {"pool", "team-a"}};
std::map<std::string, std::string> PoolAnd(std::map<std::string, std::string> extra) {
  extra.insert(kPool.begin(), kPool.end());
  return extra;
}

TEST_F(OperatorMetricsTest, ObservePool_ExposesBudgetUsedReservedRemainingAndActiveSweeps) {
  metrics_.ObservePool("ml", "team-a", PoolObject());
  const std::vector<prom::Sample> samples = Scrape();

  EXPECT_EQ(Value(samples, "budgetsweep_pool_budget_gpu_seconds", kPool), 10 * 3600);
  EXPECT_EQ(Value(samples, "budgetsweep_pool_used_gpu_seconds", kPool), 2.5 * 3600);
  EXPECT_EQ(Value(samples, "budgetsweep_pool_reserved_gpu_seconds", kPool), 1.5 * 3600);
  EXPECT_EQ(Value(samples, "budgetsweep_pool_remaining_gpu_seconds", kPool), 6 * 3600);
  EXPECT_EQ(Value(samples, "budgetsweep_pool_active_sweeps", kPool), 2);
  // Per sweep name: lr-search's two accounts (the deleted sweep's charge stays) are added up.
  EXPECT_EQ(
      Value(samples, "budgetsweep_pool_sweep_used_gpu_seconds", PoolAnd({{"sweep", "lr-search"}})),
      5400);
  EXPECT_EQ(Value(samples, "budgetsweep_pool_sweep_reserved_gpu_seconds",
                  PoolAnd({{"sweep", "lr-search"}})),
            5400);
  EXPECT_EQ(
      Value(samples, "budgetsweep_pool_sweep_used_gpu_seconds", PoolAnd({{"sweep", "mlp-search"}})),
      3600);
  EXPECT_EQ(Value(samples, "budgetsweep_pool_sweep_reserved_gpu_seconds",
                  PoolAnd({{"sweep", "mlp-search"}})),
            0);
  // The denial counters exist at 0 before the first denial.
  for (const char* reason : {"PoolExhausted", "PoolFairShare", "PoolMaxPerSweep"}) {
    EXPECT_EQ(Value(samples, "budgetsweep_pool_denials_total", PoolAnd({{"reason", reason}})), 0)
        << reason;
  }
  EXPECT_EQ(CountWithLabel(samples, "pool", "team-a"), 12);
}

TEST_F(OperatorMetricsTest, ObservePool_ANewObjectReplacesValuesAndDropsVanishedSweeps) {
  metrics_.ObservePool("ml", "team-a", PoolObject());
  json later = PoolObject();
  later["spec"]["gpuHours"] = 12;
  later["status"]["usedGpuHours"] = 4;
  later["status"]["reservedGpuHours"] = 0;
  later["status"]["remainingGpuHours"] = 8;
  later["status"]["activeSweeps"] = 1;
  later["status"]["sweeps"] = json::parse(
      R"([{"key": "u-2", "sweep": "mlp-search", "usedDeviceSeconds": 14400,
           "reservedDeviceSeconds": 0, "active": true, "starved": false}])");
  metrics_.ObservePool("ml", "team-a", later);
  const std::vector<prom::Sample> samples = Scrape();

  EXPECT_EQ(Value(samples, "budgetsweep_pool_budget_gpu_seconds", kPool), 12 * 3600);
  EXPECT_EQ(Value(samples, "budgetsweep_pool_used_gpu_seconds", kPool), 4 * 3600);
  EXPECT_EQ(Value(samples, "budgetsweep_pool_reserved_gpu_seconds", kPool), 0);
  EXPECT_EQ(Value(samples, "budgetsweep_pool_remaining_gpu_seconds", kPool), 8 * 3600);
  EXPECT_EQ(Value(samples, "budgetsweep_pool_active_sweeps", kPool), 1);
  EXPECT_EQ(
      Value(samples, "budgetsweep_pool_sweep_used_gpu_seconds", PoolAnd({{"sweep", "mlp-search"}})),
      14400);
  EXPECT_FALSE(
      Value(samples, "budgetsweep_pool_sweep_used_gpu_seconds", PoolAnd({{"sweep", "lr-search"}})));
  EXPECT_FALSE(Value(samples, "budgetsweep_pool_sweep_reserved_gpu_seconds",
                     PoolAnd({{"sweep", "lr-search"}})));
}

TEST_F(OperatorMetricsTest, ObservePool_MissingOrNonNumberFieldsLeaveTheSeriesAsTheyWere) {
  // A pool the operator has not written a status for yet: the budget and the counters only.
  json fresh = PoolObject();
  fresh.erase("status");
  metrics_.ObservePool("ml", "team-a", fresh);
  std::vector<prom::Sample> samples = Scrape();
  EXPECT_EQ(Value(samples, "budgetsweep_pool_budget_gpu_seconds", kPool), 10 * 3600);
  EXPECT_FALSE(Value(samples, "budgetsweep_pool_used_gpu_seconds", kPool));
  EXPECT_FALSE(Value(samples, "budgetsweep_pool_active_sweeps", kPool));
  EXPECT_EQ(CountWithLabel(samples, "pool", "team-a"), 4);

  metrics_.ObservePool("ml", "team-a", PoolObject());
  metrics_.ObservePool("ml", "team-a", json::parse(R"({"spec": {"gpuHours": "10"},
                                       "status": {"usedGpuHours": null, "reservedGpuHours": "1",
                                                  "activeSweeps": true}})"));
  metrics_.ObservePool("ml", "team-a", json::array({1, 2}));
  samples = Scrape();
  EXPECT_EQ(Value(samples, "budgetsweep_pool_budget_gpu_seconds", kPool), 10 * 3600);
  EXPECT_EQ(Value(samples, "budgetsweep_pool_used_gpu_seconds", kPool), 2.5 * 3600);
  EXPECT_EQ(Value(samples, "budgetsweep_pool_reserved_gpu_seconds", kPool), 1.5 * 3600);
  EXPECT_EQ(Value(samples, "budgetsweep_pool_active_sweeps", kPool), 2);
  EXPECT_EQ(
      Value(samples, "budgetsweep_pool_sweep_used_gpu_seconds", PoolAnd({{"sweep", "lr-search"}})),
      5400)
      << "an object without status.sweeps leaves the per-sweep series";

  metrics_.ObservePool("ml", "empty", json::object());
  metrics_.ObservePool("ml", "odd", json::array({1, 2}));
  metrics_.ObservePool("ml", "wrong-types",
                       {{"spec", {{"gpuHours", "10"}}},
                        {"status", {{"usedGpuHours", "1"}, {"sweeps", {{"key", 1}}}}}});
  samples = Scrape();
  for (const char* pool : {"empty", "odd", "wrong-types"}) {
    EXPECT_EQ(CountWithLabel(samples, "pool", pool), 0) << pool;
  }
}

TEST_F(OperatorMetricsTest, CountPoolDenial_CountsPerPoolAndReason) {
  metrics_.ObservePool("ml", "team-a", PoolObject());
  metrics_.CountPoolDenial("ml", "team-a", "PoolFairShare");
  metrics_.CountPoolDenial("ml", "team-a", "PoolFairShare");
  metrics_.CountPoolDenial("ml", "team-a", "PoolExhausted");
  metrics_.CountPoolDenial("other", "team-a", "PoolMaxPerSweep");
  const std::vector<prom::Sample> samples = Scrape();

  EXPECT_EQ(
      Value(samples, "budgetsweep_pool_denials_total", PoolAnd({{"reason", "PoolFairShare"}})), 2);
  EXPECT_EQ(
      Value(samples, "budgetsweep_pool_denials_total", PoolAnd({{"reason", "PoolExhausted"}})), 1);
  EXPECT_EQ(
      Value(samples, "budgetsweep_pool_denials_total", PoolAnd({{"reason", "PoolMaxPerSweep"}})),
      0);
  EXPECT_EQ(Value(samples, "budgetsweep_pool_denials_total",
                  {{"namespace", "other"}, {"pool", "team-a"}, {"reason", "PoolMaxPerSweep"}}),
            1);
}

TEST_F(OperatorMetricsTest, ForgetPool_RemovesEverySeriesOfThatPoolOnly) {
  metrics_.ObservePool("ml", "team-a", PoolObject());
  metrics_.ObservePool("ml", "kept", PoolObject());
  metrics_.ObserveSweep("ml", "team-a", RealStatus());  // a sweep of the same name is no pool
  metrics_.CountPoolDenial("ml", "team-a", "PoolExhausted");
  metrics_.CountPoolDenial("ml", "kept", "PoolExhausted");
  ASSERT_EQ(CountWithLabel(Scrape(), "pool", "team-a"), 12);

  metrics_.ForgetPool("ml", "team-a");
  const std::vector<prom::Sample> samples = Scrape();
  EXPECT_EQ(CountWithLabel(samples, "pool", "team-a"), 0);
  EXPECT_EQ(CountWithLabel(samples, "pool", "kept"), 12);
  EXPECT_EQ(Value(samples, "budgetsweep_pool_denials_total",
                  {{"namespace", "ml"}, {"pool", "kept"}, {"reason", "PoolExhausted"}}),
            1);
  EXPECT_EQ(Value(samples, "budgetsweep_sweep_budget_gpu_seconds",
                  {{"namespace", "ml"}, {"sweep", "team-a"}}),
            4 * 3600);

  metrics_.ForgetPool("ml", "never-seen");
  metrics_.CountPoolDenial("ml", "team-a", "PoolExhausted");
  EXPECT_EQ(
      Value(Scrape(), "budgetsweep_pool_denials_total", PoolAnd({{"reason", "PoolExhausted"}})), 1)
      << "a pool of the same name starts again from zero";
}

TEST_F(OperatorMetricsTest, ReconcileHistogramAndQueueDepth) {
  metrics_.ObserveReconcile(0.004);
  metrics_.ObserveReconcile(0.2);
  metrics_.ObserveReconcile(30);
  metrics_.SetQueueDepth(7);
  const std::vector<prom::Sample> samples = Scrape();

  EXPECT_EQ(Value(samples, "budgetsweep_reconcile_duration_seconds_count", {}), 3);
  EXPECT_DOUBLE_EQ(*Value(samples, "budgetsweep_reconcile_duration_seconds_sum", {}), 30.204);
  EXPECT_EQ(Value(samples, "budgetsweep_reconcile_duration_seconds_bucket", {{"le", "0.005"}}), 1);
  EXPECT_EQ(Value(samples, "budgetsweep_reconcile_duration_seconds_bucket", {{"le", "0.25"}}), 2);
  EXPECT_EQ(Value(samples, "budgetsweep_reconcile_duration_seconds_bucket", {{"le", "10"}}), 2);
  EXPECT_EQ(Value(samples, "budgetsweep_reconcile_duration_seconds_bucket", {{"le", "+Inf"}}), 3);
  EXPECT_EQ(Value(samples, "budgetsweep_workqueue_depth", {}), 7);
}

}  // namespace
}  // namespace bsw::observability
