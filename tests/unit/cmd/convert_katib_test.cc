// `budgetsweep convert katib` on the Katib Experiments of tests/data/katib/: what each converts
// to (operator/core/katib.h), and the built binary's stdout, stderr and exit code.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "operator/adapters/yaml/sweep_file.h"
#include "operator/core/api.h"
#include "operator/core/katib.h"

namespace bsw {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kData = "tests/data/katib/";  // the tests run in the source tree

struct Example {
  std::string file;
  bool runnable;        // with --gpu-hours 2
  std::string pointer;  // a field of the sweep, and what it holds
  json expected;
  std::string problem;  // a path the conversion lists; empty: none
};

std::vector<Example> Examples() {
  return {
      {"random-job-stdout.yaml",
       true,
       "/spec/searchSpace",
       {{"lr", {{"type", "logUniform"}, {"min", 0.0005}, {"max", 0.05}}},
        {"optimizer", {{"type", "choice"}, {"values", {"sgd", "adam", "adamw"}}}}},
       "spec.objective.goal"},
      {"hyperband-epoch.yaml",
       true,
       "/spec/trial/template/spec/containers/0/args",
       {"--lr=${trialParameters.lr}", "--epochs=27"},
       ""},
      {"grid-step.yaml",
       true,
       "/spec/searchSpace/dropout",
       {{"type", "grid"}, {"values", {0.1, 0.2, 0.3}}},
       ""},
      {"file-json.yaml",
       true,
       "/spec/metrics/collector",
       {{"kind", "File"}, {"file", {{"path", "loss.json"}, {"format", "JSON"}}}},
       "spec.earlyStopping"},
      {"tpe.yaml",
       true,
       "/spec/scheduler",
       {{"algorithm", "random"}, {"sampler", "tpe"}, {"seed", 3}},
       "spec.algorithm.algorithmSettings[1]"},
      {"bayesianoptimization.yaml", false, "/spec/objective/metric", "auc",
       "spec.algorithm.algorithmName"},
      {"tfjob.yaml", false, "/spec/trial", nullptr, "spec.trialTemplate.trialSpec.kind"},
  };
}

KatibConversion ConvertFile(const std::string& file, KatibOptions options = {2.0, {}}) {
  StatusOr<json> experiment = ReadSweepFile(kData + file);
  EXPECT_TRUE(experiment.ok()) << experiment.status().message();
  return ConvertKatib(experiment.ok() ? *experiment : json(), options);
}

std::string Listed(const KatibConversion& conversion) {
  return ConversionComment(conversion, "listed");
}

TEST(ConvertKatibExamplesTest, EachExperimentConvertsAsDocumented) {
  for (const Example& example : Examples()) {
    SCOPED_TRACE(example.file);
    KatibConversion conversion = ConvertFile(example.file);
    EXPECT_EQ(conversion.Runnable(), example.runnable) << Listed(conversion);
    const json::json_pointer pointer(example.pointer);
    json held = conversion.sweep.contains(pointer) ? conversion.sweep.at(pointer) : json();
    EXPECT_EQ(held, example.expected) << conversion.sweep.dump(2);
    if (example.problem.empty()) continue;
    bool listed = false;
    for (const KatibProblem& problem : conversion.problems)
      listed |= problem.path == example.problem;
    EXPECT_TRUE(listed) << Listed(conversion);
  }
}

// What convert prints for a runnable Experiment is a sweep that budgetsweep runs.
TEST(ConvertKatibExamplesTest, RunnableExperimentsBecomeValidSweeps) {
  for (const Example& example : Examples()) {
    if (!example.runnable) continue;
    KatibConversion conversion = ConvertFile(example.file);
    StatusOr<SweepSpec> spec = ParseSweep(conversion.sweep);
    EXPECT_TRUE(spec.ok()) << example.file << ":\n"
                           << spec.status().message() << "\n"
                           << conversion.sweep.dump(2);
  }
}

struct CommandRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs the built budgetsweep with `args`; its stderr goes through a file of this process's own
// (ctest runs the cases of this file at once, as separate processes).
CommandRun RunBudgetsweep(const std::string& args) {
  const std::string err_path =
      ::testing::TempDir() + "convert_katib_stderr." + std::to_string(getpid());
  const std::string command = std::string(BSW_BUDGETSWEEP_PATH) + " " + args + " 2>" + err_path;
  CommandRun run;
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) run.out.append(buffer, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  std::stringstream text;
  text << err.rdbuf();
  run.err = text.str();
  std::remove(err_path.c_str());
  return run;
}

TEST(ConvertKatibCliTest, PrintsTheSweepAsYamlAndExitsZero) {
  CommandRun run =
      RunBudgetsweep("convert katib " + kData + "random-job-stdout.yaml --gpu-hours 2");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, StartsWith("# BudgetSweep converted by `budgetsweep convert katib` from "
                                  "Katib Experiment research/fmnist-random"));
  EXPECT_THAT(run.out, HasSubstr("\napiVersion: budgetsweep.dev/v1alpha1\nkind: BudgetSweep\n"));
  StatusOr<json> printed = ParseSweepText(run.out, "stdout");
  ASSERT_TRUE(printed.ok()) << printed.status().message() << "\n" << run.out;
  EXPECT_EQ((*printed)["spec"]["budget"]["gpuHours"], 2);
  EXPECT_EQ((*printed)["spec"]["objective"]["metric"], "val-accuracy");
  EXPECT_EQ((*printed)["spec"]["trial"]["template"]["spec"]["containers"][0]["command"][3],
            "--lr=${trialParameters.lr}");
  EXPECT_THAT(run.err, HasSubstr("budgetsweep convert katib: spec.objective.goal: not mapped"));
}

