#ifndef BSW_CORE_PRICING_H_
#define BSW_CORE_PRICING_H_

// What new work costs (pricing.cc).

#include <cstdint>
#include <optional>

#include "operator/core/api.h"
#include "operator/core/planner.h"
#include "operator/core/sweep_model.h"

namespace bsw::decisions {

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

}  // namespace bsw::decisions

#endif  // BSW_CORE_PRICING_H_
