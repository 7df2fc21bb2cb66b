// The journal's records of events (EventToJson, EventFromJson): every kind carries every field
// there and back, and a record that cannot be read says which field is wrong. Journals of earlier
// releases and non-finite numbers are journal_test.cc's.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "nlohmann/json.hpp"
#include "operator/core/event.h"
#include "tests/unit/core/event_samples.h"

namespace bsw {
namespace {

using nlohmann::json;

// Every field of each kind, so that two events compare field by field.
auto Fields(const event::TrialCreated& e) { return std::tie(e.at, e.trial, e.params); }
auto Fields(const event::SegmentLaunched& e) {
  return std::tie(e.at, e.trial, e.segment, e.from, e.until, e.deadline);
}
auto Fields(const event::ValueRecorded& e) {
  return std::tie(e.at, e.trial, e.resource, e.value, e.seconds, e.units);
}
auto Fields(const event::DeadlineMoved& e) {
  return std::tie(e.at, e.trial, e.segment, e.deadline);
}
auto Fields(const event::TrialStopped& e) { return std::tie(e.at, e.trial, e.reason, e.message); }
auto Fields(const event::TrialPromoted& e) { return std::tie(e.at, e.trial, e.rung, e.message); }
auto Fields(const event::SegmentEnded& e) {
  return std::tie(e.at, e.trial, e.segment, e.reason, e.message, e.output, e.started, e.finished,
                  e.devices);
}
auto Fields(const event::SweepFinished& e) { return std::tie(e.at, e.phase, e.reason, e.message); }
auto Fields(const event::ProbeLaunched& e) { return std::tie(e.at, e.probe, e.params, e.deadline); }
auto Fields(const event::ProbeMeasured& e) {
  return std::tie(e.at, e.probe, e.figures.samples_per_second, e.figures.data_wait_ratio,
                  e.figures.accelerator_utilization);
}
auto Fields(const event::ProbeEnded& e) {
  return std::tie(e.at, e.probe, e.reason, e.message, e.output, e.seconds);
}
auto Fields(const event::ThroughputDecided& e) {
  return std::tie(e.at, e.probe, e.reason, e.message, e.params);
}
auto Fields(const event::RungVerdict& e) {
  return std::tie(e.at, e.trial, e.rung, e.resource, e.verdict, e.message);
}
auto Fields(const event::TrialExploited& e) {
  return std::tie(e.at, e.trial, e.rung, e.donor, e.params, e.message);
}

bool Same(const Event& a, const Event& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&b](const auto& e) { return Fields(e) == Fields(std::get<std::decay_t<decltype(e)>>(b)); },
      a);
}

TEST(EventCodec, TheSamplesHoldOneEventOfEachKindInOrder) {
  const std::vector<Event> events = testing::OneEventOfEachKind();
  ASSERT_EQ(events.size(), std::variant_size_v<Event>);
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].index(), i);
}

TEST(EventCodec, EveryKindCarriesEveryFieldThereAndBack) {
  for (const Event& written : testing::OneEventOfEachKind()) {
    const std::string line = EventToJson(written).dump();
    StatusOr<Event> read = EventFromJson(json::parse(line));
    ASSERT_TRUE(read.ok()) << line << ": " << read.status().message();
    EXPECT_TRUE(Same(*read, written)) << line << " read back as " << EventToJson(*read).dump();
  }
}

