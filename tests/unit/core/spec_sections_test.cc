// Each section reader of a BudgetSweep's spec (operator/core/spec_sections.h), one row per rule:
// the section as JSON, every error it gives (exactly, one per line), and what it reads.
#include "operator/core/spec_sections.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace bsw {
namespace {

using nlohmann::json;

struct SectionRow {
  std::string name;
  std::string section;  // the section, as JSON
  std::string errors;   // every error, one per line; empty: none
  // The fields the row is about, as SpecFields writes them.
  json want = json::object();
  // What the sections read before this one hold (spec_sections.h's REQUIRES).
  std::function<void(SweepSpec&)> given = [](SweepSpec&) {};
};

// A section reader; returns what it tells besides the spec (ParseResource: rungsKnown).
using SectionReader = std::function<json(const json&, std::vector<std::string>*, SweepSpec*)>;

json SpecFields(const SweepSpec& s) {
  json params = json::array();
  json mutable_params = json::array();
  for (const ParamSpec& p : s.search_space) {
    params.push_back(p.name);
    if (p.mutable_) mutable_params.push_back(p.name);
  }
  json micro_batches = json::array();
  for (const MicroBatch& m : s.throughput.micro_batches) {
    micro_batches.push_back({m.batch_size, m.accumulation_steps});
  }
  return {{"gpuHours", s.budget_gpu_hours},
          {"pool", s.pool_name},
          {"metric", s.objective_metric},
          {"goal", GoalName(s.goal)},
          {"unit", s.resource_unit},
          {"min", s.resource_min},
          {"max", s.resource_max},
          {"reductionFactor", s.reduction_factor},
          {"algorithm", AlgorithmName(s.algorithm)},
          {"mode", AshaModeName(s.mode)},
          {"sampler", s.sampler == Sampler::kTpe ? "tpe" : "random"},
          {"perturbationInterval", s.perturbation_interval},
          {"seed", s.seed},
          {"parallelism", s.parallelism},
          {"maxTrials", s.max_trials ? json(*s.max_trials) : json(nullptr)},
          {"maxFailedTrials", s.max_failed_trials},
          {"params", params},
          {"mutable", mutable_params},
          {"gpus", s.trial_gpus},
          {"maxRetries", s.max_retries},
          {"graceSeconds", s.grace_seconds},
          {"image", s.container.image},
          {"args", s.container.args},
          {"env", s.container.env},
          {"prometheus", s.prometheus_url},
          {"missingTimeoutSeconds", s.metrics_missing_timeout_seconds},
          {"probe", s.throughput.enabled},
          {"targetUtilization", s.throughput.target_utilization},
          {"workers", s.throughput.workers},
          {"precision", s.throughput.precision},
          {"microBatches", micro_batches}};
}

std::string Joined(const std::vector<std::string>& errors) {
  std::string out;
  for (const std::string& e : errors) out += (out.empty() ? "" : "\n") + e;
  return out;
}

void ExpectRows(const SectionReader& read, const std::vector<SectionRow>& rows) {
  for (const SectionRow& row : rows) {
    SweepSpec spec;
    row.given(spec);
    std::vector<std::string> errors;
    const json told = read(json::parse(row.section), &errors, &spec);
    json got = SpecFields(spec);
    got.update(told);
    EXPECT_EQ(Joined(errors), row.errors) << row.name;
    for (const auto& [field, value] : row.want.items()) {
      EXPECT_EQ(got[field], value) << row.name << ": " << field;
    }
  }
}

// A reader that tells nothing besides the spec.
template <typename Read>
SectionReader Reader(Read read) {
  return [read](const json& section, std::vector<std::string>* errors, SweepSpec* spec) {
    read(section, errors, spec);
    return json::object();
  };
}

TEST(SpecSections, Budget) {
  ExpectRows(
      Reader(ParseBudget),
      {{"a budget of its own", R"({"gpuHours": 4})", "", {{"gpuHours", 4}, {"pool", ""}}},
       {"a pool's budget",
        R"({"poolRef": {"name": "team-a"}})",
        "",
        {{"gpuHours", 0}, {"pool", "team-a"}}},
       {"neither", "{}", "spec.budget.gpuHours: required unless poolRef names a BudgetPool"},
       {"nothing to spend", R"({"gpuHours": 0})",
        "spec.budget.gpuHours: must be greater than 0, got 0"},
       {"beyond the largest budget", R"({"gpuHours": 2e6})",
        "spec.budget.gpuHours: out of range: must be at most 1000000 (the largest budget a sweep "
        "may have), got 2000000"},
       {"a pool that cannot be named", R"({"poolRef": {"name": "Team_A"}})",
        "spec.budget.poolRef.name: must be a BudgetPool's name"},
       {"a pool without a name", R"({"gpuHours": 1, "poolRef": {}})",
        "spec.budget.poolRef.name: required"},
       {"an unknown field", R"({"gpuHours": 1, "hours": 1})", "spec.budget.hours: unknown field"}});
}

TEST(SpecSections, Objective) {
  ExpectRows(
      Reader(ParseObjective),
      {{"maximized by default",
        R"({"metric": "accuracy"})",
        "",
        {{"metric", "accuracy"}, {"goal", "maximize"}}},
       {"minimized", R"({"metric": "loss", "goal": "minimize"})", "", {{"goal", "minimize"}}},
       {"no metric", "{}", "spec.objective.metric: required"},
       {"an empty metric", R"({"metric": ""})", "spec.objective.metric: must not be empty"},
       {"a metric that is no string", R"({"metric": 5})",
        "spec.objective.metric: must be a string, got number 5"},
       {"an unknown goal", R"({"metric": "a", "goal": "up"})",
        "spec.objective.goal: must be one of maximize, minimize, got \"up\""}});
}

TEST(SpecSections, Resource) {
  SectionReader read = [](const json& section, std::vector<std::string>* errors, SweepSpec* spec) {
    return json{{"rungsKnown", ParseResource(section, errors, spec)}};
  };
  ExpectRows(
      read,
      {{"epochs by default, reduction factor 3",
        R"({"min": 1, "max": 27})",
        "",
        {{"unit", "epochs"},
         {"min", 1},
         {"max", 27},
         {"reductionFactor", 3},
         {"rungsKnown", true}}},
       {"a unit and factor of its own",
        R"({"unit": "steps", "min": 100, "max": 800,
         "reductionFactor": 2})",
        "",
        {{"unit", "steps"}, {"reductionFactor", 2}, {"rungsKnown", true}}},
       {"max not above min",
        R"({"min": 5, "max": 5})",
        "spec.resource.max: must be greater than spec.resource.min (5)",
        {{"rungsKnown", false}}},
       {"no max",
        R"({"min": 1})",
        "spec.resource.max: required",
        {{"max", 1}, {"rungsKnown", false}}},
       {"beyond the largest resource",
        R"({"min": 1, "max": 1e16})",
        "spec.resource.max: out of range: must be at most 1e+15 (the largest resource a trial may "
        "train for), got 1e+16",
        {{"rungsKnown", false}}},
       {"a factor below 2",
        R"({"min": 1, "max": 9, "reductionFactor": 1})",
        "spec.resource.reductionFactor: must be between 2 and 1000, got 1",
        {{"rungsKnown", false}}},
       {"a fractional factor",
        R"({"min": 1, "max": 9, "reductionFactor": 2.5})",
        "spec.resource.reductionFactor: must be an integer, got 2.5",
        {{"rungsKnown", false}}}});
}

