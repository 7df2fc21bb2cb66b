#include "operator/core/api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <string>

#include "tests/unit/core/sweep_fixture.h"

namespace bsw {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing::ValidSweepJson;

TEST(ParseSweep, ReadsEveryFieldOfTheDesignExample) {
  StatusOr<SweepSpec> spec = ParseSweep(ValidSweepJson());
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->name, "fmnist-cnn");
  EXPECT_DOUBLE_EQ(spec->budget_gpu_hours, 4);
  EXPECT_EQ(spec->objective_metric, "validation_accuracy");
  EXPECT_EQ(spec->goal, Goal::kMaximize);
  EXPECT_EQ(spec->resource_unit, "epochs");
  EXPECT_DOUBLE_EQ(spec->resource_min, 1);
  EXPECT_DOUBLE_EQ(spec->resource_max, 27);
  EXPECT_EQ(spec->reduction_factor, 3);
  EXPECT_EQ(spec->algorithm, Algorithm::kAsha);
  EXPECT_EQ(spec->mode, AshaMode::kStop);
  EXPECT_EQ(spec->sampler, Sampler::kRandom);
  EXPECT_EQ(spec->seed, 7u);
  EXPECT_EQ(spec->parallelism, 4);
  EXPECT_EQ(spec->max_trials, 200);
  EXPECT_EQ(spec->trial_gpus, 1);
  EXPECT_EQ(spec->max_retries, 1);
  EXPECT_EQ(spec->container.image, "budgetsweep/trainer:dev");
  EXPECT_THAT(spec->container.args, ::testing::ElementsAre("--dataset=fashion-mnist"));
  ASSERT_EQ(spec->search_space.size(), 4u);
  // Sorted by name, so that configurations do not depend on the order the file lists them.
  EXPECT_EQ(spec->search_space[0].name, "batch-size");
  EXPECT_EQ(spec->search_space[0].type, ParamType::kChoice);
  EXPECT_EQ(spec->search_space[1].name, "lr");
  EXPECT_EQ(spec->search_space[1].type, ParamType::kLogUniform);
}

TEST(ParseSweep, AcceptsPauseModeGridParamsAndMinimize) {
  json j = ValidSweepJson();
  j["spec"]["scheduler"] = {{"algorithm", "asha"}, {"mode", "pause"}, {"sampler", "tpe"}};
  j["spec"]["objective"]["goal"] = "minimize";
  j["spec"]["searchSpace"]["layers"] = {{"type", "grid"}, {"values", {1, 2, 3}}};
  j["spec"]["searchSpace"]["width"] = {{"type", "int"}, {"min", 8}, {"max", 512}, {"log", true}};
  j["spec"]["metrics"] = {{"prometheus", {{"url", "http://prometheus:9090"}}},
                          {"missingTimeoutSeconds", 60}};
  StatusOr<SweepSpec> spec = ParseSweep(j);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->mode, AshaMode::kPause);
  EXPECT_EQ(spec->sampler, Sampler::kTpe);
  EXPECT_EQ(spec->goal, Goal::kMinimize);
  EXPECT_EQ(spec->prometheus_url, "http://prometheus:9090");
  EXPECT_DOUBLE_EQ(spec->metrics_missing_timeout_seconds, 60);
  EXPECT_EQ(spec->search_space.size(), 6u);
}

TEST(ParseSweep, AcceptsHyperbandInEitherModeWithEitherSampler) {
  for (const char* mode : {"stop", "pause"}) {
    for (const char* sampler : {"random", "tpe"}) {
      json j = ValidSweepJson();
      j["spec"]["scheduler"] = {{"algorithm", "hyperband"}, {"mode", mode}, {"sampler", sampler}};
      StatusOr<SweepSpec> spec = ParseSweep(j);
      ASSERT_TRUE(spec.ok()) << spec.status().message();
      EXPECT_EQ(spec->algorithm, Algorithm::kHyperband);
      EXPECT_STREQ(AshaModeName(spec->mode), mode);
      EXPECT_TRUE(EarlyStopping(spec->algorithm));
    }
  }
  EXPECT_FALSE(EarlyStopping(Algorithm::kRandom));
  EXPECT_FALSE(EarlyStopping(Algorithm::kGrid));
}