// Each kind's name, time and trial, as the journal and the controller's messages use them.
TEST(EventCodec, EachKindHasItsNameTimeAndTrial) {
  struct Row {
    const char* name;
    double at;
    std::optional<int64_t> trial;
  };
  const Row rows[] = {
      {"TrialCreated", 100.5, 0}, {"SegmentLaunched", 101, 0}, {"ValueRecorded", 102, 0},
      {"DeadlineMoved", 103, 0},  {"TrialStopped", 104, 0},    {"TrialPromoted", 105, 1},
      {"SegmentEnded", 106, 1},   {"SweepFinished", 107, {}},  {"ProbeLaunched", 108, {}},
      {"ProbeMeasured", 109, {}}, {"ProbeEnded", 110, {}},     {"ThroughputDecided", 111, {}},
      {"RungVerdict", 112, 3},    {"TrialExploited", 113, 4},
  };
  const std::vector<Event> events = testing::OneEventOfEachKind();
  ASSERT_EQ(std::size(rows), events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    SCOPED_TRACE(rows[i].name);
    EXPECT_STREQ(EventName(events[i]), rows[i].name);
    EXPECT_EQ(EventToJson(events[i]).at("event"), rows[i].name);
    EXPECT_EQ(EventTime(events[i]), rows[i].at);
    EXPECT_EQ(EventTrial(events[i]), rows[i].trial);
  }
}

// A probe's events name the probe under "trial", as the journal always wrote them.
TEST(EventCodec, AProbesIndexIsWrittenAsItsTrial) {
  for (const Event& e : testing::OneEventOfEachKind()) {
    const json record = EventToJson(e);
    if (!std::string(EventName(e)).starts_with("Probe") &&
        !std::holds_alternative<event::ThroughputDecided>(e)) {
      continue;
    }
    EXPECT_FALSE(record.contains("probe")) << record.dump();
    EXPECT_TRUE(record.at("trial").is_number_integer()) << record.dump();
  }
}

// Read leniently, as the journals of every release wrote them.
TEST(EventCodec, AMissingFieldReadsAsItsDefault) {
  struct Row {
    const char* record;
    Event read;
  };
  const Row rows[] = {
      {R"({"event":"SegmentLaunched"})",
       event::SegmentLaunched{.at = 0, .trial = -1, .segment = -1}},
      {R"({"event":"TrialPromoted","at":5,"trial":2})",
       event::TrialPromoted{.at = 5, .trial = 2, .rung = -1}},
      {R"({"event":"ValueRecorded","at":5,"trial":2,"resource":3,"value":0.5,"seq":17})",
       event::ValueRecorded{.at = 5, .trial = 2, .resource = 3, .value = 0.5}},
      {R"({"event":"TrialCreated","at":5,"trial":0,"params":[["lr",0.1],"junk",[1,2],["a",1,2]]})",
       event::TrialCreated{.at = 5, .trial = 0, .params = {{"lr", 0.1}}}},
      {R"({"event":"SegmentEnded","at":5,"trial":0,"segment":0,"devices":-3})",
       event::SegmentEnded{.at = 5, .trial = 0, .segment = 0, .devices = 0}},
      {R"({"event":"ProbeMeasured","at":5,"trial":1,"samplesPerSecond":9})",
       event::ProbeMeasured{
           .at = 5,
           .probe = 1,
           .figures = {.samples_per_second = 9, .accelerator_utilization = std::nullopt}}},
  };
  for (const Row& row : rows) {
    StatusOr<Event> read = EventFromJson(json::parse(row.record));
    ASSERT_TRUE(read.ok()) << row.record << ": " << read.status().message();
    EXPECT_TRUE(Same(*read, row.read)) << row.record << " read as " << EventToJson(*read).dump();
  }
}

TEST(EventCodec, ARecordThatCannotBeReadNamesTheField) {
  struct Row {
    const char* record;
    const char* error;
  };
  const Row rows[] = {
      {R"([1, 2])", R"(no "event" name)"},
      {R"({"at": 1})", R"(no "event" name)"},
      {R"({"event": 7})", R"(no "event" name)"},
      {R"({"event": "RungVerdict", "trial": 0, "verdict": "Maybe"})", R"(unknown verdict "Maybe")"},
      {R"({"event": "RungVerdict", "trial": 0})", R"(unknown verdict "")"},
  };
  for (const Row& row : rows) {
    StatusOr<Event> read = EventFromJson(json::parse(row.record));
    ASSERT_FALSE(read.ok()) << row.record;
    EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(read.status().message().find(row.error), std::string::npos)
        << row.record << ": " << read.status().message();
  }
}

}  // namespace
}  // namespace bsw