void Resource27(SweepSpec& spec) {
  spec.resource_min = 1;
  spec.resource_max = 27;
}

TEST(SpecSections, Scheduler) {
  ExpectRows(
      Reader(ParseScheduler),
      {{"asha, stop and random by default",
        "{}",
        "",
        {{"algorithm", "asha"}, {"mode", "stop"}, {"sampler", "random"}, {"seed", 0}},
        Resource27},
       {"pbt pausing every 3 units",
        R"({"algorithm": "pbt", "mode": "pause",
         "perturbationInterval": 3, "seed": 7})",
        "",
        {{"algorithm", "pbt"}, {"mode", "pause"}, {"perturbationInterval", 3}, {"seed", 7}},
        Resource27},
       {"tpe with grid", R"({"algorithm": "grid", "sampler": "tpe"})",
        "spec.scheduler.sampler: tpe cannot be used with algorithm grid", json::object(),
        Resource27},
       {"an interval without a population", R"({"perturbationInterval": 3})",
        "spec.scheduler.perturbationInterval: only for algorithms pbt and pb2", json::object(),
        Resource27},
       {"an interval of the whole resource",
        R"({"algorithm": "pb2", "perturbationInterval": 27})",
        "spec.scheduler.perturbationInterval: must be greater than 0 and less than "
        "spec.resource.max, got 27",
        {{"perturbationInterval", 0}},
        Resource27},
       {"too many intervals", R"({"algorithm": "pbt", "perturbationInterval": 1})",
        "spec.scheduler.perturbationInterval: at most 1000 intervals may fit in spec.resource.max",
        json::object(), [](SweepSpec& spec) { spec.resource_max = 1e6; }},
       {"an unknown algorithm",
        R"({"algorithm": "bayes"})",
        "spec.scheduler.algorithm: must be one of asha, hyperband, random, grid, pbt, pb2, got "
        "\"bayes\"",
        {{"algorithm", "asha"}},
        Resource27},
       {"a negative seed", R"({"seed": -1})", "spec.scheduler.seed: must be at least 0, got -1",
        json::object(), Resource27}});
}

