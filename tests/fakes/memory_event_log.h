#ifndef BSW_TESTS_FAKES_MEMORY_EVENT_LOG_H_
#define BSW_TESTS_FAKES_MEMORY_EVENT_LOG_H_

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "nlohmann/json.hpp"
#include "operator/core/event.h"
#include "operator/ports/event_log.h"

namespace bsw {

// An EventLog in memory, for controller tests: a Journal without the disk. Each event is kept as
// the record a journal writes (EventToJson) and read back through EventFromJson, so what a test
// replays is what a journal would replay, the codec's rounding of every field included. A test
// that restarts a controller hands the new one the same log.
class MemoryEventLog final : public EventLog {
 public:
  StatusOr<std::vector<Event>> ReadAll() override {
    std::vector<Event> events;
    for (size_t i = 0; i < records_.size(); ++i) {
      StatusOr<Event> e = EventFromJson(records_[i]);
      if (!e.ok()) {
        return InvalidArgumentError(Describe() + ": record " + std::to_string(i + 1) + ": " +
                                    e.status().message());
      }
      events.push_back(std::move(*e));
    }
    return events;
  }

  Status Append(const std::vector<Event>& events) override {
    if (!append_error_.ok()) return append_error_;
    for (const Event& e : events) records_.push_back(EventToJson(e));
    return OkStatus();
  }

  std::string Describe() const override { return "the memory event log"; }

  // Makes every Append from now on fail with `error` and keep none of its events, as a journal
  // whose disk is full; OkStatus() lets them succeed again.
  void FailAppends(Status error) { append_error_ = std::move(error); }

  // Every record appended so far, oldest first, as a journal's lines hold them.
  const std::vector<nlohmann::json>& records() const { return records_; }

 private:
  std::vector<nlohmann::json> records_;
  Status append_error_ = OkStatus();
};

}  // namespace bsw

#endif  // BSW_TESTS_FAKES_MEMORY_EVENT_LOG_H_
