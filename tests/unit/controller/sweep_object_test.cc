// The reconciler's readers at the edge (sweep_object.h, trial_pod.h): one row per object, with the
// fields read or the exact message that names the malformed field.
#include "operator/controller/kube/sweep_object.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "operator/controller/kube/trial_pod.h"

namespace bsw {
namespace {

using nlohmann::json;

json Sweep(const json& status) {
  json sweep = {{"apiVersion", "budgetsweep.dev/v1alpha1"},
                {"kind", "BudgetSweep"},
                {"metadata", {{"name", "sw"}, {"namespace", "team"}, {"uid", "u-1"}}},
                {"spec", json::object()}};
  sweep["metadata"]["generation"] = 3;
  if (!status.is_null()) sweep["status"] = status;
  return sweep;
}

json Condition(const json& type) {
  return {{"type", type},
          {"status", "False"},
          {"reason", "PoolNotFound"},
          {"message", "waits"},
          {"lastTransitionTime", "2026-01-02T03:04:05Z"},
          {"observedGeneration", 3}};
}

struct Row {
  std::string name;
  json object;
  std::string error;
  int64_t generation;
  std::string phase;
  std::optional<int64_t> observed_generation;
  int64_t trials_created;
  bool started;
  size_t conditions;
};

TEST(ReadSweepObject, ReadsEachFieldOrNamesTheMalformedOne) {
  json no_metadata = Sweep(nullptr);
  no_metadata.erase("metadata");
  json bad_generation = Sweep(nullptr);
  bad_generation["metadata"]["generation"] = "x";
  // name, object, error (empty: read), generation, phase, observedGeneration, trials.created,
  // Started(), conditions read.
  const std::vector<Row> rows = {
      {"a new sweep without status", Sweep(nullptr), "", 3, "", std::nullopt, 0, false, 0},
      {"a running sweep",
       Sweep({{"phase", "Running"},
              {"observedGeneration", 2},
              {"trials", {{"created", 4}}},
              {"conditions", {Condition("Progressing")}}}),
       "", 3, "Running", 2, 4, true, 1},
      {"probe runs only", Sweep({{"throughput", json::object()}}), "", 3, "", std::nullopt, 0, true,
       0},
      {"not an object", json::array(), "(document): must be a BudgetSweep object, got array []", 0,
       "", std::nullopt, 0, false, 0},
      {"no metadata", no_metadata, "metadata: required", 0, "", std::nullopt, 0, false, 0},
      {"a generation that is no number", bad_generation,
       "metadata.generation: must be a number, got string \"x\"", 0, "", std::nullopt, 0, false, 0},
      {"trials.created that is no integer",
       Sweep({{"phase", "Running"}, {"trials", {{"created", 1.5}}}}),
       "status.trials.created: must be an integer, got 1.5", 3, "Running", std::nullopt, 0, false,
       0},
      {"conditions that are no list", Sweep({{"conditions", "Ready"}}),
       "status.conditions: must be a list, got string \"Ready\"", 3, "", std::nullopt, 0, false, 0},
      {"a condition that is no object", Sweep({{"conditions", {Condition("Progressing"), 7}}}),
       "status.conditions[1]: must be an object, got number 7", 3, "", std::nullopt, 0, false, 0},
      {"a condition whose type is no string", Sweep({{"conditions", {Condition(5)}}}),
       "status.conditions[0].type: must be a string, got number 5", 3, "", std::nullopt, 0, false,
       0},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    SweepObject sweep;
    Status read = ReadSweepObject(row.object, &sweep);
    EXPECT_EQ(read.message(), row.error);
    EXPECT_EQ(sweep.object, row.object) << "kept verbatim";
    EXPECT_EQ(sweep.generation, row.generation);
    EXPECT_EQ(sweep.phase, row.phase);
    EXPECT_EQ(sweep.observed_generation, row.observed_generation);
    EXPECT_EQ(sweep.trials_created, row.trials_created);
    EXPECT_EQ(sweep.Started(), row.started);
    EXPECT_EQ(sweep.conditions.size(), row.conditions);
  }
}

TEST(ReadSweepObject, TheStatusToCompareWithLeavesOutEventsAndMalformedConditions) {
  SweepObject sweep;
  ASSERT_TRUE(ReadSweepObject(Sweep({{"phase", "Running"}, {"sweepEvents", {1, 2}}}), &sweep).ok());
  EXPECT_EQ(sweep.uid, "u-1");
  EXPECT_EQ(sweep.status, (json{{"phase", "Running"}}));
  EXPECT_FALSE(
      ReadSweepObject(Sweep({{"phase", "Running"}, {"conditions", {Condition(5)}}}), &sweep).ok());
  EXPECT_EQ(sweep.status, (json{{"phase", "Running"}})) << "the next write replaces them";
}

TEST(ReadTrialPod, ReadsWhoseItIsAndWhetherItRuns) {
  json pod = {{"metadata",
               {{"name", "sw-t000000-s0"},
                {"namespace", "team"},
                {"labels", {{"budgetsweep.dev/sweep", "sw"}}}}},
              {"status", {{"phase", "Running"}}}};
  TrialPod read = ReadTrialPod(pod);
  EXPECT_EQ(read.ns, "team");
  EXPECT_EQ(read.name, "sw-t000000-s0");
  EXPECT_EQ(read.sweep, "sw");
  EXPECT_FALSE(read.ended);
  EXPECT_FALSE(read.deleting);

  pod["status"]["phase"] = "Failed";
  pod["metadata"]["deletionTimestamp"] = "2026-01-02T03:04:05Z";
  read = ReadTrialPod(pod);
  EXPECT_TRUE(read.ended);
  EXPECT_TRUE(read.deleting);

  pod["metadata"]["labels"]["budgetsweep.dev/sweep"] = 7;
  EXPECT_EQ(ReadTrialPod(pod).sweep, "") << "no trial's pod";
  EXPECT_EQ(ReadTrialPod(json::array()).name, "");
  EXPECT_EQ(ReadTrialPod({{"metadata", "x"}}).sweep, "");
}

}  // namespace
}  // namespace bsw
