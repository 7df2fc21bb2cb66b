#include "operator/core/ledger.h"

#include <algorithm>
#include <cstdio>

namespace bsw {

std::string Denial::Message() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: requested %.4f GPU-hours, remaining %.4f GPU-hours",
                reason.c_str(), requested_device_seconds / 3600.0,
                remaining_device_seconds / 3600.0);
  return buf;
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
  return Denial{"BudgetExhausted", requested, remaining()};
}

void Ledger::Release(double device_seconds) {
  reserved_ = std::max(0.0, reserved_ - device_seconds);
}

double Ledger::remaining() const { return std::max(0.0, budget_ - used_ - reserved_); }

void CostModel::Measure(double seconds, double units) {
  if (units <= 0 || seconds <= 0) return;
  recent_.push_back(seconds / units);
  if (recent_.size() > kWindow) recent_.pop_front();
}

std::optional<double> CostModel::SecondsPerUnit() const {
  if (recent_.empty()) return std::nullopt;
  return *std::max_element(recent_.begin(), recent_.end());
}

}  // namespace bsw