// The YAML reads back as exactly the converted object: quoting, numbers and nesting survive.
TEST(ConvertKatibCliTest, PrintedYamlReadsBackAsTheConvertedSweep) {
  for (const Example& example : Examples()) {
    CommandRun run = RunBudgetsweep("convert katib " + kData + example.file + " --gpu-hours 2");
    EXPECT_EQ(run.exit_code, example.runnable ? 0 : 2) << example.file << "\n" << run.err;
    StatusOr<json> printed = ParseSweepText(run.out, "stdout");
    ASSERT_TRUE(printed.ok()) << printed.status().message() << "\n" << run.out;
    EXPECT_EQ(*printed, ConvertFile(example.file).sweep) << run.out;
  }
}

TEST(ConvertKatibCliTest, ExitsTwoListingWhatBlocks) {
  CommandRun run =
      RunBudgetsweep("convert katib " + kData + "bayesianoptimization.yaml --gpu-hours 2");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("budgetsweep convert katib: spec.algorithm.algorithmName: "
                                 "\"bayesianoptimization\": not mapped"));
  EXPECT_THAT(run.out, HasSubstr("kind: BudgetSweep"));
}

TEST(ConvertKatibCliTest, WithoutGpuHoursExitsTwoAndStillPrints) {
  CommandRun run = RunBudgetsweep("convert katib " + kData + "tpe.yaml");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("budgetsweep convert katib: spec.budget.gpuHours: Katib has no "
                                 "budget; pass --gpu-hours"));
  EXPECT_THAT(run.out, HasSubstr("searchSpace:"));
}

TEST(ConvertKatibCliTest, MaxResourceSetsTheReportCount) {
  CommandRun run =
      RunBudgetsweep("convert katib " + kData + "tpe.yaml --gpu-hours 1 --max-resource 4");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  StatusOr<json> printed = ParseSweepText(run.out, "stdout");
  ASSERT_TRUE(printed.ok()) << printed.status().message();
  EXPECT_EQ((*printed)["spec"]["resource"], json({{"unit", "reports"}, {"max", 4}}));
}

TEST(ConvertKatibCliTest, AnUnreadableFileIsAnError) {
  CommandRun run =
      RunBudgetsweep("convert katib " + kData + "no-such-experiment.yaml --gpu-hours 1");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, StartsWith("error: "));
  EXPECT_EQ(run.out, "");
}

}  // namespace
}  // namespace bsw
