#include "operator/core/admission.h"

#include <algorithm>
#include <set>

#include "operator/core/population.h"
#include "operator/core/pricing.h"
#include "operator/core/tpe.h"
#include "operator/core/trial_decisions.h"

namespace bsw::decisions {
namespace {

// FillSlots' steps, which share the pass's account, its free slots and the finish reserve.
class SlotFiller {
 public:
  SlotFiller(const PlanInput& in, const Ledger& ledger, int occupied, bool denied)
      : in_(in),
        pricing_(in.model, in.options),
        out_{Part{}, ledger},
        occupied_(occupied),
        denied_(denied) {}

  Admitted Fill() && {
    const SweepModel& model = in_.model;
    if (Population(in_.spec().algorithm)) {
      CreateTrials();
      GoOnWithPopulation();
      return std::move(out_);
    }
    if (Pausing(in_.spec()) && Free() > 0) {
      reserve_ = FinishReserveOf(in_, out_.ledger);
      for (const Brackets::Promotion& p :
           model.scheduler().Candidates(static_cast<size_t>(Free()))) {
        const Trial& t = model.trial(p.trial);
        if (t.phase != TrialPhase::kPaused) continue;
        double from = model.rungs().at(p.rung);
        double until = model.rungs().at(p.rung + 1);
        if (!KeepsReserve(t.index, from, until) || !Promote(t, p.rung, until, "")) break;
      }
    }
    CreateTrials();
    if (Pausing(in_.spec())) FinishBeforeTheEnd();
    return std::move(out_);
  }

 private:
  int Free() const { return std::max(0, in_.spec().parallelism - occupied_); }
  bool Denied() const { return denied_ || !out_.part.denials.empty(); }

  // Takes `launch` into the pass after `decided` (the decision it carries out), or only its
  // denial. Returns whether it launched.
  bool Take(Admitted launch, const Event& decided) {
    if (launch.part.events.empty()) {
      out_.part.Add(std::move(launch.part));
      return false;
    }
    out_.part.events.push_back(decided);
    occupied_ += launch.part.occupied;
    out_.part.Add(std::move(launch.part));
    out_.ledger = launch.ledger;
    if (reserve_ && EventTrial(decided) == reserve_->trial)
      reserve_.reset();  // the leader moves on
    return true;
  }

  void CreateTrials() {
    int64_t next = in_.model.trial_count();
    while (Free() > 0 && !Denied() && CanCreate(in_.model, next) &&
           KeepsReserve(next, 0, FirstUntil(in_.model, next)) && Create(next)) {
      ++next;
    }
  }

  // The trials that pbt and pb2 carry to the full resource, and what getting them there still
  // asks of the budget beyond what is reserved already.
  struct Carried {
    std::set<int64_t> trials;
    double outstanding = 0;
  };

  // Every trial of `order` (CarryOrder) while the budget left can carry them all to the full
  // resource; once it cannot, the longest prefix of `order` that it can, and at least its first.
  Carried CarriedTrials(const std::vector<const Trial*>& order) const {
    const SweepModel& model = in_.model;
    const Rungs& rungs = model.rungs();
    double remaining = out_.ledger.remaining();
    Carried carried;
    for (const Trial* t : order) {
      // A running segment is reserved already: its trial needs the segments after it.
      double from = t->phase == TrialPhase::kPaused || t->segments.empty()
                        ? t->progress()
                        : std::max(t->progress(), t->segments.back().until);
      double cost = 0;
      for (double r = from; r < rungs.max(); r = rungs.NextAfter(r)) {
        cost += pricing_.Requested(t->index, r, rungs.NextAfter(r), 1, remaining);
      }
      if (!carried.trials.empty() && carried.outstanding + cost > remaining) break;
      carried.trials.insert(t->index);
      carried.outstanding += cost;
    }
    return carried;
  }

  // pbt and pb2, once the population exists: the carried trials go on first, lowest rung first so
  // that they move together, each as NextStep decides; the others, best first, go on only where
  // what their segment asks for leaves what the carried ones still need.
  void GoOnWithPopulation() {
    const SweepModel& model = in_.model;
    std::vector<const Trial*> paused = CarryOrder(model);
    Carried carried = CarriedTrials(paused);
    std::erase_if(paused, [](const Trial* t) { return t->phase != TrialPhase::kPaused; });
    std::stable_sort(paused.begin(), paused.end(), [&](const Trial* a, const Trial* b) {
      bool a_carried = carried.trials.contains(a->index);
      if (a_carried != carried.trials.contains(b->index)) return a_carried;
      return a->progress() < b->progress();
    });
    for (const Trial* t : paused) {
      if (Free() == 0 || Denied()) return;
      double from = t->progress();
      double until = model.rungs().NextAfter(from);
      int segment = t->segments.back().number + 1;
      // An exploit brings the donor's parameters, and with them its cost.
      std::optional<int64_t> priced_by = ExploitDonor(model, *t);
      double remaining = out_.ledger.remaining();
      bool is_carried = carried.trials.contains(t->index);
      double requested =
          pricing_.Requested(priced_by.value_or(t->index), from, until, Free(), remaining);
      if (!is_carried && remaining - requested < carried.outstanding) continue;
      // Decided only for a trial that goes on: PB2's explore fits a Gaussian process.
      Event step = NextStep(model, *t, in_.now);
      Admitted launch = Launch(in_, out_.ledger, t->index, segment, from, until, Free(), priced_by);
      if (Take(std::move(launch), step) && is_carried) {
        carried.outstanding -= remaining - out_.ledger.remaining();
      }
    }
  }

