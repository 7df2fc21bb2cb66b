#include "operator/adapters/kube/pool_gate.h"

#include <cmath>
#include <utility>
#include <vector>

#include "operator/adapters/kube/errors.h"
#include "operator/adapters/kube/resources.h"
#include "operator/core/api.h"
#include "operator/core/sweep_status.h"

namespace bsw::kube {
namespace {

StatusOr<PoolObject> PoolOf(Json object) {
  const std::string key = ObjectKey(object);
  StatusOr<PoolSpec> spec = ParsePool(object);
  if (!spec.ok()) {
    return InvalidArgumentError("BudgetPool " + key + " is not valid:\n" + spec.status().message());
  }
  StatusOr<PoolState> state = ParsePoolState(object.value("status", Json::object()), "status");
  if (!state.ok()) {
    return InvalidArgumentError("BudgetPool " + key + ": " + state.status().message());
  }
  return PoolObject{std::move(object), std::move(*spec), std::move(*state)};
}

// Writes `state` as the pool's status, unless that changes nothing.
Status WriteState(Client& client, const Clock& clock, PoolObject& pool, const PoolState& state) {
  Json status = PoolStatus(pool, state, clock.NowUnixSeconds());
  if (pool.object.value("status", Json()) == status) return OkStatus();
  Json object = pool.object;
  object["status"] = std::move(status);
  StatusOr<Json> written = client.UpdateStatus(
      kBudgetPools, object.value("/metadata/namespace"_json_pointer, ""), object);
  if (!written.ok()) return written.status();  // IsConflict: another pass wrote it since
  pool.object = std::move(*written);
  pool.state = state;
  return OkStatus();
}

}  // namespace

StatusOr<PoolObject> ReadPool(Client& client, const std::string& ns, const std::string& name) {
  StatusOr<Json> object = client.Get(kBudgetPools, ns, name);
  if (!object.ok()) return object.status();
  return PoolOf(std::move(*object));
}

Json PoolStatus(const PoolObject& pool, const PoolState& state, double now) {
  Json status = PoolStateJson(pool.spec, state);
  const int64_t generation = pool.object.value("/metadata/generation"_json_pointer, int64_t{0});
  const double remaining = status["remainingGpuHours"].get<double>();
  Condition available =
      remaining > 0 ? Condition{"Available", "True", "BudgetRemains",
                                "GPU-hours remain in the pool's current period"}
                    : Condition{"Available", "False", ReasonName(Reason::kPoolExhausted),
                                "every GPU-hour of the pool's current period is used or reserved"};
  status["observedGeneration"] = generation;
  status["conditions"] =
      MergeConditions(pool.object.value("/status/conditions"_json_pointer, Json::array()),
                      {available}, now, generation);
  return status;
}

PoolGate::PoolGate(Client& client, const Clock& clock, std::string ns, std::string pool,
                   std::string sweep_uid)
    : client_(client),
      clock_(clock),
      ns_(std::move(ns)),
      name_(std::move(pool)),
      uid_(std::move(sweep_uid)) {}

StatusOr<PoolCap> PoolGate::Acquire(double held_device_seconds) {
  StatusOr<PoolObject> read =
      read_ ? StatusOr<PoolObject>(std::move(*read_)) : ReadPool(client_, ns_, name_);
  read_.reset();
  if (!read.ok()) return read.status();
  pool_ = std::move(*read);
  read_period_start_ = pool_.state.period_start;
  RollPeriod(pool_.spec, clock_.NowUnixSeconds(), &pool_.state);
  return CapOf(pool_.spec, pool_.state.accounts, uid_, held_device_seconds);
}

Status PoolGate::Commit(const PoolAccount& account) {
  PoolState state = pool_.state;
  const PoolAccount before = StoreAccount(uid_, account, &state);
  const PoolAccount& mine = state.accounts[uid_];
  // While a segment runs, what it used grows as much as what it reserves shrinks: the account
  // counts the same in the pool, and is written again only now and then for the status's figures.
  const bool counts_the_same = state.accounts.size() == pool_.state.accounts.size() &&
                               std::abs(mine.held() - before.held()) < 1e-6 &&
                               mine.active == before.active && mine.starved == before.starved;
  const double now = clock_.MonotonicSeconds();
  if (counts_the_same && state.period_start == read_period_start_ &&
      now - written_at_ < kRefreshSeconds) {
    return OkStatus();
  }
  Status written = WriteState(client_, clock_, pool_, state);
  if (written.ok()) written_at_ = now;
  return written;
}

Status SettleDeletedSweep(Client& client, const Clock& clock, const std::string& ns,
                          const std::string& sweep, const std::optional<std::string>& pool) {
  std::vector<std::string> names;
  if (pool) {
    names.push_back(*pool);
  } else {
    StatusOr<Json> pools = client.List(kBudgetPools, ns);
    if (IsNotFound(pools.status())) return OkStatus();  // no BudgetPool kind on this cluster
    if (!pools.ok()) return pools.status();
    for (const Json& item : pools->value("items", Json::array())) {
      names.push_back(item.value("/metadata/name"_json_pointer, ""));
    }
  }
  for (const std::string& name : names) {
    Status settled = RetryOnConflict(
        [&]() -> Status {
          StatusOr<PoolObject> read = ReadPool(client, ns, name);
          if (IsNotFound(read.status())) return OkStatus();
          if (!read.ok()) return read.status();
          PoolState state = read->state;
          for (auto& [key, account] : state.accounts) {
            if (account.sweep != sweep) continue;
            account.used_device_seconds += account.reserved_device_seconds;
            account.reserved_device_seconds = 0;
            account.active = false;
            account.starved = false;
          }
          return WriteState(client, clock, *read, state);
        },
        5, &clock);
    if (!settled.ok()) return settled;
  }
  return OkStatus();
}

}  // namespace bsw::kube
