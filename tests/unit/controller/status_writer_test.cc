// StatusWriter against the in-memory API server (tests/unit/adapters/kube/fake_apiserver.h).
#include "operator/controller/kube/status_writer.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "operator/adapters/kube/resources.h"
#include "tests/unit/adapters/kube/fake_apiserver.h"

namespace bsw {
namespace {

using kube::Json;
using kube::testing::ApiStatusBody;
using kube::testing::FakeApiServer;
using kube::testing::RecordedRequest;

constexpr char kStatusPath[] =
    "/apis/budgetsweep.dev/v1alpha1/namespaces/team/budgetsweeps/sw/status";
constexpr char kSweepPath[] = "/apis/budgetsweep.dev/v1alpha1/namespaces/team/budgetsweeps/sw";

class StatusWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<kube::Client>> client = kube::Client::Create(server_.Config());
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_ = std::move(*client);
    Json sweep = {{"apiVersion", "budgetsweep.dev/v1alpha1"},
                  {"kind", "BudgetSweep"},
                  {"metadata", {{"name", "sw"}, {"namespace", "team"}}},
                  {"spec", Json::object()}};
    ASSERT_TRUE(client_->Create(kube::kBudgetSweeps, "team", sweep).ok());
  }

  std::vector<Json> Patches() const {
    std::vector<Json> patches;
    for (const RecordedRequest& r : server_.Requests()) {
      if (r.method == "PATCH" && r.path == kStatusPath) patches.push_back(Json::parse(r.body));
    }
    return patches;
  }

  FakeApiServer server_;
  std::unique_ptr<kube::Client> client_;
};

TEST_F(StatusWriterTest, WritesOnlyWhatChangedAndRemovesWhatTheNewStatusLacks) {
  StatusWriter writer(*client_, "team", "sw", {{"phase", "Pending"}});
  ASSERT_TRUE(writer.Write({{"phase", "Pending"}}).ok());
  EXPECT_TRUE(Patches().empty()) << "the status read is the status wanted";

  ASSERT_TRUE(writer.Write({{"phase", "Running"}, {"best", {{"trial", "t1"}}}}).ok());
  ASSERT_TRUE(writer.Write({{"phase", "Completed"}}).ok());
  std::vector<Json> patches = Patches();
  ASSERT_EQ(patches.size(), 2u);
  EXPECT_EQ(patches[1], (Json{{"status", {{"phase", "Completed"}, {"best", nullptr}}}}));
  EXPECT_EQ(server_.Object(kSweepPath)["status"], (Json{{"phase", "Completed"}}));
  EXPECT_EQ(writer.written(), (Json{{"phase", "Completed"}}));
}

TEST_F(StatusWriterTest, AConflictIsReturnedAndTheNextWriteTriesAgain) {
  int conflicts = 0;
  server_.SetHook([&conflicts](const httplib::Request& request, httplib::Response& response) {
    if (request.method != "PATCH" || conflicts > 0) return false;
    ++conflicts;
    response.status = 409;
    response.set_content(ApiStatusBody(409, "Conflict", "the object has been modified"),
                         "application/json");
    return true;
  });
  StatusWriter writer(*client_, "team", "sw", Json::object());
  Status first = writer.Write({{"phase", "Running"}});
  EXPECT_TRUE(kube::IsConflict(first)) << first.message();
  EXPECT_EQ(writer.written(), Json::object());
  ASSERT_TRUE(writer.Write({{"phase", "Running"}}).ok());
  EXPECT_EQ(server_.Object(kSweepPath)["status"], (Json{{"phase", "Running"}}));
  EXPECT_EQ(Patches().size(), 2u);
}

}  // namespace
}  // namespace bsw
