#include "operator/core/katib.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "operator/core/api.h"
#include "operator/core/field_reader.h"
#include "operator/core/parse.h"
#include "operator/core/placeholders.h"

namespace bsw {
namespace {

using nlohmann::json;

constexpr const char* kKatibApiVersion = "kubeflow.org/v1beta1";
// Katib's defaults where the Experiment leaves a field out, so that the sweep behaves the same.
constexpr int64_t kKatibParallelTrials = 3;
constexpr int64_t kKatibEta = 3;
constexpr const char* kKatibMetricsFile = "/var/log/katib/metrics.log";
// A step enumerates its values into a choice; beyond this many it is no longer a choice to read.
constexpr double kMaxStepValues = 1000;

// What one conversion has learnt so far, and where it writes.
struct Context {
  Context(const KatibOptions& katib_options, KatibConversion& conversion)
      : options(katib_options), out(conversion), spec(conversion.sweep["spec"]) {}

  const KatibOptions& options;
  KatibConversion& out;
  json& spec;                        // out.sweep's spec
  std::string algorithm = "random";  // spec.scheduler.algorithm
  std::string resource_name;         // hyperband: Katib's resource parameter; empty otherwise
  std::optional<double> r_l;         // hyperband: Katib's largest resource
  int64_t eta = kKatibEta;
  double resource_max = 1;
  std::map<std::string, std::string> parameters;    // searchSpace key -> its Experiment path
  std::map<std::string, std::string> placeholders;  // trialParameters name -> its replacement
  std::set<std::string> placed;        // searchSpace keys that a placeholder passes to the trial
  std::vector<std::string> malformed;  // FieldReader's "path: message" for ill-formed fields
  std::vector<std::string> unknown;    // FieldReader's "path: unknown field"

