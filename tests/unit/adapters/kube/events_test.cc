#include "operator/adapters/kube/events.h"

#include <gtest/gtest.h>

#include "tests/mocks/fake_clock.h"
#include "tests/unit/adapters/kube/fake_apiserver.h"

namespace bsw::kube {
namespace {

using testing::FakeApiServer;

TEST(EventRecorder, CreatesAnEventAndCountsRepeats) {
  FakeApiServer server;
  std::unique_ptr<Client> client = Client::Create(server.Config()).value();
  FakeClock clock(1'777'777'777.5);
  EventRecorder recorder(*client, "budgetsweep-operator", clock);
  Json sweep = {
      {"apiVersion", "budgetsweep.dev/v1alpha1"},
      {"kind", "BudgetSweep"},
      {"metadata", {{"name", "s"}, {"namespace", "ns"}, {"uid", "u1"}, {"resourceVersion", "7"}}}};

  recorder.Record(sweep, EventType::kNormal, "TrialStarted", "started s-t0001");
  clock.Advance(60);
  recorder.Record(sweep, EventType::kNormal, "TrialStarted", "started s-t0001");
  recorder.Record(sweep, EventType::kWarning, "BudgetExhausted", "4 of 4 GPU hours used");

  std::vector<testing::RecordedRequest> requests = server.Requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/api/v1/namespaces/ns/events");
  Json event = Json::parse(requests[0].body);
  EXPECT_EQ(event["involvedObject"]["kind"], "BudgetSweep");
  EXPECT_EQ(event["involvedObject"]["apiVersion"], "budgetsweep.dev/v1alpha1");
  EXPECT_EQ(event["involvedObject"]["name"], "s");
  EXPECT_EQ(event["involvedObject"]["uid"], "u1");
  EXPECT_EQ(event["reason"], "TrialStarted");
  EXPECT_EQ(event["type"], "Normal");
  EXPECT_EQ(event["count"], 1);
  EXPECT_EQ(event["source"]["component"], "budgetsweep-operator");
  // Named and stamped from the injected clock: the suffix is its time in nanoseconds, in hex.
  EXPECT_EQ(event["metadata"]["name"], "s.18abef7835788f00");
  EXPECT_EQ(event["firstTimestamp"], "2026-05-03T03:09:37Z");
  EXPECT_EQ(event["lastTimestamp"], "2026-05-03T03:09:37Z");

  EXPECT_EQ(requests[1].method, "PATCH");
  EXPECT_EQ(requests[1].path,
            "/api/v1/namespaces/ns/events/" + event["metadata"]["name"].get<std::string>());
  EXPECT_EQ(Json::parse(requests[1].body)["count"], 2);
  EXPECT_EQ(Json::parse(requests[1].body)["lastTimestamp"], "2026-05-03T03:10:37Z");

  EXPECT_EQ(requests[2].method, "POST");
  EXPECT_EQ(Json::parse(requests[2].body)["type"], "Warning");
}

TEST(EventRecorder, ARepeatOfAnEventGoneFromTheServerCreatesItAgain) {
  FakeApiServer server;
  std::unique_ptr<Client> client = Client::Create(server.Config()).value();
  EventRecorder recorder(*client, "budgetsweep-operator");
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", "ns"}, {"uid", "u2"}}}};
  recorder.Record(pod, EventType::kNormal, "Killed", "rung 1");
  std::string name = Json::parse(server.Requests()[0].body)["metadata"]["name"];
  server.ForgetObject("/api/v1/namespaces/ns/events/" + name);
  recorder.Record(pod, EventType::kNormal, "Killed", "rung 1");
  std::vector<testing::RecordedRequest> requests = server.Requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].method, "PATCH");
  EXPECT_EQ(requests[2].method, "POST");
  EXPECT_EQ(Json::parse(requests[2].body)["count"], 1);
}

TEST(EventRecorder, FailuresAreSwallowed) {
  KubeConfig config;
  config.server = "http://127.0.0.1:1";  // nothing listens there
  ClientOptions options;
  options.max_retries = 0;
  std::unique_ptr<Client> client = Client::Create(config, options).value();
  EventRecorder recorder(*client, "budgetsweep-operator");
  recorder.Record(Json{{"metadata", {{"name", "p"}}}}, EventType::kWarning, "X", "y");
  recorder.Record(Json::array(), EventType::kWarning, "X", "y");
}

}  // namespace
}  // namespace bsw::kube
