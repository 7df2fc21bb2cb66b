#include "operator/core/spec_edits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "tests/unit/core/sweep_fixture.h"

namespace bsw {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

// The fixture sweep with everything spelled out, so that every field has a value to change.
json StartedSweep() {
  json j = testing::ValidSweepJson();
  j["spec"]["scheduler"]["sampler"] = "random";
  j["spec"]["maxFailedTrials"] = 3;
  j["spec"]["metrics"] = {{"missingTimeoutSeconds", 300}};
  j["spec"]["throughput"] = {{"enabled", true},
                             {"targetUtilization", 0.85},
                             {"probeSteps", 30},
                             {"maxBudgetFraction", 0.05},
                             {"onBelowTarget", "continue"},
                             {"candidates", {{"workers", {0, 2}}, {"precision", {"bf16"}}}}};
  j["spec"]["trial"]["template"]["spec"]["terminationGracePeriodSeconds"] = 20;
  return j;
}

SweepSpec Parse(const json& j) {
  StatusOr<SweepSpec> spec = ParseSweep(j);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  return spec.ok() ? *spec : SweepSpec{};
}

struct Edit {
  std::string name;
  std::function<void(json& spec)> edit;
  std::vector<std::string> changed;  // the immutable fields named, in order
};

void PrintTo(const Edit& e, std::ostream* os) { *os << e.name; }

class SpecEditTable : public ::testing::TestWithParam<Edit> {};

TEST_P(SpecEditTable, NamesEachChangedImmutableField) {
  json edited = StartedSweep();
  GetParam().edit(edited["spec"]);
  EXPECT_THAT(ChangedImmutableFields(Parse(StartedSweep()), Parse(edited)),
              ElementsAreArray(GetParam().changed));
}

INSTANTIATE_TEST_SUITE_P(
    Rows, SpecEditTable,
    ::testing::Values(
        // Editable: no field named.
        Edit{"budget_up", [](json& s) { s["budget"]["gpuHours"] = 8; }, {}},
        Edit{"budget_down", [](json& s) { s["budget"]["gpuHours"] = 0.1; }, {}},
        Edit{"parallelism", [](json& s) { s["parallelism"] = 9; }, {}},
        Edit{"max_trials_removed", [](json& s) { s.erase("maxTrials"); }, {}},
        Edit{"max_failed_trials", [](json& s) { s["maxFailedTrials"] = 10; }, {}},
        Edit{"metrics_prometheus",
             [](json& s) {
               s["metrics"] = {{"prometheus", {{"url", "http://prom:9090"}}}};
             },
             {}},
        // A default left out, or a number written as a real, is no change.
        Edit{"default_left_out",
             [](json& s) {
               s["scheduler"].erase("sampler");
               s["resource"]["max"] = 27.0;
             },
             {}},
        // Immutable: each named.
        Edit{"objective",
             [](json& s) { s["objective"]["metric"] = "loss"; },
             {"spec.objective.metric"}},
        Edit{"goal", [](json& s) { s["objective"]["goal"] = "minimize"; }, {"spec.objective.goal"}},
        Edit{"resource",
             [](json& s) {
               s["resource"]["max"] = 81;
               s["resource"]["reductionFactor"] = 2;
             },
             {"spec.resource.max", "spec.resource.reductionFactor"}},
        Edit{"resource_unit",
             [](json& s) { s["resource"]["unit"] = "steps"; },
             {"spec.resource.unit"}},
        Edit{"resource_min", [](json& s) { s["resource"]["min"] = 3; }, {"spec.resource.min"}},
        Edit{"scheduler",
             [](json& s) {
               s["scheduler"] = {
                   {"algorithm", "random"}, {"mode", "pause"}, {"sampler", "tpe"}, {"seed", 8}};
             },
             {"spec.scheduler.algorithm", "spec.scheduler.mode", "spec.scheduler.sampler",
              "spec.scheduler.seed"}},
        Edit{"param_changed",
             [](json& s) { s["searchSpace"]["lr"]["max"] = 0.5; },
             {"spec.searchSpace.lr"}},
        Edit{"param_values_changed",
             [](json& s) {
               s["searchSpace"]["batch-size"]["values"] = {64, 128};
             },
             {"spec.searchSpace.batch-size"}},
        Edit{"param_added_and_removed",
             [](json& s) {
               s["searchSpace"].erase("weight-decay");
               s["searchSpace"]["dropout"] = {{"type", "uniform"}, {"min", 0}, {"max", 0.5}};
             },
             {"spec.searchSpace.dropout", "spec.searchSpace.weight-decay"}},
        Edit{"throughput",
             [](json& s) {
               s["throughput"]["enabled"] = false;
               s["throughput"]["targetUtilization"] = 0.9;
               s["throughput"]["probeSteps"] = 10;
               s["throughput"]["maxBudgetFraction"] = 0.1;
               s["throughput"]["onBelowTarget"] = "stop";
             },
             {"spec.throughput.enabled", "spec.throughput.targetUtilization",
              "spec.throughput.probeSteps", "spec.throughput.maxBudgetFraction",
              "spec.throughput.onBelowTarget"}},
        Edit{"throughput_candidates",
             [](json& s) {
               s["throughput"]["candidates"] = {{"workers", {0, 4}},
                                                {"prefetch", {2}},
                                                {"precision", {"fp32"}},
                                                {"microBatches", {{{"batchSize", 32}}}}};
               s["searchSpace"].erase("batch-size");
             },
             {"spec.searchSpace.batch-size", "spec.throughput.candidates.workers",
              "spec.throughput.candidates.prefetch", "spec.throughput.candidates.precision",
              "spec.throughput.candidates.microBatches"}},
        Edit{"throughput_removed",
             [](json& s) { s.erase("throughput"); },
             {"spec.throughput.enabled", "spec.throughput.candidates.workers",
              "spec.throughput.candidates.precision"}},
        Edit{"trial",
             [](json& s) {
               s["trial"]["gpus"] = 2;
               s["trial"]["maxRetries"] = 0;
             },
             {"spec.trial.gpus", "spec.trial.maxRetries"}},
        Edit{
            "image",
            [](json& s) { s["trial"]["template"]["spec"]["containers"][0]["image"] = "trainer:2"; },
            {"spec.trial.template.spec.containers[0].image"}},
        Edit{"args_grew",
             [](json& s) {
               s["trial"]["template"]["spec"]["containers"][0]["args"].push_back("--epochs=3");
             },
             {"spec.trial.template.spec.containers[0].args"}},
        Edit{"template_field_added",
             [](json& s) {
               s["trial"]["template"]["spec"]["nodeSelector"] = {{"gpu", "h100"}};
               s["trial"]["template"]["spec"]["terminationGracePeriodSeconds"] = 5;
             },
             {"spec.trial.template.spec.nodeSelector",
              "spec.trial.template.spec.terminationGracePeriodSeconds"}},
        // Editable and immutable together: only the immutable ones are named.
        Edit{"mixed",
             [](json& s) {
               s["parallelism"] = 1;
               s["budget"]["gpuHours"] = 1;
               s["searchSpace"]["lr"]["min"] = 0.001;
             },
             {"spec.searchSpace.lr"}}),
    [](const ::testing::TestParamInfo<Edit>& row) { return row.param.name; });

TEST(ApplySpecEdit, TakesTheEditableFieldsAndGenerationAndKeepsTheRest) {
  json edited = StartedSweep();
  edited["metadata"]["generation"] = 4;
  edited["spec"]["budget"]["gpuHours"] = 0.25;
  edited["spec"]["parallelism"] = 7;
  edited["spec"].erase("maxTrials");
  edited["spec"]["maxFailedTrials"] = 9;
  edited["spec"]["metrics"] = {{"prometheus", {{"url", "http://prom:9090"}}},
                               {"missingTimeoutSeconds", 60}};
  SweepSpec started = Parse(StartedSweep());

  StatusOr<SweepSpec> spec = ApplySpecEdit(started, Parse(edited));

  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->generation, 4);
  EXPECT_EQ(spec->budget_gpu_hours, 0.25);
  EXPECT_EQ(spec->parallelism, 7);
  EXPECT_FALSE(spec->max_trials.has_value());
  EXPECT_EQ(spec->max_failed_trials, 9);
  EXPECT_EQ(spec->prometheus_url, "http://prom:9090");
  EXPECT_EQ(spec->metrics_missing_timeout_seconds, 60);
  EXPECT_EQ(spec->trial_template, started.trial_template);
  EXPECT_THAT(ChangedImmutableFields(started, *spec), IsEmpty());
}

TEST(ApplySpecEdit, RefusesAnImmutableEditNamingEachFieldOnItsOwnLine) {
  json edited = StartedSweep();
  edited["spec"]["parallelism"] = 7;
  edited["spec"]["searchSpace"]["lr"]["max"] = 0.5;
  edited["spec"]["resource"]["max"] = 81;

  StatusOr<SweepSpec> spec = ApplySpecEdit(Parse(StartedSweep()), Parse(edited));

  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(spec.status().message(),
            "spec.resource.max: changed on a sweep that has started (immutable)\n"
            "spec.searchSpace.lr: changed on a sweep that has started (immutable)");
}

TEST(ApplySpecEdit, AcceptsTheSameSpec) {
  SweepSpec started = Parse(StartedSweep());
  StatusOr<SweepSpec> spec = ApplySpecEdit(started, started);
  ASSERT_TRUE(spec.ok());
  EXPECT_THAT(ChangedImmutableFields(started, *spec), ElementsAre());
}

}  // namespace
}  // namespace bsw
