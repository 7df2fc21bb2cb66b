#include "operator/adapters/kube/json_log.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>

#include "operator/adapters/system_clock.h"
#include "operator/core/rfc3339.h"

namespace bsw::kube {
namespace {

std::atomic<const Clock*>& LogClock() {
  static std::atomic<const Clock*> clock{&SystemClock::Get()};
  return clock;
}

std::string Now() { return Rfc3339(LogClock().load()->NowUnixSeconds(), /*microseconds=*/true); }

std::mutex& LogMutex() {
  static std::mutex mu;
  return mu;
}

// Keys in the order given: ts, level and event lead every line.
void WriteLine(const nlohmann::ordered_json& line) {
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text.push_back('\n');
  std::lock_guard lock(LogMutex());
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

class JsonSink : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    auto level = spdlog::level::to_string_view(msg.level);
    WriteLine({{"ts", Now()},
               {"level", std::string(level.data(), level.size())},
               {"event", "log"},
               {"msg", std::string(msg.payload.data(), msg.payload.size())}});
  }
  void flush_() override {}
};

}  // namespace

void LogEvent(const std::string& level, const std::string& event, nlohmann::json fields) {
  nlohmann::ordered_json line = {{"ts", Now()}, {"level", level}, {"event", event}};
  if (fields.is_object()) {
    for (const auto& [key, value] : fields.items()) line[key] = value;
  }
  WriteLine(line);
}

void InstallJsonLogger(const Clock& clock) {
  LogClock().store(&clock);
  auto logger = std::make_shared<spdlog::logger>("budgetsweep", std::make_shared<JsonSink>());
  spdlog::set_default_logger(logger);
}

}  // namespace bsw::kube
