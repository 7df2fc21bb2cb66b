#include "operator/core/pool.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <vector>

#include "operator/core/gpu_hours.h"
#include "operator/core/rfc3339.h"

namespace bsw {

PoolAccount StoreAccount(const std::string& key, const PoolAccount& account, PoolState* state) {
  PoolAccount& stored = state->accounts[key];
  PoolAccount before = stored;
  stored = account;
  stored.carried_device_seconds = before.carried_device_seconds;
  return before;
}

double PoolHeld(const PoolAccounts& accounts) {
  double held = 0;
  for (const auto& [key, account] : accounts) held += account.held();
  return held;
}

namespace {

// What the other sweeps of a pool hold, as one sweep (`key`, holding `held` in the current
// period) sees them.
struct Others {
  double held = 0;
  double reserved = 0;
  double inactive_held = 0;
  std::vector<double> active_held;
  // Whether the sweep waits first among the starved ones (its own account said starved).
  bool starved = false;
};

Others OthersOf(const PoolAccounts& accounts, const std::string& key, double held, bool starved) {
  Others others;
  others.starved = starved;
  for (const auto& [k, account] : accounts) {
    if (k == key) continue;
    others.held += account.held();
    others.reserved += account.reserved_device_seconds;
    if (!account.active) {
      others.inactive_held += account.held();
      continue;
    }
    double other = account.held();
    others.active_held.push_back(other);
    // Of the starved sweeps, the one holding least (then the first key) goes first: a sweep
    // whose passes come sooner cannot take every remainder from one that waits longer.
    if (account.starved && (other < held || (other == held && k < key))) others.starved = false;
  }
  return others;
}

// What the sweep may take of `pool_left`: each active sweep is entitled to an equal part of what
// the inactive ones do not hold; the part another active sweep has not taken yet is kept for it,
// scaled down when sweeps that took more than theirs left too little to keep every part whole. A
// starved sweep first in line takes all that is left while nobody else holds a reservation.
double FairShare(double budget, const Others& others, double held, double pool_left) {
  double entitlement = std::max(0.0, budget - others.inactive_held) /
                       static_cast<double>(others.active_held.size() + 1);
  double others_unused = 0;
  for (double h : others.active_held) others_unused += std::max(0.0, entitlement - h);
  double unused = others_unused + std::max(0.0, entitlement - held);
  double kept = unused <= pool_left ? others_unused : pool_left * others_unused / unused;
  return others.starved && others.reserved <= 0 ? pool_left : pool_left - kept;
}

}  // namespace

PoolCap CapOf(const PoolSpec& pool, const PoolAccounts& accounts, const std::string& key,
              double held_device_seconds) {
  double held = held_device_seconds;  // in the current period, once the carried part is off
  const double budget = pool.gpu_hours * 3600;
  bool starved = false;
  if (auto mine = accounts.find(key); mine != accounts.end()) {
    starved = mine->second.starved;
    held -= mine->second.carried_device_seconds;
  }
  const Others others = OthersOf(accounts, key, held, starved);
  double pool_left = std::max(0.0, budget - others.held - held);
  double sweep_left = pool.max_per_sweep_gpu_hours
                          ? std::max(0.0, *pool.max_per_sweep_gpu_hours * 3600 - held)
                          : pool_left;
  double share = FairShare(budget, others, held, pool_left);

  PoolCap cap;
  if (share < std::min(pool_left, sweep_left)) {
    cap.cap_device_seconds = held_device_seconds + share;
    cap.limit = Reason::kPoolFairShare;
    cap.waits = true;
  } else if (sweep_left < pool_left) {
    cap.cap_device_seconds = held_device_seconds + sweep_left;
    cap.limit = Reason::kPoolMaxPerSweep;  // the sweep's own: nothing comes back
  } else {
    cap.cap_device_seconds = held_device_seconds + pool_left;
    cap.limit = Reason::kPoolExhausted;
    cap.waits = others.reserved > 0;
  }
  return cap;
}

std::optional<double> PeriodSeconds(const std::string& period) {
  if (period.size() < 2) return std::nullopt;
  double unit = 0;
  switch (period.back()) {
    case 'm':
      unit = 60;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'd':
      unit = 86400;
      break;
    default:
      return std::nullopt;
  }
  int64_t count = 0;
  const char* end = period.data() + period.size() - 1;
  auto [stop, ec] = std::from_chars(period.data(), end, count);
  if (ec != std::errc() || stop != end || count <= 0 || period.front() == '0') return std::nullopt;
  return static_cast<double>(count) * unit;
}

namespace {

// The UTC calendar month that `now` falls in, as [start, end).
std::pair<double, double> MonthOf(double now) {
  const auto t = static_cast<std::time_t>(std::floor(now));
  std::tm utc{};
  gmtime_r(&t, &utc);
  std::tm first{};
  first.tm_year = utc.tm_year;
  first.tm_mon = utc.tm_mon;
  first.tm_mday = 1;
  std::tm next = first;
  next.tm_mon += 1;  // timegm carries December into January
  return {static_cast<double>(timegm(&first)), static_cast<double>(timegm(&next))};
}

}  // namespace

void RollPeriod(const PoolSpec& pool, double now, PoolState* state) {
  if (pool.period.empty()) return;
  if (state->period_end && now < *state->period_end) return;
  double start = now;
  double end = now;
  if (std::optional<double> length = PeriodSeconds(pool.period)) {
    if (state->period_start && *state->period_start <= now) {
      start = *state->period_start + std::floor((now - *state->period_start) / *length) * *length;
    }
    end = start + *length;
  } else {
    std::tie(start, end) = MonthOf(now);
  }
  if (state->period_start) {
    PastPeriod ended{.start = *state->period_start, .end = *state->period_end};
    for (const auto& [key, account] : state->accounts) {
      ended.used_device_seconds += account.used_device_seconds - account.carried_device_seconds;
    }
    state->past.insert(state->past.begin(), ended);
    if (state->past.size() > kMaxPastPeriods) state->past.resize(kMaxPastPeriods);
  }
  std::erase_if(state->accounts, [](const auto& entry) {
    return !entry.second.active && entry.second.reserved_device_seconds <= 0;
  });
  for (auto& [key, account] : state->accounts) {
    account.carried_device_seconds = account.used_device_seconds;
  }
  state->period_start = start;
  state->period_end = end;
}

namespace {

// The pool's GPU-hour totals for people, to 0.0001 (0.36 device-seconds); the accounts keep the
// exact device-seconds.
constexpr int kPoolHoursDecimals = 4;

}  // namespace

nlohmann::json PoolStateJson(const PoolSpec& pool, const PoolState& state) {
  using nlohmann::json;
  double used = 0;
  double reserved = 0;
  int64_t active = 0;
  json sweeps = json::array();
  for (const auto& [key, a] : state.accounts) {
    used += a.used_device_seconds - a.carried_device_seconds;
    reserved += a.reserved_device_seconds;
    active += a.active ? 1 : 0;
    sweeps.push_back({{"key", key},
                      {"sweep", a.sweep},
                      {"usedDeviceSeconds", a.used_device_seconds},
                      {"reservedDeviceSeconds", a.reserved_device_seconds},
                      {"carriedDeviceSeconds", a.carried_device_seconds},
                      {"active", a.active},
                      {"starved", a.starved}});
  }
  json out = {
      {"usedGpuHours", RoundedGpuHours(used, kPoolHoursDecimals)},
      {"reservedGpuHours", RoundedGpuHours(reserved, kPoolHoursDecimals)},
      {"remainingGpuHours",
       std::max(0.0, RoundedGpuHours(pool.gpu_hours * 3600 - used - reserved, kPoolHoursDecimals))},
      {"activeSweeps", active},
      {"sweeps", std::move(sweeps)}};
  if (!pool.period.empty() && state.period_start && state.period_end) {
    out["period"] = {{"start", Rfc3339(*state.period_start)}, {"end", Rfc3339(*state.period_end)}};
  }
  if (!state.past.empty()) {
    json past = json::array();
    for (const PastPeriod& p : state.past) {
      past.push_back(
          {{"start", Rfc3339(p.start)},
           {"end", Rfc3339(p.end)},
           {"usedGpuHours", RoundedGpuHours(p.used_device_seconds, kPoolHoursDecimals)}});
    }
    out["previousPeriods"] = std::move(past);
  }
  return out;
}

}  // namespace bsw