TEST(ParseSweep, ReadsACollectorWithCheckpointingOffByDefaultForAPrintingTrainer) {
  json j = ValidSweepJson();
  StatusOr<SweepSpec> prometheus = ParseSweep(j);
  ASSERT_TRUE(prometheus.ok()) << prometheus.status().message();
  EXPECT_EQ(prometheus->collector.kind, CollectorKind::kPrometheus);
  EXPECT_TRUE(prometheus->checkpointing);

  j["spec"]["metrics"]["collector"] = {
      {"kind", "File"},
      {"filter", "(\\w+):\\s*(\\S+)"},
      {"resourceKey", "epoch"},
      {"file", {{"path", "logs/metrics.jsonl"}, {"format", "JSON"}}}};
  StatusOr<SweepSpec> file = ParseSweep(j);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->collector.kind, CollectorKind::kFile);
  EXPECT_EQ(file->collector.filter, "(\\w+):\\s*(\\S+)");
  EXPECT_EQ(file->collector.resource_key, "epoch");
  EXPECT_EQ(file->collector.file_path, "logs/metrics.jsonl");
  EXPECT_EQ(file->collector.file_format, CollectorFormat::kJson);
  EXPECT_FALSE(file->checkpointing);

  // A printing trainer that does checkpoint (the SDK's) may pause.
  j["spec"]["trial"]["checkpointing"] = true;
  j["spec"]["scheduler"]["mode"] = "pause";
  StatusOr<SweepSpec> pausing = ParseSweep(j);
  ASSERT_TRUE(pausing.ok()) << pausing.status().message();
  EXPECT_TRUE(pausing->checkpointing);
}

TEST(ParseSweep, RandomAndGridMayLeaveResourceMinOut) {
  json j = ValidSweepJson();
  j["spec"]["scheduler"]["algorithm"] = "random";
  j["spec"]["resource"] = {{"unit", "reports"}, {"max", 1}};
  StatusOr<SweepSpec> spec = ParseSweep(j);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->resource_min, 1);
  EXPECT_EQ(spec->resource_max, 1);
}

TEST(ParseSweep, ThroughputIsOffByDefaultWithTheIssuesDefaults) {
  StatusOr<SweepSpec> spec = ParseSweep(ValidSweepJson());
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const ThroughputSpec& t = spec->throughput;
  EXPECT_FALSE(t.enabled);
  EXPECT_DOUBLE_EQ(t.target_utilization, 0.85);
  EXPECT_DOUBLE_EQ(t.max_budget_fraction, 0.05);
  EXPECT_EQ(t.probe_steps, 30);
  EXPECT_FALSE(t.stop_below_target);
  EXPECT_THAT(t.workers, ::testing::ElementsAre(0, 1, 2, 4));
  EXPECT_TRUE(t.prefetch.empty());
  EXPECT_TRUE(t.precision.empty());
  EXPECT_TRUE(t.micro_batches.empty());
}

TEST(ParseSweep, ReadsEveryThroughputField) {
  json j = ValidSweepJson();
  j["spec"]["searchSpace"].erase("batch-size");
  j["spec"]["throughput"] = json::parse(R"({
    "enabled": true, "targetUtilization": 0.9, "probeSteps": 12, "maxBudgetFraction": 0.1,
    "onBelowTarget": "stop",
    "candidates": {"workers": [1, 3], "prefetch": [2, 8], "precision": ["bf16", "fp32"],
                   "microBatches": [{"batchSize": 128}, {"batchSize": 64, "accumulationSteps": 2}]}
  })");
  StatusOr<SweepSpec> spec = ParseSweep(j);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const ThroughputSpec& t = spec->throughput;
  EXPECT_TRUE(t.enabled);
  EXPECT_DOUBLE_EQ(t.target_utilization, 0.9);
  EXPECT_EQ(t.probe_steps, 12);
  EXPECT_DOUBLE_EQ(t.max_budget_fraction, 0.1);
  EXPECT_TRUE(t.stop_below_target);
  EXPECT_THAT(t.workers, ::testing::ElementsAre(1, 3));
  EXPECT_THAT(t.prefetch, ::testing::ElementsAre(2, 8));
  EXPECT_THAT(t.precision, ::testing::ElementsAre("bf16", "fp32"));
  ASSERT_EQ(t.micro_batches.size(), 2u);
  EXPECT_EQ(t.micro_batches[0].batch_size, 128);
  EXPECT_EQ(t.micro_batches[0].accumulation_steps, 1);
  EXPECT_EQ(t.micro_batches[1].batch_size, 64);
  EXPECT_EQ(t.micro_batches[1].accumulation_steps, 2);
}

TEST(ParseSweep, AcceptsServerPopulatedMetadataAndStatus) {
  json j = ValidSweepJson();
  j["metadata"]["uid"] = "1234";
  j["metadata"]["resourceVersion"] = "99";
  j["metadata"]["generation"] = 3;
  j["status"] = {{"phase", "Running"}};
  StatusOr<SweepSpec> spec = ParseSweep(j);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->generation, 3);
}

