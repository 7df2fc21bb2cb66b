#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/pod_backend.h"
#include "tests/unit/adapters/kube/fake_apiserver.h"
#include "tests/unit/adapters/kube/pod_backend_fixture.h"

namespace bsw::kube {
namespace {

using ::testing::HasSubstr;

// What PodBackend::Start makes of the API server's refusals: for good (InvalidArgument, the
// segment fails) or for now (tried again on the next pass).
class PodBackendStartTest : public testing::PodBackendFixture {
 protected:
  void SetUp() override {
    PodBackendFixture::SetUp();
    segment_.sweep = "sw";
    segment_.trial = "sw-t000000";
    segment_.deadline_unix_seconds = 4'000'000'000;
  }

  // The API server answers every pod create with `code` and a Status of `reason` and `message`.
  void RefuseCreates(int code, const std::string& reason, const std::string& message) {
    server_.SetHook([=](const httplib::Request& request, httplib::Response& response) {
      if (request.method != "POST") return false;
      response.status = code;
      response.set_content(Json{{"kind", "Status"},
                                {"status", "Failure"},
                                {"reason", reason},
                                {"code", code},
                                {"message", message}}
                               .dump(),
                           "application/json");
      return true;
    });
  }

  SegmentSpec segment_;
};

TEST_F(PodBackendStartTest, PodSecurityRefusal_IsForGoodAndQuotesTheServer) {
  RefuseCreates(403, "Forbidden",
                "pods \"sw-t000000-s0\" is forbidden: violates PodSecurity \"restricted:latest\": "
                "runAsUser=0 (pod must not set runAsUser=0)");
  Status started = backend_->Start(segment_);
  EXPECT_EQ(started.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(started.message(), HasSubstr("the API server refused the pod: HTTP 403 Forbidden"));
  EXPECT_THAT(started.message(), HasSubstr("runAsUser=0 (pod must not set runAsUser=0)"));
}

TEST_F(PodBackendStartTest, InvalidPod_IsForGood) {
  RefuseCreates(422, "Invalid", "Pod \"sw-t000000-s0\" is invalid: spec.containers[0].image");
  EXPECT_EQ(backend_->Start(segment_).code(), StatusCode::kInvalidArgument);
}

TEST_F(PodBackendStartTest, OtherForbiddenCreates_MayPass) {
  for (const char* message :
       {"pods \"sw-t000000-s0\" is forbidden: exceeded quota: gpus, requested: "
        "requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=4, limited: "
        "requests.nvidia.com/gpu=4",
        "pods is forbidden: User \"system:serviceaccount:ops:bsw\" cannot create resource "
        "\"pods\" in API group \"\" in the namespace \"ns\""}) {
    RefuseCreates(403, "Forbidden", message);
    Status started = backend_->Start(segment_);
    EXPECT_FALSE(started.ok()) << message;
    EXPECT_NE(started.code(), StatusCode::kInvalidArgument) << message;
  }
}

TEST_F(PodBackendStartTest, AnAdmittedPod_Starts) {
  ASSERT_TRUE(backend_->Start(segment_).ok());
  EXPECT_FALSE(server_.Object("/api/v1/namespaces/ns/pods/sw-t000000-s0").is_null());
}

}  // namespace
}  // namespace bsw::kube
