#include "operator/controller/journal.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace bsw {
namespace {

namespace fs = std::filesystem;

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "bsw-journal-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::vector<Event> SomeEvents() {
    Event created = Event::Of(Event::Type::kTrialCreated, 100.5, 0);
    created.params = {{"batch-size", 64}, {"lr", 0.003}, {"optimizer", "adamw"}};
    Event launched = Event::Of(Event::Type::kSegmentLaunched, 100.5, 0, 0);
    launched.until = 9;
    launched.deadline = 160.25;
    Event value = Event::Of(Event::Type::kValueRecorded, 110, 0);
    value.resource = 1;
    value.value = std::nan("");
    return {created, launched, value};
  }

  std::string dir_;
};

TEST_F(JournalTest, EventsRoundTripThroughTheFile) {
  {
    StatusOr<Journal> j = Journal::Open(dir_);
    ASSERT_TRUE(j.ok()) << j.status().message();
    ASSERT_TRUE(j->Append(SomeEvents()).ok());
  }
  StatusOr<Journal> j = Journal::Open(dir_);
  ASSERT_TRUE(j.ok());
  StatusOr<std::vector<Event>> events = j->ReadAll();
  ASSERT_TRUE(events.ok()) << events.status().message();
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[0].type, Event::Type::kTrialCreated);
  EXPECT_EQ((*events)[0].params, SomeEvents()[0].params);
  EXPECT_EQ((*events)[1].deadline, 160.25);
  EXPECT_EQ((*events)[1].until, 9);
  EXPECT_TRUE(std::isnan((*events)[2].value)) << "a diverged value must stay NaN";
}

TEST_F(JournalTest, TornLastRecordIsDroppedAndRepairedOnOpen) {
  {
    StatusOr<Journal> j = Journal::Open(dir_);
    ASSERT_TRUE(j->Append(SomeEvents()).ok());
  }
  {
    std::ofstream out(dir_ + "/journal.jsonl", std::ios::app);
    out << R"({"event":"TrialCreated","at":1,"tri)";
  }
  StatusOr<Journal> j = Journal::Open(dir_);
  ASSERT_TRUE(j.ok());
  Event next = Event::Of(Event::Type::kTrialStopped, 120, 0);
  next.reason = "RungCutoff";
  ASSERT_TRUE(j->Append({next}).ok());
  StatusOr<std::vector<Event>> events = j->ReadAll();
  ASSERT_TRUE(events.ok()) << events.status().message();
  ASSERT_EQ(events->size(), 4u);
  EXPECT_EQ(events->back().reason, "RungCutoff");
}

TEST_F(JournalTest, CorruptRecordInTheMiddleIsAnErrorNamingFileAndLine) {
  {
    std::ofstream out(dir_ + "/journal.jsonl");
    out << R"({"event":"TrialCreated","at":1,"trial":0,"params":[]})"
        << "\n"
        << "this is not json\n"
        << R"({"event":"TrialStopped","at":2,"trial":0})"
        << "\n";
  }
  StatusOr<Journal> j = Journal::Open(dir_);
  ASSERT_TRUE(j.ok());
  StatusOr<std::vector<Event>> events = j->ReadAll();
  ASSERT_FALSE(events.ok());
  EXPECT_NE(events.status().message().find("journal.jsonl:2"), std::string::npos)
      << events.status().message();
}

TEST_F(JournalTest, UnknownEventNameIsAnError) {
  {
    std::ofstream out(dir_ + "/journal.jsonl");
    out << R"({"event":"TrialExploded","at":1})"
        << "\n";
  }
  StatusOr<std::vector<Event>> events = Journal::Open(dir_)->ReadAll();
  ASSERT_FALSE(events.ok());
  EXPECT_NE(events.status().message().find("TrialExploded"), std::string::npos);
}

TEST_F(JournalTest, UnwritableDirectoryIsAnErrorNamingThePath) {
  StatusOr<Journal> j = Journal::Open(dir_ + "/missing/sub");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("missing/sub/journal.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace bsw