  void Note(std::string path, std::string message) {
    out.problems.push_back({std::move(path), std::move(message), false});
  }
  void Block(std::string path, std::string message) {
    out.problems.push_back({std::move(path), std::move(message), true});
  }
};

// Ends `f`, keeping the keys it was not asked for apart from its malformed fields.
void FinishReader(Context& c, const FieldReader& f) {
  const size_t before = c.malformed.size();
  f.Finish();
  c.unknown.insert(c.unknown.end(), c.malformed.begin() + before, c.malformed.end());
  c.malformed.resize(before);
}

// Turns FieldReader's "path: message" lines into problems.
void Drain(Context& c, const std::vector<std::string>& lines, bool blocks,
           const std::string& replacement) {
  for (const std::string& line : lines) {
    const size_t colon = std::min(line.find(": "), line.size());
    std::string message =
        replacement.empty() ? line.substr(std::min(colon + 2, line.size())) : replacement;
    c.out.problems.push_back({line.substr(0, colon), std::move(message), blocks});
  }
}

// The child `key` of `value` when `value` is an object that sets it; nullptr otherwise.
const json* At(const json& value, const char* key) {
  if (!value.is_object()) return nullptr;
  auto found = value.find(key);
  return found == value.end() || found->is_null() ? nullptr : &*found;
}

// An integral value as a JSON integer, so that 3 reads "3" rather than "3.0".
json NumberJson(double v) {
  if (std::floor(v) == v && std::fabs(v) < static_cast<double>(kMaxExactInteger)) {
    return static_cast<int64_t>(v);
  }
  return v;
}

// A number of Katib's API, which types them as strings ("0.01"); YAML may have left a number.
struct KatibNumber {
  double value = 0;
  int decimals = -1;  // digits after the point as written; -1 with an exponent
};

std::optional<KatibNumber> ReadNumber(const json& v) {
  std::string text = v.is_number()   ? NumberText(v.get<double>())
                     : v.is_string() ? v.get<std::string>()
                                     : "";
  if (!text.empty() && text[0] == '+') text.erase(0, 1);
  double value = 0;
  if (!ParsesFully(text, &value) || !std::isfinite(value)) return std::nullopt;
  const size_t point = text.find('.');
  int decimals = point == std::string::npos ? 0 : static_cast<int>(text.size() - point - 1);
  if (text.find_first_of("eE") != std::string::npos) decimals = -1;
  return KatibNumber{value, decimals};
}

// The number at `key`; a problem when it is set but no number.
std::optional<KatibNumber> NumberField(FieldReader& f, const char* key) {
  const json* v = f.Get(key);
  if (v == nullptr) return std::nullopt;
  std::optional<KatibNumber> n = ReadNumber(*v);
  if (!n) f.Error(key, "must be a number, got " + FieldReader::Describe(*v));
  return n;
}

void ConvertMetadata(Context& c, const json& metadata) {
  FieldReader m(metadata, "metadata", &c.malformed);
  json& out = c.out.sweep["metadata"];
  if (std::optional<std::string> name = m.String("name", true)) {
    out["name"] = *name;
    if (!IsDnsLabel(*name, 54)) {
      c.Block(m.PathOf("name"),
              "a sweep's name is a DNS label of at most 54 characters (its trials append "
              "-tNNNNNN)");
    }
  }
  if (std::optional<std::string> ns = m.String("namespace", false)) out["namespace"] = *ns;
}

void ConvertObjective(Context& c, const json& objective) {
  FieldReader o(objective, "spec.objective", &c.malformed);
  json& out = c.spec["objective"];
  if (std::optional<std::string> metric = o.String("objectiveMetricName", true)) {
    out["metric"] = *metric;
  }
  if (std::optional<std::string> type = o.String("type", true)) {
    if (*type == "maximize" || *type == "minimize") {
      out["goal"] = *type;
    } else {
      o.Error("type", "must be maximize or minimize, got \"" + *type + "\"");
    }
  }
  if (const json* goal = o.Get("goal")) {
    c.Note(o.PathOf("goal"), "not mapped: Katib ends the Experiment once the objective reaches " +
                                 ValueText(*goal) +
                                 "; a sweep has no target and runs until maxTrials or its budget");
  }
  if (o.Has("additionalMetricNames")) {
    c.Note(o.PathOf("additionalMetricNames"), "not mapped: the sweep reads the objective only");
  }
  if (o.Has("metricStrategies")) {
    c.Note(o.PathOf("metricStrategies"),
           "not mapped: budgetsweep compares trials by the objective's value at each resource");
  }
  FinishReader(c, o);
}

// Katib's algorithms that budgetsweep lacks, and what to say about each.
constexpr std::pair<std::string_view, const char*> kUnmappedAlgorithms[] = {
    {"bayesianoptimization",
     "budgetsweep has no Bayesian optimization; its model-based sampler is tpe"},
    {"cmaes", "budgetsweep has no CMA-ES; its model-based sampler is tpe"},
    {"sobol", "budgetsweep has no Sobol sequence; random or grid cover the space"},
    {"pbt",
     "budgetsweep's pbt needs trials that checkpoint and pause at each interval, which a Katib "
     "trial does not"},
    {"enas", "neural architecture search: budgetsweep searches hyperparameters only"},
    {"darts", "neural architecture search: budgetsweep searches hyperparameters only"},
};

// Sets spec.scheduler's algorithm and sampler from Katib's algorithmName.
void MapAlgorithmName(Context& c, const std::string& name, const std::string& path) {
  json& scheduler = c.spec["scheduler"];
  if (name == "random" || name == "grid" || name == "hyperband") {
    c.algorithm = name;
  } else if (name == "tpe" || name == "multivariate-tpe") {
    // Katib's TPE proposes configurations and stops none early: random runs each to the end.
    scheduler["sampler"] = "tpe";
  } else {
    std::string why = "unknown to Katib v1beta1";
    for (const auto& [katib, reason] : kUnmappedAlgorithms) {
      if (name == katib) why = reason;
    }
    c.Block(path, "\"" + name + "\": not mapped: " + why + "; converted as random");
  }
  scheduler["algorithm"] = c.algorithm;
}

// random_state: the seed of Katib's random and TPE.
void ApplySeed(Context& c, const std::string& value, const std::string& path) {
  int64_t seed = 0;
  if (!ParsesFully(value, &seed) || seed < 0) {
    c.Block(path, "random_state: must be an integer >= 0, got \"" + value + "\"");
    return;
  }
  c.spec["scheduler"]["seed"] = seed;
}

// One of Katib's hyperband settings; false when `name` is none of them.
bool ApplyHyperbandSetting(Context& c, const std::string& name, const std::string& value,
                           const std::string& path) {
  if (name == "resource_name") {
    c.resource_name = value;
    return true;
  }
  if (name != "r_l" && name != "eta") return false;
  std::optional<KatibNumber> n = ReadNumber(json(value));
  if (name == "r_l" && n && n->value > 0) {
    c.r_l = n->value;
  } else if (name == "eta" && n && std::floor(n->value) == n->value && n->value >= 2 &&
             n->value <= kMaxReductionFactor) {
    c.eta = static_cast<int64_t>(n->value);
  } else {
    c.Block(path, name + ": must be " +
                      (name == "eta" ? "an integer from 2 to 1000" : "a number greater than 0") +
                      ", got \"" + value + "\"");
  }
  return true;
}

// One of Katib's algorithmSettings, whose values are strings.
void ApplySetting(Context& c, const std::string& name, const std::string& value,
                  const std::string& path) {
  const bool hyperband = c.algorithm == "hyperband";
  if (hyperband && ApplyHyperbandSetting(c, name, value, path)) return;
  if (name == "random_state" && !hyperband) {
    ApplySeed(c, value, path);
    return;
  }
  c.Note(path,
         "\"" + name + "\": not mapped: budgetsweep's " + c.algorithm + " has no such setting");
}

void ConvertAlgorithm(Context& c, const json& algorithm) {
  FieldReader a(algorithm, "spec.algorithm", &c.malformed);
  MapAlgorithmName(c, a.String("algorithmName", true).value_or("random"),
                   a.PathOf("algorithmName"));
  if (const json* settings = a.Get("algorithmSettings"); settings && settings->is_array()) {
    for (size_t i = 0; i < settings->size(); ++i) {
      const std::string path = a.PathOf("algorithmSettings") + "[" + std::to_string(i) + "]";
      FieldReader s((*settings)[i], path, &c.malformed);
      std::optional<std::string> name = s.String("name", true);
      std::optional<std::string> value = s.String("value", false);
      FinishReader(c, s);
      if (name) ApplySetting(c, *name, value.value_or(""), path);
    }
  } else if (settings != nullptr) {
    a.Error("algorithmSettings", "must be a list, got " + FieldReader::Describe(*settings));
  }
  FinishReader(c, a);
  if (c.algorithm == "hyperband" && c.resource_name.empty()) {
    c.Block(a.PathOf("algorithmSettings"),
            "resource_name: required by Katib's hyperband: the parameter that gives the resource");
  }
}

// Katib's hyperband: brackets from r_l·eta^-s_max up to r_l, which budgetsweep's hyperband
// reproduces with resource.min at that smallest rung (s_max = floor(log_eta r_l)).
void HyperbandResource(Context& c) {
  std::optional<double> max = c.options.max_resource ? c.options.max_resource : c.r_l;
  if (!max) {
    c.Block("spec.algorithm.algorithmSettings",
            "r_l: required by Katib's hyperband (the largest resource); or pass --max-resource");
    return;
  }
  double min = *max;
  while (min / c.eta >= 1 - 1e-9) min /= c.eta;
  if (min >= *max) {
    c.Block("spec.algorithm.algorithmSettings",
            "r_l: " + NumberText(*max) + " is below eta (" + std::to_string(c.eta) +
                "), which leaves one rung; budgetsweep's hyperband needs two: raise r_l or "
                "--max-resource");
  }
  c.resource_max = *max;
  c.spec["resource"] = {{"unit", c.resource_name},
                        {"min", NumberJson(min)},
                        {"max", NumberJson(*max)},
                        {"reductionFactor", c.eta}};
  c.out.resource_note = "a trial's resource is the value of \"" + c.resource_name +
                        "\" that it prints on the line of its objective value (Katib's hyperband "
                        "parameter); rungs at resource.min * " +
                        std::to_string(c.eta) + "^k up to " + NumberText(*max) +
                        ", as Katib's brackets";
}

// Katib trials have no resource: each objective value a trial reports counts one.
void ReportsResource(Context& c) {
  const double max = c.options.max_resource.value_or(1);
  if (std::floor(max) != max || max < 1) {
    c.Block("spec.resource.max",
            "--max-resource: must be a whole number of reported values, got " + NumberText(max));
  }
  c.resource_max = max;
  // random and grid run every trial to resource.max and need no min.
  c.spec["resource"] = {{"unit", "reports"}, {"max", NumberJson(max)}};
  c.out.resource_note =
      "Katib trials have no resource: a trial's resource is the count of objective values it "
      "has reported, and it is complete at " +
      NumberText(max) + (max == 1 ? " (one value at the end, as Katib reads a trial)" : "") +
      "; --max-resource sets that count";
}

void ConvertCounts(Context& c, FieldReader& s) {
  c.spec["parallelism"] =
      s.Integer("parallelTrialCount", false, 1, INT32_MAX).value_or(kKatibParallelTrials);
  if (std::optional<int64_t> n = s.Integer("maxTrialCount", false, 1, INT32_MAX)) {
    c.spec["maxTrials"] = *n;
  }
  if (std::optional<int64_t> n = s.Integer("maxFailedTrialCount", false, 1, INT32_MAX)) {
    c.spec["maxFailedTrials"] = *n;
  }
  if (s.Has("resumePolicy")) {
    c.Note(s.PathOf("resumePolicy"),
           "ignored: a sweep resumes from its journal (locally: the same --state-dir)");
  }
  if (s.Has("earlyStopping")) {
    c.Note(s.PathOf("earlyStopping"),
           "not mapped: budgetsweep stops trials early by its algorithm (asha, hyperband) at rungs "
           "of a trial resource; this sweep runs every trial to resource.max");
  }
  if (s.Has("nasConfig")) {
    c.Block(s.PathOf("nasConfig"),
            "not mapped: neural architecture search; budgetsweep searches hyperparameters only");
  }
}

// A feasibleSpace as read: numbers where Katib has them, the list as it is.
struct Feasible {
  std::optional<KatibNumber> min, max, step;
  std::string distribution;
  const json* list = nullptr;
};

Feasible ReadFeasible(Context& c, const json& space, const std::string& path) {
  FieldReader f(space, path, &c.malformed);
  Feasible out{NumberField(f, "min"), NumberField(f, "max"), NumberField(f, "step"),
               f.String("distribution", false).value_or(""), f.Get("list")};
  if (out.list != nullptr && !out.list->is_array()) {
    f.Error("list", "must be a list, got " + FieldReader::Describe(*out.list));
    out.list = nullptr;
  }
  FinishReader(c, f);
  return out;
}

// min, min+step, ... up to max, rounded to the decimals written, so that a 0.1 step reads 0.3
// rather than 0.30000000000000004. nullopt, with a problem, when they cannot be enumerated.
std::optional<json> StepValues(Context& c, const std::string& path, const Feasible& fs,
                               KatibNumber step, bool is_int) {
  const double count = std::floor((fs.max->value - fs.min->value) / step.value + 1e-9) + 1;
  std::string why;
  if (step.value <= 0) {
    why = "the step must be greater than 0";
  } else if (count < 1) {
    why = "max is below min";
  } else if (count > kMaxStepValues) {
    why = "that makes " + NumberText(count) + " values; at most 1000 are enumerated";
  }
  if (!why.empty()) {
    c.Block(path + ".step", "cannot enumerate min, min+step, ... max: " + why);
    return std::nullopt;
  }
  const int decimals = std::max(fs.min->decimals, step.decimals);
  const bool round = fs.min->decimals >= 0 && step.decimals >= 0 && decimals <= 15;
  const double scale = std::pow(10.0, decimals);
  json values = json::array();
  for (int i = 0; i < static_cast<int>(count); ++i) {
    double v = fs.min->value + i * step.value;
    if (round) v = std::round(v * scale) / scale;
    values.push_back(is_int ? json(std::llround(v)) : NumberJson(v));
  }
  return values;
}

// The step that enumerates a double or int parameter's values: Katib's (an int's step of 1
// enumerates nothing outside grid), or 1 for an int under grid; nullopt for a range.
std::optional<KatibNumber> EnumerationStep(const Feasible& fs, bool is_int, bool grid) {
  if (fs.step && (grid || !is_int || fs.step->value != 1)) return fs.step;
  if (!fs.step && grid && is_int) return KatibNumber{1, 0};
  return std::nullopt;
}

// A double or int parameter's range, on a linear or log scale.
json RangeOf(const Feasible& fs, bool is_int) {
  const bool log = fs.distribution == "logUniform";
  if (!is_int) {
    return {
        {"type", log ? "logUniform" : "uniform"}, {"min", fs.min->value}, {"max", fs.max->value}};
  }
  json param = {
      {"type", "int"}, {"min", NumberJson(fs.min->value)}, {"max", NumberJson(fs.max->value)}};
  if (log) param["log"] = true;
  return param;
}

// A double or int parameter: a range, or the values a step enumerates.
std::optional<json> RangeParam(Context& c, const std::string& path, const Feasible& fs,
                               bool is_int) {
  if (!fs.distribution.empty() && fs.distribution != "uniform" && fs.distribution != "logUniform") {
    c.Block(path + ".distribution", "\"" + fs.distribution +
                                        "\": not mapped: budgetsweep samples uniformly, on a "
                                        "linear or a log scale (uniform, logUniform)");
    return std::nullopt;
  }
  if (!fs.min || !fs.max) {
    c.Block(path + (fs.min ? ".max" : ".min"), "required for a double or int parameter");
    return std::nullopt;
  }
  const bool grid = c.algorithm == "grid";
  if (!fs.step && grid && !is_int) {
    c.Block(path + ".step",
            "required under algorithm grid for a double, as Katib also requires: the grid "
            "takes min, min+step, ... max");
    return std::nullopt;
  }
  if (std::optional<KatibNumber> step = EnumerationStep(fs, is_int, grid)) {
    std::optional<json> values = StepValues(c, path, fs, *step, is_int);
    if (!values) return std::nullopt;
    return json{{"type", grid ? "grid" : "choice"}, {"values", *values}};
  }
  return RangeOf(fs, is_int);
}

// A categorical (strings) or discrete (numbers) parameter: a choice, or a grid under grid.
std::optional<json> ListParam(Context& c, const std::string& path, const Feasible& fs,
                              bool numbers) {
  if (fs.list == nullptr || fs.list->empty()) {
    c.Block(path + ".list", "required: the values to choose from");
    return std::nullopt;
  }
  json values = json::array();
  for (size_t i = 0; i < fs.list->size(); ++i) {
    const json& item = (*fs.list)[i];
    std::optional<KatibNumber> n = ReadNumber(item);
    if (numbers && n) {
      values.push_back(n->decimals == 0 ? NumberJson(n->value) : json(n->value));
    } else if (!numbers && (item.is_string() || item.is_number())) {
      values.push_back(item.is_string() ? item.get<std::string>() : ValueText(item));
    } else {
      c.Block(path + ".list[" + std::to_string(i) + "]",
              std::string("must be a ") + (numbers ? "number" : "string") + ", got " +
                  FieldReader::Describe(item));
    }
  }
  return json{{"type", c.algorithm == "grid" ? "grid" : "choice"}, {"values", values}};
}

void ConvertParameter(Context& c, const json& param, const std::string& path) {
  FieldReader p(param, path, &c.malformed);
  std::optional<std::string> name = p.String("name", true);
  std::optional<std::string> type = p.String("parameterType", true);
  const json* space = p.Object("feasibleSpace", true);
  FinishReader(c, p);
  if (!name || !type || space == nullptr) return;
  if (*name == c.resource_name) {
    c.Note(path, "\"" + *name +
                     "\": the hyperband resource, not searched: each trial runs toward "
                     "resource.max until a rung stops it");
    return;
  }
  c.parameters[*name] = path;
  const std::string space_path = path + ".feasibleSpace";
  Feasible fs = ReadFeasible(c, *space, space_path);
  std::optional<json> entry;
  if (*type == "double" || *type == "int") {
    entry = RangeParam(c, space_path, fs, *type == "int");
  } else if (*type == "categorical" || *type == "discrete") {
    entry = ListParam(c, space_path, fs, *type == "discrete");
  } else {
    p.Error("parameterType", "must be double, int, categorical or discrete, got \"" + *type + "\"");
  }
  if (entry) c.spec["searchSpace"][*name] = *entry;
}

void ConvertParameters(Context& c, const json* parameters) {
  if (parameters == nullptr || !parameters->is_array() || parameters->empty()) {
    c.Block("spec.parameters", "required: a list of at least one parameter");
    return;
  }
  for (size_t i = 0; i < parameters->size(); ++i) {
    ConvertParameter(c, (*parameters)[i], "spec.parameters[" + std::to_string(i) + "]");
  }
  if (At(c.spec, "searchSpace") == nullptr) {
    c.Block("spec.parameters", "no parameter left to search");
  }
}

// The file a Katib File collector reads, as budgetsweep's: the same name in the trial's
// directory.
json FileCollector(Context& c, const json* file, const std::string& path) {
  std::string katib_path = kKatibMetricsFile;
  std::string format = "TEXT";
  if (file != nullptr) {
    FieldReader f(*file, path, &c.malformed);
    katib_path = f.String("path", false).value_or(katib_path);
    format = f.String("format", false).value_or(format);
    if (f.String("kind", false).value_or("File") != "File") {
      c.Block(f.PathOf("kind"), "not mapped: budgetsweep reads one file, not a directory");
    }
    FinishReader(c, f);
  }
  if (format != "TEXT" && format != "JSON") {
    c.Block(path + ".format", "must be TEXT or JSON, got \"" + format + "\"");
  }
  const std::string name = katib_path.substr(katib_path.rfind('/') + 1);
  if (name.empty() || name == "." || name == "..") {
    c.Block(path + ".path", "\"" + katib_path + "\": names no file");
  }
  c.Note(path + ".path", "the sweep reads \"" + name +
                             "\" in the trial's directory: the script must write it under "
                             "$BUDGETSWEEP_TRIAL_DIR, not at \"" +
                             katib_path + "\"");
  return {{"kind", "File"}, {"file", {{"path", name}, {"format", format}}}};
}

// Katib's metricsFormat: regexes whose first two groups are a metric's name and value.
void ApplyFilter(Context& c, const json& filter, const std::string& path, json* collector) {
  FieldReader f(filter, path, &c.malformed);
  const json* formats = f.Get("metricsFormat");
  FinishReader(c, f);
  if (formats == nullptr || !formats->is_array() || formats->empty()) return;
  if (!(*formats)[0].is_string()) {
    f.Error("metricsFormat", "must be a list of strings");
    return;
  }
  (*collector)["filter"] = (*formats)[0];
  if (formats->size() > 1) {
    c.Note(f.PathOf("metricsFormat"), "budgetsweep takes one regex: the first is kept");
  }
}

// The collector for Katib's kind, and what its source says.
json CollectorFor(Context& c, const std::string& kind, const json* source) {
  const json none = json::object();
  FieldReader s(source != nullptr ? *source : none, "spec.metricsCollectorSpec.source",
                &c.malformed);
  const json* file = s.Object("fileSystemPath", false);
  const json* filter = s.Object("filter", false);
  if (s.Has("httpGet") && kind != "PrometheusMetric") c.Note(s.PathOf("httpGet"), "ignored");
  FinishReader(c, s);
  json collector = {{"kind", "StdOut"}};
  if (kind == "File") collector = FileCollector(c, file, s.PathOf("fileSystemPath"));
  if (kind == "PrometheusMetric") {
    c.Note("spec.metricsCollectorSpec.collector.kind",
           "PrometheusMetric: the trainer must serve budgetsweep's metrics "
           "(docs/trainer-contract.md), not Katib's; source.httpGet is not used");
    return {{"kind", "Prometheus"}};
  }
  if (filter != nullptr) ApplyFilter(c, *filter, s.PathOf("filter"), &collector);
  // The resource is read from the objective's printed line.
  if (!c.resource_name.empty()) collector["resourceKey"] = c.resource_name;
  return collector;
}

// Katib collects from stdout when metricsCollectorSpec is absent.
void ConvertCollector(Context& c, const json* spec) {
  std::string kind = "StdOut";
  const json* source = nullptr;
  if (spec != nullptr) {
    FieldReader m(*spec, "spec.metricsCollectorSpec", &c.malformed);
    if (const json* collector = m.Object("collector", false)) {
      FieldReader k(*collector, m.PathOf("collector"), &c.malformed);
      kind = k.String("kind", false).value_or(kind);
      k.Has("customCollector");
      FinishReader(c, k);
    }
    source = m.Object("source", false);
    FinishReader(c, m);
  }
  if (kind != "StdOut" && kind != "File" && kind != "PrometheusMetric") {
    c.Block("spec.metricsCollectorSpec.collector.kind",
            "\"" + kind +
                "\": not mapped: budgetsweep reads metrics from stdout, a file or Prometheus; "
                "converted as StdOut");
    kind = "StdOut";
  }
  c.spec["metrics"]["collector"] = CollectorFor(c, kind, source);
}

// What `${trialParameters.<name>}` becomes for a trialParameter that references `reference`.
std::string PlaceholderFor(Context& c, const std::string& reference, const std::string& path) {
  if (reference == c.resource_name) {
    c.Note(path, "the hyperband resource: its placeholder becomes the full resource, " +
                     NumberText(c.resource_max) + "; budgetsweep stops the trial at its rungs");
    return NumberText(c.resource_max);
  }
  const std::string placeholder = std::string(kPlaceholderOpen) + reference + "}";
  if (c.parameters.contains(reference)) {
    c.placed.insert(reference);
  } else if (reference.starts_with("${trialSpec.")) {
    c.Block(path, reference +
                      ": not mapped: budgetsweep has no trial metadata placeholders (the trial's "
                      "name is in $BUDGETSWEEP_TRIAL)");
  } else {
    c.Block(path, "\"" + reference + "\" names no parameter of spec.parameters");
  }
  return placeholder;
}

void ReadTrialParameters(Context& c, const json& list, const std::string& path) {
  if (!list.is_array()) {
    c.malformed.push_back(path + ": must be a list, got " + FieldReader::Describe(list));
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    FieldReader p(list[i], path + "[" + std::to_string(i) + "]", &c.malformed);
    std::optional<std::string> name = p.String("name", true);
    std::optional<std::string> reference = p.String("reference", true);
    p.Has("description");
    FinishReader(c, p);
    if (name && reference) {
      c.placeholders[*name] = PlaceholderFor(c, *reference, p.PathOf("reference"));
    }
  }
}

// Rewrites every `${trialParameters.NAME}` in `text` (at `path`) to NAME's replacement.
// `substituted`: whether budgetsweep fills placeholders at this place of the template.
void RewriteString(Context& c, std::string& text, const std::string& path, bool substituted) {
  bool placeholder_left = false;
  text = RewritePlaceholders(text, [&](const std::string& name) {
    auto found = c.placeholders.find(name);
    const bool known = found != c.placeholders.end();
    if (!known) c.Block(path, "${trialParameters." + name + "}: no trialParameters entry names it");
    std::string replacement = known ? found->second : std::string(kPlaceholderOpen) + name + "}";
    placeholder_left |= replacement.starts_with(kPlaceholderOpen);
    return replacement;
  });
  if (placeholder_left && !substituted) {
    c.Block(path,
            "budgetsweep fills ${trialParameters.*} only in the primary container's command, "
            "args and env values");
  }
}

// Whether `path` is in the command, args or an env value of the container at `container`.
bool Substituted(const std::string& path, const std::string& container) {
  auto under = [&](const char* field) { return path.starts_with(container + "." + field + "["); };
  return under("command") || under("args") || (under("env") && path.ends_with(".value"));
}

void RewriteStrings(Context& c, json& value, const std::string& path,
                    const std::string& container) {
  if (value.is_string()) {
    RewriteString(c, value.get_ref<std::string&>(), path, Substituted(path, container));
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      RewriteStrings(c, value[i], path + "[" + std::to_string(i) + "]", container);
    }
  } else if (value.is_object()) {
    for (auto& [key, item] : value.items()) RewriteStrings(c, item, path + "." + key, container);
  }
}

// The trial's PodTemplateSpec and where it sits in the Experiment.
struct PodTemplate {
  json object;
  std::string path;  // its metadata and spec are at path.metadata and path.spec
};

std::optional<PodTemplate> JobTemplate(Context& c, const json& job, const std::string& path) {
  FieldReader j(job, path, &c.malformed);
  const json* spec = j.Object("spec", true);
  if (spec == nullptr) return std::nullopt;
  FieldReader s(*spec, j.PathOf("spec"), &c.malformed);
  const json* pod = s.Object("template", true);
  for (const auto& [key, value] : spec->items()) {
    if (key != "template") {
      c.Note(s.PathOf(key),
             "dropped: a trial is one pod, which budgetsweep retries itself "
             "(spec.trial.maxRetries)");
    }
  }
  if (pod == nullptr) return std::nullopt;
  return PodTemplate{*pod, s.PathOf("template")};
}

// A Pod's spec, labels and annotations as a PodTemplateSpec.
std::optional<PodTemplate> PodAsTemplate(Context& c, const json& pod, const std::string& path) {
  FieldReader p(pod, path, &c.malformed);
  const json* spec = p.Object("spec", true);
  if (spec == nullptr) return std::nullopt;
  json object = {{"spec", *spec}};
  if (const json* metadata = p.Object("metadata", false)) {
    for (const char* key : {"labels", "annotations"}) {
      if (const json* kept = At(*metadata, key)) object["metadata"][key] = *kept;
    }
  }
  return PodTemplate{std::move(object), path};
}

std::optional<PodTemplate> PodTemplateOf(Context& c, const json& trial_spec,
                                         const std::string& path) {
  const json* kind = At(trial_spec, "kind");
  const std::string name = kind != nullptr && kind->is_string() ? kind->get<std::string>() : "";
  if (name == "Job") return JobTemplate(c, trial_spec, path);
  if (name == "Pod") return PodAsTemplate(c, trial_spec, path);
  c.Block(path + ".kind", "\"" + name +
                              "\": not mapped: budgetsweep runs a trial as one pod, from a Job's "
                              "or a Pod's template");
  return std::nullopt;
}

// The index of the container named `primary` (the first when empty); nullopt, with a problem,
// when there is none.
std::optional<size_t> PrimaryIndex(Context& c, const json& containers, const std::string& primary,
                                   const std::string& path) {
  if (!containers.is_array() || containers.empty()) {
    c.Block(path, "required: at least one container");
    return std::nullopt;
  }
  for (size_t i = 0; i < containers.size() && !primary.empty(); ++i) {
    const json* name = At(containers[i], "name");
    if (name != nullptr && *name == primary) return i;
  }
  if (primary.empty()) return 0;
  c.Block("spec.trialTemplate.primaryContainerName",
          "\"" + primary + "\": no container of the template has this name");
  return std::nullopt;
}

// The GPUs that the trial's container asks for (nvidia.com/gpu), 0 when none.
int64_t GpusOf(Context& c, const json& container, const std::string& path) {
  const json* resources = At(container, "resources");
  const json* limits = resources != nullptr ? At(*resources, "limits") : nullptr;
  const json* gpus = limits != nullptr ? At(*limits, "nvidia.com/gpu") : nullptr;
  if (gpus == nullptr) return 0;
  std::optional<KatibNumber> n = ReadNumber(*gpus);
  if (!n || n->value < 0 || std::floor(n->value) != n->value || n->value > INT32_MAX) {
    c.Block(path + ".resources.limits.nvidia.com/gpu",
            "must be a whole number of GPUs, got " + FieldReader::Describe(*gpus));
    return 0;
  }
  return static_cast<int64_t>(n->value);
}

// spec.trial from the pod template: placeholders renamed, the primary container first.
void ConvertTrial(Context& c, PodTemplate pod, const std::string& primary) {
  json* spec = pod.object.is_object() ? &pod.object["spec"] : nullptr;
  const std::string spec_path = pod.path + ".spec";
  if (spec == nullptr || !spec->is_object()) {
    c.Block(spec_path, "required: the pod's spec");
    return;
  }
  if (spec->erase("restartPolicy") > 0) {
    c.Note(spec_path + ".restartPolicy",
           "dropped: budgetsweep sets the trial pod's restartPolicy (Never)");
  }
  json& containers = (*spec)["containers"];
  std::optional<size_t> index = PrimaryIndex(c, containers, primary, spec_path + ".containers");
  if (!index) return;
  const std::string container_path = spec_path + ".containers[" + std::to_string(*index) + "]";
  RewriteStrings(c, pod.object, pod.path, container_path);
  // budgetsweep runs the first container's command as the trainer.
  std::rotate(containers.begin(), containers.begin() + static_cast<std::ptrdiff_t>(*index),
              containers.begin() + static_cast<std::ptrdiff_t>(*index) + 1);
  const json* command = At(containers[0], "command");
  if (command == nullptr || !command->is_array() || command->empty()) {
    c.Block(container_path + ".command",
            "required: budgetsweep wraps the trainer's command, so the image's entrypoint must "
            "be written out");
  }
  // Katib trials neither checkpoint nor resume: stop mode ends them at a rung, nothing pauses.
  c.spec["trial"] = {{"gpus", GpusOf(c, containers[0], container_path)},
                     {"checkpointing", false},
                     {"template", std::move(pod.object)}};
}

void ConvertTrialTemplate(Context& c, const json& trial_template) {
  FieldReader t(trial_template, "spec.trialTemplate", &c.malformed);
  for (const char* key : {"retain", "successCondition", "failureCondition", "primaryPodLabels"}) {
    if (t.Has(key)) {
      c.Note(t.PathOf(key), "ignored: a trial is one pod, judged by its exit code and metrics");
    }
  }
  if (t.Has("configMap")) {
    c.Block(t.PathOf("configMap"), "not mapped: write the template inline, as trialSpec");
  }
  if (const json* list = t.Get("trialParameters")) {
    ReadTrialParameters(c, *list, t.PathOf("trialParameters"));
  }
  const std::string primary = t.String("primaryContainerName", false).value_or("");
  const json* trial_spec = t.Object("trialSpec", !t.Has("configMap"));
  FinishReader(c, t);
  if (trial_spec == nullptr) return;
  std::optional<PodTemplate> pod = PodTemplateOf(c, *trial_spec, t.PathOf("trialSpec"));
  if (pod) ConvertTrial(c, std::move(*pod), primary);
}

// Katib passes a parameter only where the template places it; budgetsweep passes the others as
// flags, which a script that does not expect them may refuse.
void NoteUnplacedParameters(Context& c) {
  for (const auto& [name, path] : c.parameters) {
    const json* space = At(c.spec, "searchSpace");
    if (!c.placed.contains(name) && space != nullptr && space->contains(name)) {
      c.Note(path, "\"" + name + "\": no trialParameters entry places it in the template; " +
                       "budgetsweep passes it as --" + name + "=VALUE");
    }
  }
}

void ConvertSpec(Context& c, const json& body) {
  FieldReader s(body, "spec", &c.malformed);
  // In this order: each step reads what those before it learnt.
  if (const json* objective = s.Object("objective", true)) ConvertObjective(c, *objective);
  if (const json* algorithm = s.Object("algorithm", true)) ConvertAlgorithm(c, *algorithm);
  if (c.algorithm == "hyperband") {
    HyperbandResource(c);
  } else {
    ReportsResource(c);
  }
  ConvertCounts(c, s);
  ConvertParameters(c, s.Get("parameters"));
  ConvertCollector(c, s.Object("metricsCollectorSpec", false));
  if (const json* trial_template = s.Object("trialTemplate", true)) {
    ConvertTrialTemplate(c, *trial_template);
  }
  NoteUnplacedParameters(c);
  FinishReader(c, s);
}

void CheckKatibType(Context& c, FieldReader& top) {
  std::optional<std::string> api_version = top.String("apiVersion", true);
  std::optional<std::string> kind = top.String("kind", true);
  if ((api_version && *api_version != kKatibApiVersion) || (kind && *kind != "Experiment")) {
    c.Block("apiVersion", std::string("must be ") + kKatibApiVersion +
                              " with kind Experiment, got " + api_version.value_or("?") + " " +
                              kind.value_or("?"));
  }
}

}  // namespace