  bool Create(int64_t next) {
    event::TrialCreated created{.at = in_.now, .trial = next};
    created.params = NewTrialConfig(in_.model, next);
    double until = FirstUntil(in_.model, next);
    return Take(Launch(in_, out_.ledger, next, 0, 0, until, Free()), created);
  }

  // Resumes paused trial `t` from `rung` toward `until`. Returns false when the budget says no.
  bool Promote(const Trial& t, int rung, double until, const std::string& message) {
    event::TrialPromoted e{.at = in_.now, .trial = t.index};
    e.rung = rung;
    e.message = message;
    double from = in_.model.rungs().at(rung);
    int segment = t.segments.back().number + 1;
    return Take(Launch(in_, out_.ledger, t.index, segment, from, until, Free()), e);
  }

  // Whether trial `index` may launch from `from` toward `until`: it is the leader, or what it
  // asks for leaves the reserve. When it would not, the leader is promoted to the full resource
  // instead (outside the 1/η quota: no decision is left for it to wait for), once it is paused;
  // true then if a slot is still free for `index`.
  bool KeepsReserve(int64_t index, double from, double until) {
    if (!reserve_ || reserve_->trial == index) return true;
    double remaining = out_.ledger.remaining();
    double requested = pricing_.Requested(index, from, until, Free(), remaining);
    if (remaining - requested >= reserve_->device_seconds) return true;
    const Trial& leader = in_.model.trial(reserve_->trial);
    if (leader.phase != TrialPhase::kPaused) return false;  // still ending its segment: wait
    std::string why =
        Figures(" while the budget covers it: %.4f GPU-hours left,", remaining / 3600) +
        Figures(" of which it needs %.4f and the next other launch %.4f",
                reserve_->device_seconds / 3600, requested / 3600);
    return PromoteLeader(why) && Free() > 0;
  }

  // Nothing runs, and nothing is left to create or promote (or the budget refused what was): the
  // sweep would end with no trial at the full resource, so the leader is taken there.
  void FinishBeforeTheEnd() {
    if (!reserve_ || occupied_ > 0) return;
    if (!Denied() && CanCreate(in_.model, in_.model.trial_count())) return;
    if (in_.model.trial(reserve_->trial).phase != TrialPhase::kPaused) return;
    double remaining = out_.ledger.remaining();
    PromoteLeader(Figures(" before the sweep ends, which no trial reached: %.4f GPU-hours left,",
                          remaining / 3600) +
                  Figures(" of which it needs %.4f", reserve_->device_seconds / 3600));
  }

  // Promotes the leader (reserve_) to the full resource, `why` saying what brought that on.
  bool PromoteLeader(const std::string& why) {
    const Trial& leader = in_.model.trial(reserve_->trial);
    double max = in_.model.rungs().max();
    return Promote(leader, reserve_->rung, max,
                   "to " + in_.spec().resource_unit + Figures(" %g", max) + why);
  }

