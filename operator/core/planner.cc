#include "operator/core/planner.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "operator/core/tpe.h"

namespace bsw {
namespace {

using Type = Event::Type;

std::string Format(const char* fmt, double a, double b = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b);
  return buf;
}

// Builds one plan. Each step reads the model and the observation, and adds events and actions;
// admissions accumulate in the local copy of the ledger so a pass can never overcommit.
class Planner {
 public:
  Planner(const SweepModel& model, const Observed& observed, const Ledger& ledger, double now,
          const PlannerOptions& options)
      : model_(model),
        spec_(model.spec()),
        observed_(observed),
        ledger_(ledger),
        now_(now),
        options_(options),
        devices_(ChargedDevices(model.spec().trial_gpus)) {}

  Plan Run() {
    if (model_.finished()) {
      StopEverything();
      AddConditions();
      return std::move(plan_);
    }
    // Checked first, so that a failed sweep launches no retry in its last pass.
    if (model_.count(TrialPhase::kFailed) >= spec_.max_failed_trials) {
      Finish(SweepPhase::kFailed, "TooManyFailedTrials",
             std::to_string(model_.count(TrialPhase::kFailed)) +
                 " trials failed (spec.maxFailedTrials is " +
                 std::to_string(spec_.max_failed_trials) + ")");
      StopEverything();
    } else if (model_.probing()) {
      ReconcileProbes();
    } else {
      for (int64_t index : model_.active()) ReconcileTrial(model_.trial(index));
      FillSlots();
      MaybeFinish();
    }
    AddConditions();
    return std::move(plan_);
  }

 private:
  // Device-seconds to reserve for a segment that needs `seconds` on each device; nullopt when no
  // measurement exists yet.
  std::optional<double> CostOf(std::optional<double> seconds) const {
    if (!seconds) return std::nullopt;
    double reserved = *seconds * options_.reservation_margin + spec_.grace_seconds;
    return devices_ * std::max(reserved, options_.min_reservation_seconds);
  }

  // Trial `t`'s own start-up and pace, where two rung values of one of its segments give them.
  static std::optional<LinearCost> OwnCost(const Trial& t) {
    std::vector<std::vector<CostPoint>> by_segment;
    for (const SegmentRecord& seg : t.segments) by_segment.push_back(seg.measured);
    return FitLinearCost(by_segment);
  }

  // Trial `t`'s latest measurement, if any.
  static const CostPoint* Latest(const Trial& t) {
    for (auto seg = t.segments.rbegin(); seg != t.segments.rend(); ++seg) {
      if (!seg->measured.empty()) return &seg->measured.back();
    }
    return nullptr;
  }

  // Seconds per unit that trial `t` needs once its trainer is running: its own where it has one
  // (OwnCost), else BorrowedPace.
  std::optional<double> MarginalPace(const Trial& t) const {
    if (std::optional<LinearCost> own = OwnCost(t)) return own->per_unit;
    return BorrowedPace(Latest(t));
  }

  // The running pace of a trial without OwnCost, whose latest measurement is `latest` (if any): the
  // sweep's steepest recent one, but no more than its own with the start-up included; else the
  // slowest recent pace of the sweep, start-up included.
  std::optional<double> BorrowedPace(const CostPoint* latest) const {
    std::optional<double> sweep = model_.cost_model().MarginalSecondsPerUnit();
    if (latest == nullptr) return sweep ? sweep : model_.cost_model().SecondsPerUnit();
    double inclusive = latest->seconds / latest->units;
    return sweep ? std::min(*sweep, inclusive) : inclusive;
  }

  // Seconds a new segment of trial `index` needs for `units` from its start, start-up included: a
  // resumed trial at its own start-up and pace (its parameters, not the slowest of the sweep's),
  // from its latest measurement on at BorrowedPace; a new trial at the slowest recent pace.
  std::optional<double> SegmentSeconds(int64_t index, double units) const {
    if (index < model_.trial_count()) {
      const Trial& t = model_.trial(index);
      if (std::optional<LinearCost> own = OwnCost(t)) return own->Of(units);
      if (const CostPoint* latest = Latest(t)) {
        return latest->seconds + *BorrowedPace(latest) * (units - latest->units);
      }
    }
    std::optional<double> pace = model_.cost_model().SecondsPerUnit();
    if (!pace) return std::nullopt;
    return *pace * units;
  }

