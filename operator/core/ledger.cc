#include "operator/core/ledger.h"

#include <algorithm>
#include <cstdio>

#include "operator/core/reason.h"

namespace bsw {

std::string Denial::Figures() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "requested %.4f GPU-hours, remaining %.4f GPU-hours",
                requested_device_seconds / 3600.0, remaining_device_seconds / 3600.0);
  return buf;
}

std::string Denial::Message() const {
  if (reason == Reason::kBudgetExhausted) return Figures();
  return std::string(ReasonName(reason)) + ": " + Figures();
}

void Ledger::Observe(const std::vector<SegmentStatus>& segments, double now) {
  used_ = 0;
  reserved_ = 0;
  for (const SegmentStatus& s : segments) {
    double devices = ChargedDevices(s.devices);
    if (s.started_unix_seconds) {
      double end = s.finished_unix_seconds.value_or(std::max(now, *s.started_unix_seconds));
      used_ += devices * std::max(0.0, end - *s.started_unix_seconds);
    }
    if (!s.finished_unix_seconds) {
      double from = std::max(now, s.started_unix_seconds.value_or(now));
      reserved_ += devices * std::max(0.0, s.deadline_unix_seconds - from);
    }
  }
}

std::optional<Denial> Ledger::Admit(double requested) {
  if (used_ + reserved_ + requested <= budget_) {
    reserved_ += requested;
    return std::nullopt;
  }
  Denial denial{limit_, requested, remaining()};
  denial.waits = waits_;
  return denial;
}

void Ledger::Limit(double cap, Reason limit, bool waits) {
  if (cap >= budget_) return;
  budget_ = cap;
  limit_ = limit;
  waits_ = waits;
}

void Ledger::Release(double device_seconds) {
  reserved_ = std::max(0.0, reserved_ - device_seconds);
}

double Ledger::remaining() const { return std::max(0.0, budget_ - used_ - reserved_); }

namespace {

// Seconds per unit between two measurements of one segment (never below 0), which share its
// start-up; nullopt when they are of the same length.
std::optional<double> Slope(const CostPoint& a, const CostPoint& b) {
  if (a.units == b.units) return std::nullopt;
  return std::max(0.0, (b.seconds - a.seconds) / (b.units - a.units));
}

void Push(std::deque<double>& window, double value, size_t size) {
  window.push_back(value);
  if (window.size() > size) window.pop_front();
}

std::optional<double> Largest(const std::deque<double>& window) {
  if (window.empty()) return std::nullopt;
  return *std::max_element(window.begin(), window.end());
}

}  // namespace

std::optional<LinearCost> FitLinearCost(const std::vector<std::vector<CostPoint>>& segments) {
  std::optional<double> steepest;
  for (const std::vector<CostPoint>& points : segments) {
    for (size_t i = 0; i < points.size(); ++i) {
      for (size_t j = i + 1; j < points.size(); ++j) {
        if (std::optional<double> slope = Slope(points[i], points[j])) {
          steepest = std::max(steepest.value_or(0.0), *slope);
        }
      }
    }
  }
  if (!steepest) return std::nullopt;
  LinearCost fit{0, *steepest};
  for (const std::vector<CostPoint>& points : segments) {
    for (const CostPoint& p : points) {
      fit.startup = std::max(fit.startup, p.seconds - fit.per_unit * p.units);
    }
  }
  return fit;
}

void CostModel::Measure(const CostPoint& point, const std::optional<CostPoint>& previous) {
  if (point.units <= 0 || point.seconds <= 0) return;
  Push(recent_, point.seconds / point.units, kWindow);
  if (std::optional<double> slope = previous ? Slope(*previous, point) : std::nullopt) {
    Push(marginal_, *slope, kWindow);
  }
}

std::optional<double> CostModel::SecondsPerUnit() const { return Largest(recent_); }

std::optional<double> CostModel::MarginalSecondsPerUnit() const { return Largest(marginal_); }

}  // namespace bsw
