#ifndef BSW_CORE_EVENT_H_
#define BSW_CORE_EVENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "base/status.h"
#include "nlohmann/json.hpp"
#include "operator/core/probe.h"
#include "operator/core/search_space.h"

namespace bsw {

enum class SweepPhase { kPending, kProbing, kRunning, kCompleted, kBudgetExhausted, kFailed };
const char* SweepPhaseName(SweepPhase phase);

// What a rung decided for a trial that reached it. Stop mode: continue or stop when its value
// arrives; pause mode: promote when a slot takes it on.
enum class Verdict { kContinue, kStop, kPromote };
const char* VerdictName(Verdict verdict);

// The changes to a sweep, one struct per kind. Each carries `at`, the unix seconds when it was
// decided. Events about a trial carry `trial`; those about a probe carry `probe` (which the
// journal writes under the key "trial", as it always has).
namespace event {

struct TrialCreated {
  double at = 0;
  int64_t trial = -1;
  Config params{};
};

struct SegmentLaunched {
  double at = 0;
  int64_t trial = -1;
  int segment = 0;
  double from = 0;   // resource at launch
  double until = 0;  // the trainer exits on reaching it
  double deadline = 0;
};

// Progress measured in the segment: the objective at a rung's resource, the seconds from the
// segment's start and the units from its `from`.
struct ValueRecorded {
  double at = 0;
  int64_t trial = -1;
  double resource = 0;
  double value = 0;
  double seconds = 0;
  double units = 0;
};

struct DeadlineMoved {
  double at = 0;
  int64_t trial = -1;
  int segment = 0;
  double deadline = 0;
};

// The sweep decided to stop the trial.
struct TrialStopped {
  double at = 0;
  int64_t trial = -1;
  std::string reason{};
  std::string message{};
};

struct TrialPromoted {
  double at = 0;
  int64_t trial = -1;
  int rung = 0;
  std::string message{};  // why, when it skips the 1/η quota
};

struct SegmentEnded {
  double at = 0;
  int64_t trial = -1;
  int segment = 0;
  std::string reason{};  // "" when it succeeded
  std::string message{};
  std::string output{};  // the end of the trainer's output when it failed (OutputTail)
  // The backend's start and finish times (0 when it never ran) and its charged devices. Recorded
  // so the charge outlives the backend's own record (a deleted pod).
  double started = 0;
  double finished = 0;
  int devices = 0;
};

struct SweepFinished {
  double at = 0;
  SweepPhase phase = SweepPhase::kRunning;
  std::string reason{};
  std::string message{};
};

struct ProbeLaunched {
  double at = 0;
  int64_t probe = -1;
  Config params{};  // the probe's settings
  double deadline = 0;
};

struct ProbeMeasured {
  double at = 0;
  int64_t probe = -1;
  ProbeFigures figures{};
};

struct ProbeEnded {
  double at = 0;
  int64_t probe = -1;
  std::string reason{};  // "" when measured
  std::string message{};
  std::string output{};
  double seconds = 0;  // charged device-seconds
};

struct ThroughputDecided {
  double at = 0;
  int64_t probe = -1;  // the chosen probe, -1 for none
  std::string reason{};
  std::string message{};
  Config params{};
};

// The model's record of this is bsw::RungVerdict.
struct RungVerdict {
  double at = 0;
  int64_t trial = -1;
  int rung = 0;
  double resource = 0;
  Verdict verdict = Verdict::kContinue;  // kContinue or kStop
  std::string message{};                 // why a stop
};

// pbt and pb2: the paused trial goes on from donor's checkpoint at `rung` with `params` (the
// donor's, with the mutable ones explored). The trainer loads that checkpoint instead of its own.
struct TrialExploited {
  double at = 0;
  int64_t trial = -1;
  int rung = 0;
  int64_t donor = -1;
  Config params{};
  std::string message{};  // what it copied and changed, for people
};

}  // namespace event

// A change to the sweep, as written to the journal before it is carried out. Replaying the
// journal's events in order rebuilds the model exactly, including every ASHA decision: each is a
// recorded event (RungVerdict, TrialPromoted), never recomputed.
using Event = std::variant<event::TrialCreated, event::SegmentLaunched, event::ValueRecorded,
                           event::DeadlineMoved, event::TrialStopped, event::TrialPromoted,
                           event::SegmentEnded, event::SweepFinished, event::ProbeLaunched,
                           event::ProbeMeasured, event::ProbeEnded, event::ThroughputDecided,
                           event::RungVerdict, event::TrialExploited>;

// The kind's name, as the journal writes it: "TrialCreated".
const char* EventName(const Event& event);
// When the event was decided.
double EventTime(const Event& event);
// The trial the event is about; nullopt for the probe phase and the sweep's end.
std::optional<int64_t> EventTrial(const Event& event);

// The journal's record: {"event": name, "at": ..., and the kind's own fields}. A number that is
// NaN or infinite is written as the string "NaN", "+Inf" or "-Inf" (JSON has no such numbers);
// every other number as a JSON number.
nlohmann::json EventToJson(const Event& event);
// Reads a record leniently, as journals of every version wrote them: a missing trial, segment or
// rung reads as -1; "+Inf" and "-Inf" as infinities; "NaN" and null (as the releases before wrote
// every non-finite number) as NaN; unknown keys (such as "seq") are ignored.
StatusOr<Event> EventFromJson(const nlohmann::json& j);

}  // namespace bsw

#endif  // BSW_CORE_EVENT_H_
