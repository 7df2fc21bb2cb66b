#include "operator/report/charts.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <utility>

#include "operator/core/asha.h"
#include "operator/core/ledger.h"
#include "operator/core/probe.h"
#include "operator/report/text.h"

namespace bsw::report {
namespace {

constexpr Color kMuted = Rgb(0x5f6368);
constexpr Color kGrid = Rgb(0xe3e6ea);
constexpr Color kPlotBackground = Rgb(0xfbfbfc);
constexpr Color kWhite = Rgb(0xffffff);
constexpr Color kBest = Rgb(0xe6550d);
constexpr Color kCap = Rgb(0xc62828);
constexpr Color kUsed = Rgb(0x3a6fb0);
constexpr Color kReserved = Rgb(0xf5a55a);
constexpr Color kRemaining = Rgb(0x2e8b57);
constexpr Color kPromoted = Rgb(0x2e9e44);
constexpr Color kStopped = Rgb(0xd62728);
constexpr Color kPaused = Rgb(0xf08c00);
constexpr Color kCompleted = Rgb(0x1f3b73);
constexpr Color kRunning = Rgb(0x1f77b4);
constexpr Color kFailed = Rgb(0x000000);
constexpr Color kTrialLine = Rgb(0x9aa9bd);
constexpr Color kMetGate = Rgb(0x2e8b57);
constexpr Color kBelowGate = Rgb(0xf08c00);
// Rung colours, light to dark: a value from further up the ladder reads darker.
constexpr Color kRungColors[] = {Rgb(0x7fcdbb), Rgb(0x41b6c4), Rgb(0x1d91c0),
                                 Rgb(0x225ea8), Rgb(0x253494), Rgb(0x081d58)};

// Spread over the whole range, so that neighbouring rungs differ.
Color RungColor(int rung, int rungs) {
  constexpr int kLast = static_cast<int>(std::size(kRungColors)) - 1;
  if (rungs <= 1) return kRungColors[kLast];
  return kRungColors[std::min(kLast, rung * kLast / (rungs - 1))];
}

// ---------------------------------------------------------------------------------------------
// Axes, legends and marks

struct Axis {
  double min = 0, max = 1;
  bool log = false;
  std::string label;
  std::vector<double> ticks;
  std::vector<std::string> tick_labels;  // one per tick
};

// 1, 2, 2.5 or 5 × 10^k: the tick step that divides `range` into about `count` parts.
double NiceStep(double range, int count) {
  double raw = range / count;
  double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0}) {
    if (m * magnitude >= raw) return m * magnitude;
  }
  return 10 * magnitude;
}

// A linear axis over [lo, hi] widened to whole ticks, with labels as precise as the step.
Axis LinearAxis(double lo, double hi, std::string label, int count = 6) {
  if (!(hi > lo)) {
    double pad = lo != 0 ? std::abs(lo) * 0.05 : 0.5;
    lo -= pad;
    hi += pad;
  }
  Axis axis;
  axis.label = std::move(label);
  double step = NiceStep(hi - lo, count);
  axis.min = std::floor(lo / step + 1e-9) * step;
  axis.max = std::ceil(hi / step - 1e-9) * step;
  int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  if (std::abs(step / std::pow(10, -decimals) - 2.5) < 1e-9) ++decimals;
  for (double v = axis.min; v <= axis.max + step * 1e-6; v += step) {
    double tick = std::abs(v) < step * 1e-9 ? 0 : v;
    axis.ticks.push_back(tick);
    axis.tick_labels.push_back(Fmt(("%." + std::to_string(decimals) + "f").c_str(), tick));
  }
  return axis;
}

// A log axis over [lo, hi] (both > 0) with ticks at powers of ten, and at 2× and 5× when the
// range spans less than three decades.
Axis LogAxis(double lo, double hi, std::string label) {
  Axis axis;
  axis.log = true;
  axis.label = std::move(label);
  axis.min = lo / 1.25;
  axis.max = hi * 1.25;
  bool fine = std::log10(axis.max / axis.min) < 3;
  for (int e = static_cast<int>(std::floor(std::log10(axis.min)));
       e <= static_cast<int>(std::ceil(std::log10(axis.max))); ++e) {
    for (double m : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      double v = m * std::pow(10, e);
      if (v < axis.min || v > axis.max) continue;
      axis.ticks.push_back(v);
      axis.tick_labels.push_back(Fmt("%g", v));
    }
  }
  return axis;
}