TEST(ParseSweep, RejectsADocumentThatIsNotAnObject) {
  for (const json& doc : {json("just a string"), json::array({1, 2}), json(42), json(nullptr)}) {
    StatusOr<SweepSpec> spec = ParseSweep(doc);
    ASSERT_FALSE(spec.ok());
    EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(spec.status().message(), StartsWith("(document): "));
  }
}

// One bad input and the field path (with the start of its message) the error must name.
struct BadInput {
  std::string name;
  std::function<void(json&)> edit;
  std::string expected;
};

class ParseSweepRejects : public ::testing::TestWithParam<BadInput> {};

TEST_P(ParseSweepRejects, WithTheFieldPathOfTheProblem) {
  json j = ValidSweepJson();
  GetParam().edit(j);
  StatusOr<SweepSpec> spec = ParseSweep(j);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr(GetParam().expected));
}

json& Space(json& j) { return j["spec"]["searchSpace"]; }

INSTANTIATE_TEST_SUITE_P(
    BadInputs, ParseSweepRejects,
    ::testing::Values(
        BadInput{"SpecIsAString", [](json& j) { j["spec"] = "budget: 4"; },
                 "spec: must be an object, got string"},
        BadInput{"BudgetIsAList", [](json& j) { j["spec"]["budget"] = json::array({4}); },
                 "spec.budget: must be an object, got array"},
        BadInput{"ParamIsANumber", [](json& j) { Space(j)["lr"] = 0.1; },
                 "spec.searchSpace.lr: must be an object, got number"},
        BadInput{"UnknownTopLevelField", [](json& j) { j["extra"] = 1; }, "extra: unknown field"},
        BadInput{"UnknownSpecField", [](json& j) { j["spec"]["budgt"] = 1; },
                 "spec.budgt: unknown field"},
        BadInput{"UnknownBudgetField", [](json& j) { j["spec"]["budget"]["gpuHour"] = 1; },
                 "spec.budget.gpuHour: unknown field"},
        BadInput{"UnknownParamField", [](json& j) { Space(j)["lr"]["scale"] = "log"; },
                 "spec.searchSpace.lr.scale: unknown field"},
        BadInput{"UnknownPrometheusField",
                 [](json& j) {
                   j["spec"]["metrics"] = {{"prometheus", {{"uri", "x"}}}};
                 },
                 "spec.metrics.prometheus.uri: unknown field"},
        BadInput{"BudgetIsAString", [](json& j) { j["spec"]["budget"]["gpuHours"] = "4"; },
                 "spec.budget.gpuHours: must be a number, got string"},
        BadInput{"ParallelismIsAFraction", [](json& j) { j["spec"]["parallelism"] = 2.5; },
                 "spec.parallelism: must be an integer"},
        BadInput{"AlgorithmIsUnknown",
                 [](json& j) { j["spec"]["scheduler"]["algorithm"] = "bohb"; },
                 "spec.scheduler.algorithm: must be one of asha, hyperband, random, grid, pbt, pb2, got "
                 "\"bohb\""},
        BadInput{"ModeIsUnknown", [](json& j) { j["spec"]["scheduler"]["mode"] = "halt"; },
                 "spec.scheduler.mode: must be one of stop, pause"},
        BadInput{"SamplerIsUnknown", [](json& j) { j["spec"]["scheduler"]["sampler"] = "bayes"; },
                 "spec.scheduler.sampler: must be one of random, tpe, got \"bayes\""},
        BadInput{"TpeWithGrid",
                 [](json& j) {
                   j["spec"]["scheduler"] = {{"algorithm", "grid"}, {"sampler", "tpe"}};
                   j["spec"]["searchSpace"] = {{"layers", {{"type", "int"}, {"min", 1}, {"max", 4}}}};
                 },
                 "spec.scheduler.sampler: tpe cannot be used with algorithm grid"},
        BadInput{"LogIsAString",
                 [](json& j) {
                   Space(j)["width"] = {{"type", "int"}, {"min", 1}, {"max", 9}, {"log", "yes"}};
                 },
                 "spec.searchSpace.width.log: must be true or false"},
        BadInput{"ResourceMinEqualsMax",
                 [](json& j) {
                   j["spec"]["resource"]["min"] = 27;
                   j["spec"]["resource"]["max"] = 27;
                 },
                 "spec.resource.max: must be greater than spec.resource.min (27)"},
        BadInput{"ResourceMinAboveMax", [](json& j) { j["spec"]["resource"]["min"] = 30; },
                 "spec.resource.max: must be greater than spec.resource.min (30)"},
        BadInput{"ResourceMinZero", [](json& j) { j["spec"]["resource"]["min"] = 0; },
                 "spec.resource.min: must be greater than 0"},
        BadInput{"BudgetZero", [](json& j) { j["spec"]["budget"]["gpuHours"] = 0; },
                 "spec.budget.gpuHours: must be greater than 0, got 0"},
        BadInput{"BudgetNegative", [](json& j) { j["spec"]["budget"]["gpuHours"] = -2; },
                 "spec.budget.gpuHours: must be greater than 0, got -2"},
        BadInput{"BudgetMissing", [](json& j) { j["spec"].erase("budget"); },
                 "spec.budget: required"},
        BadInput{"ReductionFactorOne",
                 [](json& j) { j["spec"]["resource"]["reductionFactor"] = 1; },
                 "spec.resource.reductionFactor: must be between 2 and 1000, got 1"},
        // Issue 40 point 5 and issue 39 point 6: bounds that keep every deadline and rung count
        // finite, each refused with the limit named, and numbers written readably.
        BadInput{"ReductionFactorAboveTheLimit",
                 [](json& j) { j["spec"]["resource"]["reductionFactor"] = 1001; },
                 "spec.resource.reductionFactor: must be between 2 and 1000, got 1001"},
        BadInput{"ReductionFactorBeyondAnExactInteger",
                 [](json& j) {
                   j["spec"]["resource"]["reductionFactor"] = int64_t{9223372036854775807};
                 },
                 "spec.resource.reductionFactor: out of range: must be between 2 and 1000, got "
                 "9223372036854775807"},
        BadInput{"BudgetAboveTheLimit", [](json& j) { j["spec"]["budget"]["gpuHours"] = 1e305; },
                 "spec.budget.gpuHours: out of range: must be at most 1000000 (the largest budget "
                 "a sweep may have), got 1e+305"},
        BadInput{"BudgetInfinite",
                 [](json& j) {
                   j["spec"]["budget"]["gpuHours"] = std::numeric_limits<double>::infinity();
                 },
                 "spec.budget.gpuHours: out of range: must be a finite number, got infinity"},
        BadInput{"BudgetNotANumber",
                 [](json& j) {
                   j["spec"]["budget"]["gpuHours"] = std::numeric_limits<double>::quiet_NaN();
                 },
                 "spec.budget.gpuHours: must be a number, got .nan"},
        BadInput{"HugeNumberIsWrittenReadably",
                 [](json& j) {
                   j["spec"]["resource"]["min"] = 1.7e308;
                   j["spec"]["resource"]["max"] = 2;
                 },
                 "spec.resource.min: out of range: must be at most 1e+15 (the largest resource a "
                 "trial may train for), got 1.7e+308"},
        BadInput{"ResourceMaxAboveTheLimit", [](json& j) { j["spec"]["resource"]["max"] = 1e16; },
                 "spec.resource.max: out of range: must be at most 1e+15"},
        BadInput{"ResourceRangeWithTooManyRungs",
                 [](json& j) {
                   j["spec"]["resource"] = {{"min", 1e-300}, {"max", 1e15}, {"reductionFactor", 2}};
                 },
                 "spec.resource: 1e-300 to 1e+15 with reductionFactor 2 makes 1048 rungs; at most "
                 "64 are allowed (raise min or reductionFactor, or lower max)"},
        BadInput{"UniformRangeBeyondAFiniteNumber",
                 [](json& j) {
                   Space(j)["warmup-fraction"] = {{"type", "uniform"}, {"min", -1e308}, {"max", 1e308}};
                 },
                 "spec.searchSpace.warmup-fraction.max: out of range: max - min must be a finite "
                 "number, got 1e+308 - -1e+308"},
        BadInput{"MissingTimeoutAboveTheLimit",
                 [](json& j) {
                   j["spec"]["metrics"] = {{"missingTimeoutSeconds", 1e12}};
                 },
                 "spec.metrics.missingTimeoutSeconds: out of range: must be at most 604800 (a "
                 "week), got 1e+12"},
        BadInput{"GracePeriodAboveTheLimit",
                 [](json& j) {
                   j["spec"]["trial"]["template"]["spec"]["terminationGracePeriodSeconds"] =
                       int64_t{1} << 62;
                 },
                 "spec.trial.template.spec.terminationGracePeriodSeconds: must be an integer from "
                 "0 to 3600 (an hour), got 4611686018427387904"},
        BadInput{"SeedBeyondAnExactInteger",
                 [](json& j) { j["spec"]["scheduler"]["seed"] = 1e300; },
                 "spec.scheduler.seed: out of range: must be at least 0, got 1e+300"},
        BadInput{"ParallelismBeyondAnExactInteger", [](json& j) { j["spec"]["parallelism"] = 1e20; },
                 "spec.parallelism: out of range: must be between 1 and 10000000, got 1e+20"},
        BadInput{"EmptySearchSpace", [](json& j) { Space(j) = json::object(); },
                 "spec.searchSpace: must define at least one parameter"},
        BadInput{"LogUniformMinZero", [](json& j) { Space(j)["lr"]["min"] = 0; },
                 "spec.searchSpace.lr.min: must be greater than 0 on a log scale, got 0"},
        BadInput{"LogUniformMinNegative", [](json& j) { Space(j)["lr"]["min"] = -1; },
                 "spec.searchSpace.lr.min: must be greater than 0 on a log scale"},
        BadInput{"LogUniformMinAboveMax", [](json& j) { Space(j)["lr"]["min"] = 1; },
                 "spec.searchSpace.lr.max: must be greater than spec.searchSpace.lr.min (1)"},
        BadInput{"LogIntWithMinZero",
                 [](json& j) {
                   Space(j)["width"] = {{"type", "int"}, {"min", 0}, {"max", 64}, {"log", true}};
                 },
                 "spec.searchSpace.width.min: must be greater than 0 on a log scale, got 0"},
        BadInput{"IntWithFractionalBound",
                 [](json& j) {
                   Space(j)["width"] = {{"type", "int"}, {"min", 1.5}, {"max", 64}};
                 },
                 "spec.searchSpace.width.min: must be an integer"},
        BadInput{"ChoiceWithEmptyValues",
                 [](json& j) { Space(j)["batch-size"]["values"] = json::array(); },
                 "spec.searchSpace.batch-size.values: must be a non-empty list"},
        BadInput{"ChoiceWithoutValues", [](json& j) { Space(j)["batch-size"].erase("values"); },
                 "spec.searchSpace.batch-size.values: required for type choice"},
        BadInput{"ChoiceWithAnObjectValue",
                 [](json& j) {
                   Space(j)["batch-size"]["values"] = {64, {{"a", 1}}};
                 },
                 "spec.searchSpace.batch-size.values[1]: must be a number, string or boolean"},
        BadInput{"ParamWithoutType", [](json& j) { Space(j)["lr"].erase("type"); },
                 "spec.searchSpace.lr.type: required"},
        BadInput{"ParamNameIsNotAFlag",
                 [](json& j) {
                   Space(j)["--lr"] = {{"type", "uniform"}, {"min", 0}, {"max", 1}};
                 },
                 "spec.searchSpace.--lr: parameter names are trainer flag names"},
        BadInput{"GridAlgorithmWithContinuousParam",
                 [](json& j) { j["spec"]["scheduler"]["algorithm"] = "grid"; },
                 "spec.searchSpace.lr.type: the grid algorithm needs discrete parameters"},
        BadInput{"WrongApiVersion", [](json& j) { j["apiVersion"] = "budgetsweep.dev/v2"; },
                 "apiVersion: must be budgetsweep.dev/v1alpha1"},
        BadInput{"NameIsNotADnsLabel", [](json& j) { j["metadata"]["name"] = "Bad_Name"; },
                 "metadata.name: must be a DNS label"},
        BadInput{"TemplateWithoutContainers",
                 [](json& j) {
                   j["spec"]["trial"]["template"] = {{"spec", json::object()}};
                 },
                 "spec.trial.template.spec.containers: must list at least one container"},
        BadInput{"NegativeGpus", [](json& j) { j["spec"]["trial"]["gpus"] = -1; },
                 "spec.trial.gpus: must be between 0 and 10000000, got -1"},
        BadInput{"CollectorKindUnknown",
                 [](json& j) { j["spec"]["metrics"]["collector"] = {{"kind", "Stdout"}}; },
                 "spec.metrics.collector.kind: must be one of Prometheus, StdOut, File, got "
                 "\"Stdout\""},
        BadInput{"FileCollectorWithoutFile",
                 [](json& j) { j["spec"]["metrics"]["collector"] = {{"kind", "File"}}; },
                 "spec.metrics.collector.file: required"},
        BadInput{"FileCollectorPathOutsideTheTrialDirectory",
                 [](json& j) {
                   j["spec"]["metrics"]["collector"] = {
                       {"kind", "File"}, {"file", {{"path", "../other-trial/metrics.log"}}}};
                 },
                 "spec.metrics.collector.file.path: must be a relative path inside the trial's "
                 "directory, without '..'"},
        BadInput{"FileCollectorAbsolutePath",
                 [](json& j) {
                   j["spec"]["metrics"]["collector"] = {
                       {"kind", "File"}, {"file", {{"path", "/var/log/katib/metrics.log"}}}};
                 },
                 "spec.metrics.collector.file.path: must be a relative path"},
        BadInput{"FileWithStdOutCollector",
                 [](json& j) {
                   j["spec"]["metrics"]["collector"] = {{"kind", "StdOut"},
                                                        {"file", {{"path", "m.log"}}}};
                 },
                 "spec.metrics.collector.file: only with kind File"},
        BadInput{"FilterThatIsNoRegex",
                 [](json& j) {
                   j["spec"]["metrics"]["collector"] = {{"kind", "StdOut"}, {"filter", "(a=(b"}};
                 },
                 "spec.metrics.collector.filter: is not a regular expression"},
        BadInput{"FilterWithOneGroup",
                 [](json& j) {
                   j["spec"]["metrics"]["collector"] = {{"kind", "StdOut"}, {"filter", "acc=(\\d+)"}};
                 },
                 "spec.metrics.collector.filter: needs two groups, the name and the value"},
        BadInput{"FilterTooLong",
                 [](json& j) {
                   j["spec"]["metrics"]["collector"] = {{"kind", "StdOut"},
                                                        {"filter", std::string(1025, 'a')}};
                 },
                 "spec.metrics.collector.filter: must be at most 1024 characters, got 1025"},
        BadInput{"FilterWithThePrometheusCollector",
                 [](json& j) { j["spec"]["metrics"]["collector"] = {{"filter", "(\\w+)=(\\S+)"}}; },
                 "spec.metrics.collector.filter: only with kind StdOut or File"},
        BadInput{"PauseModeWithAPrintingTrainer",
                 [](json& j) {
                   j["spec"]["metrics"]["collector"] = {{"kind", "StdOut"}};
                   j["spec"]["scheduler"]["mode"] = "pause";
                 },
                 "spec.scheduler.mode: pause needs a trainer that checkpoints, and "
                 "spec.trial.checkpointing is false (the default for collector StdOut)"},
        BadInput{"PauseModeWithoutCheckpointing",
                 [](json& j) {
                   j["spec"]["trial"]["checkpointing"] = false;
                   j["spec"]["scheduler"]["mode"] = "pause";
                 },
                 "spec.scheduler.mode: pause needs a trainer that checkpoints, and "
                 "spec.trial.checkpointing is false"},
        BadInput{"ProbeWithAPrintingTrainer",
                 [](json& j) {
                   j["spec"]["metrics"]["collector"] = {{"kind", "StdOut"}};
                   j["spec"]["throughput"] = {{"enabled", true}};
                 },
                 "spec.throughput.enabled: the probe needs samples/s and the data-wait ratio"},
        BadInput{"PrintingTrainerWithoutACommand",
                 [](json& j) {
                   j["spec"]["metrics"]["collector"] = {{"kind", "StdOut"}};
                   j["spec"]["trial"]["template"]["spec"]["containers"][0].erase("command");
                 },
                 "spec.trial.template.spec.containers[0].command: required with "
                 "spec.metrics.collector.kind StdOut"},
        BadInput{"UnknownPlaceholder",
                 [](json& j) {
                   j["spec"]["trial"]["template"]["spec"]["containers"][0]["args"] = {
                       "--dataset=fashion-mnist", "--learning-rate=${trialParameters.learningRate}"};
                 },
                 "spec.trial.template.spec.containers[0].args[1]: "
                 "${trialParameters.learningRate} names no parameter of spec.searchSpace"},
        BadInput{"UnclosedPlaceholder",
                 [](json& j) {
                   j["spec"]["trial"]["template"]["spec"]["containers"][0]["env"] = {
                       {{"name", "LR"}, {"value", "${trialParameters.lr"}}};
                 },
                 "spec.trial.template.spec.containers[0].env[0].value: a placeholder must read "
                 "${trialParameters.NAME}"},
        BadInput{"ProbeWithPlaceholders",
                 [](json& j) {
                   j["spec"]["trial"]["template"]["spec"]["containers"][0]["args"] = {
                       "--lr=${trialParameters.lr}"};
                   j["spec"]["throughput"] = {{"enabled", true}};
                 },
                 "spec.throughput.enabled: probe runs get no trial parameters"},
        BadInput{"AshaWithoutResourceMin",
                 [](json& j) { j["spec"]["resource"].erase("min"); },
                 "spec.resource.min: required with algorithm asha (only random and grid"},
        BadInput{"MissingTimeoutZero",
                 [](json& j) {
                   j["spec"]["metrics"] = {{"missingTimeoutSeconds", 0}};
                 },
                 "spec.metrics.missingTimeoutSeconds: must be greater than 0"},
        BadInput{"UnknownThroughputField",
                 [](json& j) { j["spec"]["throughput"] = {{"enabled", true}, {"target", 0.9}}; },
                 "spec.throughput.target: unknown field"},
        BadInput{"UnknownCandidateDimension",
                 [](json& j) { j["spec"]["throughput"]["candidates"] = {{"pinMemory", {true}}}; },
                 "spec.throughput.candidates.pinMemory: unknown field"},
        BadInput{"UnknownMicroBatchField",
                 [](json& j) {
                   j["spec"]["throughput"]["candidates"]["microBatches"] = {
                       {{"batchSize", 64}, {"accumulation", 2}}};
                 },
                 "spec.throughput.candidates.microBatches[0].accumulation: unknown field"},
        BadInput{"TargetUtilizationAboveOne",
                 [](json& j) { j["spec"]["throughput"]["targetUtilization"] = 1.5; },
                 "spec.throughput.targetUtilization: must be in (0, 1], got 1.5"},
        BadInput{"BudgetFractionOne",
                 [](json& j) { j["spec"]["throughput"]["maxBudgetFraction"] = 1; },
                 "spec.throughput.maxBudgetFraction: must be in (0, 1), got 1"},
        BadInput{"ProbeStepsZero", [](json& j) { j["spec"]["throughput"]["probeSteps"] = 0; },
                 "spec.throughput.probeSteps: must be between 1 and 100000, got 0"},
        BadInput{"OnBelowTargetUnknown",
                 [](json& j) { j["spec"]["throughput"]["onBelowTarget"] = "retry"; },
                 "spec.throughput.onBelowTarget: must be one of continue, stop"},
        BadInput{"EnabledIsAString", [](json& j) { j["spec"]["throughput"]["enabled"] = "yes"; },
                 "spec.throughput.enabled: must be true or false"},
        BadInput{"NegativeWorkers",
                 [](json& j) { j["spec"]["throughput"]["candidates"]["workers"] = {2, -1}; },
                 "spec.throughput.candidates.workers[1]: must be an integer between 0 and 256"},
        BadInput{"RepeatedPrefetch",
                 [](json& j) { j["spec"]["throughput"]["candidates"]["prefetch"] = {4, 4}; },
                 "spec.throughput.candidates.prefetch[1]: repeats 4"},
        BadInput{"UnknownPrecision",
                 [](json& j) {
                   j["spec"]["throughput"]["candidates"]["precision"] = {"bf16", "int8"};
                 },
                 "spec.throughput.candidates.precision[1]: must be one of auto, bf16"},
        BadInput{"EmptyWorkers",
                 [](json& j) {
                   j["spec"]["throughput"]["candidates"]["workers"] = json::array();
                 },
                 "spec.throughput.candidates.workers: must be a non-empty list of integers"},
        BadInput{"MicroBatchWithoutBatchSize",
                 [](json& j) {
                   j["spec"]["throughput"]["candidates"]["microBatches"] = {
                       {{"accumulationSteps", 2}}};
                 },
                 "spec.throughput.candidates.microBatches[0].batchSize: required"},
        BadInput{"TooManyCandidates",
                 [](json& j) {
                   j["spec"]["throughput"]["candidates"] = {{"workers", {0, 1, 2, 3, 4, 5, 6, 7}},
                                                            {"prefetch", {1, 2, 4, 8, 16}},
                                                            {"precision", {"bf16", "fp32"}}};
                 },
                 "spec.throughput.candidates: 80 combinations; at most 64 can be probed"},
        BadInput{"MicroBatchesWhileBatchSizeIsSearched",
                 [](json& j) {
                   j["spec"]["throughput"] = {
                       {"enabled", true},
                       {"candidates", {{"microBatches", {{{"batchSize", 64}}}}}}};
                 },
                 "spec.throughput.candidates.microBatches: spec.searchSpace.batch-size also sets "
                 "--batch-size; probe it or search it, not both"},
        BadInput{"WorkersWhileWorkersAreSearched",
                 [](json& j) {
                   Space(j)["workers"] = {{"type", "choice"}, {"values", {0, 2}}};
                   j["spec"]["throughput"] = {{"enabled", true}};
                 },
                 "spec.throughput.candidates.workers: spec.searchSpace.workers also sets "
                 "--workers"}),
    [](const ::testing::TestParamInfo<BadInput>& row) { return row.param.name; });

