#ifndef BSW_CORE_DECISIONS_H_
#define BSW_CORE_DECISIONS_H_

// The decisions ComputePlan is made of. Each is a pure function of the observed state: it returns
// its own part of the plan, and where it admits work, the budget account after its admissions,
// which the next decision takes as its input. None reads what another one decided but through its
// arguments.

#include <optional>
#include <string>
#include <vector>

#include "operator/core/ledger.h"
#include "operator/core/planner.h"
#include "operator/core/reason.h"
#include "operator/core/sweep_model.h"

namespace bsw::decisions {

// What every decision reads.
struct PlanInput {
  const SweepModel& model;
  const Observed& observed;
  double now = 0;
  const PlannerOptions& options;
  // The share of each running segment's reservation that the budget still holds
  // (ReservationFit): below 1 only after spec.budget.gpuHours was cut below used + reserved.
  double reservation_fit = 1;

  const SweepSpec& spec() const { return model.spec(); }
};

// One decision's share of a plan.
struct Part {
  std::vector<Event> events;
  std::vector<Action> actions;
  std::vector<Denial> denials;
  std::vector<std::string> unknown;  // Plan::unknown
  int occupied = 0;                  // slots its trials hold in this pass

  // Appends `other` after this part's own.
  void Add(Part other);
};

// A part that admitted work, and the budget account after its admissions.
struct Admitted {
  Part part;
  Ledger ledger;
};

// printf of one or two figures into a message.
std::string Figures(const char* fmt, double a, double b = 0);

bool Pausing(const SweepSpec& spec);
// Where trial `index`'s first segment ends: in pause mode the rung its bracket starts at (the
// first rung under ASHA), else the full resource.
double FirstUntil(const SweepModel& model, int64_t index);

// What new work costs, from the sweep's and each trial's measurements (pricing.cc).
class Pricing {
 public:
  Pricing(const SweepModel& model, const PlannerOptions& options);

  int devices() const { return devices_; }
  // Device-seconds to reserve for a segment that needs `seconds` on each device; nullopt when no
  // measurement exists yet.
  std::optional<double> CostOf(std::optional<double> seconds) const;
  // Seconds per unit that trial `t` needs once its trainer is running: its own pace where two
  // rung values of one segment give it, else the sweep's (BorrowedPace).
  std::optional<double> MarginalPace(const Trial& t) const;
  // Seconds a new segment of trial `index` needs for `units` from its start, start-up included:
  // a resumed trial at its own start-up and pace, from its latest measurement on at the sweep's
  // pace; a new trial at the slowest recent pace of the sweep.
  std::optional<double> SegmentSeconds(int64_t index, double units) const;
  // How far a segment's reservation reaches from `progress`: the next rung, or its whole run
  // where deadlines cannot grow, and for pause mode's runs to the full resource (a trial promoted
  // to the end keeps what it needs to get there rather than yield it to new trials on the way).
  double ReservedUntil(double progress, double until) const;
  // Device-seconds a new segment of trial `index` from `from` to `until` asks admission for,
  // with `free_slots` slots free and `remaining` device-seconds unreserved.
  double Requested(int64_t index, double from, double until, int free_slots,
                   double remaining) const;

 private:
  std::optional<double> BorrowedPace(const CostPoint* latest) const;

