#include "operator/core/pricing.h"

#include <algorithm>
#include <span>

#include "operator/core/decision_part.h"

namespace bsw::decisions {
namespace {

// The segments whose measurements price trial `t`'s work: all of its own; after an exploit,
// those since (the donor's parameters came with it, and with them its cost: a width, a batch
// size), and until one of those has a measurement, its donor's, likewise.
std::span<const SegmentRecord> CostSegments(const SweepModel& model, const Trial& t) {
  const Trial* priced = &t;
  // A donor reached a rung after its own exploit, so the chain ends; the bound is a guard.
  for (int64_t hop = 0; hop < model.trial_count() && !priced->lineage.empty(); ++hop) {
    const Exploit& latest = priced->lineage.back();
    std::span<const SegmentRecord> since(priced->segments);
    since = since.subspan(std::min(latest.segments_before, since.size()));
    if (std::any_of(since.begin(), since.end(),
                    [](const SegmentRecord& s) { return !s.measured.empty(); })) {
      return since;
    }
    priced = &model.trial(latest.donor);
  }
  return priced->segments;
}

// The start-up and pace that `segments` measured, where two rung values of one of them give
// them.
std::optional<LinearCost> OwnCost(std::span<const SegmentRecord> segments) {
  std::vector<std::vector<CostPoint>> by_segment;
  for (const SegmentRecord& seg : segments) by_segment.push_back(seg.measured);
  return FitLinearCost(by_segment);
}

// The latest measurement of `segments`, if any.
const CostPoint* Latest(std::span<const SegmentRecord> segments) {
  for (auto seg = segments.rbegin(); seg != segments.rend(); ++seg) {
    if (!seg->measured.empty()) return &seg->measured.back();
  }
  return nullptr;
}

}  // namespace

bool Pausing(const SweepSpec& spec) {
  return (EarlyStopping(spec.algorithm) && spec.mode == AshaMode::kPause) ||
         Population(spec.algorithm);
}

double FirstUntil(const SweepModel& model, int64_t index) {
  if (!Pausing(model.spec())) return model.rungs().max();
  return model.rungs().at(model.scheduler().BracketOf(index));
}

Pricing::Pricing(const SweepModel& model, const PlannerOptions& options)
    : model_(model), options_(options), devices_(ChargedDevices(model.spec().trial_gpus)) {}

std::optional<double> Pricing::CostOf(std::optional<double> seconds) const {
  if (!seconds) return std::nullopt;
  double reserved = *seconds * options_.reservation_margin + model_.spec().grace_seconds;
  return devices_ * std::max(reserved, options_.min_reservation_seconds);
}

std::optional<double> Pricing::MarginalPace(const Trial& t) const {
  std::span<const SegmentRecord> segments = CostSegments(model_, t);
  if (std::optional<LinearCost> own = OwnCost(segments)) return own->per_unit;
  return BorrowedPace(Latest(segments));
}

// The running pace of a trial without OwnCost, whose latest measurement is `latest` (if any): the
// sweep's steepest recent one, but no more than its own with the start-up included; else the
// slowest recent pace of the sweep, start-up included.
std::optional<double> Pricing::BorrowedPace(const CostPoint* latest) const {
  std::optional<double> sweep = model_.cost_model().MarginalSecondsPerUnit();
  if (latest == nullptr) return sweep ? sweep : model_.cost_model().SecondsPerUnit();
  double inclusive = latest->seconds / latest->units;
  return sweep ? std::min(*sweep, inclusive) : inclusive;
}

std::optional<double> Pricing::SegmentSeconds(int64_t index, double units) const {
  if (index < model_.trial_count()) {
    std::span<const SegmentRecord> segments = CostSegments(model_, model_.trial(index));
    if (std::optional<LinearCost> own = OwnCost(segments)) return own->Of(units);
    if (const CostPoint* latest = Latest(segments)) {
      return latest->seconds + *BorrowedPace(latest) * (units - latest->units);
    }
  }
  std::optional<double> pace = model_.cost_model().SecondsPerUnit();
  if (!pace) return std::nullopt;
  return *pace * units;
}

double Pricing::ReservedUntil(double progress, double until) const {
  bool whole =
      options_.deadlines_only_shrink || (Pausing(model_.spec()) && until >= model_.rungs().max());
  return whole ? until : std::min(until, model_.rungs().NextAfter(progress));
}

double Pricing::Requested(int64_t index, double from, double until, int free_slots,
                          double remaining) const {
  std::optional<double> cost = CostOf(SegmentSeconds(index, ReservedUntil(from, until) - from));
  // Without any measurement, a new segment gets an equal share of what is still unreserved,
  // but no less than the grace period plus the minimum: the supervisor sends SIGTERM a grace
  // period before the deadline, so a smaller share would stop the trial as it starts, charge it
  // next to nothing, and leave the budget to a stream of trials that never measure anything.
  return cost.value_or(
      std::max(remaining / std::max(1, free_slots),
               devices_ * (model_.spec().grace_seconds + options_.min_reservation_seconds)));
}

}  // namespace bsw::decisions
