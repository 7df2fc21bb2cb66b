#ifndef BSW_CONTROLLER_SWEEP_CONTROLLER_H_
#define BSW_CONTROLLER_SWEEP_CONTROLLER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "nlohmann/json.hpp"
#include "operator/controller/metric_reads.h"
#include "operator/core/ledger.h"
#include "operator/core/planner.h"
#include "operator/core/step.h"
#include "operator/core/sweep_model.h"
#include "operator/ports/budget_gate.h"
#include "operator/ports/clock.h"
#include "operator/ports/event_log.h"
#include "operator/ports/metric_source.h"
#include "operator/ports/trial_backend.h"

namespace bsw {

// Drives one sweep: observe the backend and the metrics, plan, journal, act. Level-triggered:
// each pass recomputes from what it observes, so a controller started on an existing journal
// picks up where the last one stopped.
class SweepController {
 public:
  // Each pass reads the running trials' metrics side by side through a MetricReader with
  // `metric_reads`. REQUIRES: `metrics` may be read from several threads at once.
  SweepController(const SweepSpec& spec, TrialBackend* backend, MetricSource* metrics,
                  EventLog* log, const Clock* clock, PlannerOptions options = {},
                  MetricReadOptions metric_reads = {});

  // Makes every pass admit within `gate`'s cap too (a shared BudgetPool), and record there what
  // the sweep holds before any segment it admitted starts. REQUIRES: `gate` outlives this.
  void SetBudgetGate(BudgetGate* gate) { gate_ = gate; }

  // Rebuilds the model from the event log. Call once, before the first Pass.
  Status Recover();

  // One pass: observe, take the pool's gate, decide (Decide, a pure function), commit the pool's
  // account, journal the step's events as one batch, adopt the model they make, act. Returns the
  // step it carried out.
  StatusOr<Step> Pass();

  // Stops every running segment without deciding anything about its trial: a later run resumes
  // the trial from its checkpoint. For Ctrl-C; StatusJson says so from then on.
  Status Interrupt();

  // Refreshes the ledger, and which segments are live, from the backend without deciding
  // anything.
  bsw::Status Refresh();

  // Records in the budget gate what the sweep holds by the last Refresh, as a sweep no run
  // drives: after Interrupt, so that the pool gets back what the stopped segments did not use.
  bsw::Status SettleGate();

  // Whether every segment the backend knows of has ended.
  StatusOr<bool> AllSegmentsEnded();

  // Whether the sweep is done: finished, and every segment it started has ended (its trials
  // stopped). The local run loop and the Kubernetes reconciler both stop passing on it.
  StatusOr<bool> Done();

  // The model as of the last pass. A pass (or Recover) replaces it: a reference into it is good
  // until then, not across a Pass.
  const SweepModel& model() const { return *model_; }
  const Ledger& ledger() const { return ledger_; }
  // The latest metrics of each running trial, by trial name.
  const std::map<std::string, TrialMetrics>& live_metrics() const { return memory_.last_metrics; }
  // The status object in the BudgetSweep status schema; after Interrupt, InterruptedStatus with
  // the segments the last Refresh showed live.
  nlohmann::json StatusJson() const;

  // Called with each journaled event, after it was applied (progress output).
  void OnEvent(std::function<void(const Event&)> callback) { on_event_ = std::move(callback); }
  // Called with each failed metrics read (the trial is Unknown for that pass).
  void OnMetricsError(std::function<void(const Status&)> callback) {
    on_metrics_error_ = std::move(callback);
  }

 private:
  // What the backend lists (with the recorded charges of ended segments it no longer lists) and
  // the running trials' metrics; charges the ledger with the segments.
  StatusOr<Observation> Observe();
  // The budget gate's cap (no gate: none), the gate then held until Commit.
  StatusOr<std::optional<PoolCap>> AcquireGate();
  // The pool account of a sweep that holds what its ledger says.
  PoolAccount HeldAccount(bool active) const;
  // Journals the step's events as one append, then adopts its model and memory. When the append
  // fails, it keeps only what the pass read: a value read then is recorded by a later pass, even
  // once its trainer has exited.
  bsw::Status Journal(Step& step);
  // Carries out the step's actions; a start refused for good is remembered for the next Decide.
  bsw::Status Act(const std::vector<StepAction>& actions);
  bsw::Status Carry(const Launch& launch);
  bsw::Status Carry(const Stop& stop);
  bsw::Status Carry(const MoveDeadline& move);
  // What the backend lists plus the recorded charge of ended segments (trials' and probe runs')
  // it no longer lists.
  StatusOr<std::vector<SegmentStatus>> ChargedSegments();
  // Whether the end (and charge) of the trial's or probe run's segment is recorded.
  bool EndRecorded(const std::string& name, int segment) const;
  // Releases the segments (trials' and probe runs') the backend still holds whose end and charge
  // are recorded.
  bsw::Status ReleaseRecorded(const std::vector<SegmentStatus>& segments);

  std::shared_ptr<const SweepModel> model_;
  Ledger ledger_;
  TrialBackend* backend_;
  BudgetGate* gate_ = nullptr;
  EventLog* log_;
  const Clock* clock_;
  PlannerOptions options_;
  MetricReader metric_reader_;
  PassMemory memory_;
  // Stops asked for in this controller run: a stop is asked once per run (a restarted controller
  // asks again, which is harmless), and remembered until the trial's segment has ended.
  std::set<std::pair<std::string, int>> stops_issued_;
  bool interrupted_ = false;
  // The trials whose segment the last Refresh showed pending or running.
  std::set<std::string> live_trials_;
  std::function<void(const Event&)> on_event_;
  std::function<void(const Status&)> on_metrics_error_;
};

}  // namespace bsw

#endif  // BSW_CONTROLLER_SWEEP_CONTROLLER_H_