  // Device-seconds a new segment of trial `index` from `from` to `until` asks admission for. The
  // reservation covers the work up to ReservedUntil; AdjustDeadline extends it from there.
  double Requested(int64_t index, double from, double until, int free_slots) const {
    std::optional<double> cost = CostOf(SegmentSeconds(index, ReservedUntil(from, until) - from));
    // Without any measurement, a new segment gets an equal share of what is still unreserved,
    // but no less than the grace period plus the minimum: the supervisor sends SIGTERM a grace
    // period before the deadline, so a smaller share would stop the trial as it starts, charge it
    // next to nothing, and leave the budget to a stream of trials that never measure anything.
    return cost.value_or(
        std::max(ledger_.remaining() / std::max(1, free_slots),
                 devices_ * (spec_.grace_seconds + options_.min_reservation_seconds)));
  }

  // How far a segment's reservation reaches from `progress`: the next rung, or its whole run
  // where deadlines cannot grow, and for pause mode's runs to the full resource (a trial promoted
  // to the end keeps what it needs to get there rather than yield it to new trials on the way).
  double ReservedUntil(double progress, double until) const {
    bool whole = options_.deadlines_only_shrink || (Pausing() && until >= model_.rungs().max());
    return whole ? until : std::min(until, model_.rungs().NextAfter(progress));
  }

  // Admits and launches one segment. Returns false (recording the denial) when the budget says no.
  bool Launch(int64_t index, int segment, double from, double until, int free_slots) {
    double requested = Requested(index, from, until, free_slots);
    if (std::optional<Denial> denial = ledger_.Admit(requested)) {
      plan_.denials.push_back(*denial);
      return false;
    }
    double deadline = now_ + requested / devices_;
    Event launch = Event::Of(Type::kSegmentLaunched, now_, index, segment);
    launch.from = from;
    launch.until = until;
    launch.deadline = deadline;
    plan_.events.push_back(launch);
    plan_.actions.push_back(Action{Action::Kind::kStart, index, segment, until, deadline, ""});
    if (reserve_ && reserve_->trial == index) reserve_.reset();  // the leader moves on
    return true;
  }

  // Records the decision to stop `t`; a trial with nothing running is stopped by it at once.
  void RecordStop(const Trial& t, const std::string& reason, const std::string& message) {
    Event e = Event::Of(Type::kTrialStopped, now_, t.index);
    e.reason = reason;
    e.message = message;
    plan_.events.push_back(e);
  }

  void StopTrial(const Trial& t, const std::string& reason, const std::string& message) {
    RecordStop(t, reason, message);
    plan_.actions.push_back(
        Action{Action::Kind::kStop, t.index, t.segments.back().number, 0, 0, reason});
  }

  void ReconcileTrial(const Trial& t) {
    if (t.segments.empty() || t.segments.back().ended) {
      // Created but not launched, or failed with retries left: (re)launch from its checkpoint.
      int next = t.segments.empty() ? 0 : t.segments.back().number + 1;
      double until = t.segments.empty() ? FirstUntil() : t.segments.back().until;
      if (Launch(t.index, next, t.progress(), until, Free())) {
        ++occupied_;
      } else {
        RecordStop(t, "BudgetExhausted", plan_.denials.back().Message());
      }
      return;
    }
    const SegmentRecord& seg = t.segments.back();
    const SegmentStatus* st = observed_.Segment(t.name, seg.number);
    if (st == nullptr) {
      if (t.stop_requested) {
        EndSegment(t, seg, "Stopped", "stopped before it started");
        return;
      }
      // Journaled but never started (a crash between the two): start it again; Start is idempotent.
      plan_.actions.push_back(
          Action{Action::Kind::kStart, t.index, seg.number, seg.until, seg.deadline, ""});
      ++occupied_;
      return;
    }
    if (st->state == SegmentState::kSucceeded || st->state == SegmentState::kFailed) {
      EndedSegment(t, seg, *st);
      // A trial that stays active is relaunched on the next pass: it still holds its slot.
      if (Relaunches(t, plan_.events.back().reason)) ++occupied_;
      return;
    }
    ++occupied_;
    if (t.stop_requested) {
      plan_.actions.push_back(Action{Action::Kind::kStop, t.index, seg.number, 0, 0, t.reason});
      return;
    }
    if (t.rung_verdict_stop) {
      StopTrial(t, "RungCutoff", *t.rung_verdict_stop);
      return;
    }
    auto m = observed_.metrics.find(t.name);
    const TrialMetrics* metrics = m == observed_.metrics.end() ? nullptr : &m->second;
    // A pending segment costs nothing and cannot report yet: only running ones are checked.
    if (st->state == SegmentState::kRunning && CheckMetricsMissing(t, seg, metrics)) return;
    AdjustDeadline(t, seg, *st, metrics);
  }

