#include "operator/adapters/kube/leader_election.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/unit/adapters/kube/fake_apiserver.h"

namespace bsw::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;
using testing::ApiStatusBody;
using testing::FakeApiServer;

constexpr char kLeasePath[] = "/apis/coordination.k8s.io/v1/namespaces/ns/leases/op";

// A candidate with test-sized durations, recording when it started and stopped leading.
struct Candidate {
  Candidate(const FakeApiServer& server, const std::string& identity,
            double lease_duration_seconds = 1.5) {
    LeaderElectionConfig config;
    config.lease_namespace = "ns";
    config.lease_name = "op";
    config.identity = identity;
    config.lease_duration_seconds = lease_duration_seconds;
    config.renew_deadline_seconds = 0.6 * lease_duration_seconds;
    config.retry_period_seconds = 0.15;
    LeaderCallbacks callbacks{[this] { started = steady_clock::now(); },
                              [this] { stopped = steady_clock::now(); }};
    StatusOr<std::unique_ptr<LeaderElector>> made =
        LeaderElector::Create(server.Config(), config, callbacks);
    EXPECT_TRUE(made.ok()) << made.status().message();
    elector = std::move(*made);
  }
  std::atomic<steady_clock::time_point> started{};
  std::atomic<steady_clock::time_point> stopped{};
  std::unique_ptr<LeaderElector> elector;
};

template <typename Condition>
bool Eventually(Condition condition, milliseconds limit = milliseconds(5000)) {
  auto deadline = steady_clock::now() + limit;
  while (steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return condition();
}

TEST(LeaderElection, OfTwoCandidatesExactlyOneLeads) {
  FakeApiServer server;
  Candidate a(server, "a");
  Candidate b(server, "b");
  a.elector->Start();
  b.elector->Start();
  ASSERT_TRUE(Eventually([&] { return a.elector->IsLeader() || b.elector->IsLeader(); }));
  for (int i = 0; i < 30; ++i) {  // across many renewals
    EXPECT_FALSE(a.elector->IsLeader() && b.elector->IsLeader());
    std::this_thread::sleep_for(milliseconds(20));
  }
  Candidate& leader = a.elector->IsLeader() ? a : b;
  EXPECT_EQ(server.Object(kLeasePath)["spec"]["holderIdentity"], &leader == &a ? "a" : "b");
  Candidate& follower = &leader == &a ? b : a;
  EXPECT_EQ(follower.started.load(), steady_clock::time_point{});
}

TEST(LeaderElection, ALeaderThatCannotRenewStepsDownBeforeTheOtherTakesOver) {
  FakeApiServer server;
  Candidate a(server, "a");
  a.elector->Start();
  ASSERT_TRUE(Eventually([&] { return a.elector->IsLeader(); }));
  Candidate b(server, "b");
  b.elector->Start();
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_FALSE(b.elector->IsLeader());

  // From now on a's renewals fail, as if it were cut off from the API server. The hook notes the
  // last renewal that still went through, which is when a's lease starts to run out.
  std::atomic<bool> cut{false};
  std::atomic<steady_clock::time_point> last_renewal{steady_clock::now()};
  server.SetHook([&](const httplib::Request& request, httplib::Response& response) {
    if (request.method != "PUT" ||
        request.body.find("\"holderIdentity\":\"a\"") == std::string::npos) {
      return false;
    }
    if (!cut.load()) {
      last_renewal = steady_clock::now();
      return false;
    }
    response.status = 500;
    response.set_content(ApiStatusBody(500, "InternalError", "cut off"), "application/json");
    return true;
  });
  std::this_thread::sleep_for(milliseconds(300));
  cut = true;
  ASSERT_TRUE(Eventually([&] { return b.elector->IsLeader(); }));
  EXPECT_FALSE(a.elector->IsLeader());
  ASSERT_NE(a.stopped.load(), steady_clock::time_point{});
  EXPECT_LT(a.stopped.load(), b.started.load());  // never two leaders
  // b waited for the lease to expire: a full lease duration after a's last renewal.
  EXPECT_GE(b.started.load() - last_renewal.load(), milliseconds(1500));
  EXPECT_EQ(server.Object(kLeasePath)["spec"]["holderIdentity"], "b");
  EXPECT_EQ(server.Object(kLeasePath)["spec"]["leaseTransitions"], 1);
}

TEST(LeaderElection, StopReleasesTheLeaseSoTheOtherTakesOverAtOnce) {
  FakeApiServer server;
  Candidate a(server, "a", /*lease_duration_seconds=*/10);
  a.elector->Start();
  ASSERT_TRUE(Eventually([&] { return a.elector->IsLeader(); }));
  Candidate b(server, "b", /*lease_duration_seconds=*/10);
  b.elector->Start();
  std::this_thread::sleep_for(milliseconds(200));
  auto stop = steady_clock::now();
  a.elector->Stop();
  EXPECT_FALSE(a.elector->IsLeader());
  EXPECT_NE(a.stopped.load(), steady_clock::time_point{});
  ASSERT_TRUE(Eventually([&] { return b.elector->IsLeader(); }, milliseconds(2000)));
  EXPECT_LT(steady_clock::now() - stop, milliseconds(2000));  // far less than the 10 s lease
}

TEST(LeaderElection, RejectsDisorderedDurations) {
  FakeApiServer server;
  LeaderElectionConfig config;
  config.lease_namespace = "ns";
  config.lease_name = "op";
  config.identity = "a";
  config.renew_deadline_seconds = 20;  // longer than the 15 s lease
  EXPECT_EQ(LeaderElector::Create(server.Config(), config, {}).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bsw::kube