TEST(ParseSweep, ReportsEveryProblemAtOnceOneLineEach) {
  json j = ValidSweepJson();
  j["spec"]["budget"]["gpuHours"] = 0;
  j["spec"]["resource"]["reductionFactor"] = 1;
  j["spec"]["resource"]["max"] = 0.5;
  Space(j)["lr"]["min"] = 0;
  j["spec"]["trial"]["colour"] = "blue";
  j["kind"] = "Sweep";
  StatusOr<SweepSpec> spec = ParseSweep(j);
  ASSERT_FALSE(spec.ok());
  const std::string m = spec.status().message();
  EXPECT_THAT(m, HasSubstr("kind: must be BudgetSweep"));
  EXPECT_THAT(m, HasSubstr("spec.budget.gpuHours: must be greater than 0"));
  EXPECT_THAT(m, HasSubstr("spec.resource.reductionFactor: must be between 2 and 1000, got 1"));
  EXPECT_THAT(m, HasSubstr("spec.resource.max: must be greater than spec.resource.min (1)"));
  EXPECT_THAT(m, HasSubstr("spec.searchSpace.lr.min: must be greater than 0 on a log scale"));
  EXPECT_THAT(m, HasSubstr("spec.trial.colour: unknown field"));
  EXPECT_EQ(std::count(m.begin(), m.end(), '\n'), 5) << m;
}