bool KatibConversion::Runnable() const {
  for (const KatibProblem& problem : problems) {
    if (problem.blocks_running) return false;
  }
  return true;
}

KatibConversion ConvertKatib(const nlohmann::json& experiment, const KatibOptions& options) {
  KatibConversion out;
  out.sweep = {{"apiVersion", kApiVersion},
               {"kind", kKind},
               {"metadata", json::object()},
               {"spec", json::object()}};
  if (!experiment.is_object()) {
    out.problems.push_back(
        {"(document)",
         "must be a Katib Experiment object, got " + FieldReader::Describe(experiment), true});
    return out;
  }
  Context c(options, out);
  FieldReader top(experiment, "", &c.malformed);
  CheckKatibType(c, top);
  if (const json* metadata = top.Object("metadata", true)) ConvertMetadata(c, *metadata);
  if (const json* spec = top.Object("spec", true)) ConvertSpec(c, *spec);
  top.Has("status");
  FinishReader(c, top);
  if (options.gpu_hours) {
    c.spec["budget"] = {{"gpuHours", *options.gpu_hours}};
  } else {
    c.Block("spec.budget.gpuHours", "Katib has no budget; pass --gpu-hours");
  }
  Drain(c, c.malformed, true, "");
  Drain(c, c.unknown, false, "not a field of Katib v1beta1's Experiment: not converted");
  return out;
}

