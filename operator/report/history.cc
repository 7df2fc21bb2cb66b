#include "operator/report/history.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <variant>

#include "base/overloaded.h"
#include "operator/core/segment.h"

namespace bsw::report {
namespace {

SegmentSpan* FindSpan(std::vector<SegmentSpan>& spans, int64_t trial, bool probe, int number) {
  for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
    if (it->trial == trial && it->probe == probe && it->number == number) return &*it;
  }
  return nullptr;
}

// What the backend would have reported at `t`, as far as the events tell: a segment that ended
// has its recorded times; one still running has run since its launch, and no later than its
// deadline (its supervisor kills it there).
std::vector<SegmentStatus> SegmentsAt(const std::vector<SegmentSpan>& spans, double t) {
  std::vector<SegmentStatus> out;
  for (const SegmentSpan& span : spans) {
    if (span.launched_at > t) continue;
    bool ran = span.ended && span.started > 0;
    if (span.ended && !ran && span.ended_at <= t) continue;
    SegmentStatus s;
    s.devices = span.devices;
    s.deadline_unix_seconds = DeadlineAt(span, t);
    if (ran) {
      if (span.started <= t) s.started_unix_seconds = span.started;
      if (span.finished <= t) s.finished_unix_seconds = span.finished;
    } else if (!span.ended) {
      s.started_unix_seconds = span.launched_at;
      if (t >= s.deadline_unix_seconds) {
        s.finished_unix_seconds = std::max(span.launched_at, s.deadline_unix_seconds);
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

void Launched(std::vector<SegmentSpan>& spans, int64_t trial, bool probe, int number, int devices,
              double at, double deadline) {
  SegmentSpan& s = spans.emplace_back();
  s.trial = trial;
  s.probe = probe;
  s.number = number;
  s.devices = devices;
  s.launched_at = at;
  s.deadlines.emplace_back(at, deadline);
}

void Ended(SegmentSpan& s, const event::SegmentEnded& e) {
  bool ran = e.started > 0;
  s.ended = true;
  s.ended_at = e.at;
  s.started = ran ? e.started : 0;
  s.finished = ran ? e.finished : 0;
  if (ran) s.devices = e.devices;
}

// A probe run's charge is journaled as device-seconds; the controller charges it as one device
// from its launch for that long, and so does the report.
void Ended(SegmentSpan& s, const event::ProbeEnded& e) {
  bool ran = e.seconds > 0;
  s.ended = true;
  s.ended_at = e.at;
  s.started = ran ? s.launched_at : 0;
  s.finished = ran ? s.launched_at + e.seconds : 0;
}

}  // namespace

std::vector<SegmentSpan> SegmentSpans(const SweepSpec& spec, const std::vector<Event>& events) {
  std::vector<SegmentSpan> spans;
  int trial_devices = ChargedDevices(spec.trial_gpus);
  for (const Event& event : events) {
    std::visit(Overloaded{[&](const event::SegmentLaunched& e) {
                            Launched(spans, e.trial, false, e.segment, trial_devices, e.at,
                                     e.deadline);
                          },
                          [&](const event::ProbeLaunched& e) {
                            Launched(spans, e.probe, true, 0, 1, e.at, e.deadline);
                          },
                          [&](const event::DeadlineMoved& e) {
                            SegmentSpan* s = FindSpan(spans, e.trial, false, e.segment);
                            if (s != nullptr) s->deadlines.emplace_back(e.at, e.deadline);
                          },
                          [&](const event::SegmentEnded& e) {
                            SegmentSpan* s = FindSpan(spans, e.trial, false, e.segment);
                            if (s != nullptr) Ended(*s, e);
                          },
                          [&](const event::ProbeEnded& e) {
                            SegmentSpan* s = FindSpan(spans, e.probe, true, 0);
                            if (s != nullptr) Ended(*s, e);
                          },
                          [](const auto&) {}},
               event);
  }
  return spans;
}

double DeadlineAt(const SegmentSpan& s, double t) {
  double deadline = s.deadlines.front().second;
  for (const auto& [since, value] : s.deadlines) {
    if (since <= t) deadline = value;
  }
  return deadline;
}

Ledger LedgerAt(const std::vector<SegmentSpan>& spans, double budget_gpu_hours, double t) {
  Ledger ledger(budget_gpu_hours * 3600);
  ledger.Observe(SegmentsAt(spans, t), t);
  return ledger;
}

double EndTime(const std::vector<SegmentSpan>& spans, const std::vector<Event>& events,
               double now) {
  double last = events.empty() ? now : EventTime(events.back());
  for (const SegmentSpan& s : spans) {
    if (!s.ended) return std::max(now, last);
    last = std::max(last, s.finished);
  }
  return last;
}

StatusOr<SweepModel> Replay(const SweepSpec& spec, const std::vector<Event>& events) {
  SweepModel model(spec);
  for (size_t i = 0; i < events.size(); ++i) {
    if (Status s = model.Apply(events[i]); !s.ok()) {
      return InvalidArgumentError("event " + std::to_string(i + 1) + ": " + s.message());
    }
  }
  return model;
}

StatusOr<History> BuildHistory(const ReportInput& in) {
  StatusOr<SweepModel> model = Replay(in.spec, in.events);
  if (!model.ok()) return model.status();
  History h(std::move(model).value());
  h.status = in.status;
  h.spans = SegmentSpans(in.spec, in.events);
  h.end = EndTime(h.spans, in.events, in.now_unix_seconds);
  h.start = in.events.empty() ? h.end : EventTime(in.events.front());
  std::set<std::pair<int64_t, double>> seen;
  for (const Event& e : in.events) {
    if (const auto* p = std::get_if<event::TrialPromoted>(&e))
      h.promotions.insert({p->trial, p->rung});
    const auto* v = std::get_if<event::ValueRecorded>(&e);
    if (v == nullptr || !std::isfinite(v->value)) continue;
    int rung = h.model.rungs().IndexOf(v->resource);
    if (rung < 0 || !seen.insert({v->trial, v->resource}).second) continue;
    double used = LedgerAt(h.spans, in.spec.budget_gpu_hours, v->at).used() / 3600;
    h.values.push_back({v->trial, rung, v->resource, v->value, used});
  }
  return h;
}

bool Better(Goal goal, double a, double b) { return goal == Goal::kMaximize ? a > b : a < b; }

}  // namespace bsw::report
