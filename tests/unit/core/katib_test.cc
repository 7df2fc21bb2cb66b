// `budgetsweep convert katib`'s mapping (operator/core/katib.h), one row per rule: a Katib
// v1beta1 Experiment edited from one base, and what the converted BudgetSweep holds.
// tests/unit/cmd/convert_katib_test.cc converts the whole Experiments of tests/data/katib/.
#include "operator/core/katib.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "operator/core/api.h"

namespace bsw {
namespace {

using nlohmann::json;

// A random search over one learning rate, its trial a Job whose primary container takes the
// rate through a placeholder.
json BaseExperiment() {
  return json::parse(R"({
    "apiVersion": "kubeflow.org/v1beta1",
    "kind": "Experiment",
    "metadata": {"name": "mnist", "namespace": "ml"},
    "spec": {
      "objective": {"type": "maximize", "objectiveMetricName": "accuracy"},
      "algorithm": {"algorithmName": "random"},
      "parallelTrialCount": 2,
      "maxTrialCount": 12,
      "maxFailedTrialCount": 4,
      "parameters": [
        {"name": "lr", "parameterType": "double", "feasibleSpace": {"min": "0.001", "max": "0.1"}}
      ],
      "trialTemplate": {
        "primaryContainerName": "training",
        "trialParameters": [{"name": "learningRate", "reference": "lr"}],
        "trialSpec": {
          "apiVersion": "batch/v1",
          "kind": "Job",
          "spec": {"template": {"spec": {
            "containers": [{"name": "training", "image": "trainer:1",
                            "command": ["python3", "train.py", "--lr=${trialParameters.learningRate}"]}],
            "restartPolicy": "Never"}}}
        }
      }
    }
  })");
}

// The base's trial containers with `containers` in their place.
json WithContainers(json containers) {
  return {
      {"spec",
       {{"trialTemplate",
         {{"trialSpec", {{"spec", {{"template", {{"spec", {{"containers", containers}}}}}}}}}}}}}};
}

json Parameters(json parameters) { return {{"spec", {{"parameters", parameters}}}}; }

json Algorithm(json algorithm) { return {{"spec", {{"algorithm", algorithm}}}}; }

json Collector(json spec) { return {{"spec", {{"metricsCollectorSpec", spec}}}}; }

const json kEpochs = {
    {"name", "epochs"}, {"parameterType", "int"}, {"feasibleSpace", {{"min", "1"}, {"max", "9"}}}};
const json kLr = {{"name", "lr"},
                  {"parameterType", "double"},
                  {"feasibleSpace", {{"min", "0.001"}, {"max", "0.1"}}}};

json Hyperband(json settings) {
  json patch = Algorithm({{"algorithmName", "hyperband"}, {"algorithmSettings", settings}});
  patch.merge_patch(Parameters({kLr, kEpochs}));
  return patch;
}

struct Row {
  Row(std::string row_name, json row_patch, KatibOptions row_options, std::string row_pointer,
      json row_expected, std::string row_problem = "", bool row_blocks = false)
      : name(std::move(row_name)),
        patch(std::move(row_patch)),
        options(row_options),
        pointer(std::move(row_pointer)),
        expected(std::move(row_expected)),
        problem(std::move(row_problem)),
        blocks(row_blocks) {}

