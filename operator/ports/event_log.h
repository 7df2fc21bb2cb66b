#ifndef BSW_PORTS_EVENT_LOG_H_
#define BSW_PORTS_EVENT_LOG_H_

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "operator/core/sweep_model.h"

namespace bsw {

// The write-ahead record of one sweep's decisions. Events are durable when Append returns, before
// the actions they stand for are carried out; ReadAll returns them in the order they were
// appended, so replaying them rebuilds the model exactly. After a crash, what was appended is a
// prefix of what was meant to be: a write cut short loses only the events after it.
// Implementations: a local file (Journal), per-trial objects in the Kubernetes API.
class EventLog {
 public:
  virtual ~EventLog() = default;

  [[nodiscard]] virtual StatusOr<std::vector<Event>> ReadAll() = 0;
  // Hands every event ReadAll would return to `apply`, in the same order, and stops at the first
  // error it returns (that error is returned). A log may hand them out one at a time rather than
  // hold them all at once: a restarted operator replays a sweep of 20,000 trials this way.
  [[nodiscard]] virtual Status ForEach(const std::function<Status(const Event&)>& apply) {
    StatusOr<std::vector<Event>> events = ReadAll();
    if (!events.ok()) return events.status();
    for (const Event& e : *events) {
      if (Status s = apply(e); !s.ok()) return s;
    }
    return OkStatus();
  }
  [[nodiscard]] virtual Status Append(const std::vector<Event>& events) = 0;
  // Where the events live, for messages ("/state/journal.jsonl", "budgetsweeptrials of ns/x").
  virtual std::string Describe() const = 0;
};

}  // namespace bsw

#endif  // BSW_PORTS_EVENT_LOG_H_
