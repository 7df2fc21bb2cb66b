#ifndef BSW_CORE_LEDGER_H_
#define BSW_CORE_LEDGER_H_

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "operator/core/reason.h"
#include "operator/core/segment.h"

namespace bsw {

// Why admission said no, in the figures a user needs: what was asked and what was left.
struct Denial {
  Reason reason = Reason::kBudgetExhausted;  // or a shared pool's limit (PoolLimit)
  double requested_device_seconds = 0;
  double remaining_device_seconds = 0;
  // A shared pool's fair share refused it: the sweep waits for the pool's other sweeps rather
  // than ending (PoolCap::waits).
  bool waits = false;
  // "requested 0.5000 GPU-hours, remaining 0.2000 GPU-hours".
  std::string Figures() const;
  // The figures, led by the limit when a pool's refused ("PoolFairShare: requested ..."). The
  // sweep's own budget is not named: what carries the message (an event, a condition) carries
  // its reason, BudgetExhausted.
  std::string Message() const;
};

// The budget account of one sweep, in device-seconds (GPU-hours × 3600).
//
// Charge = Σ over segments of devices × (finish or now − start), from the backend's own times; a
// pending segment costs nothing. A running or pending segment also holds a reservation: devices ×
// (deadline − max(now, start)). Every deadline was admitted, so charge ≤ used + reserved ≤ budget.
class Ledger {
 public:
  explicit Ledger(double budget_device_seconds) : budget_(budget_device_seconds) {}

  // Recomputes used and reserved from every segment the backend reports.
  void Observe(const std::vector<SegmentStatus>& segments, double now_unix_seconds);

  // Admission: used + reserved + requested ≤ budget. On success the request is added to reserved
  // (so several admissions in one pass cannot overcommit); otherwise returns the denial.
  std::optional<Denial> Admit(double requested_device_seconds);

  // Lowers the budget to `cap_device_seconds` when that is smaller, for this pass (a shared
  // pool's cap): a request beyond it is denied for `limit`, waiting if `waits`.
  void Limit(double cap_device_seconds, Reason limit, bool waits);

  // Counts a reservation admitted earlier that Observe did not see (a journaled launch the
  // backend does not list yet).
  void Hold(double device_seconds) { reserved_ += device_seconds; }

  // Gives back part of a reservation (a deadline moved earlier).
  void Release(double device_seconds);

  double budget() const { return budget_; }
  double used() const { return used_; }
  double reserved() const { return reserved_; }
  double remaining() const;

 private:
  double budget_;
  Reason limit_ = Reason::kBudgetExhausted;  // or the pool's, once Limit lowered the budget
  bool waits_ = false;
  double used_ = 0;
  double reserved_ = 0;
};

// One measurement of a segment: it took `seconds` from its start (so start-up included) to go
// through `units` resource units.
struct CostPoint {
  double units = 0;
  double seconds = 0;
};

// A segment's device-seconds as a fixed start-up plus a pace per resource unit.
struct LinearCost {
  double startup = 0;
  double per_unit = 0;
  double Of(double units) const { return startup + per_unit * units; }
};

// The line that covers every one of a trial's measurements, given segment by segment: the
// steepest slope between two measurements of one segment (never below 0; two of one segment
// share its start-up, two of different segments need not), and the start-up the costliest
// measurement of any segment needs at that slope. nullopt without two measurements of different
// lengths in one segment.
std::optional<LinearCost> FitLinearCost(const std::vector<std::vector<CostPoint>>& segments);

// Seconds one device needs per resource unit, from measured progress. Until a measurement exists
// the estimate is unknown, and the planner gives a new trial an equal share of what is unreserved.
class CostModel {
 public:
  // Records one measurement; `previous` is the one before it in the same segment, if any. Two
  // measurements of one segment of different lengths also give a pace without the start-up.
  void Measure(const CostPoint& point, const std::optional<CostPoint>& previous = std::nullopt);

  // The slowest of the recent measurements, start-up included: a trial reserved this much rarely
  // hits its deadline.
  std::optional<double> SecondsPerUnit() const;

  // The steepest of the recent paces between two measurements of one segment: what a unit costs
  // once the trainer is running. Unknown until some segment has two of different lengths.
  std::optional<double> MarginalSecondsPerUnit() const;

 private:
  static constexpr size_t kWindow = 16;
  std::deque<double> recent_;
  std::deque<double> marginal_;
};

}  // namespace bsw

#endif  // BSW_CORE_LEDGER_H_