// The plot area of a chart and its two axes.
struct Frame {
  double left = 0, top = 0, width = 0, height = 0;
  Axis x, y;

  static double Fraction(const Axis& a, double v) {
    if (a.log) return (std::log(v) - std::log(a.min)) / (std::log(a.max) - std::log(a.min));
    return (v - a.min) / (a.max - a.min);
  }
  double X(double v) const { return left + Fraction(x, v) * width; }
  double Y(double v) const { return top + (1 - Fraction(y, v)) * height; }
  Point At(double vx, double vy) const { return {X(vx), Y(vy)}; }
  double right() const { return left + width; }
  double bottom() const { return top + height; }
};

// Half-pixel positions draw one-pixel lines sharp.
double Crisp(double v) { return std::floor(v) + 0.5; }

// The layout every chart shares: title, subtitle and legend rows above the plot, tick labels
// and the axis label below it, and the y axis's on its left.
Frame ChartFrame(double width, double height, Axis x, Axis y) {
  Frame f;
  f.left = 88;
  f.top = 92;
  f.width = width - f.left - 56;
  f.height = height - f.top - 58;
  f.x = std::move(x);
  f.y = std::move(y);
  return f;
}

void DrawFrame(Canvas& c, const Frame& f, const std::string& title, const std::string& subtitle) {
  c.Text({16, 26}, title, {.size = 18, .bold = true});
  c.Text({16, 48}, subtitle, {.size = 13, .color = kMuted});
  c.Fill({{f.left, f.top}, {f.right(), f.top}, {f.right(), f.bottom()}, {f.left, f.bottom()}},
         kPlotBackground);
  for (size_t i = 0; i < f.x.ticks.size(); ++i) {
    double x = Crisp(f.X(f.x.ticks[i]));
    c.Line({{x, f.top}, {x, f.bottom()}}, {.color = kGrid});
    c.Text({x, f.bottom() + 20}, f.x.tick_labels[i], {.size = 12, .anchor = Anchor::kMiddle});
  }
  for (size_t i = 0; i < f.y.ticks.size(); ++i) {
    double y = Crisp(f.Y(f.y.ticks[i]));
    c.Line({{f.left, y}, {f.right(), y}}, {.color = kGrid});
    c.Text({f.left - 8, y + 4}, f.y.tick_labels[i], {.size = 12, .anchor = Anchor::kEnd});
  }
  double left = Crisp(f.left), bottom = Crisp(f.bottom());
  c.Line({{left, f.top}, {left, bottom}, {f.right(), bottom}}, {.color = kMuted});
  c.Text({f.left + f.width / 2, f.bottom() + 46}, f.x.label,
         {.size = 13, .anchor = Anchor::kMiddle});
  c.Text({22, f.top + f.height / 2}, f.y.label,
         {.size = 13, .anchor = Anchor::kMiddle, .vertical = true});
}

enum class Mark { kLine, kDashedLine, kSwatch, kDot, kRing, kTriangle, kCross, kSquare };

void DrawMark(Canvas& c, Mark mark, Point p, Color color) {
  const double s = 5;
  switch (mark) {
    case Mark::kLine:
    case Mark::kDashedLine:
      c.Line({{p.x - 11, p.y}, {p.x + 11, p.y}},
             {.color = color, .width = 2.5, .dashed = mark == Mark::kDashedLine});
      break;
    case Mark::kSwatch:
      c.Fill({{p.x - 9, p.y - 6}, {p.x + 9, p.y - 6}, {p.x + 9, p.y + 6}, {p.x - 9, p.y + 6}},
             color, 0.85);
      break;
    case Mark::kDot:
      c.Dot(p, 4, color);
      break;
    case Mark::kRing:
      c.Dot(p, s, color);
      c.Dot(p, s - 2, kWhite);
      break;
    case Mark::kTriangle:
      c.Fill({{p.x, p.y - s - 1}, {p.x + s + 1, p.y + s - 1}, {p.x - s - 1, p.y + s - 1}}, color);
      break;
    case Mark::kCross:
      c.Line({{p.x - s, p.y - s}, {p.x + s, p.y + s}}, {.color = color, .width = 2.2});
      c.Line({{p.x - s, p.y + s}, {p.x + s, p.y - s}}, {.color = color, .width = 2.2});
      break;
    case Mark::kSquare:
      c.Fill({{p.x - s, p.y - s}, {p.x + s, p.y - s}, {p.x + s, p.y + s}, {p.x - s, p.y + s}},
             color);
      break;
  }
}