TEST(ParseSweep, ABadBudgetIsReportedOnceNotAlsoAsMissing) {
  for (json value : {json("4"), json(std::numeric_limits<double>::infinity()), json(-1)}) {
    json j = ValidSweepJson();
    j["spec"]["budget"]["gpuHours"] = value;
    const std::string m = ParseSweep(j).status().message();
    EXPECT_EQ(std::count(m.begin(), m.end(), '\n'), 0) << m;
    EXPECT_THAT(m, Not(HasSubstr("required"))) << m;
  }
}

TEST(ParseSweep, AcceptsEveryBoundItself) {
  json j = ValidSweepJson();
  j["spec"]["budget"]["gpuHours"] = kMaxGpuHours;
  j["spec"]["resource"] = {{"min", 1}, {"max", kMaxResource}, {"reductionFactor", 2}};
  j["spec"]["metrics"] = {{"missingTimeoutSeconds", kMaxMissingTimeoutSeconds}};
  j["spec"]["trial"]["template"]["spec"]["terminationGracePeriodSeconds"] = kMaxGraceSeconds;
  StatusOr<SweepSpec> spec = ParseSweep(j);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->grace_seconds, 3600);
  // 2^-14 to 2^49 with η 2 is 64 rungs: the most there may be.
  j["spec"]["resource"] = {{"min", 0x1p-14}, {"max", 0x1p49}, {"reductionFactor", 2}};
  EXPECT_TRUE(ParseSweep(j).ok()) << ParseSweep(j).status().message();
  j["spec"]["resource"]["min"] = 0x1p-15;
  EXPECT_THAT(ParseSweep(j).status().message(),
              HasSubstr("makes 65 rungs; at most 64 are allowed"));
}

