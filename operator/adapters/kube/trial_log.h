#ifndef BSW_ADAPTERS_KUBE_TRIAL_LOG_H_
#define BSW_ADAPTERS_KUBE_TRIAL_LOG_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/pod_backend.h"
#include "operator/ports/event_log.h"

namespace bsw::kube {

// A sweep's event log kept in the Kubernetes API, so that a restarted (or newly elected) operator
// rebuilds every decision: one BudgetSweepTrial object per trial (named after the trial, labelled
// with the sweep, owned by it) holds that trial's events in status.events; the sweep's own events
// (the probe phase, SweepFinished) go to the sweep's status.sweepEvents. Every event carries a
// sweep-wide sequence number, and ReadAll returns them in that order.
//
// Append writes the events in order, one write per run of consecutive events of the same trial,
// each with the resourceVersion it last saw (a Conflict re-reads the object and adds only what
// it lacks). A crash part-way leaves a prefix of the events recorded, as a torn journal would.
// Status stays bounded: a sweep object never holds per-trial records.
//
// Not thread-safe; one per sweep, used by its controller only.
class TrialLog final : public EventLog {
 public:
  // `owner` is the sweep (name, uid). Up to `cached_trials` trial objects are kept in memory to
  // write without a read first: writes go to the running trials, a few at a time, so twice the
  // sweep's parallelism covers them and those that just ended; a trial written again after
  // eviction is read first. REQUIRES: client outlives the log; cached_trials >= 1.
  TrialLog(Client& client, std::string ns, SweepOwner owner, size_t cached_trials);

  // Also deletes the records an earlier sweep of the same name left, which would block ours.
  StatusOr<std::vector<Event>> ReadAll() override;
  // As ReadAll, holding the records listed in MessagePack (a small fraction of their parsed size)
  // and decoding each only to hand it to `apply`: a restart of a sweep of 20,000 trials never
  // holds all of its events, parsed, at once.
  Status ForEach(const std::function<Status(const Event&)>& apply) override;
  // The same events as ReadAll, for readers that write nothing (budgetsweep report): another
  // sweep's records are skipped, not deleted.
  StatusOr<std::vector<Event>> ReadWithoutCollecting() { return ReadVector(false); }
  Status Append(const std::vector<Event>& events) override;
  std::string Describe() const override;

 private:
  Status Read(bool collect_stale, const std::function<Status(const Event&)>& apply);
  StatusOr<std::vector<Event>> ReadVector(bool collect_stale);
  Status WriteTrial(int64_t trial, const std::vector<Json>& records, const Config* params);
  // The trial's object as last written or read: cached, read from the server, or null when it
  // does not exist yet.
  StatusOr<Json> Current(int64_t trial);
  // Keeps what a later write needs (metadata without managedFields, spec, status), evicting the
  // oldest trial beyond cached_trials_.
  void Cache(int64_t trial, Json object);
  Status WriteSweep(const std::vector<Json>& records);
  Json NewObject(int64_t trial, const Config& params) const;

  Client& client_;
  const std::string ns_;
  const SweepOwner owner_;
  const size_t cached_trials_;
  int64_t next_seq_ = 0;
  std::set<int64_t> existing_;     // trials whose object exists
  std::map<int64_t, Json> cache_;  // at most cached_trials_ of them
  Json sweep_events_ = Json::array();
};

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_TRIAL_LOG_H_