struct LegendEntry {
  Mark mark;
  Color color;
  std::string label;
};

// One row of entries under the subtitle, wrapping onto a second row when it must.
void DrawLegend(Canvas& c, double width, const std::vector<LegendEntry>& entries) {
  double x = 16, y = 72;
  for (const LegendEntry& e : entries) {
    double w = 30 + c.TextWidth(e.label, 13) + 22;
    if (x + w > width - 16 && x > 16) {
      x = 16;
      y += 20;
    }
    DrawMark(c, e.mark, {x + 11, y - 4}, e.color);
    c.Text({x + 28, y}, e.label, {.size = 13});
    x += w;
  }
}

// The marker of a trial's point that ends its line on the rung ladder.
LegendEntry PhaseMark(TrialPhase phase) {
  switch (phase) {
    case TrialPhase::kRunning:
      return {Mark::kRing, kRunning, "running"};
    case TrialPhase::kPaused:
      return {Mark::kSquare, kPaused, "paused"};
    case TrialPhase::kCompleted:
      return {Mark::kDot, kCompleted, "completed"};
    case TrialPhase::kStopped:
      return {Mark::kCross, kStopped, "stopped"};
    case TrialPhase::kFailed:
      return {Mark::kCross, kFailed, "failed"};
  }
  return {Mark::kDot, kInk, ""};
}

// The objective's range over `values`, or [0, 1] without any.
std::pair<double, double> ValueRange(const std::vector<double>& values) {
  if (values.empty()) return {0, 1};
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return {*lo, *hi};
}

// ---------------------------------------------------------------------------------------------
// Charts

std::vector<LegendEntry> RungLegend(const History& h, const std::string& prefix) {
  std::vector<LegendEntry> out;
  int rungs = h.model.rungs().size();
  for (int r = 0; r < rungs; ++r) {
    out.push_back(
        {Mark::kDot, RungColor(r, rungs), prefix + ResourceText(h.spec(), h.model.rungs().at(r))});
  }
  return out;
}

// The best value so far as a step line up to `used` device-hours, every value as a dot coloured by
// its rung, and the best one labelled. REQUIRES: h.values is not empty.
void DrawBestValues(Canvas& c, const Frame& f, const History& h, double used) {
  const SweepSpec& spec = h.spec();
  std::vector<Point> steps;
  const ValuePoint* best = nullptr;
  for (const ValuePoint& v : h.values) {
    if (best != nullptr && !Better(spec.goal, v.value, best->value)) continue;
    if (best != nullptr) steps.push_back(f.At(v.used_gpu_hours, best->value));
    steps.push_back(f.At(v.used_gpu_hours, v.value));
    best = &v;
  }
  steps.push_back(f.At(std::max(used, best->used_gpu_hours), best->value));
  c.Line(steps, {.color = kBest, .width = 2.5});
  int rungs = h.model.rungs().size();
  for (const ValuePoint& v : h.values) {
    Point p = f.At(v.used_gpu_hours, v.value);
    c.Dot(p, 4, RungColor(v.rung, rungs));
    c.Hover(
        p, 6,
        h.model.trial(v.trial).name + " " + ResourceText(spec, v.resource) + ": " + Num(v.value));
  }
  Point p = f.At(best->used_gpu_hours, best->value);
  DrawMark(c, Mark::kRing, p, kBest);
  std::string label = "best " + Num(best->value) + ": " + h.model.trial(best->trial).name + ", " +
                      ResourceText(spec, best->resource);
  bool room_right = p.x + 12 + c.TextWidth(label, 13) < f.right();
  c.Text({room_right ? p.x + 12 : p.x - 12, p.y < f.top + 24 ? p.y + 20 : p.y - 10}, label,
         {.size = 13,
          .anchor = room_right ? Anchor::kStart : Anchor::kEnd,
          .color = kBest,
          .bold = true});
}

std::string TrialTooltip(const History& h, const Trial& t, double resource, double value) {
  std::string text = t.name + " " + ResourceText(h.spec(), resource) + ": " + Num(value) + " (" +
                     TrialPhaseName(t.phase);
  if (!t.reason.empty()) text += ": " + t.reason;
  return text + ")";
}

// Seconds shown in the burn-down's time unit: seconds, minutes or hours, whichever reads best.
std::pair<double, std::string> TimeUnit(double seconds) {
  if (seconds < 180) return {1, "seconds"};
  if (seconds < 3 * 3600) return {60, "minutes"};
  return {3600, "hours"};
}

