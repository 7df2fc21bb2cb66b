#ifndef BSW_PORTS_EVENT_LOG_H_
#define BSW_PORTS_EVENT_LOG_H_

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
  [[nodiscard]] virtual Status Append(const std::vector<Event>& events) = 0;
  // Where the events live, for messages ("/state/journal.jsonl", "budgetsweeptrials of ns/x").
  virtual std::string Describe() const = 0;
};

}  // namespace bsw

#endif  // BSW_PORTS_EVENT_LOG_H_