TEST(SpecSections, TrialCounts) {
  SectionReader read = [](const json& section, std::vector<std::string>* errors, SweepSpec* spec) {
    FieldReader fields(section, "spec", errors);
    ParseTrialCounts(fields, spec);
    return json::object();
  };
  ExpectRows(
      read,
      {{"defaults", "{}", "", {{"parallelism", 1}, {"maxTrials", nullptr}, {"maxFailedTrials", 3}}},
       {"set",
        R"({"parallelism": 4, "maxTrials": 20, "maxFailedTrials": 5})",
        "",
        {{"parallelism", 4}, {"maxTrials", 20}, {"maxFailedTrials", 5}}},
       {"no parallelism", R"({"parallelism": 0})",
        "spec.parallelism: must be between 1 and 10000000, got 0"}});
}

void Pbt(SweepSpec& spec) { spec.algorithm = Algorithm::kPbt; }

TEST(SpecSections, SearchSpace) {
  ExpectRows(
      Reader(ParseSearchSpace),
      {{"parameters sorted by name",
        R"({"lr": {"type": "logUniform", "min": 1e-4, "max": 0.1},
            "batch-size": {"type": "choice", "values": [32, 64]},
            "layers": {"type": "int", "min": 1, "max": 8, "log": true}})",
        "",
        {{"params", {"batch-size", "layers", "lr"}}, {"mutable", json::array()}}},
       {"no parameter", "{}", "spec.searchSpace: must define at least one parameter"},
       {"no type", R"({"x": {"min": 0, "max": 1}})",
        "spec.searchSpace.x.type: required (uniform, logUniform, int, choice or grid)\n"
        "spec.searchSpace.x.max: unknown field\n"
        "spec.searchSpace.x.min: unknown field"},
       {"a name that is no flag", R"({"bad name": {"type": "uniform", "min": 0, "max": 1}})",
        "spec.searchSpace.bad name: parameter names are trainer flag names: letters, digits, '_', "
        "'.', '-', starting with a letter or digit"},
       {"no object", R"({"x": 5})", "spec.searchSpace.x: must be an object, got number 5"},
       {"a choice without values", R"({"x": {"type": "choice"}})",
        "spec.searchSpace.x.values: required for type choice"},
       {"a grid of nothing", R"({"x": {"type": "grid", "values": []}})",
        "spec.searchSpace.x.values: must be a non-empty list"},
       {"a value that is no scalar", R"({"x": {"type": "choice", "values": [1, [2]]}})",
        "spec.searchSpace.x.values[1]: must be a number, string or boolean"},
       {"an empty range", R"({"x": {"type": "uniform", "min": 1, "max": 1}})",
        "spec.searchSpace.x.max: must be greater than spec.searchSpace.x.min (1)"},
       {"a log scale from 0", R"({"x": {"type": "logUniform", "min": 0, "max": 1}})",
        "spec.searchSpace.x.min: must be greater than 0 on a log scale, got 0"},
       {"an int bound that is no integer", R"({"x": {"type": "int", "min": 1.5, "max": 4}})",
        "spec.searchSpace.x.min: must be an integer, got 1.5"},
       {"an unknown field", R"({"x": {"type": "uniform", "min": 0, "max": 1, "step": 1}})",
        "spec.searchSpace.x.step: unknown field"},
       {"mutable without a population",
        R"({"x": {"type": "uniform", "min": 0, "max": 1, "mutable": true}})",
        "spec.searchSpace.x.mutable: only algorithms pbt and pb2 change a parameter during a "
        "trial; the algorithm is asha"},
       {"mutable with pbt",
        R"({"x": {"type": "uniform", "min": 0, "max": 1, "mutable": true}})",
        "",
        {{"mutable", {"x"}}},
        Pbt},
       {"a mutable grid", R"({"x": {"type": "grid", "values": [1], "mutable": true}})",
        "spec.searchSpace.x.mutable: a grid parameter is enumerated, one value per trial; use "
        "choice",
        json::object(), Pbt},
       {"a mutable choice with pb2", R"({"x": {"type": "choice", "values": [1], "mutable": true}})",
        "spec.searchSpace.x.mutable: pb2 chooses mutable values in numeric bounds: use uniform, "
        "logUniform or int (or algorithm pbt)",
        json::object(), [](SweepSpec& spec) { spec.algorithm = Algorithm::kPb2; }}});
}

