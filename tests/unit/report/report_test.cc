#include "operator/report/report.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>

#include "operator/adapters/kube/pod_backend.h"
#include "operator/adapters/kube/resources.h"
#include "operator/adapters/kube/trial_log.h"
#include "tests/unit/adapters/kube/fake_apiserver.h"

namespace bsw {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Two probe runs, then three trials on one GPU each: t0000 completes, t0001 is cut at the first
// rung, t0002 still runs at kNow (launched at 1050, deadline 1500).
constexpr double kNow = 1300;

json SweepObject() {
  return json::parse(R"({
    "apiVersion": "budgetsweep.dev/v1alpha1",
    "kind": "BudgetSweep",
    "metadata": {"name": "tiny", "namespace": "ns"},
    "spec": {
      "budget": {"gpuHours": 1},
      "objective": {"metric": "validation_accuracy"},
      "resource": {"unit": "epochs", "min": 1, "max": 9, "reductionFactor": 3},
      "searchSpace": {
        "lr": {"type": "logUniform", "min": 1.0e-4, "max": 1.0e-1},
        "optimizer": {"type": "choice", "values": ["adamw", "<sgd>&"]}
      },
      "throughput": {"enabled": true, "candidates": {"workers": [0, 2]}},
      "trial": {"gpus": 1, "template": {"spec": {"containers": [
        {"name": "trainer", "image": "trainer", "command": ["trainer"]}]}}}
    }
  })");
}

SweepSpec Spec() { return ParseSweep(SweepObject()).value(); }

std::vector<Event> ProbeEvents() {
  return {
      event::ProbeLaunched{.at = 1000, .probe = 0, .deadline = 1100},
      event::ProbeMeasured{.at = 1008, .probe = 0, .figures = {500, 0.5, std::nullopt}},
      event::ProbeEnded{.at = 1010, .probe = 0, .seconds = 10},
      event::ProbeLaunched{.at = 1010, .probe = 1, .params = {{"workers", 2}}, .deadline = 1100},
      event::ProbeMeasured{.at = 1018, .probe = 1, .figures = {900, 0.05, std::nullopt}},
      event::ProbeEnded{.at = 1020, .probe = 1, .seconds = 10},
      event::ThroughputDecided{.at = 1020,
                               .probe = 1,
                               .reason = "TargetMet",
                               .message = "workers=2 meets the target",
                               .params = {{"workers", 2}}},
  };
}

std::vector<Event> TrialStart(int64_t trial, double at, double deadline, Config params) {
  event::TrialCreated created{.at = at, .trial = trial};
  created.params = std::move(params);
  event::SegmentLaunched launched{.at = at, .trial = trial, .segment = 0};
  launched.until = 9;
  launched.deadline = deadline;
  return {created, launched};
}

Event Value(int64_t trial, double at, double resource, double value) {
  event::ValueRecorded e{.at = at, .trial = trial};
  e.resource = resource;
  e.value = value;
  return e;
}

Event Ended(int64_t trial, double at, double started, double finished, std::string reason) {
  event::SegmentEnded e{.at = at, .trial = trial, .segment = 0};
  e.reason = std::move(reason);
  e.started = started;
  e.finished = finished;
  e.devices = 1;
  return e;
}

std::vector<Event> Events() {
  std::vector<Event> events = ProbeEvents();
  auto add = [&events](std::vector<Event> more) {
    events.insert(events.end(), more.begin(), more.end());
  };
  add(TrialStart(0, 1020, 1400, {{"lr", 0.01}, {"optimizer", "adamw"}}));
  add(TrialStart(1, 1020, 1400, {{"lr", 0.001}, {"optimizer", "<sgd>&"}}));
  add({Value(0, 1040, 1, 0.6), Value(1, 1045, 1, 0.4)});
  event::TrialStopped stopped{.at = 1045, .trial = 1};
  stopped.reason = "RungCutoff";
  add({stopped, Ended(1, 1047, 1021, 1046, "Stopped")});
  add(TrialStart(2, 1050, 1500, {{"lr", 0.05}, {"optimizer", "adamw"}}));
  add({Value(2, 1070, 1, 0.5), Value(0, 1080, 3, 0.8), Value(0, 1200, 9, 0.9),
       Ended(0, 1201, 1021, 1200, "")});
  return events;
}