  bool Pausing() const {
    return spec_.algorithm == Algorithm::kAsha && spec_.mode == AshaMode::kPause;
  }

  double FirstUntil() const { return Pausing() ? model_.rungs().at(0) : model_.rungs().max(); }

  void EndSegment(const Trial& t, const SegmentRecord& seg, const std::string& reason,
                  const std::string& message) {
    Event e = Event::Of(Type::kSegmentEnded, now_, t.index, seg.number);
    e.reason = reason;
    e.message = message;
    plan_.events.push_back(e);
  }

  // Whether a trial whose segment ended for `reason` stays active for another segment: a resume
  // after an interruption, or a retry while retries are left.
  bool Relaunches(const Trial& t, const std::string& reason) const {
    bool retry = (reason == "Error" || reason == "Lost") && t.failures < spec_.max_retries;
    return reason == "Interrupted" || (retry && !t.stop_requested);
  }

  void EndedSegment(const Trial& t, const SegmentRecord& seg, const SegmentStatus& st) {
    EndedSegmentReason(t, seg, st);
    Event& ended = plan_.events.back();
    if (ended.reason == "Error" || ended.reason == "Lost" || ended.reason == "Diverged") {
      ended.output = st.output_tail;
    }
    if (st.started_unix_seconds && st.finished_unix_seconds) {
      ended.started = *st.started_unix_seconds;
      ended.finished = *st.finished_unix_seconds;
      ended.devices = ChargedDevices(st.devices);
    }
  }

  void EndedSegmentReason(const Trial& t, const SegmentRecord& seg, const SegmentStatus& st) {
    if (st.state == SegmentState::kSucceeded) {
      bool reported = t.rung_values.contains(seg.until) || seg.until >= model_.rungs().max();
      if (!reported && !t.stop_requested) {
        EndSegment(t, seg, "MetricsMissing",
                   "exited at " + spec_.resource_unit + Format(" %g", seg.until) +
                       " without reporting the objective there");
        return;
      }
      EndSegment(t, seg, "", "");
      return;
    }
    if (st.exit_code && *st.exit_code == 3) {
      EndSegment(t, seg, "Diverged", "the trainer reported a non-finite loss (exit code 3)");
      return;
    }
    if (st.reason == "DeadlineExceeded") {
      EndSegment(t, seg, "DeadlineExceeded",
                 "stopped at its reserved share of the budget, which could not be extended");
      return;
    }
    if (st.reason == "Evicted" && !t.stop_requested) {
      EndSegment(t, seg, "Interrupted",
                 "the node refused or evicted its pod; it resumes from its checkpoint");
      return;
    }
    if (st.reason == "Stopped") {
      if (t.stop_requested) {
        EndSegment(t, seg, "Stopped", t.message);
      } else {
        EndSegment(t, seg, "Interrupted",
                   "stopped from outside the sweep; it resumes from its checkpoint");
      }
      return;
    }
    std::string message = st.exit_code ? "exited with code " + std::to_string(*st.exit_code)
                                       : "ended without an exit code";
    EndSegment(t, seg, st.reason.empty() ? "Error" : st.reason, message);
  }

