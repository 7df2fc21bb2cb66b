#include "operator/adapters/kube/trial_log.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/pod_backend.h"
#include "operator/adapters/kube/resources.h"
#include "operator/core/sweep_model.h"
#include "tests/unit/adapters/kube/fake_apiserver.h"

namespace bsw::kube {
namespace {

// Sweep s in namespace ns of the fake API server, whose trial records a TrialLog keeps.
class TrialLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<Client>> made = Client::Create(server_.Config(), {});
    ASSERT_TRUE(made.ok()) << made.status().message();
    client_ = std::move(*made);
    StatusOr<Json> sweep = client_->Create(kBudgetSweeps, "ns",
                                           {{"apiVersion", "budgetsweep.dev/v1alpha1"},
                                            {"kind", "BudgetSweep"},
                                            {"metadata", {{"name", "s"}, {"namespace", "ns"}}},
                                            {"spec", Json::object()}});
    ASSERT_TRUE(sweep.ok()) << sweep.status().message();
    owner_.name = "s";
    owner_.uid = (*sweep)["metadata"]["uid"];
  }

  // Trial `trial`'s record as the API server holds it.
  Json Record(int64_t trial) const {
    return server_.Object("/apis/budgetsweep.dev/v1alpha1/namespaces/ns/budgetsweeptrials/" +
                          TrialName("s", trial));
  }

  testing::FakeApiServer server_;
  std::unique_ptr<Client> client_;
  SweepOwner owner_;
};

// Issue 40: ±Inf were recorded as null and read back as NaN.
TEST_F(TrialLogTest, NonFiniteValuesSurviveTheTrialRecords) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {inf, -inf, std::nan(""), 0.5};
  std::vector<Event> events;
  for (int64_t trial = 0; trial < 4; ++trial) {
    events.push_back(event::TrialCreated{.at = 100, .trial = trial});
    events.push_back(event::ValueRecorded{
        .at = 110, .trial = trial, .resource = 1, .value = values[static_cast<size_t>(trial)]});
  }
  ASSERT_TRUE(TrialLog(*client_, "ns", owner_, 8).Append(events).ok());
  EXPECT_EQ(Record(0)["status"]["events"][1]["value"], "+Inf");
  EXPECT_EQ(Record(1)["status"]["events"][1]["value"], "-Inf");
  EXPECT_EQ(Record(2)["status"]["events"][1]["value"], "NaN");

  TrialLog restarted(*client_, "ns", owner_, 8);
  StatusOr<std::vector<Event>> read = restarted.ReadAll();
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->size(), events.size());
  for (size_t i = 1; i < events.size(); i += 2) {
    const double value = std::get<event::ValueRecorded>((*read)[i]).value;
    if (std::isnan(values[i / 2])) {
      EXPECT_TRUE(std::isnan(value));
    } else {
      EXPECT_EQ(value, values[i / 2]);
    }
  }
}

TEST_F(TrialLogTest, ANullValueOfTheReleaseBeforeReadsAsNaN) {
  Json record = {{"apiVersion", "budgetsweep.dev/v1alpha1"},
                 {"kind", "BudgetSweepTrial"},
                 {"metadata",
                  {{"name", TrialName("s", 0)},
                   {"namespace", "ns"},
                   {"labels", {{kSweepLabel, "s"}}},
                   {"ownerReferences",
                    {{{"kind", "BudgetSweep"}, {"controller", true}, {"uid", owner_.uid}}}}}},
                 {"spec", {{"sweep", "s"}, {"index", 0}}},
                 {"status", {{"events", Json::parse(R"([
           {"at":100.0,"event":"TrialCreated","params":[],"seq":0,"trial":0},
           {"at":110.0,"event":"ValueRecorded","resource":1.0,"seconds":9.0,"seq":1,"trial":0,
            "units":1.0,"value":null}])")}}}};
  ASSERT_TRUE(client_->Create(kBudgetSweepTrials, "ns", record).ok());

  StatusOr<std::vector<Event>> read = TrialLog(*client_, "ns", owner_, 8).ReadAll();
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_TRUE(std::isnan(std::get<event::ValueRecorded>((*read)[1]).value));
}

}  // namespace
}  // namespace bsw::kube