struct AlgorithmRow {
  std::string name;
  std::function<void(SweepSpec&)> given;
  bool rungs_known = true;
  std::string errors;
  json want = json::object();
};

ParamSpec Uniform(const std::string& name, bool is_mutable = false) {
  ParamSpec param;
  param.name = name;
  param.min = 0;
  param.max = 1;
  param.mutable_ = is_mutable;
  return param;
}

void ManyRungs(SweepSpec& spec) {
  spec.resource_min = 1e-6;
  spec.resource_max = 1e15;
  spec.reduction_factor = 2;
}

TEST(SpecSections, CheckAlgorithm) {
  const std::vector<AlgorithmRow> rows = {
      {"asha within the rung limit", [](SweepSpec& s) { s.resource_max = 27; }, true, ""},
      {"grid over a continuous range",
       [](SweepSpec& s) {
         s.algorithm = Algorithm::kGrid;
         s.search_space = {Uniform("x")};
       },
       true,
       "spec.searchSpace.x.type: the grid algorithm needs discrete parameters (choice, grid or "
       "int)"},
      {"too many rungs", ManyRungs, true,
       "spec.resource: 1e-06 to 1e+15 with reductionFactor 2 makes 71 rungs; at most 64 are "
       "allowed (raise min or reductionFactor, or lower max)"},
      {"rungs not counted from an invalid resource", ManyRungs, false, ""},
      {"pbt without a population",
       [](SweepSpec& s) {
         s.algorithm = Algorithm::kPbt;
         s.search_space = {Uniform("x")};
       },
       true,
       "spec.scheduler.mode: pbt needs mode pause: a trial goes on from its own or another "
       "trial's checkpoint\n"
       "spec.maxTrials: required for algorithm pbt: it is the population's size\n"
       "spec.searchSpace: pbt needs at least one parameter with mutable: true"},
      {"pbt pausing every resource.min units unless told",
       [](SweepSpec& s) {
         s.algorithm = Algorithm::kPbt;
         s.mode = AshaMode::kPause;
         s.max_trials = 8;
         s.resource_min = 2;
         s.resource_max = 20;
         s.search_space = {Uniform("x", true)};
       },
       true,
       "",
       {{"perturbationInterval", 2}}},
  };
  for (const AlgorithmRow& row : rows) {
    SweepSpec spec;
    row.given(spec);
    std::vector<std::string> errors;
    CheckAlgorithm(row.rungs_known, &errors, &spec);
    EXPECT_EQ(Joined(errors), row.errors) << row.name;
    const json got = SpecFields(spec);
    for (const auto& [field, value] : row.want.items()) {
      EXPECT_EQ(got[field], value) << row.name << ": " << field;
    }
  }
}

TEST(SpecSections, Trial) {
  ExpectRows(
      Reader(ParseTrial),
      {{"the first container's image, args and env",
        R"({"template": {"spec": {"containers": [{"name": "trainer", "image": "img",
            "args": ["--a"], "env": [{"name": "A", "value": "1"},
            {"name": "B", "valueFrom": {}}]}]}}})",
        "",
        {{"gpus", 1},
         {"maxRetries", 1},
         {"image", "img"},
         {"args", {"--a"}},
         {"env", json::array({json::array({"A", "1"})})},
         {"graceSeconds", 30}}},
       {"GPUs, retries and the grace period of its own",
        R"({"gpus": 2, "maxRetries": 0, "template": {"spec": {
            "terminationGracePeriodSeconds": 5, "containers": [{"image": "i"}]}}})",
        "",
        {{"gpus", 2}, {"maxRetries", 0}, {"graceSeconds", 5}}},
       {"no template", "{}", "spec.trial.template: required"},
       {"no pod spec", R"({"template": {}})",
        "spec.trial.template.spec: required (a PodSpec with at least one container)"},
       {"no container", R"({"template": {"spec": {"containers": []}}})",
        "spec.trial.template.spec.containers: must list at least one container"},
       {"a container that is no object", R"({"template": {"spec": {"containers": [5]}}})",
        "spec.trial.template.spec.containers[0]: must be an object"},
       {"a grace period over an hour",
        R"({"template": {"spec": {"terminationGracePeriodSeconds": 7200,
            "containers": [{"image": "i"}]}}})",
        "spec.trial.template.spec.terminationGracePeriodSeconds: must be an integer from 0 to "
        "3600 (an hour), got 7200",
        {{"graceSeconds", 30}}},
       {"args that are no list",
        R"({"template": {"spec": {"containers": [{"image": "i", "args": "--a"}]}}})",
        "spec.trial.template.spec.containers[0].args: must be a list of strings"},
       {"an arg that is no string",
        R"({"template": {"spec": {"containers": [{"image": "i", "args": ["--a", 1]}]}}})",
        "spec.trial.template.spec.containers[0].args[1]: must be a string",
        {{"args", {"--a"}}}}});
}