  // Returns true when the trial was stopped for missing metrics.
  bool CheckMetricsMissing(const Trial& t, const SegmentRecord& seg, const TrialMetrics* metrics) {
    bool unknown = metrics == nullptr;
    if (metrics && metrics->resource_completed) {
      for (double milestone : model_.rungs().milestones()) {
        if (milestone > seg.from && milestone <= *metrics->resource_completed &&
            !t.rung_values.contains(milestone)) {
          unknown = true;
        }
      }
    }
    if (!unknown) return false;
    plan_.unknown.push_back(t.name);
    auto since = observed_.unknown_since.find(t.name);
    if (since == observed_.unknown_since.end() ||
        now_ - since->second <= spec_.metrics_missing_timeout_seconds) {
      return false;
    }
    StopTrial(t, "MetricsMissing",
              Format("no objective reported for %.0f s (spec.metrics.missingTimeoutSeconds is %g)",
                     now_ - since->second, spec_.metrics_missing_timeout_seconds));
    return true;
  }

  // Keeps the deadline of a running segment at what its next milestone needs: later when the
  // ledger admits the extra, earlier when the trial's own pace shows it needs less.
  void AdjustDeadline(const Trial& t, const SegmentRecord& seg, const SegmentStatus& st,
                      const TrialMetrics* metrics) {
    double progress = std::max(t.progress(), seg.from);
    // The seconds per unit of what is left, from the segment's own progress where it reported
    // some: since its latest rung value (so without the start-up) once it went past it.
    std::optional<double> own_pace;
    if (metrics && metrics->resource_completed && st.started_unix_seconds &&
        *metrics->resource_completed > seg.from) {
      progress = std::max(progress, *metrics->resource_completed);
      double elapsed = now_ - *st.started_unix_seconds;
      double done = *metrics->resource_completed - seg.from;
      if (seg.measured.empty() || options_.deadlines_only_shrink) {
        // From the segment's start: start-up included, and no shorter for a rung value seen late
        // (through a scrape interval), which is all a deadline that cannot grow back may go by.
        own_pace = elapsed / done;
      } else if (const CostPoint& rung = seg.measured.back();
                 done > rung.units && elapsed > rung.seconds) {
        own_pace = (elapsed - rung.seconds) / (done - rung.units);
      } else {
        own_pace = MarginalPace(t);
      }
    }
    double target = ReservedUntil(progress, seg.until);
    // Without progress of its own, what is left is a whole segment's work, start-up included.
    std::optional<double> work = own_pace ? std::optional(*own_pace * (target - progress))
                                          : SegmentSeconds(t.index, target - progress);
    if (!work) return;
    double pace = own_pace ? *own_pace : *work / std::max(1.0, target - progress);
    // The supervisor sends SIGTERM at deadline - grace, so the deadline must stay ahead of the
    // work left plus the grace period plus a lookahead. Hysteresis: extend with that much headroom
    // again and shrink only by a clear margin, so a deadline moves about once per unit rather
    // than on every pass. The lookahead is a unit's work at its pace (within 1 to 4 times the
    // slack): at that pace the deadline stays ahead until the next unit reports, yet holds back
    // little of the budget.
    double lookahead = std::min(4 * options_.deadline_slack_seconds,
                                std::max(options_.deadline_slack_seconds, pace));
    // Without progress since it started, a segment has nothing new to go by: its deadline holds
    // the launch's estimate until SIGTERM comes within the lookahead.
    double deadline = st.deadline_unix_seconds;
    if (!own_pace && deadline - spec_.grace_seconds - now_ > lookahead) return;
    double needed =
        now_ + std::max(0.0, *work) * options_.reservation_margin + spec_.grace_seconds + lookahead;
    if (needed > deadline) {
      if (options_.deadlines_only_shrink) return;  // it runs to its deadline, as admitted
      needed += lookahead;
      if (std::optional<Denial> d = ledger_.Admit(devices_ * (needed - deadline))) {
        plan_.denials.push_back(*d);
        return;
      }
    } else if (own_pace && needed < deadline - 2 * lookahead) {
      needed += lookahead;  // headroom both ways, or the next pass extends what this one shrank
      ledger_.Release(devices_ * (deadline - needed));
    } else {
      return;
    }
    Event e = Event::Of(Type::kDeadlineMoved, now_, t.index, seg.number);
    e.deadline = needed;
    plan_.events.push_back(e);
    plan_.actions.push_back(
        Action{Action::Kind::kSetDeadline, t.index, seg.number, seg.until, needed, ""});
  }