json PoolJson() {
  return json::parse(R"({"apiVersion": "budgetsweep.dev/v1alpha1", "kind": "BudgetPool",
    "metadata": {"name": "team-a"}, "spec": {"gpuHours": 8, "maxPerSweepGpuHours": 3}})");
}

TEST(ParsePool, RefusesBudgetsAndPeriodsBeyondTheLimitsNamingThem) {
  json j = PoolJson();
  j["spec"]["gpuHours"] = kMaxGpuHours;
  j["spec"]["maxPerSweepGpuHours"] = kMaxGpuHours;
  j["spec"]["period"] = "366d";
  ASSERT_TRUE(ParsePool(j).ok()) << ParsePool(j).status().message();
  j["spec"]["gpuHours"] = 1e305;
  j["spec"]["maxPerSweepGpuHours"] = std::numeric_limits<double>::infinity();
  j["spec"]["period"] = "9223372036854775807d";
  const std::string m = ParsePool(j).status().message();
  EXPECT_THAT(m, HasSubstr("spec.gpuHours: out of range: must be at most 1000000 (the largest "
                           "budget a pool may have), got 1e+305"));
  EXPECT_THAT(m, HasSubstr("spec.maxPerSweepGpuHours: out of range: must be a finite number"));
  EXPECT_THAT(m, HasSubstr("spec.period: out of range: must be at most 366d (a year), got "
                           "\"9223372036854775807d\""));
}

TEST(ParseSweep, NamesTheStableEnumSpellings) {
  EXPECT_STREQ(GoalName(Goal::kMinimize), "minimize");
  EXPECT_STREQ(AlgorithmName(Algorithm::kGrid), "grid");
  EXPECT_STREQ(AlgorithmName(Algorithm::kHyperband), "hyperband");
  EXPECT_STREQ(AshaModeName(AshaMode::kPause), "pause");
}

}  // namespace
}  // namespace bsw
