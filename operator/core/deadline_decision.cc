#include "operator/core/deadline_decision.h"

#include <algorithm>

#include "operator/core/pricing.h"

namespace bsw::decisions {
namespace {

// How far a running segment has come, and the seconds per unit of what it has left where its own
// progress shows them: since its latest rung value (so without the start-up) once it went past it.
struct Progress {
  double resource = 0;
  std::optional<double> own_pace;
};

Progress ProgressOf(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                    const SegmentStatus& st, const TrialMetrics* metrics) {
  Progress p{std::max(t.progress(), seg.from), std::nullopt};
  if (!metrics || !metrics->resource_completed || !st.started_unix_seconds ||
      *metrics->resource_completed <= seg.from) {
    return p;
  }
  p.resource = std::max(p.resource, *metrics->resource_completed);
  double elapsed = in.now - *st.started_unix_seconds;
  double done = *metrics->resource_completed - seg.from;
  if (seg.measured.empty() || in.options.deadlines_only_shrink) {
    // From the segment's start: start-up included, and no shorter for a rung value seen late
    // (through a scrape interval), which is all a deadline that cannot grow back may go by.
    p.own_pace = elapsed / done;
  } else if (const CostPoint& rung = seg.measured.back();
             done > rung.units && elapsed > rung.seconds) {
    p.own_pace = (elapsed - rung.seconds) / (done - rung.units);
  } else {
    p.own_pace = Pricing(in.model, in.options).MarginalPace(t);
  }
  return p;
}

Admitted MoveDeadline(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                      double deadline, Admitted out) {
  event::DeadlineMoved e{.at = in.now, .trial = t.index, .segment = seg.number};
  e.deadline = deadline;
  out.part.events.push_back(e);
  out.part.actions.push_back(SetDeadline{t.index, seg.number, deadline});
  return out;
}

// After a budget cut: the segment keeps in.reservation_fit of what its deadline still holds.
Admitted FitToBudget(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                     const SegmentStatus& st, const Ledger& ledger) {
  Admitted out{Part{}, ledger};
  double from = std::max(in.now, st.started_unix_seconds.value_or(in.now));
  double held = st.deadline_unix_seconds - from;
  if (held <= 0) return out;
  double deadline = from + in.reservation_fit * held;
  out.ledger.Release(ChargedDevices(st.devices) * (st.deadline_unix_seconds - deadline));
  return MoveDeadline(in, t, seg, deadline, std::move(out));
}

}  // namespace

double ReservationFit(const Ledger& ledger, const PlannerOptions& options) {
  double excess = ledger.used() + ledger.reserved() - ledger.budget();
  if (excess <= options.deadline_slack_seconds || ledger.reserved() <= 0) return 1;
  return std::clamp((ledger.budget() - ledger.used()) / ledger.reserved(), 0.0, 1.0);
}

Admitted AdjustDeadline(const PlanInput& in, const Trial& t, const SegmentRecord& seg,
                        const SegmentStatus& st, const TrialMetrics* metrics,
                        const Ledger& ledger) {
  if (in.reservation_fit < 1) return FitToBudget(in, t, seg, st, ledger);
  const Pricing pricing(in.model, in.options);
  const PlannerOptions& o = in.options;
  Admitted out{Part{}, ledger};
  Progress progress = ProgressOf(in, t, seg, st, metrics);
  const std::optional<double>& own_pace = progress.own_pace;
  double target = pricing.ReservedUntil(progress.resource, seg.until);
  double left = target - progress.resource;
  // Without progress of its own, what is left is a whole segment's work, start-up included.
  std::optional<double> work =
      own_pace ? std::optional(*own_pace * left) : pricing.SegmentSeconds(t.index, left);
  if (!work) return out;
  double pace = own_pace ? *own_pace : *work / std::max(1.0, left);
  // The supervisor sends SIGTERM at deadline - grace, so the deadline must stay ahead of the
  // work left plus the grace period plus a lookahead. Hysteresis: extend with that much headroom
  // again and shrink only by a clear margin, so a deadline moves about once per unit rather
  // than on every pass. The lookahead is a unit's work at its pace (within 1 to 4 times the
  // slack): at that pace the deadline stays ahead until the next unit reports, yet holds back
  // little of the budget.
  double lookahead =
      std::min(4 * o.deadline_slack_seconds, std::max(o.deadline_slack_seconds, pace));
  // Without progress since it started, a segment has nothing new to go by: its deadline holds
  // the launch's estimate until SIGTERM comes within the lookahead.
  double deadline = st.deadline_unix_seconds;
  double grace = in.spec().grace_seconds;
  if (!own_pace && deadline - grace - in.now > lookahead) return out;
  double needed = in.now + std::max(0.0, *work) * o.reservation_margin + grace + lookahead;
  if (needed > deadline) {
    if (o.deadlines_only_shrink) return out;  // it runs to its deadline, as admitted
    needed += lookahead;
    if (std::optional<Denial> d = out.ledger.Admit(pricing.devices() * (needed - deadline))) {
      out.part.denials.push_back(*d);
      return out;
    }
  } else if (own_pace && needed < deadline - 2 * lookahead) {
    needed += lookahead;  // headroom both ways, or the next pass extends what this one shrank
    out.ledger.Release(pricing.devices() * (deadline - needed));
  } else {
    return out;
  }
  return MoveDeadline(in, t, seg, needed, std::move(out));
}

}  // namespace bsw::decisions