  const SweepModel& model_;
  const PlannerOptions& options_;
  int devices_;
};

// --- Rung verdicts (planner.cc) ---

// Stop mode: the RungVerdict of each value a rung judges that has none yet
// (SweepModel::unjudged): continue when the rung had it in its top 1/η as it arrived, else stop.
std::vector<Event> JudgeValues(const SweepModel& model, double now);

// --- Trial lifecycle (trial_decisions.cc) ---

// The ends of the segments whose start the backend refused for good (`refused`, by trial or probe
// run name and segment, with the backend's message): each ends as Error without running, so that
// the trial's retries and spec.maxFailedTrials end it rather than a start retried on every pass.
// Recorded before anything else is decided, as a failure the backend reported.
std::vector<Event> RefusedEnds(const SweepModel& model,
                               const std::map<std::pair<std::string, int>, std::string>& refused,
                               double now);

// Why segment `seg` of trial `t` ended, as `st` shows it, and the message saying so. A segment
// that exited 0 without the objective at its `until` (unless the sweep stopped it) is ExitedShort
// when what the trial last reported (Observed::last_metrics, its rung values) is short of `until`
// or nothing, explained by that and its last read error (Observed::last_read_errors); one that
// reported reaching `until` lost only the read of its value there, and ends MetricsMissing below
// the full resource and as planned at it.
struct SegmentEnd {
  Reason reason = Reason::kNone;
  std::string message;
};
SegmentEnd EndOf(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                 const SegmentStatus& st);
// The SegmentEnded event of a segment that ended as `st` shows: EndOf, the trainer's output when
// it failed, and the charge.
event::SegmentEnded SegmentEndEvent(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                                    const SegmentStatus& st);
// Whether a trial whose segment ended for `reason` stays active for another segment: a resume
// after an interruption, or a retry while retries are left.
bool Relaunches(const SweepSpec& spec, const Trial& t, Reason reason);

// Whether a running trial's metrics are Unknown (no answer, or a passed rung without its value),
// and the stop once they have been for longer than spec.metrics.missingTimeoutSeconds.
struct MetricsCheck {
  bool unknown = false;
  std::optional<std::string> stop_message;
};
MetricsCheck CheckMetrics(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                          const TrialMetrics* metrics);

// The sweep decides to stop trial `t`: the event, and the stop of its live segment if it has one.
Part StopTrial(const PlanInput& in, const Trial& t, Reason reason, const std::string& message,
               bool live);

// Every active trial in index order: launches the ones waiting for a segment, records ended
// segments, stops what must stop, keeps deadlines at what the next milestone needs.
Admitted ReconcileTrials(const PlanInput& in, const Ledger& ledger);

// Ends every active trial of a finished sweep, so that none is left Running: a live segment is
// stopped, an ended one recorded (its charge too), and a trial with nothing running (not
// launched yet, or waiting for a retry or a resume) is stopped at once.
Part StopEverything(const PlanInput& in);

// --- Deadlines (deadline_decision.cc) ---

// What share of their reservations the running segments may keep: 1 while used + reserved fits
// the budget (within the deadline slack), else what is left after `used` over what is reserved,
// down to 0 when the budget is below what was used.
double ReservationFit(const Ledger& ledger, const PlannerOptions& options);

// Keeps the deadline of running segment `seg` at what its next milestone needs: later when the
// ledger admits the extra, earlier when the trial's own pace shows it needs less. After a budget
// cut (in.reservation_fit < 1) it brings the deadline in to keep only that share of what the
// segment holds, so every running segment gives up the same share and the sweep fits again.
Admitted AdjustDeadline(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                        const SegmentStatus& st, const TrialMetrics* metrics, const Ledger& ledger);

// --- Admission (admission.cc) ---

// Admits and launches segment `segment` of trial `index` from `from` to `until`; or, when the
// budget says no, a part with only the denial. `priced_by` is the trial whose measurements price
// it, when not its own: the donor of an exploit decided in the same pass.
Admitted Launch(const PlanInput& in, const Ledger& ledger, int64_t index, int segment, double from,
                double until, int free_slots, std::optional<int64_t> priced_by = std::nullopt);

// Pause mode under a budget would otherwise spend it all on trials that stop at a rung and end
// with none at the full resource. So until a trial runs there, the sweep keeps what taking its
// leader (Brackets::Leader) there costs. None without a leader, without a measurement to
// price it, or when the budget left cannot cover it anyway.
struct FinishReserve {
  int64_t trial = -1;
  int rung = 0;
  double device_seconds = 0;
};
std::optional<FinishReserve> FinishReserveOf(const PlanInput& in, const Ledger& ledger);
// Why no trial reached the full resource, for the message of a sweep that ends so: every trial
// stopped or failed first, or taking the leader there costs more than is left; nullopt once a
// trial completed.
std::optional<std::string> NoneAtMax(const PlanInput& in, const Ledger& ledger);

// Whether a new configuration may be created as trial `next` (maxTrials, the end of a grid).
bool CanCreate(const SweepModel& model, int64_t next);

// Fills the slots the trials left free (`occupied` of spec.parallelism taken): pause mode's
// promotions first, keeping the finish reserve, then new trials while no admission was denied in
// this pass (`denied`). In pause mode, when then nothing runs and nothing is left to create (or an
// admission was denied), the leader the reserve was kept for is taken to the full resource, so
// that the sweep does not end with no trial there.
Admitted FillSlots(const PlanInput& in, const Ledger& ledger, int occupied, bool denied);

// --- The sweep's end (admission.cc) ---

struct Finish {
  SweepPhase phase = SweepPhase::kCompleted;
  Reason reason = Reason::kSweepCompleted;
  std::string message;