  // The probe phase: one probe at a time (probes measure the machine, so they must not share it),
  // each admitted within what spec.throughput.maxBudgetFraction leaves; then the decision.
  void ReconcileProbes() {
    const std::vector<ProbeRun>& probes = model_.probes();
    if (!probes.empty() && !probes.back().ended) {
      ReconcileProbe(probes.back());
      return;
    }
    const std::vector<Config> candidates = ProbeCandidates(spec_.throughput);
    std::optional<Config> next;
    int probed = 0;
    for (const Config& c : candidates) {
      // A probe stopped from outside before it measured is probed again.
      bool done = std::any_of(probes.begin(), probes.end(), [&](const ProbeRun& p) {
        return p.settings == c && p.reason != "Interrupted";
      });
      if (done) ++probed;
      if (!done && !next) next = c;
    }
    double spent = 0;
    double longest = 0;
    for (const ProbeRun& p : probes) {
      spent += p.charged_device_seconds;
      longest = std::max(longest, p.charged_device_seconds);
    }
    const double allowed = spec_.throughput.max_budget_fraction * ledger_.budget();
    std::string note;
    if (next) {
      // The deadline is all the probe budget left: a probe is stopped as soon as it measured.
      double requested = std::min(allowed - spent, ledger_.remaining());
      double needed = std::max(devices_ * options_.min_reservation_seconds,
                               options_.reservation_margin * longest);
      // Admission reserves the probe's share; it holds, as requested is within what is left.
      if (requested >= needed && !ledger_.Admit(requested)) {
        int index = static_cast<int>(probes.size());
        Event e = Event::Of(Type::kProbeLaunched, now_, index);
        e.params = *next;
        e.deadline = now_ + requested / devices_;
        plan_.events.push_back(e);
        plan_.actions.push_back(ProbeAction(Action::Kind::kStart, index, e.deadline));
        return;
      }
      note =
          "probed " + std::to_string(probed) + " of " + std::to_string(candidates.size()) +
          Format(" candidates: %.4f GPU-hours left for probing, the next needs %.4f",
                 std::max(0.0, requested) / 3600, needed / 3600) +
          Format(" (spec.throughput.maxBudgetFraction %g)", spec_.throughput.max_budget_fraction);
    }
    ThroughputDecision d = DecideThroughput(spec_, probes, note);
    Event e = Event::Of(Type::kThroughputDecided, now_, d.chosen);
    e.reason = d.reason;
    e.message = d.message;
    e.params = d.trial_args;
    plan_.events.push_back(e);
    if (StopsBelowTarget(spec_, d)) {
      Finish(SweepPhase::kFailed, "ThroughputBelowTarget",
             d.message + " (spec.throughput.onBelowTarget is stop)");
    }
    decided_ = std::move(d);
  }

  Action ProbeAction(Action::Kind kind, int index, double deadline) const {
    Action a{kind, index, 0, model_.rungs().max(), deadline, ""};
    a.probe = true;
    return a;
  }

  void ReconcileProbe(const ProbeRun& p) {
    const SegmentStatus* st = observed_.Segment(p.name, 0);
    if (st == nullptr) {
      // Journaled but never started (a crash between the two): Start is idempotent.
      plan_.actions.push_back(ProbeAction(Action::Kind::kStart, p.index, p.deadline));
      return;
    }
    if (st->state == SegmentState::kSucceeded || st->state == SegmentState::kFailed) {
      EndProbe(p, *st);
      return;
    }
    auto m = observed_.metrics.find(p.name);
    if (!p.figures) {
      if (m == observed_.metrics.end() || !m->second.probe_measured_steps ||
          *m->second.probe_measured_steps <= 0 || !m->second.samples_per_second ||
          !m->second.data_wait_ratio) {
        return;  // still measuring
      }
      Event e = Event::Of(Type::kProbeMeasured, now_, p.index);
      e.figures = {*m->second.samples_per_second, *m->second.data_wait_ratio,
                   m->second.accelerator_utilization_ratio};
      plan_.events.push_back(e);
    }
    // Measured: its figures are journaled, so it may stop (again, if a crash lost the stop).
    plan_.actions.push_back(ProbeAction(Action::Kind::kStop, p.index, 0));
  }

