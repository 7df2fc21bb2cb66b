#include "operator/adapters/kube/trial_log.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <variant>

#include "operator/adapters/kube/errors.h"
#include "operator/adapters/kube/resources.h"

namespace bsw::kube {
namespace {

// -1 for a record without a numeric seq: the CRD leaves a record's fields open.
int64_t SeqOf(const Json& record) {
  auto seq = record.find("seq");
  return seq != record.end() && seq->is_number() ? seq->get<int64_t>() : -1;
}

std::string OwnerUid(const Json& object) {
  for (const Json& ref : object.value("/metadata/ownerReferences"_json_pointer, Json::array())) {
    if (ref.value("controller", false)) return ref.value("uid", "");
  }
  return "";
}

// `records` followed by those of `more` it does not hold yet (a write retried after a timeout
// that did land must not record its events twice).
Json Merged(const Json& records, const std::vector<Json>& more) {
  Json merged = records;
  for (const Json& r : more) {
    if (std::find(records.begin(), records.end(), r) == records.end()) merged.push_back(r);
  }
  return merged;
}

// Event records in MessagePack, appended to chunks of 1 MiB (a growing buffer would briefly need
// twice its size), with their sequence numbers.
class RecordStore {
 public:
  void Add(int64_t seq, const Json& record) {
    std::vector<std::uint8_t> bytes = Json::to_msgpack(record);
    if (chunks_.empty() || chunks_.back().size() + bytes.size() > kChunkBytes) {
      chunks_.emplace_back().reserve(std::max(kChunkBytes, bytes.size()));
    }
    std::vector<std::uint8_t>& chunk = chunks_.back();
    index_.push_back({seq, static_cast<uint32_t>(chunks_.size() - 1),
                      static_cast<uint32_t>(chunk.size()), static_cast<uint32_t>(bytes.size())});
    chunk.insert(chunk.end(), bytes.begin(), bytes.end());
  }
  // Adds each record of the array `records`; false, at the first, when one has no seq.
  bool AddAll(const Json& records) {
    for (const Json& r : records) {
      if (SeqOf(r) < 0) return false;
      Add(SeqOf(r), r);
    }
    return true;
  }
  // Orders the records by sequence number; records of equal numbers keep their order.
  void SortBySeq() {
    std::stable_sort(index_.begin(), index_.end(),
                     [](const Entry& a, const Entry& b) { return a.seq < b.seq; });
  }
  size_t size() const { return index_.size(); }
  int64_t Seq(size_t i) const { return index_[i].seq; }
  Json Record(size_t i) const {
    const Entry& e = index_[i];
    auto first = chunks_[e.chunk].begin() + static_cast<std::ptrdiff_t>(e.offset);
    return Json::from_msgpack(first, first + static_cast<std::ptrdiff_t>(e.size), true,
                              /*allow_exceptions=*/false);
  }

 private:
  static constexpr size_t kChunkBytes = size_t{1} << 20;
  struct Entry {
    int64_t seq;
    uint32_t chunk;
    uint32_t offset;
    uint32_t size;
  };
  std::vector<std::vector<std::uint8_t>> chunks_;
  std::vector<Entry> index_;
};

// Hands the records, in seq order, to `apply` as events; `next_seq` follows the last applied.
// `where` names the log in errors.
Status Replay(RecordStore& records, const std::string& where,
              const std::function<Status(const Event&)>& apply, int64_t& next_seq) {
  records.SortBySeq();
  next_seq = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    StatusOr<Event> e = EventFromJson(records.Record(i));
    if (!e.ok()) return InvalidArgumentError(where + ": " + e.status().message());
    if (Status s = apply(*e); !s.ok()) return s;
    next_seq = records.Seq(i) + 1;
  }
  return OkStatus();
}

}  // namespace

TrialLog::TrialLog(Client& client, std::string ns, SweepOwner owner, size_t cached_trials)
    : client_(client),
      ns_(std::move(ns)),
      owner_(std::move(owner)),
      cached_trials_(std::max<size_t>(1, cached_trials)) {}

std::string TrialLog::Describe() const { return "budgetsweeptrials of " + ns_ + "/" + owner_.name; }

StatusOr<std::vector<Event>> TrialLog::ReadAll() { return ReadVector(true); }

StatusOr<std::vector<Event>> TrialLog::ReadVector(bool collect_stale) {
  std::vector<Event> events;
  Status read = Read(collect_stale, [&](const Event& e) {
    events.push_back(e);
    return OkStatus();
  });
  if (!read.ok()) return read;
  return events;
}

Status TrialLog::ForEach(const std::function<Status(const Event&)>& apply) {
  return Read(true, apply);
}

