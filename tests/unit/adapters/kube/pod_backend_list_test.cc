#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/pod_backend.h"
#include "operator/adapters/kube/resources.h"
#include "tests/mocks/fake_clock.h"
#include "tests/unit/adapters/kube/fake_apiserver.h"
#include "tests/unit/adapters/kube/pod_backend_fixture.h"

namespace bsw::kube {
namespace {

using ::testing::HasSubstr;

constexpr char kPodPath[] = "/api/v1/namespaces/ns/pods/sw-t0000-s0";

// PodBackend::List over a cache (list_pods, as the operator's informer gives it) that the test
// moves by hand: pods it created and the cache has not shown yet, and the output tail of a
// trainer that exited 0.
class PodBackendListTest : public testing::PodBackendFixture {
 protected:
  PodBackendListTest()
      : PodBackendFixture([this](PodBackendOptions& options) {
          options.clock = &clock_;
          options.list_pods = [this] { return StatusOr<std::vector<Json>>(cache_); };
        }) {}

  void SetUp() override {
    PodBackendFixture::SetUp();
    segment_.sweep = "sw";
    segment_.trial = "sw-t0000";
    segment_.devices = 1;
    segment_.deadline_unix_seconds = clock_.NowUnixSeconds() + 600;
  }

  std::vector<SegmentStatus> List() {
    StatusOr<std::vector<SegmentStatus>> listed = backend_->List();
    EXPECT_TRUE(listed.ok()) << listed.status().message();
    return listed.ok() ? *listed : std::vector<SegmentStatus>{};
  }

  // The pod as the server has it, its trainer ended with `exit_code`.
  Json Exited(int exit_code) const {
    Json pod = server_.Object(kPodPath);
    pod["status"] = {{"phase", exit_code == 0 ? "Succeeded" : "Failed"},
                     {"containerStatuses",
                      {{{"name", "trainer"},
                        {"state",
                         {{"terminated",
                           {{"exitCode", exit_code},
                            {"startedAt", "2023-11-14T22:13:20Z"},
                            {"finishedAt", "2023-11-14T22:14:20Z"}}}}}}}}};
    return pod;
  }

  int LogReads() const {
    int reads = 0;
    for (const testing::RecordedRequest& r : server_.Requests()) {
      reads += r.method == "GET" && r.path == std::string(kPodPath) + "/log" ? 1 : 0;
    }
    return reads;
  }

  FakeClock clock_;
  SegmentSpec segment_;
  std::vector<Json> cache_;
};

TEST_F(PodBackendListTest, APodCreatedButNotYetInTheCacheIsPendingUntilTheCacheHasIt) {
  ASSERT_TRUE(backend_->Start(segment_).ok());
  std::vector<SegmentStatus> listed = List();
  ASSERT_EQ(listed.size(), 1u) << "a pass now would start the segment again";
  EXPECT_EQ(listed[0].trial, "sw-t0000");
  EXPECT_EQ(listed[0].segment, 0);
  EXPECT_EQ(listed[0].state, SegmentState::kPending);
  EXPECT_EQ(listed[0].devices, 1);
  EXPECT_EQ(listed[0].deadline_unix_seconds, segment_.deadline_unix_seconds);

  cache_.push_back(server_.Object(kPodPath));
  ASSERT_EQ(List().size(), 1u);
  // Once the cache has shown it, the cache alone says what there is.
  cache_.clear();
  EXPECT_TRUE(List().empty());
}

TEST_F(PodBackendListTest, APodTheCacheNeverShowsIsPendingForAMinuteAtMost) {
  ASSERT_TRUE(backend_->Start(segment_).ok());
  clock_.Advance(59);
  EXPECT_EQ(List().size(), 1u);
  clock_.Advance(2);
  EXPECT_TRUE(List().empty());
}

TEST_F(PodBackendListTest, ATrainerThatExitedZeroGivesItsLogsTailReadOnce) {
  server_.SetHook([](const httplib::Request& request, httplib::Response& response) {
    if (request.method != "GET" || !request.path.ends_with("/log")) return false;
    EXPECT_EQ(request.get_param_value("container"), "trainer");
    EXPECT_EQ(request.get_param_value("tailLines"), "10");
    EXPECT_EQ(request.get_param_value("limitBytes"), "16384");
    response.set_content("epoch 1/9\n\nepoch 2/9 stopping early\n", "text/plain");
    return true;
  });
  ASSERT_TRUE(backend_->Start(segment_).ok());
  cache_.push_back(Exited(0));
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<SegmentStatus> listed = List();
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed[0].state, SegmentState::kSucceeded);
    EXPECT_THAT(listed[0].output_tail, HasSubstr("epoch 2/9 stopping early"));
  }
  EXPECT_EQ(LogReads(), 1);
}

TEST_F(PodBackendListTest, AStoppedOrFailedTrainersLogIsNotRead) {
  ASSERT_TRUE(backend_->Start(segment_).ok());
  Json stopped = Exited(0);
  stopped["metadata"]["annotations"][kStoppedAnnotation] = "true";
  cache_ = {stopped};
  ASSERT_EQ(List().size(), 1u);
  cache_ = {Exited(1)};  // its tail is the kubelet's termination message
  ASSERT_EQ(List().size(), 1u);
  EXPECT_EQ(LogReads(), 0);
}

TEST_F(PodBackendListTest, ALogThatCannotBeReadLeavesTheTailEmpty) {
  ASSERT_TRUE(backend_->Start(segment_).ok());
  cache_.push_back(Exited(0));  // the fake server has no logs: 404
  std::vector<SegmentStatus> listed = List();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].state, SegmentState::kSucceeded);
  EXPECT_EQ(listed[0].output_tail, "");
}

}  // namespace
}  // namespace bsw::kube
