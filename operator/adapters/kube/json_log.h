#ifndef BSW_ADAPTERS_KUBE_JSON_LOG_H_
#define BSW_ADAPTERS_KUBE_JSON_LOG_H_

#include <nlohmann/json.hpp>
#include <string>

#include "operator/ports/clock.h"

namespace bsw::kube {

// Writes one JSON object per line to stderr: {"ts":..., "level":..., "event":..., ...fields}, "ts"
// from the clock InstallJsonLogger was given (SystemClock::Get() before it is called).
// Thread-safe; a line is never interleaved with another.
void LogEvent(const std::string& level, const std::string& event, nlohmann::json fields = {});

// Routes spdlog's default logger (which the Kubernetes client logs to) through LogEvent, as
// event "log" with the message in "msg", and stamps every line with `clock`, which must outlive
// the logging.
void InstallJsonLogger(const Clock& clock);

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_JSON_LOG_H_