  event::SweepFinished ToEvent(double now) const;
};
// Whether a sweep with `occupied` slots taken and `denials` in this pass is over: nothing runs,
// and the budget refused (BudgetExhausted) or nothing is left to run (Completed). Denials that
// wait (a pool's fair share) do not end it.
std::optional<Finish> FinishOf(const SweepModel& model, int occupied,
                               const std::vector<Denial>& denials);
// What a `completed` finish (FinishOf) is once the trials are counted as the pass leaves them
// (`after`: its model with the pass's events applied): none yet while the leader the finish
// reserve is kept for is paused (the next pass takes it to the full resource, FillSlots); Failed
// (AllTrialsFailed) when every trial failed; else `completed`, saying why no trial reached the
// full resource when none did (NoneAtMax).
std::optional<Finish> Completion(const PlanInput& after, const Ledger& ledger, Finish completed);
// Failed when spec.maxFailedTrials trials failed.
std::optional<Finish> TooManyFailures(const SweepModel& model);

// --- The probe phase (probe_decisions.cc) ---

struct ProbePhase {
  Admitted admitted;
  std::optional<ThroughputDecision> decided;  // in this pass
  std::optional<Finish> finish;
};
// One probe at a time (probes measure the machine, so they must not share it), each admitted
// within what spec.throughput.maxBudgetFraction leaves; then the decision.
ProbePhase ReconcileProbes(const PlanInput& in, const Ledger& ledger);
// The ProbeEnded event of probe `p`, whose run ended as `st` shows.
event::ProbeEnded ProbeEndEvent(const PlanInput& in, const ProbeRun& p, const SegmentStatus& st);

// --- Conditions (conditions.cc) ---

// What a pass decided that the conditions report.
struct PassSummary {
  std::optional<Finish> finish;               // decided in this pass
  std::optional<ThroughputDecision> decided;  // in this pass
  int occupied = 0;
  std::vector<Denial> denials;
  std::vector<std::string> unknown;
};
Condition ProgressingCondition(const SweepModel& model, const PassSummary& pass);
// ThroughputBelowTarget: Unknown while probing, then whether the decision met the gate.
Condition ThroughputCondition(const SweepModel& model, const PassSummary& pass);
// TrialsScheduled: False while a trial (or probe) cannot start for a reason the backend names,
// with the backend's own message: a held-up sweep says why instead of waiting silently.
Condition ScheduledCondition(const Observed& observed);
// BudgetAvailable: False with the first denial of the pass, or once the sweep ended
// BudgetExhausted.
Condition BudgetCondition(const SweepModel& model, const Ledger& ledger, const PassSummary& pass);
Condition MetricsCondition(const PassSummary& pass);
// Every condition of the pass, in the order the status lists them.
std::vector<Condition> Conditions(const PlanInput& in, const Ledger& ledger,
                                  const PassSummary& pass);

}  // namespace bsw::decisions

#endif  // BSW_CORE_DECISIONS_H_