  std::string name;
  json patch;  // a JSON merge patch on BaseExperiment()
  KatibOptions options;
  std::string pointer;  // where the sweep holds `expected`; empty: no value checked
  json expected;        // null: the sweep holds nothing there
  std::string problem;  // the problem's path; empty: the conversion lists none that blocks
  bool blocks;
};

void PrintTo(const Row& row, std::ostream* out) { *out << row.name; }

KatibOptions Budget(double gpu_hours, std::optional<double> max_resource = std::nullopt) {
  return {gpu_hours, max_resource};
}

std::vector<Row> Rows() {
  const KatibOptions two = Budget(2);
  const json container = {{"name", "training"}, {"image", "trainer:1"}, {"command", {"train"}}};
  return {
      {"ObjectiveTypeIsTheGoal",
       {},
       two,
       "/spec/objective",
       {{"metric", "accuracy"}, {"goal", "maximize"}}},
      {"MinimizeStaysMinimize",
       {{"spec", {{"objective", {{"type", "minimize"}}}}}},
       two,
       "/spec/objective/goal",
       "minimize"},
      {"ObjectiveTargetIsListedButRuns",
       {{"spec", {{"objective", {{"goal", 0.99}}}}}},
       two,
       "/spec/objective/metric",
       "accuracy",
       "spec.objective.goal",
       false},
      {"AdditionalMetricsAreListed",
       {{"spec", {{"objective", {{"additionalMetricNames", {"loss"}}}}}}},
       two,
       "",
       nullptr,
       "spec.objective.additionalMetricNames",
       false},
      {"TrialCountsMap", {}, two, "/spec/maxTrials", 12},
      {"MaxFailedTrialCountMaps", {}, two, "/spec/maxFailedTrials", 4},
      {"ParallelTrialCountMaps", {}, two, "/spec/parallelism", 2},
      {"ParallelismDefaultsToKatibsThree",
       {{"spec", {{"parallelTrialCount", nullptr}}}},
       two,
       "/spec/parallelism",
       3},
      {"ResumePolicyIsListed",
       {{"spec", {{"resumePolicy", "LongRunning"}}}},
       two,
       "",
       nullptr,
       "spec.resumePolicy",
       false},
      {"RandomIsRandom", {}, two, "/spec/scheduler", {{"algorithm", "random"}}},
      {"GridDoubleWithoutStepBlocks", Algorithm({{"algorithmName", "grid"}}), two,
       "/spec/scheduler/algorithm", "grid", "spec.parameters[0].feasibleSpace.step", true},
      {"TpeIsRandomWithTheTpeSampler",
       Algorithm({{"algorithmName", "tpe"}}),
       two,
       "/spec/scheduler",
       {{"algorithm", "random"}, {"sampler", "tpe"}}},
      {"MultivariateTpeIsRandomWithTheTpeSampler",
       Algorithm({{"algorithmName", "multivariate-tpe"}}), two, "/spec/scheduler/sampler", "tpe"},
      {"RandomStateIsTheSeed",
       Algorithm({{"algorithmSettings", {{{"name", "random_state"}, {"value", "7"}}}}}), two,
       "/spec/scheduler/seed", 7},
      {"UnknownSettingIsListed",
       Algorithm({{"algorithmName", "tpe"},
                  {"algorithmSettings", {{{"name", "gamma"}, {"value", "0.25"}}}}}),
       two, "", nullptr, "spec.algorithm.algorithmSettings[0]", false},
      {"BayesianOptimizationBlocks", Algorithm({{"algorithmName", "bayesianoptimization"}}), two,
       "/spec/scheduler/algorithm", "random", "spec.algorithm.algorithmName", true},
      {"CmaesBlocks", Algorithm({{"algorithmName", "cmaes"}}), two, "", nullptr,
       "spec.algorithm.algorithmName", true},
      {"SobolBlocks", Algorithm({{"algorithmName", "sobol"}}), two, "", nullptr,
       "spec.algorithm.algorithmName", true},
      {"PbtBlocks", Algorithm({{"algorithmName", "pbt"}}), two, "", nullptr,
       "spec.algorithm.algorithmName", true},
      {"HyperbandRungsAreKatibsBrackets",
       Hyperband({{{"name", "resource_name"}, {"value", "epochs"}},
                  {{"name", "r_l"}, {"value", "9"}},
                  {{"name", "eta"}, {"value", "3"}}}),
       two,
       "/spec/resource",
       {{"unit", "epochs"}, {"min", 1}, {"max", 9}, {"reductionFactor", 3}}},
      {"HyperbandEtaIsTheReductionFactor",
       Hyperband({{{"name", "resource_name"}, {"value", "epochs"}},
                  {{"name", "r_l"}, {"value", "10"}},
                  {{"name", "eta"}, {"value", "2"}}}),
       two,
       "/spec/resource",
       {{"unit", "epochs"}, {"min", 1.25}, {"max", 10}, {"reductionFactor", 2}}},
      {"HyperbandResourceNameIsTheResourceKey",
       Hyperband(
           {{{"name", "resource_name"}, {"value", "epochs"}}, {{"name", "r_l"}, {"value", "9"}}}),
       two,
       "/spec/metrics/collector",
       {{"kind", "StdOut"}, {"resourceKey", "epochs"}}},
      {"HyperbandResourceIsNotSearched",
       Hyperband(
           {{{"name", "resource_name"}, {"value", "epochs"}}, {{"name", "r_l"}, {"value", "9"}}}),
       two, "/spec/searchSpace/epochs", nullptr},
      {"MaxResourceFlagOverridesRl",
       Hyperband(
           {{{"name", "resource_name"}, {"value", "epochs"}}, {{"name", "r_l"}, {"value", "9"}}}),
       Budget(2, 27), "/spec/resource/max", 27},
      {"HyperbandWithoutResourceNameBlocks", Hyperband({{{"name", "r_l"}, {"value", "9"}}}), two,
       "", nullptr, "spec.algorithm.algorithmSettings", true},
      {"HyperbandWithOneRungBlocks",
       Hyperband(
           {{{"name", "resource_name"}, {"value", "epochs"}}, {{"name", "r_l"}, {"value", "2"}}}),
       two, "", nullptr, "spec.algorithm.algorithmSettings", true},
      {"WithoutHyperbandOneReportIsTheResource",
       {},
       two,
       "/spec/resource",
       {{"unit", "reports"}, {"max", 1}}},
      {"MaxResourceFlagCountsReports",
       {},
       Budget(2, 5),
       "/spec/resource",
       {{"unit", "reports"}, {"max", 5}}},
      {"FractionalReportCountBlocks", {}, Budget(2, 2.5), "", nullptr, "spec.resource.max", true},
      {"DoubleIsUniform",
       {},
       two,
       "/spec/searchSpace/lr",
       {{"type", "uniform"}, {"min", 0.001}, {"max", 0.1}}},
      {"LogUniformDoubleIsLogUniform",
       Parameters({{{"name", "lr"},
                    {"parameterType", "double"},
                    {"feasibleSpace",
                     {{"min", "0.001"}, {"max", "0.1"}, {"distribution", "logUniform"}}}}}),
       two, "/spec/searchSpace/lr/type", "logUniform"},
      {"NormalDistributionBlocks",
       Parameters(
           {{{"name", "lr"},
             {"parameterType", "double"},
             {"feasibleSpace", {{"min", "0.001"}, {"max", "0.1"}, {"distribution", "normal"}}}}}),
       two, "", nullptr, "spec.parameters[0].feasibleSpace.distribution", true},
      {"StepEnumeratesAChoice",
       Parameters({{{"name", "lr"},
                    {"parameterType", "double"},
                    {"feasibleSpace", {{"min", "0.1"}, {"max", "0.3"}, {"step", "0.1"}}}}}),
       two,
       "/spec/searchSpace/lr",
       {{"type", "choice"}, {"values", {0.1, 0.2, 0.3}}}},
      {"StepOverAThousandValuesBlocks",
       Parameters({{{"name", "lr"},
                    {"parameterType", "double"},
                    {"feasibleSpace", {{"min", "0"}, {"max", "1"}, {"step", "0.0001"}}}}}),
       two, "", nullptr, "spec.parameters[0].feasibleSpace.step", true},
      {"IntIsInt",
       Parameters({{{"name", "lr"},
                    {"parameterType", "double"},
                    {"feasibleSpace", {{"min", "0.1"}, {"max", "1"}}}},
                   {{"name", "layers"},
                    {"parameterType", "int"},
                    {"feasibleSpace", {{"min", "1"}, {"max", "8"}}}}}),
       two,
       "/spec/searchSpace/layers",
       {{"type", "int"}, {"min", 1}, {"max", 8}}},
      {"LogUniformIntIsLogInt",
       Parameters(
           {{{"name", "lr"},
             {"parameterType", "int"},
             {"feasibleSpace", {{"min", "1"}, {"max", "64"}, {"distribution", "logUniform"}}}}}),
       two,
       "/spec/searchSpace/lr",
       {{"type", "int"}, {"min", 1}, {"max", 64}, {"log", true}}},
      {"IntStepEnumeratesIntegers",
       Parameters({{{"name", "lr"},
                    {"parameterType", "int"},
                    {"feasibleSpace", {{"min", "16"}, {"max", "64"}, {"step", "16"}}}}}),
       two,
       "/spec/searchSpace/lr",
       {{"type", "choice"}, {"values", {16, 32, 48, 64}}}},
      {"CategoricalIsAChoiceOfStrings",
       Parameters({{{"name", "lr"},
                    {"parameterType", "categorical"},
                    {"feasibleSpace", {{"list", {"sgd", "adam"}}}}}}),
       two,
       "/spec/searchSpace/lr",
       {{"type", "choice"}, {"values", {"sgd", "adam"}}}},
      {"DiscreteIsAChoiceOfNumbers",
       Parameters({{{"name", "lr"},
                    {"parameterType", "discrete"},
                    {"feasibleSpace", {{"list", {"16", "32", "0.5"}}}}}}),
       two,
       "/spec/searchSpace/lr",
       {{"type", "choice"}, {"values", {16, 32, 0.5}}}},
      {"GridMakesEveryParameterAGrid",
       [] {
         json patch = Algorithm({{"algorithmName", "grid"}});
         patch.merge_patch(
             Parameters({{{"name", "lr"},
                          {"parameterType", "double"},
                          {"feasibleSpace", {{"min", "0.01"}, {"max", "0.03"}, {"step", "0.01"}}}},
                         {{"name", "layers"},
                          {"parameterType", "int"},
                          {"feasibleSpace", {{"min", "1"}, {"max", "3"}}}},
                         {{"name", "opt"},
                          {"parameterType", "categorical"},
                          {"feasibleSpace", {{"list", {"sgd"}}}}}}));
         return patch;
       }(),
       two,
       "/spec/searchSpace",
       {{"lr", {{"type", "grid"}, {"values", {0.01, 0.02, 0.03}}}},
        {"layers", {{"type", "grid"}, {"values", {1, 2, 3}}}},
        {"opt", {{"type", "grid"}, {"values", {"sgd"}}}}}},
      {"PlaceholdersNameTheSearchSpaceKey",
       {},
       two,
       "/spec/trial/template/spec/containers/0/command/2",
       "--lr=${trialParameters.lr}"},
      {"PlaceholderOutsideTheCommandBlocks",
       WithContainers({{{"name", "training"},
                        {"image", "trainer:${trialParameters.learningRate}"},
                        {"command", {"train"}}}}),
       two, "", nullptr, "spec.trialTemplate.trialSpec.spec.template.spec.containers[0].image",
       true},
      {"MetadataReferenceBlocks",
       {{"spec",
         {{"trialTemplate",
           {{"trialParameters",
             {{{"name", "learningRate"}, {"reference", "${trialSpec.Name}"}}}}}}}}},
       two,
       "",
       nullptr,
       "spec.trialTemplate.trialParameters[0].reference",
       true},
      {"UnplacedParameterIsListed",
       [&] {
         json patch = WithContainers({container});
         patch["spec"]["trialTemplate"]["trialParameters"] = json::array();
         return patch;
       }(),
       two, "", nullptr, "spec.parameters[0]", false},
      {"PrimaryContainerGoesFirst",
       WithContainers({{{"name", "sidecar"}, {"image", "proxy:1"}}, container}), two,
       "/spec/trial/template/spec/containers/0/name", "training"},
      {"PrimaryContainerWithoutCommandBlocks",
       WithContainers({{{"name", "training"}, {"image", "trainer:1"}}}), two, "", nullptr,
       "spec.trialTemplate.trialSpec.spec.template.spec.containers[0].command", true},
      {"MissingPrimaryContainerBlocks",
       {{"spec", {{"trialTemplate", {{"primaryContainerName", "main"}}}}}},
       two,
       "",
       nullptr,
       "spec.trialTemplate.primaryContainerName",
       true},
      {"GpuLimitIsTheTrialsGpus",
       WithContainers({{{"name", "training"},
                        {"image", "trainer:1"},
                        {"command", {"train"}},
                        {"resources", {{"limits", {{"nvidia.com/gpu", "2"}}}}}}}),
       two, "/spec/trial/gpus", 2},
      {"NoGpuLimitIsNoGpus", {}, two, "/spec/trial/gpus", 0},
      {"TrialsDoNotCheckpoint", {}, two, "/spec/trial/checkpointing", false},
      {"RestartPolicyIsDropped",
       {},
       two,
       "/spec/trial/template/spec/restartPolicy",
       nullptr,
       "spec.trialTemplate.trialSpec.spec.template.spec.restartPolicy",
       false},
      {"JobFieldsAreListed",
       {{"spec", {{"trialTemplate", {{"trialSpec", {{"spec", {{"backoffLimit", 2}}}}}}}}}},
       two,
       "",
       nullptr,
       "spec.trialTemplate.trialSpec.spec.backoffLimit",
       false},
      {"PodSpecIsTheTemplate",
       {{"spec",
         {{"trialTemplate",
           {{"trialSpec",
             {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "x"}, {"labels", {{"team", "ml"}}}}},
              {"spec", {{"template", nullptr}, {"containers", {container}}}}}}}}}}},
       two,
       "/spec/trial/template",
       {{"metadata", {{"labels", {{"team", "ml"}}}}}, {"spec", {{"containers", {container}}}}}},
      {"TfJobBlocks",
       {{"spec",
         {{"trialTemplate",
           {{"trialSpec", {{"apiVersion", "kubeflow.org/v1"}, {"kind", "TFJob"}}}}}}}},
       two,
       "/spec/trial",
       nullptr,
       "spec.trialTemplate.trialSpec.kind",
       true},
      {"ConfigMapTemplateBlocks",
       {{"spec",
         {{"trialTemplate",
           {{"trialSpec", nullptr}, {"configMap", {{"configMapName", "templates"}}}}}}}},
       two,
       "",
       nullptr,
       "spec.trialTemplate.configMap",
       true},
      {"NoCollectorIsStdOut", {}, two, "/spec/metrics/collector", {{"kind", "StdOut"}}},
      {"MetricsFormatIsTheFilter",
       Collector({{"collector", {{"kind", "StdOut"}}},
                  {"source", {{"filter", {{"metricsFormat", {"([a-z]+):(.*)", "x"}}}}}}}),
       two, "/spec/metrics/collector/filter", "([a-z]+):(.*)",
       "spec.metricsCollectorSpec.source.filter.metricsFormat", false},
      {"FileCollectorReadsTheFilesName",
       Collector(
           {{"collector", {{"kind", "File"}}},
            {"source",
             {{"fileSystemPath",
               {{"path", "/var/log/katib/metrics.json"}, {"kind", "File"}, {"format", "JSON"}}}}}}),
       two,
       "/spec/metrics/collector",
       {{"kind", "File"}, {"file", {{"path", "metrics.json"}, {"format", "JSON"}}}},
       "spec.metricsCollectorSpec.source.fileSystemPath.path",
       false},
      {"FileCollectorDefaultsToKatibsFile",
       Collector({{"collector", {{"kind", "File"}}}}),
       two,
       "/spec/metrics/collector/file",
       {{"path", "metrics.log"}, {"format", "TEXT"}}},
      {"PrometheusMetricIsPrometheus",
       Collector({{"collector", {{"kind", "PrometheusMetric"}}}}),
       two,
       "/spec/metrics/collector",
       {{"kind", "Prometheus"}},
       "spec.metricsCollectorSpec.collector.kind",
       false},
      {"TensorFlowEventBlocks", Collector({{"collector", {{"kind", "TensorFlowEvent"}}}}), two, "",
       nullptr, "spec.metricsCollectorSpec.collector.kind", true},
      {"CustomCollectorBlocks", Collector({{"collector", {{"kind", "Custom"}}}}), two, "", nullptr,
       "spec.metricsCollectorSpec.collector.kind", true},
      {"EarlyStoppingIsListed",
       {{"spec", {{"earlyStopping", {{"algorithmName", "medianstop"}}}}}},
       two,
       "",
       nullptr,
       "spec.earlyStopping",
       false},
      {"GpuHoursFlagIsTheBudget", {}, Budget(0.5), "/spec/budget", {{"gpuHours", 0.5}}},
      {"NoBudgetBlocks", {}, {}, "/spec/budget", nullptr, "spec.budget.gpuHours", true},
      {"MetadataIsKept", {}, two, "/metadata", {{"name", "mnist"}, {"namespace", "ml"}}},
      {"LongNameBlocks",
       {{"metadata", {{"name", std::string(60, 'a')}}}},
       two,
       "",
       nullptr,
       "metadata.name",
       true},
      {"OtherKindBlocks", {{"kind", "Suggestion"}}, two, "", nullptr, "apiVersion", true},
      {"UnknownFieldIsListed",
       {{"spec", {{"colour", "blue"}}}},
       two,
       "",
       nullptr,
       "spec.colour",
       false},
      {"IllTypedFieldBlocks",
       {{"spec", {{"maxTrialCount", "ten"}}}},
       two,
       "/spec/maxTrials",
       nullptr,
       "spec.maxTrialCount",
       true},
  };
}