Status TrialLog::Read(bool collect_stale, const std::function<Status(const Event&)>& apply) {
  RecordStore records;
  existing_.clear();
  cache_.clear();
  ListOptions list;
  list.label_selector = std::string(kSweepLabel) + "=" + owner_.name;
  list.limit = 500;
  do {
    StatusOr<Json> page = client_.List(kBudgetSweepTrials, ns_, list);
    if (!page.ok()) return page.status();
    for (const Json& object : (*page)["items"]) {
      std::string name = object.value("/metadata/name"_json_pointer, "");
      if (OwnerUid(object) != owner_.uid) {
        // Left by an earlier sweep of the same name, not yet collected: it would block our
        // trial of the same name.
        if (!collect_stale) continue;
        Status deleted = client_.Delete(kBudgetSweepTrials, ns_, name);
        if (!deleted.ok() && !IsNotFound(deleted)) return deleted;
        continue;
      }
      int64_t index = object.value("/spec/index"_json_pointer, int64_t{-1});
      if (index < 0) return InvalidArgumentError(Describe() + ": " + name + " has no spec.index");
      existing_.insert(index);
      if (!records.AddAll(object.value("/status/events"_json_pointer, Json::array()))) {
        return InvalidArgumentError(Describe() + ": a record has no seq");
      }
    }
    list.continue_token = (*page).value("/metadata/continue"_json_pointer, "");
  } while (!list.continue_token.empty());

  StatusOr<Json> sweep = client_.Get(kBudgetSweeps, ns_, owner_.name);
  if (!sweep.ok()) return sweep.status();
  sweep_events_ = (*sweep).value("/status/sweepEvents"_json_pointer, Json::array());
  if (!records.AddAll(sweep_events_)) {
    return InvalidArgumentError(Describe() + ": a record has no seq");
  }
  return Replay(records, Describe(), apply, next_seq_);
}

Status TrialLog::Append(const std::vector<Event>& events) {
  size_t i = 0;
  while (i < events.size()) {
    // Events about one trial go to its object; the probe phase and the sweep's end to the sweep's.
    auto owner_of = [](const Event& e) { return EventTrial(e).value_or(-1); };
    int64_t trial = owner_of(events[i]);
    const Config* params = nullptr;
    std::vector<Json> run;
    for (; i < events.size() && owner_of(events[i]) == trial; ++i) {
      if (const auto* created = std::get_if<event::TrialCreated>(&events[i])) {
        params = &created->params;
      }
      Json record = EventToJson(events[i]);
      record["seq"] = next_seq_++;
      run.push_back(std::move(record));
    }
    Status written = trial < 0 ? WriteSweep(run) : WriteTrial(trial, run, params);
    if (!written.ok()) return written;
  }
  return OkStatus();
}

Json TrialLog::NewObject(int64_t trial, const Config& params) const {
  Json param_object = Json::object();
  for (const auto& [name, value] : params) param_object[name] = value;
  return {{"apiVersion", kBudgetSweepTrials.group + "/" + kBudgetSweepTrials.version},
          {"kind", "BudgetSweepTrial"},
          {"metadata",
           {{"name", TrialName(owner_.name, trial)},
            {"namespace", ns_},
            {"labels", {{kSweepLabel, owner_.name}}},
            {"ownerReferences", Json::array({{{"apiVersion", owner_.api_version},
                                              {"kind", owner_.kind},
                                              {"name", owner_.name},
                                              {"uid", owner_.uid},
                                              {"controller", true},
                                              {"blockOwnerDeletion", false}}})}}},
          {"spec", {{"sweep", owner_.name}, {"index", trial}, {"params", param_object}}},
          {"status", {{"events", Json::array()}}}};
}

StatusOr<Json> TrialLog::Current(int64_t trial) {
  if (auto it = cache_.find(trial); it != cache_.end()) return it->second;
  if (!existing_.contains(trial)) return Json();
  return client_.Get(kBudgetSweepTrials, ns_, TrialName(owner_.name, trial));
}

void TrialLog::Cache(int64_t trial, Json object) {
  existing_.insert(trial);
  // The server's field-manager bookkeeping is most of a small object, and a PUT without it keeps
  // it as it is.
  if (object.contains("metadata")) object["metadata"].erase("managedFields");
  cache_[trial] = std::move(object);
  // The oldest trials are the likeliest to be done.
  while (cache_.size() > cached_trials_) cache_.erase(cache_.begin());
}

Status TrialLog::WriteTrial(int64_t trial, const std::vector<Json>& records, const Config* params) {
  std::string name = TrialName(owner_.name, trial);
  StatusOr<Json> current = Current(trial);
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (!current.ok()) return current.status();
    bool create = current->is_null();
    Json object = create ? NewObject(trial, params ? *params : Config{}) : *current;
    object["status"]["events"] =
        Merged(create ? Json::array() : object.value("/status/events"_json_pointer, Json::array()),
               records);
    StatusOr<Json> written = create ? client_.Create(kBudgetSweepTrials, ns_, object)
                                    : client_.Update(kBudgetSweepTrials, ns_, object);
    if (written.ok()) {
      Cache(trial, std::move(written).value());
      return OkStatus();
    }
    if (!IsConflict(written.status()) && !IsAlreadyExists(written.status())) {
      return written.status();
    }
    // Someone wrote it since we read it (an earlier leader, or our own write that timed out):
    // take what is there and add what it lacks.
    current = client_.Get(kBudgetSweepTrials, ns_, name);
    if (current.ok() && OwnerUid(*current) != owner_.uid) {
      return FailedPreconditionError(Describe() + ": " + name + " belongs to another sweep");
    }
  }
  return UnavailableError(Describe() + ": " + name + " kept changing under us");
}

Status TrialLog::WriteSweep(const std::vector<Json>& records) {
  Json events = Merged(sweep_events_, records);
  StatusOr<Json> patched =
      client_.PatchStatus(kBudgetSweeps, ns_, owner_.name, {{"status", {{"sweepEvents", events}}}});
  if (!patched.ok()) return patched.status();
  sweep_events_ = std::move(events);
  return OkStatus();
}

}  // namespace bsw::kube
