#include "operator/core/event.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <utility>

namespace bsw {
namespace {

using nlohmann::json;

// By the alternative's index in Event.
constexpr const char* kEventNames[] = {
    "TrialCreated",  "SegmentLaunched",   "ValueRecorded", "DeadlineMoved", "TrialStopped",
    "TrialPromoted", "SegmentEnded",      "SweepFinished", "ProbeLaunched", "ProbeMeasured",
    "ProbeEnded",    "ThroughputDecided", "RungVerdict",   "TrialExploited"};
static_assert(std::size(kEventNames) == std::variant_size_v<Event>);
constexpr const char* kVerdictNames[] = {"Continue", "Stop", "Promote"};
constexpr const char* kSweepPhaseNames[] = {"Pending",   "Probing",         "Running",
                                            "Completed", "BudgetExhausted", "Failed"};

// JSON has no NaN or infinities: they are written as Prometheus spells them, as strings. (The
// release before wrote them all as null, which reads back as NaN.)
constexpr const char kNaN[] = "NaN";
constexpr const char kPlusInf[] = "+Inf";
constexpr const char kMinusInf[] = "-Inf";

json Number(double v) {
  if (std::isnan(v)) return kNaN;
  if (std::isinf(v)) return v > 0 ? kPlusInf : kMinusInf;
  return v;
}

json ParamsJson(const Config& params) {
  json p = json::array();
  for (const auto& [name, v] : params) p.push_back({name, v});
  return p;
}

void Write(json& j, const event::TrialCreated& e) {
  j.update({{"trial", e.trial}, {"params", ParamsJson(e.params)}});
}

void Write(json& j, const event::SegmentLaunched& e) {
  j.update({{"trial", e.trial},
            {"segment", e.segment},
            {"from", Number(e.from)},
            {"until", Number(e.until)},
            {"deadline", Number(e.deadline)}});
}

void Write(json& j, const event::ValueRecorded& e) {
  j.update({{"trial", e.trial},
            {"resource", Number(e.resource)},
            {"value", Number(e.value)},
            {"seconds", Number(e.seconds)},
            {"units", Number(e.units)}});
}

void Write(json& j, const event::DeadlineMoved& e) {
  j.update({{"trial", e.trial}, {"segment", e.segment}, {"deadline", Number(e.deadline)}});
}

void Write(json& j, const event::TrialStopped& e) {
  j.update({{"trial", e.trial}, {"reason", e.reason}, {"message", e.message}});
}

void Write(json& j, const event::TrialPromoted& e) {
  j.update({{"trial", e.trial}, {"rung", e.rung}});
  if (!e.message.empty()) j["message"] = e.message;
}

void Write(json& j, const event::TrialExploited& e) {
  j.update({{"trial", e.trial},
            {"rung", e.rung},
            {"donor", e.donor},
            {"params", ParamsJson(e.params)},
            {"message", e.message}});
}

void Write(json& j, const event::SegmentEnded& e) {
  j.update(
      {{"trial", e.trial}, {"segment", e.segment}, {"reason", e.reason}, {"message", e.message}});
  if (!e.output.empty()) j["output"] = e.output;
  if (e.started > 0) {
    j.update(
        {{"started", Number(e.started)}, {"finished", Number(e.finished)}, {"devices", e.devices}});
  }
}

void Write(json& j, const event::SweepFinished& e) {
  j.update({{"phase", SweepPhaseName(e.phase)}, {"reason", e.reason}, {"message", e.message}});
}

void Write(json& j, const event::ProbeLaunched& e) {
  j.update(
      {{"trial", e.probe}, {"params", ParamsJson(e.params)}, {"deadline", Number(e.deadline)}});
}

void Write(json& j, const event::ProbeMeasured& e) {
  j.update({{"trial", e.probe},
            {"samplesPerSecond", Number(e.figures.samples_per_second)},
            {"dataWaitRatio", Number(e.figures.data_wait_ratio)}});
  if (e.figures.accelerator_utilization) {
    j["acceleratorUtilization"] = Number(*e.figures.accelerator_utilization);
  }
}

void Write(json& j, const event::ProbeEnded& e) {
  j.update({{"trial", e.probe},
            {"reason", e.reason},
            {"message", e.message},
            {"seconds", Number(e.seconds)}});
  if (!e.output.empty()) j["output"] = e.output;
}

void Write(json& j, const event::ThroughputDecided& e) {
  j.update({{"trial", e.probe},
            {"reason", e.reason},
            {"message", e.message},
            {"params", ParamsJson(e.params)}});
}

void Write(json& j, const event::RungVerdict& e) {
  j.update({{"trial", e.trial},
            {"rung", e.rung},
            {"resource", Number(e.resource)},
            {"verdict", VerdictName(e.verdict)}});
  if (!e.message.empty()) j["message"] = e.message;
}

// A record's fields, read leniently.
class Fields {
 public:
  explicit Fields(const json& j) : j_(j) {}