const KatibProblem* FindProblem(const KatibConversion& conversion, const std::string& path) {
  for (const KatibProblem& problem : conversion.problems) {
    if (problem.path == path) return &problem;
  }
  return nullptr;
}

std::string Listed(const KatibConversion& conversion) {
  std::string text;
  for (const KatibProblem& p : conversion.problems) {
    text += (p.blocks_running ? "! " : "  ") + p.path + ": " + p.message + "\n";
  }
  return text;
}

KatibConversion Convert(const Row& row) {
  json experiment = BaseExperiment();
  if (!row.patch.is_null()) experiment.merge_patch(row.patch);  // `{}` in a row is null
  return ConvertKatib(experiment, row.options);
}

class KatibRowTest : public ::testing::TestWithParam<Row> {};

TEST_P(KatibRowTest, ConvertsAsTheRowSays) {
  const Row& row = GetParam();
  KatibConversion conversion = Convert(row);
  if (!row.pointer.empty()) {
    const json::json_pointer pointer(row.pointer);
    json held = conversion.sweep.contains(pointer) ? conversion.sweep.at(pointer) : json();
    EXPECT_EQ(held, row.expected) << conversion.sweep.dump(2);
  }
  if (row.problem.empty()) {
    EXPECT_TRUE(conversion.Runnable()) << Listed(conversion);
    return;
  }
  const KatibProblem* problem = FindProblem(conversion, row.problem);
  ASSERT_NE(problem, nullptr) << Listed(conversion);
  EXPECT_EQ(problem->blocks_running, row.blocks) << problem->message;
  if (!row.blocks) {
    EXPECT_TRUE(conversion.Runnable()) << Listed(conversion);
  }
}