// Times at which the ledger changes course: events (and just before each, for the jumps a moved
// deadline makes), segment starts and ends, deadlines reached, and the end.
std::vector<double> BurnDownTimes(const History& h, const std::vector<Event>& events) {
  std::vector<double> times = {h.start, h.end};
  for (const Event& e : events) {
    times.push_back(EventTime(e));
    times.push_back(EventTime(e) - 1e-3);
  }
  for (const SegmentSpan& s : h.spans) {
    times.push_back(s.started);
    times.push_back(s.finished);
    if (!s.ended) times.push_back(DeadlineAt(s, h.end));
  }
  std::erase_if(times, [&h](double t) { return t < h.start || t > h.end; });
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  return times;
}

Axis ParamAxis(const ParamSpec& param) {
  if (param.type == ParamType::kChoice || param.type == ParamType::kGrid) {
    Axis axis;
    axis.label = param.name;
    axis.min = -0.5;
    axis.max = static_cast<double>(param.values.size()) - 0.5;
    for (size_t i = 0; i < param.values.size(); ++i) {
      axis.ticks.push_back(static_cast<double>(i));
      axis.tick_labels.push_back(FormatParamValue(param.values[i]));
    }
    return axis;
  }
  if (param.type == ParamType::kLogUniform || param.log) {
    return LogAxis(param.min, param.max, param.name + " (log scale)");
  }
  return LinearAxis(param.min, param.max, param.name, 5);
}

}  // namespace

void DrawBestChart(Canvas& c, const History& h, double width, double height) {
  const SweepSpec& spec = h.spec();
  double used = LedgerAt(h.spans, spec.budget_gpu_hours, h.end).used() / 3600;
  double x_max = used;
  std::vector<double> ys;
  for (const ValuePoint& v : h.values) {
    x_max = std::max(x_max, v.used_gpu_hours);
    ys.push_back(v.value);
  }
  bool show_cap = x_max >= 0.8 * spec.budget_gpu_hours;
  if (show_cap) x_max = std::max(x_max, spec.budget_gpu_hours);
  auto [lo, hi] = ValueRange(ys);
  Frame f = ChartFrame(width, height, LinearAxis(0, x_max > 0 ? x_max : 1e-3, "device-hours spent"),
                       LinearAxis(lo, hi, spec.objective_metric));
  DrawFrame(c, f, "Best " + spec.objective_metric + " against device-hours spent",
            std::string(spec.goal == Goal::kMaximize ? "higher" : "lower") + " is better; spent " +
                Num(used) + " of the " + Num(spec.budget_gpu_hours) + " GPU-h budget");
  std::vector<LegendEntry> legend = {{Mark::kLine, kBest, "best so far"}};
  for (const LegendEntry& e : RungLegend(h, "value at ")) legend.push_back(e);
  if (show_cap) legend.push_back({Mark::kDashedLine, kCap, "budget cap"});
  DrawLegend(c, width, legend);
  if (show_cap) {
    double x = f.X(spec.budget_gpu_hours);
    c.Line({{x, f.top}, {x, f.bottom()}}, {.color = kCap, .width = 2, .dashed = true});
  }
  if (h.values.empty()) {
    c.Text({f.left + f.width / 2, f.top + f.height / 2}, "no objective value recorded yet",
           {.size = 14, .anchor = Anchor::kMiddle, .color = kMuted});
    return;
  }
  DrawBestValues(c, f, h, used);
}

