#include "operator/adapters/kube/leader_election.h"

#include <gtest/gtest.h>

#include <atomic>

#include "tests/mocks/fake_clock.h"
#include "tests/unit/adapters/kube/fake_apiserver.h"

namespace bsw::kube {
namespace {

using testing::ApiStatusBody;
using testing::FakeApiServer;

constexpr char kLeasePath[] = "/apis/coordination.k8s.io/v1/namespaces/ns/leases/op";
constexpr double kRetryPeriodSeconds = 0.15;
constexpr double kNotYet = -1;

// A candidate with test-sized durations on a simulated clock, recording when (monotonic seconds)
// it started and stopped leading.
struct Candidate {
  Candidate(const FakeApiServer& server, const std::string& identity, FakeClock& clock,
            double lease_duration_seconds = 1.5) {
    LeaderElectionConfig config;
    config.lease_namespace = "ns";
    config.lease_name = "op";
    config.identity = identity;
    config.lease_duration_seconds = lease_duration_seconds;
    config.renew_deadline_seconds = 0.6 * lease_duration_seconds;
    config.retry_period_seconds = kRetryPeriodSeconds;
    config.clock = &clock;
    // Once leadership ends the elector's thread ends too: it no longer waits on the clock.
    LeaderCallbacks callbacks{[this, &clock] { started = clock.MonotonicSeconds(); },
                              [this, &clock] {
                                stopped = clock.MonotonicSeconds();
                                clock.Retire();
                              }};
    StatusOr<std::unique_ptr<LeaderElector>> made =
        LeaderElector::Create(server.Config(), config, callbacks);
    EXPECT_TRUE(made.ok()) << made.status().message();
    elector = std::move(*made);
  }
  std::atomic<double> started{kNotYet};
  std::atomic<double> stopped{kNotYet};
  std::unique_ptr<LeaderElector> elector;
};

// Lets one retry period pass and waits until each of `candidates` has made its attempt and gone
// back to sleep (or ended).
void NextRetry(FakeClock& clock, size_t candidates) {
  clock.Advance(kRetryPeriodSeconds);
  ASSERT_TRUE(clock.AwaitWaiters(candidates));
}

TEST(LeaderElection, OfTwoCandidatesExactlyOneLeads) {
  FakeClock clock;
  FakeApiServer server;
  Candidate a(server, "a", clock);
  Candidate b(server, "b", clock);
  a.elector->Start();
  b.elector->Start();
  ASSERT_TRUE(clock.AwaitWaiters(2));
  for (int i = 0; i < 30; ++i) {  // across many renewals
    EXPECT_NE(a.elector->IsLeader(), b.elector->IsLeader());
    NextRetry(clock, 2);
  }
  Candidate& leader = a.elector->IsLeader() ? a : b;
  EXPECT_EQ(server.Object(kLeasePath)["spec"]["holderIdentity"], &leader == &a ? "a" : "b");
  Candidate& follower = &leader == &a ? b : a;
  EXPECT_EQ(follower.started.load(), kNotYet);
}

TEST(LeaderElection, ALeaderThatCannotRenewStepsDownBeforeTheOtherTakesOver) {
  FakeClock clock;
  FakeApiServer server;
  Candidate a(server, "a", clock);
  a.elector->Start();
  ASSERT_TRUE(clock.AwaitWaiters(1));
  ASSERT_TRUE(a.elector->IsLeader());
  Candidate b(server, "b", clock);
  b.elector->Start();
  ASSERT_TRUE(clock.AwaitWaiters(2));
  NextRetry(clock, 2);
  EXPECT_FALSE(b.elector->IsLeader());

  // From now on a's renewals fail, as if it were cut off from the API server. The hook notes the
  // last renewal that still went through, which is when a's lease starts to run out.
  std::atomic<bool> cut{false};
  std::atomic<double> last_renewal{clock.MonotonicSeconds()};
  server.SetHook([&](const httplib::Request& request, httplib::Response& response) {
    if (request.method != "PUT" ||
        request.body.find("\"holderIdentity\":\"a\"") == std::string::npos) {
      return false;
    }
    if (!cut.load()) {
      last_renewal = clock.MonotonicSeconds();
      return false;
    }
    response.status = 500;
    response.set_content(ApiStatusBody(500, "InternalError", "cut off"), "application/json");
    return true;
  });
  NextRetry(clock, 2);
  NextRetry(clock, 2);
  cut = true;
  for (int retries = 0; !b.elector->IsLeader(); ++retries) {
    ASSERT_LT(retries, 100) << "b never took over";
    NextRetry(clock, 2);
  }
  EXPECT_FALSE(a.elector->IsLeader());
  ASSERT_NE(a.stopped.load(), kNotYet);
  EXPECT_LT(a.stopped.load(), b.started.load());  // never two leaders
  // b waited for the lease to expire: a full lease duration after a's last renewal.
  EXPECT_GE(b.started.load() - last_renewal.load(), 1.5);
  EXPECT_EQ(server.Object(kLeasePath)["spec"]["holderIdentity"], "b");
  EXPECT_EQ(server.Object(kLeasePath)["spec"]["leaseTransitions"], 1);
}

TEST(LeaderElection, StopReleasesTheLeaseSoTheOtherTakesOverAtOnce) {
  FakeClock clock;
  FakeApiServer server;
  Candidate a(server, "a", clock, /*lease_duration_seconds=*/10);
  a.elector->Start();
  ASSERT_TRUE(clock.AwaitWaiters(1));
  ASSERT_TRUE(a.elector->IsLeader());
  Candidate b(server, "b", clock, /*lease_duration_seconds=*/10);
  b.elector->Start();
  ASSERT_TRUE(clock.AwaitWaiters(2));
  NextRetry(clock, 2);
  double stop = clock.MonotonicSeconds();
  a.elector->Stop();
  EXPECT_FALSE(a.elector->IsLeader());
  EXPECT_NE(a.stopped.load(), kNotYet);
  NextRetry(clock, 2);  // a has ended; b tries once more
  EXPECT_TRUE(b.elector->IsLeader());
  EXPECT_LT(b.started.load() - stop, 1.0);  // one retry period, far less than the 10 s lease
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