ReportInput Input() {
  return ReportInput{Spec(), Events(), StatusFromEvents(Spec(), Events(), kNow).value(), kNow};
}

std::string Html() { return RenderReportHtml(Input()).value(); }

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Ended segments charge their recorded times: probes 10 + 10 s, t0001 25 s, t0000 179 s; t0002
// runs from its launch until now (250 s) and reserves the rest up to its deadline (200 s).
TEST(StatusFromEventsTest, ChargesEndedSegmentsAndRunningOnesUpToNow) {
  json status = StatusFromEvents(Spec(), Events(), kNow).value();
  EXPECT_EQ(status["budget"]["used"], 0.132);
  EXPECT_EQ(status["budget"]["reserved"], 0.056);
  EXPECT_EQ(status["budget"]["remaining"], 0.813);
  EXPECT_EQ(status["trials"]["created"], 3);
  EXPECT_EQ(status["trials"]["running"], 1);
  EXPECT_EQ(status["trials"]["stopped"], 1);
  EXPECT_EQ(status["trials"]["completed"], 1);
  EXPECT_EQ(status["best"]["trial"], "tiny-t0000");
  EXPECT_EQ(status["best"]["value"], 0.9);
}

// Its supervisor kills a segment at its deadline, even when no end was recorded (the runner was
// killed): it is charged up to the deadline, and reserves nothing after it.
TEST(StatusFromEventsTest, ChargesARunningSegmentNoFurtherThanItsDeadline) {
  json status = StatusFromEvents(Spec(), Events(), 5000).value();
  EXPECT_EQ(status["budget"]["used"], std::round((224 + 450) / 3.6) / 1000);
  EXPECT_EQ(status["budget"]["reserved"], 0.0);
}

TEST(StatusFromEventsTest, RejectsEventsThatDoNotApplyToTheSweep) {
  std::vector<Event> events = {Value(4, 1000, 1, 0.5)};
  StatusOr<json> status = StatusFromEvents(Spec(), events, kNow);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.status().message().find("event 1"), std::string::npos);
}

TEST(ReportTest, HasOneTableRowPerTrial) { EXPECT_EQ(Count(Html(), "<tr class=\"trial\">"), 3u); }

TEST(ReportTest, ShowsTheFiguresOfTheStatus) {
  std::string html = Html();
  EXPECT_NE(html.find("id=\"best-value\">0.9<"), std::string::npos);
  EXPECT_NE(html.find("id=\"best-trial\">tiny-t0000<"), std::string::npos);
  EXPECT_NE(html.find("id=\"budget-used\">0.132<"), std::string::npos);
  EXPECT_NE(html.find("id=\"budget-reserved\">0.056<"), std::string::npos);
  EXPECT_NE(html.find("id=\"budget-remaining\">0.813<"), std::string::npos);
  EXPECT_NE(html.find("id=\"budget-gpuHours\">1.0<"), std::string::npos);
  EXPECT_NE(html.find("id=\"trials-created\">3<"), std::string::npos);
}

// Best against device-hours, the rung ladder, the burn-down, one per parameter, the probe.
TEST(ReportTest, DrawsEveryChartWithPathData) {
  std::string html = Html();
  std::regex chart("<svg class=\"chart\"[^>]*>(.*?)</svg>");
  std::vector<std::string> labels;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), chart);
       it != std::sregex_iterator(); ++it) {
    EXPECT_NE(it->str(1).find("<path d=\"M"), std::string::npos) << it->str(0).substr(0, 200);
    labels.push_back(it->str(0).substr(0, 200));
  }
  EXPECT_EQ(labels.size(), 6u);
}

TEST(ReportTest, LoadsNothingFromAnywhere) {
  std::string html = Html();
  for (const char* link : {"http://", "https://", "src=", "<link", "url(", "@import"}) {
    EXPECT_EQ(html.find(link), std::string::npos) << link;
  }
}

