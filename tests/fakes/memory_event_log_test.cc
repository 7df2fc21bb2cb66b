// The EventLog contract (operator/ports/event_log.h), run against the memory log that controller
// tests use and against the Journal it stands in for, so that the two cannot drift apart; then
// what the memory log adds for tests.
#include "tests/fakes/memory_event_log.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "operator/controller/journal.h"
#include "tests/unit/core/event_samples.h"

namespace bsw {
namespace {

namespace fs = std::filesystem;

// A Journal in a directory of its own.
class JournalLog {
 public:
  JournalLog() {
    std::string tmpl = (fs::temp_directory_path() / "bsw-event-log-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    dir_ = tmpl;
    Reopen();
  }
  ~JournalLog() { fs::remove_all(dir_); }

  EventLog& log() { return *journal_; }
  // The log as a writer that comes after this one (a restarted operator) opens it.
  EventLog& Reopen() {
    journal_.reset();
    StatusOr<Journal> opened = Journal::Open(dir_);
    EXPECT_TRUE(opened.ok()) << opened.status().message();
    journal_.emplace(std::move(opened).value());
    return *journal_;
  }

 private:
  std::string dir_;
  std::optional<Journal> journal_;
};

// The memory log lives as long as the test: a restarted controller is handed the same one.
class MemoryLog {
 public:
  EventLog& log() { return log_; }
  EventLog& Reopen() { return log_; }

 private:
  MemoryEventLog log_;
};

// The events as their journal records, to compare what a log returns with what was appended.
std::vector<std::string> Records(const std::vector<Event>& events) {
  std::vector<std::string> records;
  for (const Event& e : events) records.push_back(EventToJson(e).dump());
  return records;
}

std::vector<std::string> RecordsOf(EventLog& log) {
  StatusOr<std::vector<Event>> events = log.ReadAll();
  EXPECT_TRUE(events.ok()) << events.status().message();
  return events.ok() ? Records(*events) : std::vector<std::string>{};
}

template <typename Log>
class EventLogContract : public ::testing::Test {
 protected:
  Log log_;
};

using Logs = ::testing::Types<JournalLog, MemoryLog>;
TYPED_TEST_SUITE(EventLogContract, Logs);

TYPED_TEST(EventLogContract, ANewLogHoldsNoEvents) {
  EXPECT_TRUE(RecordsOf(this->log_.log()).empty());
  int applied = 0;
  EXPECT_TRUE(this->log_.log()
                  .ForEach([&](const Event&) {
                    ++applied;
                    return OkStatus();
                  })
                  .ok());
  EXPECT_EQ(applied, 0);
}

TYPED_TEST(EventLogContract, EveryKindOfEventReadsBackInTheOrderItWasAppended) {
  const std::vector<Event> events = testing::OneEventOfEachKind();
  ASSERT_TRUE(this->log_.log().Append(events).ok());
  EXPECT_EQ(RecordsOf(this->log_.log()), Records(events));
}

TYPED_TEST(EventLogContract, BatchesFollowOneAnotherAndAnEmptyOneAddsNothing) {
  const std::vector<Event> events = testing::OneEventOfEachKind();
  EventLog& log = this->log_.log();
  ASSERT_TRUE(log.Append({events.begin(), events.begin() + 3}).ok());
  ASSERT_TRUE(log.Append({}).ok());
  ASSERT_TRUE(log.Append({events.begin() + 3, events.end()}).ok());
  EXPECT_EQ(RecordsOf(log), Records(events));
}

TYPED_TEST(EventLogContract, WhatWasAppendedOutlivesItsWriter) {
  const std::vector<Event> events = testing::OneEventOfEachKind();
  ASSERT_TRUE(this->log_.log().Append(events).ok());
  EventLog& reopened = this->log_.Reopen();
  EXPECT_EQ(RecordsOf(reopened), Records(events));
  ASSERT_TRUE(reopened.Append({events.front()}).ok());
  EXPECT_EQ(RecordsOf(reopened).size(), events.size() + 1);
}

TYPED_TEST(EventLogContract, ForEachHandsOutWhatReadAllReturnsAndStopsAtTheFirstError) {
  const std::vector<Event> events = testing::OneEventOfEachKind();
  EventLog& log = this->log_.log();
  ASSERT_TRUE(log.Append(events).ok());
  std::vector<Event> applied;
  ASSERT_TRUE(log.ForEach([&](const Event& e) {
                   applied.push_back(e);
                   return OkStatus();
                 })
                  .ok());
  EXPECT_EQ(Records(applied), Records(events));

  applied.clear();
  Status stopped = log.ForEach([&](const Event& e) {
    applied.push_back(e);
    return applied.size() == 3 ? InvalidArgumentError("the third") : OkStatus();
  });
  EXPECT_EQ(stopped.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(stopped.message(), "the third");
  EXPECT_EQ(applied.size(), 3u);
}

TYPED_TEST(EventLogContract, DescribeSaysWhereTheEventsLive) {
  EXPECT_FALSE(this->log_.log().Describe().empty());
}

TEST(MemoryEventLog, KeepsEachEventAsTheJournalRecordsIt) {
  MemoryEventLog log;
  const std::vector<Event> events = testing::OneEventOfEachKind();
  ASSERT_TRUE(log.Append(events).ok());
  ASSERT_EQ(log.records().size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(log.records()[i], EventToJson(events[i]));
  }
}

TEST(MemoryEventLog, AFailingAppendKeepsNoneOfItsEvents) {
  MemoryEventLog log;
  const std::vector<Event> events = testing::OneEventOfEachKind();
  ASSERT_TRUE(log.Append({events.front()}).ok());
  log.FailAppends(UnavailableError("disk full"));
  Status failed = log.Append(events);
  EXPECT_EQ(failed.code(), StatusCode::kUnavailable);
  EXPECT_EQ(failed.message(), "disk full");
  EXPECT_EQ(log.records().size(), 1u);
  log.FailAppends(OkStatus());
  ASSERT_TRUE(log.Append(events).ok());
  EXPECT_EQ(log.records().size(), events.size() + 1);
}

}  // namespace
}  // namespace bsw
