#include "operator/core/pool_spec.h"

#include <optional>
#include <vector>

#include "operator/core/api.h"
#include "operator/core/field_reader.h"
#include "operator/core/rfc3339.h"

namespace bsw {
namespace {

using nlohmann::json;

void ParsePoolMetadata(const json& metadata, std::vector<std::string>* errors, PoolSpec* pool) {
  FieldReader m(metadata, "metadata", errors);
  if (std::optional<std::string> name = m.String("name", true)) {
    if (!IsDnsLabel(*name, 253)) m.Error("name", "must be a DNS label, got \"" + *name + "\"");
    pool->name = *name;
  }
  m.Has("namespace");
  m.Has("generation");
  AcceptServerMetadata(m);
  m.Finish();
}

// spec.period: calendarMonth or a duration of at most a year.
void ParsePeriod(FieldReader& f, PoolSpec* pool) {
  std::optional<std::string> period = f.String("period", false);
  if (!period) return;
  std::optional<double> seconds = PeriodSeconds(*period);
  if (*period != "calendarMonth" && !seconds) {
    f.Error("period",
            "must be calendarMonth or a duration in m, h or d such as 720h or 30d, "
            "got \"" +
                *period + "\"");
  } else if (seconds && *seconds > kMaxPoolPeriodSeconds) {
    f.Error("period", "out of range: must be at most " + NumberText(kMaxPoolPeriodSeconds / 86400) +
                          "d (a year), got \"" + *period + "\"");
  }
  pool->period = *period;
}

void ParsePoolBody(const json& body, std::vector<std::string>* errors, PoolSpec* pool) {
  FieldReader f(body, "spec", errors);
  const std::string largest = "the largest budget a pool may have";
  if (std::optional<double> h = f.Positive("gpuHours", true, kMaxGpuHours, largest)) {
    pool->gpu_hours = *h;
  }
  if (std::optional<double> h = f.Positive("maxPerSweepGpuHours", false, kMaxGpuHours, largest)) {
    pool->max_per_sweep_gpu_hours = *h;
  }
  ParsePeriod(f, pool);
  f.Finish();
}

// A time of the pool's state at `key`, as PoolStateJson writes it.
std::optional<double> TimeField(FieldReader& f, const std::string& key) {
  std::optional<std::string> text = f.String(key, true);
  if (!text) return std::nullopt;
  std::optional<double> t = ParseRfc3339(*text);
  if (!t) f.Error(key, "must be a UTC time such as 2026-12-01T00:00:00Z, got \"" + *text + "\"");
  return t;
}

void ParseAccounts(FieldReader& top, const json& sweeps, std::vector<std::string>* errors,
                   PoolState* out) {
  if (!sweeps.is_array())
    top.Error("sweeps", "must be a list, got " + FieldReader::Describe(sweeps));
  for (size_t i = 0; sweeps.is_array() && i < sweeps.size(); ++i) {
    FieldReader a(sweeps[i], top.PathOf("sweeps") + "[" + std::to_string(i) + "]", errors);
    if (!sweeps[i].is_object()) {
      top.ItemError("sweeps", i, "must be an object");
      continue;
    }
    std::optional<std::string> key = a.String("key", true);
    PoolAccount account;
    account.sweep = a.String("sweep", true).value_or("");
    account.used_device_seconds = a.Number("usedDeviceSeconds", true).value_or(0);
    account.reserved_device_seconds = a.Number("reservedDeviceSeconds", true).value_or(0);
    account.carried_device_seconds = a.Number("carriedDeviceSeconds", false).value_or(0);
    account.active = a.Bool("active").value_or(false);
    account.starved = a.Bool("starved").value_or(false);
    a.Finish();
    if (key && !out->accounts.emplace(*key, account).second) {
      top.ItemError("sweeps", i, "a second account of key \"" + *key + "\"");
    }
  }
}

void ParsePastPeriods(FieldReader& top, const json& past, std::vector<std::string>* errors,
                      PoolState* out) {
  if (!past.is_array()) {
    top.Error("previousPeriods", "must be a list, got " + FieldReader::Describe(past));
  }
  for (size_t i = 0; past.is_array() && i < past.size(); ++i) {
    if (!past[i].is_object()) {
      top.ItemError("previousPeriods", i, "must be an object");
      continue;
    }
    FieldReader p(past[i], top.PathOf("previousPeriods") + "[" + std::to_string(i) + "]", errors);
    PastPeriod ended;
    ended.start = TimeField(p, "start").value_or(0);
    ended.end = TimeField(p, "end").value_or(0);
    ended.used_device_seconds = p.Number("usedGpuHours", true).value_or(0) * 3600;
    p.Finish();
    out->past.push_back(ended);
  }
}

}  // namespace

StatusOr<PoolSpec> ParsePool(const nlohmann::json& object) {
  std::vector<std::string> errors;
  PoolSpec pool;
  if (!object.is_object()) {
    return InvalidArgumentError("(document): must be a BudgetPool object, got " +
                                FieldReader::Describe(object));
  }
  FieldReader top(object, "", &errors);
  CheckTypeMeta(top, kPoolKind);
  if (const json* metadata = top.Object("metadata", true)) {
    ParsePoolMetadata(*metadata, &errors, &pool);
  }
  if (const json* body = top.Object("spec", true)) ParsePoolBody(*body, &errors, &pool);
  top.Has("status");
  top.Finish();
  if (Status s = ErrorsStatus(errors); !s.ok()) return s;
  return pool;
}

StatusOr<PoolState> ParsePoolState(const nlohmann::json& state, const std::string& where) {
  std::vector<std::string> errors;
  PoolState out;
  if (!state.is_object()) {
    return InvalidArgumentError(where + ": must be an object, got " + FieldReader::Describe(state));
  }
  FieldReader top(state, where, &errors);
  for (const char* key : {"usedGpuHours", "reservedGpuHours", "remainingGpuHours", "activeSweeps",
                          "conditions", "observedGeneration", "pool"}) {
    top.Has(key);  // derived, or the writer's own: read again from the accounts
  }
  if (const json* sweeps = top.Get("sweeps")) ParseAccounts(top, *sweeps, &errors, &out);
  if (const json* period = top.Object("period", false)) {
    FieldReader p(*period, top.PathOf("period"), &errors);
    out.period_start = TimeField(p, "start");
    out.period_end = TimeField(p, "end");
    p.Finish();
  }
  if (const json* past = top.Get("previousPeriods")) ParsePastPeriods(top, *past, &errors, &out);
  top.Finish();
  if (Status s = ErrorsStatus(errors); !s.ok()) return s;
  return out;
}

}  // namespace bsw
