#include "operator/core/probe_decisions.h"

#include <algorithm>

#include "operator/core/admission.h"
#include "operator/core/pricing.h"

namespace bsw::decisions {
namespace {

// The probe run in flight: started again if the backend lost it, its end recorded, its figures
// recorded once it measured, and then stopped.
Part ReconcileProbe(const PlanInput& in, const ProbeRun& p) {
  Part part;
  const SegmentStatus* st = in.observed.Segment(p.name, 0);
  if (st == nullptr) {
    // Journaled but never started (a crash between the two): Start is idempotent.
    part.actions.push_back(StartProbe{p.index, p.deadline});
    return part;
  }
  if (st->state == SegmentState::kSucceeded || st->state == SegmentState::kFailed) {
    part.events.push_back(ProbeEndEvent(in, p, *st));
    return part;
  }
  if (!p.figures) {
    auto m = in.observed.metrics.find(p.name);
    if (m == in.observed.metrics.end() || !m->second.probe_measured_steps ||
        *m->second.probe_measured_steps <= 0 || !m->second.samples_per_second ||
        !m->second.data_wait_ratio) {
      return part;  // still measuring
    }
    event::ProbeMeasured e{.at = in.now, .probe = p.index};
    e.figures = {*m->second.samples_per_second, *m->second.data_wait_ratio,
                 m->second.accelerator_utilization_ratio};
    part.events.push_back(e);
  }
  // Measured: its figures are journaled, so it may stop (again, if a crash lost the stop).
  // Emplaced: GCC 12's -Wmaybe-uninitialized misreads a StopProbe temporary moved into the variant.
  part.actions.emplace_back(std::in_place_type<StopProbe>, p.index);
  return part;
}

// The candidates not probed yet (a probe stopped from outside before it measured is probed
// again): how many were probed, and the next to probe, if any.
struct NextProbe {
  int probed = 0;
  std::optional<Config> next;
};
NextProbe NextProbeOf(const std::vector<Config>& candidates, const std::vector<ProbeRun>& probes) {
  NextProbe n;
  for (const Config& c : candidates) {
    bool done = std::any_of(probes.begin(), probes.end(), [&](const ProbeRun& p) {
      return p.settings == c && p.reason != ReasonName(Reason::kInterrupted);
    });
    if (done) ++n.probed;
    if (!done && !n.next) n.next = c;
  }
  return n;
}

// The phase's decision, and the sweep's end when it went below the target and the spec says to
// stop then.
ProbePhase Decide(const PlanInput& in, const Ledger& ledger, const std::string& note) {
  ProbePhase phase{{Part{}, ledger}, std::nullopt, std::nullopt};
  ThroughputDecision d = DecideThroughput(in.spec(), in.model.probes(), note);
  event::ThroughputDecided e{.at = in.now, .probe = d.chosen};
  e.reason = ReasonName(d.reason);
  e.message = d.message;
  e.params = d.trial_args;
  phase.admitted.part.events.push_back(e);
  if (StopsBelowTarget(in.spec(), d)) {
    phase.finish = Finish{SweepPhase::kFailed, Reason::kThroughputBelowTarget,
                          d.message + " (spec.throughput.onBelowTarget is stop)"};
  }
  phase.decided = std::move(d);
  return phase;
}

}  // namespace

ProbePhase ReconcileProbes(const PlanInput& in, const Ledger& ledger) {
  const std::vector<ProbeRun>& probes = in.model.probes();
  if (!probes.empty() && !probes.back().ended) {
    return ProbePhase{{ReconcileProbe(in, probes.back()), ledger}, std::nullopt, std::nullopt};
  }
  const ThroughputSpec& throughput = in.spec().throughput;
  const std::vector<Config> candidates = ProbeCandidates(throughput);
  NextProbe n = NextProbeOf(candidates, probes);
  if (!n.next) return Decide(in, ledger, "");
  double spent = 0;
  double longest = 0;
  for (const ProbeRun& p : probes) {
    spent += p.charged_device_seconds;
    longest = std::max(longest, p.charged_device_seconds);
  }
  const Pricing pricing(in.model, in.options);
  // The deadline is all the probe budget left: a probe is stopped as soon as it measured.
  double requested =
      std::min(throughput.max_budget_fraction * ledger.budget() - spent, ledger.remaining());
  double needed = std::max(pricing.devices() * in.options.min_reservation_seconds,
                           in.options.reservation_margin * longest);
  Ledger after = ledger;
  // Admission reserves the probe's share; it holds, as requested is within what is left.
  if (requested >= needed && !after.Admit(requested)) {
    int index = static_cast<int>(probes.size());
    event::ProbeLaunched e{.at = in.now, .probe = index};
    e.params = *n.next;
    e.deadline = in.now + requested / pricing.devices();
    Part part;
    part.events.push_back(e);
    part.actions.push_back(StartProbe{index, e.deadline});
    return ProbePhase{{std::move(part), after}, std::nullopt, std::nullopt};
  }
  return Decide(
      in, ledger,
      "probed " + std::to_string(n.probed) + " of " + std::to_string(candidates.size()) +
          Figures(" candidates: %.4f GPU-hours left for probing, the next needs %.4f",
                  std::max(0.0, requested) / 3600, needed / 3600) +
          Figures(" (spec.throughput.maxBudgetFraction %g)", throughput.max_budget_fraction));
}

event::ProbeEnded ProbeEndEvent(const PlanInput& in, const ProbeRun& p, const SegmentStatus& st) {
  event::ProbeEnded e{.at = in.now, .probe = p.index};
  double finish = st.finished_unix_seconds.value_or(in.now);
  e.seconds =
      ChargedDevices(st.devices) * std::max(0.0, finish - st.started_unix_seconds.value_or(finish));
  Reason backend = st.reason;
  Reason reason = Reason::kError;
  if (p.figures) {
    reason = Reason::kNone;
  } else if (backend == Reason::kStopped || backend == Reason::kEvicted) {
    reason = Reason::kInterrupted;
    e.message = "stopped from outside the sweep before it measured; it is probed again";
  } else if (backend == Reason::kDeadlineExceeded) {
    reason = Reason::kDeadlineExceeded;
    e.message = "reached its deadline (what spec.throughput.maxBudgetFraction left) first";
  } else if (st.state == SegmentState::kSucceeded) {
    reason = Reason::kMetricsMissing;
    e.message = "exited without reporting its probe figures";
  } else {
    e.message = st.exit_code ? "exited with code " + std::to_string(*st.exit_code)
                             : "ended without an exit code";
    e.output = st.output_tail;
  }
  e.reason = ReasonName(reason);
  return e;
}

}  // namespace bsw::decisions