INSTANTIATE_TEST_SUITE_P(Katib, KatibRowTest, ::testing::ValuesIn(Rows()),
                         [](const ::testing::TestParamInfo<Row>& row) { return row.param.name; });

// The converted sweep is one that budgetsweep accepts whenever nothing blocks it.
TEST(KatibConvertTest, RunnableConversionsAreValidSweeps) {
  for (const Row& row : Rows()) {
    KatibConversion conversion = Convert(row);
    if (!conversion.Runnable()) continue;
    StatusOr<SweepSpec> spec = ParseSweep(conversion.sweep);
    EXPECT_TRUE(spec.ok()) << row.name << ":\n"
                           << spec.status().message() << "\n"
                           << conversion.sweep.dump(2);
  }
}

TEST(KatibConvertTest, CommentSaysWhereFromHowTheResourceCountsAndWhatDidNotMap) {
  json experiment = BaseExperiment();
  experiment["spec"]["objective"]["goal"] = 0.99;
  KatibConversion conversion = ConvertKatib(experiment, {});
  const std::string comment = ConversionComment(conversion, "mnist.yaml");
  EXPECT_THAT(comment, ::testing::StartsWith("# BudgetSweep converted by `budgetsweep convert "
                                             "katib` from Katib Experiment ml/mnist (mnist.yaml)"));
  EXPECT_THAT(comment, ::testing::HasSubstr("count of objective values"));
  EXPECT_THAT(comment, ::testing::HasSubstr("#  ! spec.budget.gpuHours: Katib has no budget"));
  EXPECT_THAT(comment, ::testing::HasSubstr("#    spec.objective.goal: not mapped"));
  for (size_t start = 0; start < comment.size(); start = comment.find('\n', start) + 1) {
    EXPECT_EQ(comment[start], '#') << comment;
  }
}

