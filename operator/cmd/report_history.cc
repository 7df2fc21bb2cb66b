#include "operator/cmd/report_history.h"

#include <algorithm>
#include <cmath>
#include <string>

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

}  // namespace

std::vector<SegmentSpan> SegmentSpans(const SweepSpec& spec, const std::vector<Event>& events) {
  using Type = Event::Type;
  std::vector<SegmentSpan> spans;
  for (const Event& e : events) {
    bool probe = e.type == Type::kProbeLaunched || e.type == Type::kProbeEnded;
    if (e.type == Type::kSegmentLaunched || e.type == Type::kProbeLaunched) {
      SegmentSpan& s = spans.emplace_back();
      s.trial = e.trial;
      s.probe = probe;
      s.number = probe ? 0 : e.segment;
      s.devices = probe ? 1 : ChargedDevices(spec.trial_gpus);
      s.launched_at = e.at;
      s.deadlines.emplace_back(e.at, e.deadline);
      continue;
    }
    SegmentSpan* s = FindSpan(spans, e.trial, probe, probe ? 0 : e.segment);
    if (s == nullptr) continue;
    if (e.type == Type::kDeadlineMoved) s->deadlines.emplace_back(e.at, e.deadline);
    if (e.type != Type::kSegmentEnded && e.type != Type::kProbeEnded) continue;
    s->ended = true;
    s->ended_at = e.at;
    // A probe run's charge is journaled as device-seconds; the controller charges it as one
    // device from its launch for that long, and so does the report.
    bool ran = probe ? e.seconds > 0 : e.started > 0;
    s->started = !ran ? 0 : probe ? s->launched_at : e.started;
    s->finished = !ran ? 0 : probe ? s->launched_at + e.seconds : e.finished;
    if (!probe && ran) s->devices = e.devices;
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
  double last = events.empty() ? now : events.back().at;
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
  h.start = in.events.empty() ? h.end : in.events.front().at;
  std::set<std::pair<int64_t, double>> seen;
  for (const Event& e : in.events) {
    if (e.type == Event::Type::kTrialPromoted) h.promotions.insert({e.trial, e.rung});
    if (e.type != Event::Type::kValueRecorded || !std::isfinite(e.value)) continue;
    int rung = h.model.rungs().IndexOf(e.resource);
    if (rung < 0 || !seen.insert({e.trial, e.resource}).second) continue;
    double used = LedgerAt(h.spans, in.spec.budget_gpu_hours, e.at).used() / 3600;
    h.values.push_back({e.trial, rung, e.resource, e.value, used});
  }
  return h;
}

bool Better(Goal goal, double a, double b) { return goal == Goal::kMaximize ? a > b : a < b; }

}  // namespace bsw::report