TEST(SpecSections, Metrics) {
  ExpectRows(Reader(ParseMetrics),
             {{"a Prometheus and a timeout",
               R"({"prometheus": {"url": "http://p:9090"}, "missingTimeoutSeconds": 60})",
               "",
               {{"prometheus", "http://p:9090"}, {"missingTimeoutSeconds", 60}}},
              {"trials scraped directly by default",
               "{}",
               "",
               {{"prometheus", ""}, {"missingTimeoutSeconds", 300}}},
              {"a Prometheus without a URL", R"({"prometheus": {}})",
               "spec.metrics.prometheus.url: required"},
              {"a timeout over a week", R"({"missingTimeoutSeconds": 1e6})",
               "spec.metrics.missingTimeoutSeconds: out of range: must be at most 604800 (a week), "
               "got 1000000"}});
}

void Searched(SweepSpec& spec, const std::string& flag) { spec.search_space = {Uniform(flag)}; }

TEST(SpecSections, Throughput) {
  ExpectRows(
      Reader(ParseThroughput),
      {{"the default candidates",
        R"({"enabled": true})",
        "",
        {{"probe", true}, {"targetUtilization", 0.85}, {"workers", {0, 1, 2, 4}}}},
       {"splits of the batch",
        R"({"candidates": {"microBatches": [{"batchSize": 64},
            {"batchSize": 32, "accumulationSteps": 2}]}})",
        "",
        {{"microBatches", {{64, 1}, {32, 2}}}}},
       {"a repeated worker count", R"({"candidates": {"workers": [2, 2]}})",
        "spec.throughput.candidates.workers[1]: repeats 2"},
       {"a utilization over 1", R"({"targetUtilization": 1.5})",
        "spec.throughput.targetUtilization: must be in (0, 1], got 1.5"},
       {"the whole budget to probing", R"({"maxBudgetFraction": 1})",
        "spec.throughput.maxBudgetFraction: must be in (0, 1), got 1"},
       {"an unknown answer below target", R"({"onBelowTarget": "halt"})",
        "spec.throughput.onBelowTarget: must be one of continue, stop, got \"halt\""},
       {"an unknown precision", R"({"candidates": {"precision": ["fp8"]}})",
        "spec.throughput.candidates.precision[0]: must be one of auto, bf16, fp16, fp32, got "
        "\"fp8\""},
       {"a split that is no object", R"({"candidates": {"microBatches": [5]}})",
        "spec.throughput.candidates.microBatches[0]: must be an object, got number 5"},
       {"a split without a batch size", R"({"candidates": {"microBatches": [{}]}})",
        "spec.throughput.candidates.microBatches[0].batchSize: required"},
       {"too many combinations", R"({"candidates": {"prefetch": [1, 2, 4],
            "precision": ["bf16", "fp32"], "microBatches": [{"batchSize": 8},
            {"batchSize": 16}, {"batchSize": 32}]}})",
        "spec.throughput.candidates: 72 combinations; at most 64 can be probed"},
       {"workers probed and searched", R"({"enabled": true})",
        "spec.throughput.candidates.workers: spec.searchSpace.workers also sets --workers; probe "
        "it or search it, not both",
        json::object(), [](SweepSpec& spec) { Searched(spec, "workers"); }},
       {"the batch size probed and searched",
        R"({"enabled": true, "candidates": {"microBatches": [{"batchSize": 8}]}})",
        "spec.throughput.candidates.microBatches: spec.searchSpace.batch-size also sets "
        "--batch-size; probe it or search it, not both",
        json::object(), [](SweepSpec& spec) { Searched(spec, "batch-size"); }},
       {"searched while the probe is off", "{}", "", json::object(),
        [](SweepSpec& spec) { Searched(spec, "workers"); }}});
}

}  // namespace
}  // namespace bsw