  std::string String(const char* key) const {
    return j_.contains(key) && j_.at(key).is_string() ? j_.at(key).get<std::string>() : "";
  }
  int64_t Integer(const char* key) const {
    return j_.contains(key) && j_.at(key).is_number_integer() ? j_.at(key).get<int64_t>() : -1;
  }
  int Small(const char* key) const { return static_cast<int>(Integer(key)); }
  // Missing: 0; "+Inf" and "-Inf": infinite; anything else but a number ("NaN", null): NaN.
  double Number(const char* key) const {
    if (!j_.contains(key)) return 0;
    const json& v = j_.at(key);
    if (v.is_number()) return v.get<double>();
    const std::string* text = v.get_ptr<const std::string*>();
    if (text != nullptr && *text == kPlusInf) return std::numeric_limits<double>::infinity();
    if (text != nullptr && *text == kMinusInf) return -std::numeric_limits<double>::infinity();
    return std::numeric_limits<double>::quiet_NaN();
  }
  Config Params() const {
    Config params;
    if (!j_.contains("params") || !j_.at("params").is_array()) return params;
    for (const json& p : j_.at("params")) {
      if (p.is_array() && p.size() == 2 && p[0].is_string()) {
        params.emplace_back(p[0].get<std::string>(), p[1]);
      }
    }
    return params;
  }
  bool Has(const char* key) const { return j_.contains(key); }