TEST(KatibConvertTest, MalformedExperimentsAreProblemsNotExceptions) {
  const std::vector<json> inputs = {
      json::array(),
      json("Experiment"),
      {{"apiVersion", "kubeflow.org/v1beta1"}, {"kind", "Experiment"}, {"spec", 3}},
      {{"spec", {{"parameters", "lr"}, {"algorithm", {{"algorithmSettings", 1}}}}}},
      {{"spec", {{"parameters", {1, {{"feasibleSpace", {{"list", 2}}}}}}}}},
      {{"spec",
        {{"trialTemplate",
          {{"trialParameters", {1}},
           {"trialSpec", {{"kind", "Job"}, {"spec", {{"template", {{"spec", 1}}}}}}}}}}}},
      {{"spec",
        {{"trialTemplate",
          {{"trialSpec",
            {{"kind", "Pod"}, {"metadata", 1}, {"spec", {{"containers", {1, "x"}}}}}}}}}}},
  };
  for (const json& input : inputs) {
    KatibConversion conversion;
    EXPECT_NO_THROW(conversion = ConvertKatib(input, {2.0, std::nullopt})) << input.dump();
    EXPECT_FALSE(conversion.Runnable()) << input.dump();
    EXPECT_NO_THROW(ConversionComment(conversion, "x.yaml")) << input.dump();
  }
}

}  // namespace
}  // namespace bsw