std::string ConversionComment(const KatibConversion& conversion, const std::string& source) {
  const json* metadata = At(conversion.sweep, "metadata");
  const json* name_field = metadata != nullptr ? At(*metadata, "name") : nullptr;
  const json* ns_field = metadata != nullptr ? At(*metadata, "namespace") : nullptr;
  std::string name = name_field != nullptr ? name_field->get<std::string>() : "?";
  if (ns_field != nullptr) name = ns_field->get<std::string>() + "/" + name;
  std::string text =
      "# BudgetSweep converted by `budgetsweep convert katib` from Katib Experiment " + name +
      " (" + source + ").\n";
  if (!conversion.resource_note.empty()) {
    text += "# Resource: " + conversion.resource_note + ".\n";
  }
  if (!conversion.problems.empty()) {
    text += std::string("# Not converted as it was") +
            (conversion.Runnable() ? ":\n" : " (! blocks running until edited):\n");
  }
  for (const KatibProblem& problem : conversion.problems) {
    text += std::string("#  ") + (problem.blocks_running ? "! " : "  ") + problem.path + ": " +
            problem.message + "\n";
  }
  return text;
}

const std::vector<std::string>& SweepKeyOrder() {
  static const std::vector<std::string> kOrder = {
      "apiVersion", "kind", "metadata", "spec", "name", "namespace", "labels", "annotations",  //
      // spec's sections in the order of docs/sweep-file.md
      "budget", "objective", "resource", "scheduler", "parallelism", "maxTrials",  //
      "maxFailedTrials", "searchSpace", "metrics", "trial",                        //
      // their fields
      "gpuHours", "metric", "goal", "type", "unit", "min", "max", "log", "values",   //
      "reductionFactor", "algorithm", "sampler", "seed", "collector", "filter",      //
      "resourceKey", "file", "path", "format", "gpus", "checkpointing", "template",  //
      "containers", "image", "command", "args", "env", "value", "resources"};
  return kOrder;
}

}  // namespace bsw