void DrawLadderChart(Canvas& c, const History& h, double width, double height) {
  const SweepSpec& spec = h.spec();
  const Rungs& rungs = h.model.rungs();
  std::vector<double> ys;
  for (const ValuePoint& v : h.values) ys.push_back(v.value);
  auto [lo, hi] = ValueRange(ys);
  bool log = rungs.max() / rungs.at(0) >= 8;
  Axis x = log ? LogAxis(rungs.at(0), rungs.max(), spec.resource_unit)
               : LinearAxis(0, rungs.max(), spec.resource_unit);
  x.ticks = rungs.milestones();
  x.tick_labels.clear();
  for (double r : rungs.milestones()) x.tick_labels.push_back(Fmt("%g", r));
  Frame f = ChartFrame(width, height, x, LinearAxis(lo, hi, spec.objective_metric));
  DrawFrame(c, f, "Rung ladder",
            "each trial's " + spec.objective_metric + " at every rung it reached (" +
                AlgorithmName(spec.algorithm) + ", " + AshaModeName(spec.mode) + " mode, eta " +
                std::to_string(spec.reduction_factor) + ")");
  std::vector<LegendEntry> legend = {{Mark::kTriangle, kPromoted, "went on (continued/promoted)"}};
  for (TrialPhase p : {TrialPhase::kCompleted, TrialPhase::kStopped, TrialPhase::kPaused,
                       TrialPhase::kRunning, TrialPhase::kFailed}) {
    if (h.model.count(p) > 0) legend.push_back(PhaseMark(p));
  }
  DrawLegend(c, width, legend);
  for (int64_t i = 0; i < h.model.trial_count(); ++i) {
    const Trial& t = h.model.trial(i);
    std::vector<Point> line;
    for (const auto& [resource, value] : t.rung_values) {
      if (std::isfinite(value)) line.push_back(f.At(resource, value));
    }
    c.Line(line, {.color = kTrialLine, .width = 1.2, .opacity = 0.8});
  }
  for (int64_t i = 0; i < h.model.trial_count(); ++i) {
    const Trial& t = h.model.trial(i);
    for (auto it = t.rung_values.begin(); it != t.rung_values.end(); ++it) {
      if (!std::isfinite(it->second)) continue;
      bool last = std::next(it) == t.rung_values.end();
      bool promoted = h.promotions.contains({t.index, rungs.IndexOf(it->first)});
      LegendEntry mark =
          !last || promoted ? LegendEntry{Mark::kTriangle, kPromoted, ""} : PhaseMark(t.phase);
      Point p = f.At(it->first, it->second);
      DrawMark(c, mark.mark, p, mark.color);
      c.Hover(p, 6, TrialTooltip(h, t, it->first, it->second));
    }
  }
}

void DrawBurnDownChart(Canvas& c, const History& h, const std::vector<Event>& events, double width,
                       double height) {
  const SweepSpec& spec = h.spec();
  double cap = spec.budget_gpu_hours;
  auto [unit, unit_name] = TimeUnit(h.end - h.start);
  std::vector<Point> used, committed, remaining;
  double top = cap;
  std::vector<double> times = BurnDownTimes(h, events);
  std::vector<Ledger> ledgers;
  for (double t : times) {
    ledgers.push_back(LedgerAt(h.spans, cap, t));
    top = std::max(top, (ledgers.back().used() + ledgers.back().reserved()) / 3600);
  }
  Frame f = ChartFrame(
      width, height,
      LinearAxis(0, std::max(h.end - h.start, 1.0) / unit, unit_name + " since the sweep started"),
      LinearAxis(0, top, "GPU-hours"));
  const Ledger& last = ledgers.back();
  DrawFrame(c, f, "Budget burn-down",
            "at the end: used " + Num(last.used() / 3600) + ", reserved " +
                Num(last.reserved() / 3600) + ", remaining " + Num(last.remaining() / 3600) +
                " of the " + Num(cap) + " GPU-h cap");
  DrawLegend(c, width,
             {{Mark::kSwatch, kUsed, "used"},
              {Mark::kSwatch, kReserved, "reserved (running trials' deadlines)"},
              {Mark::kLine, kRemaining, "remaining"},
              {Mark::kDashedLine, kCap, "budget cap"}});
  for (size_t i = 0; i < times.size(); ++i) {
    double x = (times[i] - h.start) / unit;
    used.push_back(f.At(x, ledgers[i].used() / 3600));
    committed.push_back(f.At(x, (ledgers[i].used() + ledgers[i].reserved()) / 3600));
    remaining.push_back(f.At(x, ledgers[i].remaining() / 3600));
  }
  std::vector<Point> reserved_area = committed;
  reserved_area.insert(reserved_area.end(), used.rbegin(), used.rend());
  c.Fill(reserved_area, kReserved, 0.8);
  std::vector<Point> used_area = used;
  used_area.push_back({used.back().x, f.Y(0)});
  used_area.push_back({used.front().x, f.Y(0)});
  c.Fill(used_area, kUsed, 0.85);
  c.Line(remaining, {.color = kRemaining, .width = 2.5});
  c.Line({f.At(f.x.min, cap), f.At(f.x.max, cap)}, {.color = kCap, .width = 2, .dashed = true});
  c.Text({f.right() - 6, f.Y(cap) - 6}, "cap " + Num(cap) + " GPU-h",
         {.size = 12, .anchor = Anchor::kEnd, .color = kCap});
}

