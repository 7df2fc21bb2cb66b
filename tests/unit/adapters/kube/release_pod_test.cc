#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/pod_backend.h"
#include "operator/adapters/kube/resources.h"
#include "tests/unit/adapters/kube/fake_apiserver.h"

namespace bsw::kube {
namespace {

using ::testing::ElementsAre;
using testing::FakeApiServer;

Json Pod(const std::string& phase) {
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", "sw-t0000-s0"},
                {"namespace", "ns"},
                {"finalizers", {kAccountingFinalizer, "example.com/other"}}}},
              {"status", {{"phase", phase}}}};
}

// The verbs of the requests that change something, in order.
std::vector<std::string> Writes(const FakeApiServer& server) {
  std::vector<std::string> verbs;
  for (const testing::RecordedRequest& r : server.Requests()) {
    if (r.method != "GET") verbs.push_back(r.method);
  }
  return verbs;
}

class ReleasePodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<Client>> made = Client::Create(server_.Config(), {});
    ASSERT_TRUE(made.ok()) << made.status().message();
    client_ = std::move(*made);
  }

  FakeApiServer server_;
  std::unique_ptr<Client> client_;
};

// An operator that dies between ReleasePod's two writes must leave the pod where the next pass
// finds it: still holding the accounting finalizer (its charge reads as held, so it is released
// again), never a finished pod without it that no pass looks at. The finalizer's removal fails
// here, as if the operator had died there: the pod was deleted first.
TEST_F(ReleasePodTest, DeletesAnEndedPodBeforeTakingItsFinalizerOff) {
  ASSERT_TRUE(client_->Create(kPods, "ns", Pod("Succeeded")).ok());
  server_.SetHook([](const httplib::Request& request, httplib::Response& response) {
    if (request.method != "PATCH") return false;
    response.status = 403;
    response.set_content(R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403})",
                         "application/json");
    return true;
  });
  EXPECT_FALSE(ReleasePod(*client_, "ns", "sw-t0000-s0").ok());
  EXPECT_THAT(Writes(server_), ElementsAre("POST", "DELETE", "PATCH"));
  StatusOr<Json> held = client_->Get(kPods, "ns", "sw-t0000-s0");
  ASSERT_TRUE(held.ok()) << held.status().message();
  EXPECT_TRUE((*held)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ((*held)["metadata"]["finalizers"][0], kAccountingFinalizer);

  // The next pass releases it again: the pod is already marked, so only the finalizer goes.
  server_.SetHook(nullptr);
  ASSERT_TRUE(ReleasePod(*client_, "ns", "sw-t0000-s0").ok());
  EXPECT_THAT(Writes(server_), ElementsAre("POST", "DELETE", "PATCH", "PATCH"));
  StatusOr<Json> left = client_->Get(kPods, "ns", "sw-t0000-s0");
  ASSERT_TRUE(left.ok());
  EXPECT_EQ((*left)["metadata"]["finalizers"], Json::array({"example.com/other"}));
}

// A pod still running when its end is recorded (a trainer lingering after its last epoch) is
// deleted before its finalizer comes off, so it neither runs on uncharged nor stays behind once
// it ends; one already gone is OK.
TEST_F(ReleasePodTest, DeletesARunningPodBeforeTakingItsFinalizerOff) {
  ASSERT_TRUE(client_->Create(kPods, "ns", Pod("Running")).ok());
  ASSERT_TRUE(ReleasePod(*client_, "ns", "sw-t0000-s0").ok());
  EXPECT_THAT(Writes(server_), ElementsAre("POST", "DELETE", "PATCH"));
  StatusOr<Json> pod = client_->Get(kPods, "ns", "sw-t0000-s0");
  ASSERT_TRUE(pod.ok());
  EXPECT_TRUE((*pod)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ((*pod)["metadata"]["finalizers"], Json::array({"example.com/other"}));
  EXPECT_TRUE(ReleasePod(*client_, "ns", "no-such-pod").ok());
}

}  // namespace
}  // namespace bsw::kube