 private:
  const json& j_;
};

StatusOr<Event> ReadTrialCreated(const Fields& f) {
  return Event(
      event::TrialCreated{.at = f.Number("at"), .trial = f.Integer("trial"), .params = f.Params()});
}

StatusOr<Event> ReadSegmentLaunched(const Fields& f) {
  return Event(event::SegmentLaunched{.at = f.Number("at"),
                                      .trial = f.Integer("trial"),
                                      .segment = f.Small("segment"),
                                      .from = f.Number("from"),
                                      .until = f.Number("until"),
                                      .deadline = f.Number("deadline")});
}

StatusOr<Event> ReadValueRecorded(const Fields& f) {
  return Event(event::ValueRecorded{.at = f.Number("at"),
                                    .trial = f.Integer("trial"),
                                    .resource = f.Number("resource"),
                                    .value = f.Number("value"),
                                    .seconds = f.Number("seconds"),
                                    .units = f.Number("units")});
}

StatusOr<Event> ReadDeadlineMoved(const Fields& f) {
  return Event(event::DeadlineMoved{.at = f.Number("at"),
                                    .trial = f.Integer("trial"),
                                    .segment = f.Small("segment"),
                                    .deadline = f.Number("deadline")});
}

StatusOr<Event> ReadTrialStopped(const Fields& f) {
  return Event(event::TrialStopped{.at = f.Number("at"),
                                   .trial = f.Integer("trial"),
                                   .reason = f.String("reason"),
                                   .message = f.String("message")});
}

StatusOr<Event> ReadTrialPromoted(const Fields& f) {
  return Event(event::TrialPromoted{.at = f.Number("at"),
                                    .trial = f.Integer("trial"),
                                    .rung = f.Small("rung"),
                                    .message = f.String("message")});
}

StatusOr<Event> ReadSegmentEnded(const Fields& f) {
  return Event(event::SegmentEnded{.at = f.Number("at"),
                                   .trial = f.Integer("trial"),
                                   .segment = f.Small("segment"),
                                   .reason = f.String("reason"),
                                   .message = f.String("message"),
                                   .output = f.String("output"),
                                   .started = f.Number("started"),
                                   .finished = f.Number("finished"),
                                   .devices = std::max(0, f.Small("devices"))});
}

StatusOr<Event> ReadSweepFinished(const Fields& f) {
  event::SweepFinished e{
      .at = f.Number("at"), .reason = f.String("reason"), .message = f.String("message")};
  std::string phase = f.String("phase");
  for (size_t i = 0; i < std::size(kSweepPhaseNames); ++i) {
    if (phase == kSweepPhaseNames[i]) e.phase = static_cast<SweepPhase>(i);
  }
  return Event(std::move(e));
}

StatusOr<Event> ReadProbeLaunched(const Fields& f) {
  return Event(event::ProbeLaunched{.at = f.Number("at"),
                                    .probe = f.Integer("trial"),
                                    .params = f.Params(),
                                    .deadline = f.Number("deadline")});
}

StatusOr<Event> ReadProbeMeasured(const Fields& f) {
  event::ProbeMeasured e{.at = f.Number("at"), .probe = f.Integer("trial")};
  e.figures.samples_per_second = f.Number("samplesPerSecond");
  e.figures.data_wait_ratio = f.Number("dataWaitRatio");
  if (f.Has("acceleratorUtilization")) {
    e.figures.accelerator_utilization = f.Number("acceleratorUtilization");
  }
  return Event(std::move(e));
}

StatusOr<Event> ReadProbeEnded(const Fields& f) {
  return Event(event::ProbeEnded{.at = f.Number("at"),
                                 .probe = f.Integer("trial"),
                                 .reason = f.String("reason"),
                                 .message = f.String("message"),
                                 .output = f.String("output"),
                                 .seconds = f.Number("seconds")});
}

StatusOr<Event> ReadThroughputDecided(const Fields& f) {
  return Event(event::ThroughputDecided{.at = f.Number("at"),
                                        .probe = f.Integer("trial"),
                                        .reason = f.String("reason"),
                                        .message = f.String("message"),
                                        .params = f.Params()});
}

StatusOr<Event> ReadRungVerdict(const Fields& f) {
  std::string name = f.String("verdict");
  for (size_t i = 0; i < std::size(kVerdictNames); ++i) {
    if (name != kVerdictNames[i]) continue;
    return Event(event::RungVerdict{.at = f.Number("at"),
                                    .trial = f.Integer("trial"),
                                    .rung = f.Small("rung"),
                                    .resource = f.Number("resource"),
                                    .verdict = static_cast<Verdict>(i),
                                    .message = f.String("message")});
  }
  return InvalidArgumentError("journal record has unknown verdict \"" + name + "\"");
}

StatusOr<Event> ReadTrialExploited(const Fields& f) {
  return Event(event::TrialExploited{.at = f.Number("at"),
                                     .trial = f.Integer("trial"),
                                     .rung = f.Small("rung"),
                                     .donor = f.Integer("donor"),
                                     .params = f.Params(),
                                     .message = f.String("message")});
}

// By the alternative's index in Event, as kEventNames.
using Reader = StatusOr<Event> (*)(const Fields&);
constexpr Reader kReaders[] = {ReadTrialCreated,  ReadSegmentLaunched, ReadValueRecorded,
                               ReadDeadlineMoved, ReadTrialStopped,    ReadTrialPromoted,
                               ReadSegmentEnded,  ReadSweepFinished,   ReadProbeLaunched,
                               ReadProbeMeasured, ReadProbeEnded,      ReadThroughputDecided,
                               ReadRungVerdict,   ReadTrialExploited};
static_assert(std::size(kReaders) == std::variant_size_v<Event>);

}  // namespace

const char* SweepPhaseName(SweepPhase phase) {
  return kSweepPhaseNames[static_cast<size_t>(phase)];
}
const char* VerdictName(Verdict verdict) { return kVerdictNames[static_cast<size_t>(verdict)]; }

const char* EventName(const Event& event) { return kEventNames[event.index()]; }

double EventTime(const Event& event) {
  return std::visit([](const auto& e) { return e.at; }, event);
}

std::optional<int64_t> EventTrial(const Event& event) {
  return std::visit(
      [](const auto& e) -> std::optional<int64_t> {
        if constexpr (requires { e.trial; }) {
          return e.trial;
        } else {
          return std::nullopt;
        }
      },
      event);
}

json EventToJson(const Event& event) {
  json j = {{"event", EventName(event)}, {"at", Number(EventTime(event))}};
  std::visit([&j](const auto& e) { Write(j, e); }, event);
  return j;
}

StatusOr<Event> EventFromJson(const json& j) {
  if (!j.is_object() || !j.contains("event") || !j.at("event").is_string()) {
    return InvalidArgumentError("journal record has no \"event\" name");
  }
  const std::string name = j.at("event").get<std::string>();
  for (size_t i = 0; i < std::size(kEventNames); ++i) {
    if (name == kEventNames[i]) return kReaders[i](Fields(j));
  }
  return InvalidArgumentError("journal record has unknown event \"" + name + "\"");
}

}  // namespace bsw