  void EndProbe(const ProbeRun& p, const SegmentStatus& st) {
    Event e = Event::Of(Type::kProbeEnded, now_, p.index);
    double finish = st.finished_unix_seconds.value_or(now_);
    e.seconds = ChargedDevices(st.devices) *
                std::max(0.0, finish - st.started_unix_seconds.value_or(finish));
    if (p.figures) {
      e.reason = "";
    } else if (st.reason == "Stopped" || st.reason == "Evicted") {
      e.reason = "Interrupted";
      e.message = "stopped from outside the sweep before it measured; it is probed again";
    } else if (st.reason == "DeadlineExceeded") {
      e.reason = "DeadlineExceeded";
      e.message = "reached its deadline (what spec.throughput.maxBudgetFraction left) first";
    } else if (st.state == SegmentState::kSucceeded) {
      e.reason = "MetricsMissing";
      e.message = "exited without reporting its probe figures";
    } else {
      e.reason = "Error";
      e.message = st.exit_code ? "exited with code " + std::to_string(*st.exit_code)
                               : "ended without an exit code";
      e.output = st.output_tail;
    }
    plan_.events.push_back(e);
  }

  int Free() const { return std::max(0, spec_.parallelism - occupied_); }

  void FillSlots() {
    if (Pausing() && Free() > 0) {
      reserve_ = FinishReserve();
      for (const AshaScheduler::Promotion& p :
           model_.scheduler().Candidates(static_cast<size_t>(Free()))) {
        const Trial& t = model_.trial(p.trial);
        if (t.phase != TrialPhase::kPaused) continue;
        double from = model_.rungs().at(p.rung);
        double until = model_.rungs().at(p.rung + 1);
        if (!KeepsReserve(t.index, from, until) || !Promote(t, p.rung, until, "")) break;
      }
    }
    int64_t next = model_.trial_count();
    while (Free() > 0 && plan_.denials.empty() && CanCreate(next) &&
           KeepsReserve(next, 0, FirstUntil())) {
      Event created = Event::Of(Type::kTrialCreated, now_, next);
      created.params = NewTrialConfig(model_, next);
      plan_.events.push_back(created);
      if (!Launch(next, 0, 0, FirstUntil(), Free())) {
        plan_.events.pop_back();
        break;
      }
      ++occupied_;
      ++next;
    }
  }

  // Resumes paused trial `t` from `rung` toward `until`. Returns false when the budget says no.
  bool Promote(const Trial& t, int rung, double until, const std::string& message) {
    Event e = Event::Of(Type::kTrialPromoted, now_, t.index);
    e.rung = rung;
    e.message = message;
    plan_.events.push_back(e);
    if (!Launch(t.index, t.segments.back().number + 1, model_.rungs().at(rung), until, Free())) {
      plan_.events.pop_back();
      return false;
    }
    ++occupied_;
    return true;
  }

  // Pause mode under a budget would otherwise spend it all on trials that stop at a rung and end
  // with none at the full resource. So until a trial runs there, the sweep keeps what taking its
  // leader (AshaScheduler::Leader) there costs. None without a leader, without a measurement to
  // price it, or when the budget left cannot cover it anyway.
  struct Reserve {
    int64_t trial;
    int rung;
    double device_seconds;
  };
  std::optional<Reserve> FinishReserve() const {
    if (model_.count(TrialPhase::kCompleted) > 0) return std::nullopt;
    for (int64_t index : model_.active()) {
      const std::vector<SegmentRecord>& segments = model_.trial(index).segments;
      if (!segments.empty() && segments.back().until >= model_.rungs().max()) return std::nullopt;
    }
    std::optional<AshaScheduler::Promotion> leader = model_.scheduler().Leader();
    if (!leader) return std::nullopt;
    std::optional<double> cost = CostOf(
        SegmentSeconds(leader->trial, model_.rungs().max() - model_.rungs().at(leader->rung)));
    if (!cost || *cost > ledger_.remaining()) return std::nullopt;
    return Reserve{leader->trial, leader->rung, *cost};
  }

