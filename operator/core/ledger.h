#ifndef BSW_CORE_LEDGER_H_
#define BSW_CORE_LEDGER_H_

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "operator/core/segment.h"

namespace bsw {

// Why admission said no, in the figures a user needs: what was asked and what was left.
struct Denial {
  std::string reason;  // CamelCase, e.g. BudgetExhausted
  double requested_device_seconds = 0;
  double remaining_device_seconds = 0;
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

  // Gives back part of a reservation (a deadline moved earlier).
  void Release(double device_seconds);

  double budget() const { return budget_; }
  double used() const { return used_; }
  double reserved() const { return reserved_; }
  double remaining() const;

 private:
  double budget_;
  double used_ = 0;
  double reserved_ = 0;
};

// Seconds one device needs per resource unit, from measured progress. Until a measurement exists
// the estimate is unknown, and the planner gives a new trial an equal share of what is unreserved.
class CostModel {
 public:
  // Records that a segment took `seconds` (from its start, so start-up is included) to go through
  // `units` resource units.
  void Measure(double seconds, double units);

  // The slowest of the recent measurements: a trial reserved this much rarely hits its deadline.
  std::optional<double> SecondsPerUnit() const;

 private:
  static constexpr size_t kWindow = 16;
  std::deque<double> recent_;
};

}  // namespace bsw

#endif  // BSW_CORE_LEDGER_H_
