#ifndef BSW_REPORT_HISTORY_H_
#define BSW_REPORT_HISTORY_H_

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "base/status.h"
#include "nlohmann/json.hpp"
#include "operator/core/api.h"
#include "operator/core/ledger.h"
#include "operator/core/sweep_model.h"
#include "operator/report/report.h"

// A sweep's history as the report reads it from the events: its segments, what the ledger held
// at any time, and every objective value with the device-hours spent by then.
namespace bsw::report {

// One segment as the events record it: a run of a trial, or a probe run.
struct SegmentSpan {
  int64_t trial = -1;  // the trial's index, or the probe's
  bool probe = false;
  int number = 0;
  int devices = 1;
  double launched_at = 0;
  std::vector<std::pair<double, double>> deadlines;  // (from when, deadline)
  bool ended = false;
  double ended_at = 0;
  // The backend's times, recorded when it ended; started == 0: it never ran.
  double started = 0;
  double finished = 0;
};

// Every segment and probe run the events launch, in launch order, with what later events record
// of it (moved deadlines, its end). A probe run is charged as one device from its launch for the
// device-seconds journaled when it ended, as the controller charges it.
std::vector<SegmentSpan> SegmentSpans(const SweepSpec& spec, const std::vector<Event>& events);

// The segment's deadline as it stood at `t`. REQUIRES: s.deadlines is not empty.
double DeadlineAt(const SegmentSpan& s, double t);

// The ledger under a cap of `budget_gpu_hours` as it stood at `t`: ended segments charge their
// recorded times, and one still running charges from its launch up to `t`, or up to its deadline
// once that has passed (its supervisor kills it there), and reserves the rest up to its deadline.
Ledger LedgerAt(const std::vector<SegmentSpan>& spans, double budget_gpu_hours, double t);

// The time the report describes: the sweep's last event (or the last segment's end) once every
// segment has ended, else `now` (or the last event, if later).
double EndTime(const std::vector<SegmentSpan>& spans, const std::vector<Event>& events, double now);

// The model with `events` applied in order. InvalidArgument naming the first event (1-based) that
// does not apply to `spec`.
[[nodiscard]] StatusOr<SweepModel> Replay(const SweepSpec& spec, const std::vector<Event>& events);

// One objective value as the sweep recorded it, with the device-hours spent by then.
struct ValuePoint {
  int64_t trial = 0;
  int rung = 0;
  double resource = 0;
  double value = 0;
  double used_gpu_hours = 0;
};

// Everything the charts and the page read: the replayed model, the segments, the values, and the
// span of time the report covers.
struct History {
  explicit History(SweepModel m) : model(std::move(m)) {}
  const SweepSpec& spec() const { return model.spec(); }

  SweepModel model;
  std::vector<SegmentSpan> spans;
  std::vector<ValuePoint> values;                // finite values, in the order recorded
  std::set<std::pair<int64_t, int>> promotions;  // (trial, rung) of TrialPromoted events
  double start = 0, end = 0;
  nlohmann::json status;
};

// The history of `in`: values are the finite ones at a rung, the first per trial and resource.
// InvalidArgument when an event does not apply to the spec.
[[nodiscard]] StatusOr<History> BuildHistory(const ReportInput& in);

// Whether objective value `a` is better than `b` for `goal`.
bool Better(Goal goal, double a, double b);

}  // namespace bsw::report

#endif  // BSW_REPORT_HISTORY_H_