  // Whether trial `index` may launch from `from` toward `until`: it is the leader, or what it asks
  // for leaves the reserve. When it would not, the leader is promoted to the full resource instead
  // (outside the 1/η quota: no decision is left for it to wait for), once it is paused; true then
  // if a slot is still free for `index`.
  bool KeepsReserve(int64_t index, double from, double until) {
    if (!reserve_ || reserve_->trial == index) return true;
    double requested = Requested(index, from, until, Free());
    if (ledger_.remaining() - requested >= reserve_->device_seconds) return true;
    const Trial& leader = model_.trial(reserve_->trial);
    if (leader.phase != TrialPhase::kPaused) return false;  // still ending its segment: wait
    std::string message = "to " + spec_.resource_unit +
                          Format(" %g while the budget covers it: %.4f GPU-hours left,",
                                 model_.rungs().max(), ledger_.remaining() / 3600) +
                          Format(" of which it needs %.4f and the next other launch %.4f",
                                 reserve_->device_seconds / 3600, requested / 3600);
    return Promote(leader, reserve_->rung, model_.rungs().max(), message) && Free() > 0;
  }

  bool CanCreate(int64_t next) const {
    if (spec_.max_trials && next >= *spec_.max_trials) return false;
    std::optional<int64_t> size = model_.search_space().FiniteSize();
    return !size || next < *size;
  }

  void MaybeFinish() {
    if (occupied_ > 0) return;
    if (!plan_.denials.empty()) {
      Finish(SweepPhase::kBudgetExhausted, "BudgetExhausted", plan_.denials.front().Message());
      return;
    }
    bool more_trials = CanCreate(model_.trial_count());
    bool more_promotions = Pausing() && !model_.scheduler().Candidates(1).empty();
    if (!more_trials && !more_promotions) {
      Finish(SweepPhase::kCompleted, "SweepCompleted",
             std::to_string(model_.trial_count()) + " trials finished");
    }
  }

  void Finish(SweepPhase phase, const std::string& reason, const std::string& message) {
    Event e = Event::Of(Type::kSweepFinished, now_);
    e.phase = phase;
    e.reason = reason;
    e.message = message;
    plan_.events.push_back(e);
    finishing_ = phase;
    finishing_message_ = message;
  }

  // Ends every active trial of a finished sweep, so that none is left Running: a live segment is
  // stopped, an ended one recorded (its charge too), and a trial with nothing running (not
  // launched yet, or waiting for a retry or a resume) is stopped at once.
  void StopEverything() {
    for (int64_t index : model_.active()) {
      const Trial& t = model_.trial(index);
      if (t.segments.empty() || t.segments.back().ended) {
        if (!t.stop_requested) RecordStop(t, "SweepFinished", "the sweep finished");
        continue;
      }
      const SegmentRecord& seg = t.segments.back();
      const SegmentStatus* st = observed_.Segment(t.name, seg.number);
      // Journaled but not seen by the backend (a crash between the two, or a pod the informer
      // has not shown yet): nothing to stop or charge until it shows.
      if (st == nullptr) continue;
      if (st->state == SegmentState::kSucceeded || st->state == SegmentState::kFailed) {
        EndedSegment(t, seg, *st);
        if (Relaunches(t, plan_.events.back().reason)) {
          RecordStop(t, "SweepFinished", "the sweep finished");
        }
        continue;
      }
      if (t.stop_requested) {
        plan_.actions.push_back(
            Action{Action::Kind::kStop, t.index, t.segments.back().number, 0, 0, t.reason});
      } else {
        StopTrial(t, "SweepFinished", "the sweep finished");
      }
    }
  }

  // TrialsScheduled: False while a trial (or probe) cannot start for a reason the backend names,
  // such as a pod the scheduler cannot place or an image that cannot be pulled, with the
  // backend's own message: a held-up sweep says why instead of waiting silently.
  void AddScheduledCondition() {
    const SegmentStatus* first = nullptr;
    int held = 0;
    for (const auto& [key, st] : observed_.segments) {
      if (st.state != SegmentState::kPending || st.waiting_reason.empty()) continue;
      if (first == nullptr) first = &st;
      ++held;
    }
    if (first == nullptr) {
      plan_.conditions.push_back(
          {"TrialsScheduled", "True", "Scheduled", "no trial is held up before it starts"});
      return;
    }
    std::string message = first->trial + ": " + first->waiting_message;
    if (held > 1) message += " (and " + std::to_string(held - 1) + " more held up)";
    plan_.conditions.push_back({"TrialsScheduled", "False", first->waiting_reason, message});
  }