TEST(ReportTest, EscapesTextFromTheSweep) {
  std::string html = Html();
  EXPECT_EQ(html.find("<sgd>"), std::string::npos);
  EXPECT_NE(html.find("&lt;sgd&gt;&amp;"), std::string::npos);
}

TEST(ReportTest, ShowsEveryProbeCandidateAndTheChoice) {
  std::string html = Html();
  EXPECT_NE(html.find("baseline (template)"), std::string::npos);
  EXPECT_NE(html.find("workers=2"), std::string::npos);
  EXPECT_NE(html.find("(chosen)"), std::string::npos);
}

TEST(ReportTest, SaysSoWhenThereIsNoProbePhase) {
  json object = SweepObject();
  object["spec"].erase("throughput");
  SweepSpec spec = ParseSweep(object).value();
  std::vector<Event> events = Events();
  events.erase(events.begin(), events.begin() + static_cast<long>(ProbeEvents().size()));
  ReportInput input{spec, events, StatusFromEvents(spec, events, kNow).value(), kNow};
  std::string html = RenderReportHtml(input).value();
  EXPECT_NE(html.find("No probe phase"), std::string::npos);
  EXPECT_EQ(Count(html, "<svg class=\"chart\""), 5u);
}

TEST(ReportTest, DrawsASweepWithoutAnyEvent) {
  ReportInput input{Spec(), {}, StatusFromEvents(Spec(), {}, kNow).value(), kNow};
  StatusOr<std::string> html = RenderReportHtml(input);
  ASSERT_TRUE(html.ok()) << html.status().message();
  EXPECT_EQ(Count(*html, "<tr class=\"trial\">"), 0u);
  EXPECT_NE(html->find("no objective value recorded yet"), std::string::npos);
}

uint32_t BigEndian(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(bytes[at + i]);
  return v;
}

TEST(ReportPngTest, IsAPngOfTheIntendedSize) {
  StatusOr<std::string> png = RenderBestChartPng(Input());
  ASSERT_TRUE(png.ok()) << png.status().message();
  ASSERT_GT(png->size(), 33u);
  EXPECT_EQ(png->substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png->substr(12, 4), "IHDR");
  EXPECT_EQ(BigEndian(*png, 16), static_cast<uint32_t>(kPngWidth));
  EXPECT_EQ(BigEndian(*png, 20), static_cast<uint32_t>(kPngHeight));
}

class LoadStateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "bsw-report-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& name, const std::string& text) {
    std::ofstream(fs::path(dir_) / name) << text;
  }
  std::string Read(const std::string& name) const {
    std::ifstream in(fs::path(dir_) / name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  static std::string JournalText() {
    std::string text;
    for (const Event& e : Events()) text += EventToJson(e).dump() + "\n";
    return text;
  }
  std::string Error() const {
    StatusOr<ReportInput> input = LoadStateDir(dir_, kNow);
    EXPECT_FALSE(input.ok());
    EXPECT_EQ(input.status().code(), StatusCode::kInvalidArgument);
    return input.status().message();
  }

  std::string dir_;
};

TEST_F(LoadStateDirTest, ReadsTheSweepAndItsJournal) {
  Write("sweep.json", SweepObject().dump());
  Write("journal.jsonl", JournalText());
  StatusOr<ReportInput> input = LoadStateDir(dir_, kNow);
  ASSERT_TRUE(input.ok()) << input.status().message();
  EXPECT_EQ(input->spec.name, "tiny");
  EXPECT_EQ(input->events.size(), Events().size());
  EXPECT_EQ(input->status, StatusFromEvents(Spec(), Events(), kNow).value());
}

TEST_F(LoadStateDirTest, NamesAMissingDirectory) {
  dir_ += "/absent";
  EXPECT_EQ(Error(), dir_ + ": no such directory");
}

TEST_F(LoadStateDirTest, NamesTheMissingSweepFile) {
  Write("journal.jsonl", JournalText());
  EXPECT_NE(Error().find(dir_ + "/sweep.json: not found"), std::string::npos);
}

TEST_F(LoadStateDirTest, NamesTheMissingJournal) {
  Write("sweep.json", SweepObject().dump());
  EXPECT_NE(Error().find(dir_ + "/journal.jsonl: not found"), std::string::npos);
}

TEST_F(LoadStateDirTest, NamesTheLineOfACorruptJournal) {
  Write("sweep.json", SweepObject().dump());
  Write("journal.jsonl", EventToJson(Events()[0]).dump() + "\nnot json\n");
  EXPECT_EQ(Error(), dir_ + "/journal.jsonl:2: not a JSON record");
}

TEST_F(LoadStateDirTest, NamesAnInvalidSweepFile) {
  json object = SweepObject();
  object["spec"]["budget"]["gpuHours"] = -1;
  Write("sweep.json", object.dump());
  Write("journal.jsonl", JournalText());
  EXPECT_NE(Error().find(dir_ + "/sweep.json: not a valid BudgetSweep"), std::string::npos);
}

// A sweep may be running in the directory: its journal's last record may be half written, and the
// report must not cut it (Journal::Open repairs a torn record in place).
TEST_F(LoadStateDirTest, LeavesAJournalBeingWrittenAsItIs) {
  Write("sweep.json", SweepObject().dump());
  std::string text = JournalText() + "{\"event\":\"ValueRec";
  Write("journal.jsonl", text);
  StatusOr<ReportInput> input = LoadStateDir(dir_, kNow);
  ASSERT_TRUE(input.ok()) << input.status().message();
  EXPECT_EQ(input->events.size(), Events().size());
  EXPECT_EQ(Read("journal.jsonl"), text);
}

// Events() with each trial's events together, after the probe phase's: the fake apiserver keeps a
// BudgetSweepTrial's status only from its creation (it treats status as a subresource of every
// kind, which the trial CRD does not have), so each trial is written once.
std::vector<Event> EventsByTrial() {
  std::vector<Event> events = Events();
  std::stable_sort(events.begin() + static_cast<long>(ProbeEvents().size()), events.end(),
                   [](const Event& a, const Event& b) { return EventTrial(a) < EventTrial(b); });
  return events;
}

// The cluster form reads the events back from the BudgetSweepTrial records (and the sweep's own
// sweepEvents), and shows the status the operator wrote.
TEST(LoadClusterSweepTest, ReadsTheTrialRecordsAndTheSweepsStatus) {
  kube::testing::FakeApiServer server;
  std::unique_ptr<kube::Client> client = kube::Client::Create(server.Config(), {}).value();
  json created = client->Create(kube::kBudgetSweeps, "ns", SweepObject()).value();
  kube::SweepOwner owner;
  owner.name = "tiny";
  owner.uid = created["metadata"]["uid"];
  kube::TrialLog log(*client, "ns", owner, 4);
  ASSERT_TRUE(log.Append(EventsByTrial()).ok());
  json status = StatusFromEvents(Spec(), Events(), kNow).value();
  status["budget"]["used"] = 0.125;
  ASSERT_TRUE(client->PatchStatus(kube::kBudgetSweeps, "ns", "tiny", {{"status", status}}).ok());

  StatusOr<ReportInput> input = LoadClusterSweep(*client, "ns", "tiny", kNow);
  ASSERT_TRUE(input.ok()) << input.status().message();
  ASSERT_EQ(input->events.size(), EventsByTrial().size());
  for (size_t i = 0; i < input->events.size(); ++i) {
    EXPECT_EQ(EventToJson(input->events[i]), EventToJson(EventsByTrial()[i]));
  }
  EXPECT_EQ(input->status["budget"]["used"], 0.125);
  EXPECT_FALSE(input->status.contains("sweepEvents"));
  std::string html = RenderReportHtml(*input).value();
  EXPECT_EQ(Count(html, "<tr class=\"trial\">"), 3u);
  EXPECT_NE(html.find("id=\"budget-used\">0.125<"), std::string::npos);
}

TEST(LoadClusterSweepTest, ReportsAMissingSweepAsNotFound) {
  kube::testing::FakeApiServer server;
  std::unique_ptr<kube::Client> client = kube::Client::Create(server.Config(), {}).value();
  StatusOr<ReportInput> input = LoadClusterSweep(*client, "ns", "absent", kNow);
  ASSERT_FALSE(input.ok());
  EXPECT_EQ(input.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace bsw