void DrawParamChart(Canvas& c, const History& h, const ParamSpec& param, double width,
                    double height) {
  const SweepSpec& spec = h.spec();
  bool categorical = param.type == ParamType::kChoice || param.type == ParamType::kGrid;
  std::vector<double> ys;
  for (const ValuePoint& v : h.values) ys.push_back(v.value);
  auto [lo, hi] = ValueRange(ys);
  Frame f = ChartFrame(width, height, ParamAxis(param), LinearAxis(lo, hi, spec.objective_metric));
  DrawFrame(c, f, spec.objective_metric + " against " + param.name,
            "each trial at its latest rung");
  DrawLegend(c, width, RungLegend(h, ""));
  int rungs = h.model.rungs().size();
  for (int64_t i = 0; i < h.model.trial_count(); ++i) {
    const Trial& t = h.model.trial(i);
    std::optional<double> x = ParamPosition(param, t.params);
    if (!x || t.rung_values.empty() || !std::isfinite(t.rung_values.rbegin()->second)) continue;
    auto [resource, value] = *t.rung_values.rbegin();
    if (categorical) *x += (std::fmod(static_cast<double>(i) * 0.618034, 1.0) - 0.5) * 0.5;
    Point p = f.At(*x, value);
    c.Dot(p, 4, RungColor(h.model.rungs().IndexOf(resource), rungs));
    c.Hover(p, 6, TrialTooltip(h, t, resource, value));
  }
}

void DrawProbeChart(Canvas& c, const History& h, double width, double height) {
  const ThroughputSpec& spec = h.spec().throughput;
  const std::vector<ProbeRun>& probes = h.model.probes();
  const std::optional<ThroughputDecision>& decision = h.model.throughput_decision();
  double fastest = 0;
  for (const ProbeRun& p : probes) {
    if (p.figures) fastest = std::max(fastest, p.figures->samples_per_second);
  }
  Frame f = ChartFrame(width, height, LinearAxis(0, fastest > 0 ? fastest : 1, "samples/s"),
                       LinearAxis(0, 1, ""));
  f.left = 300;
  f.width = width - f.left - 220;
  f.y = Axis{-0.5, static_cast<double>(probes.size()) - 0.5, false, "", {}, {}};
  DrawFrame(c, f, "Throughput probe",
            decision ? ReasonName(decision->reason) + (": " + decision->message)
                     : "probing; target utilization " + Num(spec.target_utilization));
  DrawLegend(c, width,
             {{Mark::kSwatch, kMetGate,
               "met the gate (utilization >= " + Num(spec.target_utilization) + ")"},
              {Mark::kSwatch, kBelowGate, "below the gate"}});
  for (size_t i = 0; i < probes.size(); ++i) {
    const ProbeRun& p = probes[i];
    bool chosen = decision && decision->chosen == static_cast<int>(i);
    double y = f.Y(static_cast<double>(probes.size() - 1 - i));
    std::string label = p.name.substr(p.name.size() - 5) + "  " +
                        (p.settings.empty() ? "baseline (template)" : SettingsText(p.settings));
    c.Text({f.left - 10, y + 5}, label, {.size = 13, .anchor = Anchor::kEnd, .bold = chosen});
    if (!p.figures) {
      std::string why = !p.ended            ? "running"
                        : p.message.empty() ? p.reason
                                            : p.reason + " (" + p.message + ")";
      c.Text({f.left + 8, y + 5}, "measured nothing: " + why, {.size = 13, .color = kStopped});
      continue;
    }
    double rate = p.figures->samples_per_second, utilization = p.figures->utilization();
    double x = f.X(rate), half = std::min(11.0, f.height / static_cast<double>(probes.size()) / 3);
    c.Fill({{f.left, y - half}, {x, y - half}, {x, y + half}, {f.left, y + half}},
           utilization >= spec.target_utilization ? kMetGate : kBelowGate, 0.85);
    c.Text({x + 8, y + 5},
           Num(rate) + "/s, utilization " + Num(utilization) + (chosen ? "  (chosen)" : ""),
           {.size = 13, .bold = chosen});
  }
}

std::optional<double> ParamPosition(const ParamSpec& param, const Config& params) {
  for (const auto& [name, value] : params) {
    if (name != param.name) continue;
    if (param.type != ParamType::kChoice && param.type != ParamType::kGrid) {
      return value.is_number() ? std::optional(value.get<double>()) : std::nullopt;
    }
    auto it = std::find(param.values.begin(), param.values.end(), value);
    if (it == param.values.end()) return std::nullopt;
    return static_cast<double>(it - param.values.begin());
  }
  return std::nullopt;
}

}  // namespace bsw::report