  const PlanInput& in_;
  const Pricing pricing_;
  Admitted out_;
  int occupied_;
  bool denied_;
  std::optional<FinishReserve> reserve_;
};

// pbt and pb2: a trial is paused, or has just ended a segment short of the full resource (the
// model shows it paused once this pass is journaled).
bool PopulationGoesOn(const SweepModel& model) {
  if (model.count(TrialPhase::kPaused) > 0) return true;
  return std::any_of(model.active().begin(), model.active().end(), [&](int64_t index) {
    return model.trial(index).progress() < model.rungs().max();
  });
}

}  // namespace

Admitted Launch(const PlanInput& in, const Ledger& ledger, int64_t index, int segment, double from,
                double until, int free_slots, std::optional<int64_t> priced_by) {
  const Pricing pricing(in.model, in.options);
  Admitted out{Part{}, ledger};
  double requested =
      pricing.Requested(priced_by.value_or(index), from, until, free_slots, ledger.remaining());
  if (std::optional<Denial> denial = out.ledger.Admit(requested)) {
    out.part.denials.push_back(*denial);
    return out;
  }
  double deadline = in.now + requested / pricing.devices();
  event::SegmentLaunched launch{.at = in.now, .trial = index, .segment = segment};
  launch.from = from;
  launch.until = until;
  launch.deadline = deadline;
  out.part.events.push_back(launch);
  out.part.actions.push_back(StartSegment{index, segment, until, deadline});
  out.part.occupied = 1;
  return out;
}

namespace {

// The leader (Brackets::Leader) and what taking it to the full resource costs: nullopt when no
// measurement prices it.
struct LeaderFinish {
  Brackets::Promotion leader;
  std::optional<double> device_seconds;
};
std::optional<LeaderFinish> LeaderToMax(const PlanInput& in) {
  const SweepModel& model = in.model;
  std::optional<Brackets::Promotion> leader = model.scheduler().Leader();
  if (!leader) return std::nullopt;
  const Pricing pricing(model, in.options);
  return LeaderFinish{*leader,
                      pricing.CostOf(pricing.SegmentSeconds(
                          leader->trial, model.rungs().max() - model.rungs().at(leader->rung)))};
}

}  // namespace

std::optional<FinishReserve> FinishReserveOf(const PlanInput& in, const Ledger& ledger) {
  const SweepModel& model = in.model;
  if (model.count(TrialPhase::kCompleted) > 0) return std::nullopt;
  for (int64_t index : model.active()) {
    const std::vector<SegmentRecord>& segments = model.trial(index).segments;
    if (!segments.empty() && segments.back().until >= model.rungs().max()) return std::nullopt;
  }
  std::optional<LeaderFinish> finish = LeaderToMax(in);
  if (!finish || !finish->device_seconds || *finish->device_seconds > ledger.remaining()) {
    return std::nullopt;
  }
  return FinishReserve{finish->leader.trial, finish->leader.rung, *finish->device_seconds};
}

std::optional<std::string> NoneAtMax(const PlanInput& in, const Ledger& ledger) {
  const SweepModel& model = in.model;
  if (model.count(TrialPhase::kCompleted) > 0) return std::nullopt;
  const std::string none =
      "no trial reached " + in.spec().resource_unit + Figures(" %g", model.rungs().max());
  std::optional<LeaderFinish> finish =
      Population(in.spec().algorithm) ? std::nullopt : LeaderToMax(in);
  if (!finish) return none + ": every trial stopped or failed before it";
  if (!finish->device_seconds || *finish->device_seconds <= ledger.remaining()) return none;
  return none + ": taking the best, " + model.TrialName(finish->leader.trial) + " at " +
         in.spec().resource_unit +
         Figures(" %g, there needs %.4f GPU-hours", model.rungs().at(finish->leader.rung),
                 *finish->device_seconds / 3600) +
         Figures(" and %.4f are left", ledger.remaining() / 3600);
}

bool CanCreate(const SweepModel& model, int64_t next) {
  if (model.spec().max_trials && next >= *model.spec().max_trials) return false;
  std::optional<int64_t> size = model.search_space().FiniteSize();
  return !size || next < *size;
}

Admitted FillSlots(const PlanInput& in, const Ledger& ledger, int occupied, bool denied) {
  return SlotFiller(in, ledger, occupied, denied).Fill();
}

event::SweepFinished Finish::ToEvent(double now) const {
  event::SweepFinished e{.at = now};
  e.phase = phase;
  e.reason = ReasonName(reason);
  e.message = message;
  return e;
}

std::optional<Finish> FinishOf(const SweepModel& model, int occupied,
                               const std::vector<Denial>& denials) {
  if (occupied > 0) return std::nullopt;
  auto final_denial =
      std::find_if(denials.begin(), denials.end(), [](const Denial& d) { return !d.waits; });
  if (final_denial != denials.end()) {
    return Finish{SweepPhase::kBudgetExhausted, Reason::kBudgetExhausted, final_denial->Message()};
  }
  if (!denials.empty()) return std::nullopt;  // waits for the pool's other sweeps
  bool more_trials = CanCreate(model, model.trial_count());
  bool more_promotions = Population(model.spec().algorithm)
                             ? PopulationGoesOn(model)
                             : Pausing(model.spec()) && !model.scheduler().Candidates(1).empty();
  if (more_trials || more_promotions) return std::nullopt;
  return Finish{SweepPhase::kCompleted, Reason::kSweepCompleted,
                std::to_string(model.trial_count()) + " trials finished"};
}

std::optional<Finish> Completion(const PlanInput& after, const Ledger& ledger, Finish completed) {
  const SweepModel& model = after.model;
  if (Pausing(model.spec()) && !Population(model.spec().algorithm)) {
    std::optional<FinishReserve> reserve = FinishReserveOf(after, ledger);
    if (reserve && model.trial(reserve->trial).phase == TrialPhase::kPaused) return std::nullopt;
  }
  int64_t failed = model.count(TrialPhase::kFailed);
  if (failed > 0 && failed == model.trial_count()) {
    return Finish{SweepPhase::kFailed, Reason::kAllTrialsFailed,
                  "all " + std::to_string(failed) + " trials failed"};
  }
  if (std::optional<std::string> why = NoneAtMax(after, ledger)) {
    completed.message += "; " + *why;
  }
  return completed;
}

std::optional<Finish> TooManyFailures(const SweepModel& model) {
  int64_t failed = model.count(TrialPhase::kFailed);
  int limit = model.spec().max_failed_trials;
  if (failed < limit) return std::nullopt;
  return Finish{SweepPhase::kFailed, Reason::kTooManyFailedTrials,
                std::to_string(failed) + " trials failed (spec.maxFailedTrials is " +
                    std::to_string(limit) + ")"};
}

}  // namespace bsw::decisions