  void AddConditions() {
    std::optional<SweepPhase> phase = finishing_;
    if (!phase && model_.finished()) phase = model_.phase();
    if (phase) {
      plan_.conditions.push_back({"Progressing", "False", SweepPhaseName(*phase),
                                  finishing_ ? finishing_message_ : model_.finish_message()});
    } else if (model_.probing() && !decided_) {
      plan_.conditions.push_back(
          {"Progressing", "True", "Probing",
           "probing throughput: " + std::to_string(model_.probes().size()) + " probe runs so far"});
    } else {
      plan_.conditions.push_back(
          {"Progressing", "True", "TrialsRunning", std::to_string(occupied_) + " trials running"});
    }
    if (spec_.throughput.enabled) AddThroughputCondition();
    AddScheduledCondition();
    if (!plan_.denials.empty()) {
      plan_.conditions.push_back(
          {"BudgetAvailable", "False", "BudgetExhausted", plan_.denials.front().Message()});
    } else {
      plan_.conditions.push_back(
          {"BudgetAvailable", "True", "WithinBudget",
           Format("%.4f of %.4f GPU-hours used", ledger_.used() / 3600, ledger_.budget() / 3600)});
    }
    if (plan_.unknown.empty()) {
      plan_.conditions.push_back(
          {"MetricsAvailable", "True", "MetricsReported", "every running trial reports metrics"});
    } else {
      std::string names;
      for (const std::string& n : plan_.unknown) names += (names.empty() ? "" : ", ") + n;
      plan_.conditions.push_back(
          {"MetricsAvailable", "False", "MetricsMissing", "waiting for the objective of " + names});
    }
  }

  // ThroughputBelowTarget: Unknown while probing, then whether the decision met the gate.
  void AddThroughputCondition() {
    const std::optional<ThroughputDecision>& d = decided_ ? decided_ : model_.throughput_decision();
    if (!d) {
      plan_.conditions.push_back(
          {"ThroughputBelowTarget", "Unknown", "Probing", "the probe phase has not decided yet"});
    } else {
      plan_.conditions.push_back(
          {"ThroughputBelowTarget", d->target_met ? "False" : "True", d->reason, d->message});
    }
  }

  const SweepModel& model_;
  const SweepSpec& spec_;
  const Observed& observed_;
  Ledger ledger_;
  double now_;
  PlannerOptions options_;
  int devices_;
  Plan plan_;
  int occupied_ = 0;
  std::optional<SweepPhase> finishing_;
  std::string finishing_message_;
  std::optional<ThroughputDecision> decided_;  // decided in this pass
  std::optional<Reserve> reserve_;             // pause mode's finish reserve in this pass
};

}  // namespace

const SegmentStatus* Observed::Segment(const std::string& trial, int segment) const {
  auto it = segments.find({trial, segment});
  return it == segments.end() ? nullptr : &it->second;
}

std::vector<Event> NewRungValues(const SweepModel& model, const Observed& observed, double now) {
  std::vector<Event> events;
  for (int64_t index : model.active()) {
    const Trial& t = model.trial(index);
    auto m = observed.metrics.find(t.name);
    if (m == observed.metrics.end() || t.segments.empty()) continue;
    const SegmentRecord& seg = t.segments.back();
    const SegmentStatus* st = observed.Segment(t.name, seg.number);
    for (const auto& [resource, value] : m->second.objective_by_resource) {
      if (model.rungs().IndexOf(resource) < 0 || t.rung_values.contains(resource)) continue;
      Event e = Event::Of(Type::kValueRecorded, now, index);
      e.resource = resource;
      e.value = value;
      if (st && st->started_unix_seconds && resource > seg.from) {
        e.seconds = now - *st->started_unix_seconds;
        e.units = resource - seg.from;
      }
      events.push_back(e);
    }
  }
  return events;
}

Plan ComputePlan(const SweepModel& model, const Observed& observed, const Ledger& ledger,
                 double now, const PlannerOptions& options) {
  return Planner(model, observed, ledger, now, options).Run();
}

}  // namespace bsw
