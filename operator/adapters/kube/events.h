#ifndef BSW_ADAPTERS_KUBE_EVENTS_H_
#define BSW_ADAPTERS_KUBE_EVENTS_H_

#include <map>
#include <mutex>
#include <string>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/system_clock.h"
#include "operator/ports/clock.h"

namespace bsw::kube {

inline const Resource kEvents{"", "v1", "events", true};

enum class EventType { kNormal, kWarning };

// Records core/v1 Events about objects, as `kubectl describe` shows them. Best effort: a failure
// is logged and otherwise ignored, never returned. A repeat of the same (object, type, reason,
// message) bumps the count and lastTimestamp of the event already written. Thread-safe.
class EventRecorder {
 public:
  // `component` names the reporter (source.component), e.g. "budgetsweep-operator"; `clock`
  // stamps the events and must outlive the recorder.
  EventRecorder(Client& client, std::string component, const Clock& clock = SystemClock::Get());

  // `object` is the involved object as read from the API (apiVersion, kind, metadata).
  void Record(const Json& object, EventType type, const std::string& reason,
              const std::string& message);

 private:
  struct Recorded {
    std::string event_name;
    int count = 0;
  };

  Client& client_;
  const std::string component_;
  const Clock& clock_;
  std::mutex mu_;
  std::map<std::string, Recorded> recorded_;  // by object uid/key, type, reason, message
};

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_EVENTS_H_
