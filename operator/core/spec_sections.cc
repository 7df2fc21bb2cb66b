#include "operator/core/spec_sections.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <regex>
#include <set>

#include "operator/core/asha.h"
#include "operator/core/placeholders.h"
#include "operator/core/template_policy.h"

namespace bsw {
namespace {

using nlohmann::json;

// Limits the CRD sets (maxProperties, maxItems) to keep its CEL rules within the API server's
// cost budget; the validator holds files to the same.
constexpr size_t kMaxSearchSpaceParameters = 64;
constexpr size_t kMaxParameterValues = 1024;
constexpr size_t kMaxCandidateListItems = 64;
constexpr size_t kMaxFilterBytes = 1024;  // spec.metrics.collector.filter

// The trainer flags the probe phase sets, by candidate list.
constexpr const char* kWorkersFlag = "workers";
constexpr const char* kPrefetchFlag = "prefetch";
constexpr const char* kPrecisionFlag = "precision";
constexpr const char* kBatchSizeFlag = "batch-size";
constexpr const char* kAccumulationFlag = "accumulation-steps";
constexpr size_t kMaxProbeCandidates = 64;

// An integer field of at most ten million, at least `lowest`.
std::optional<int> CountField(FieldReader& fields, const char* key, int64_t lowest) {
  std::optional<int64_t> v = fields.Integer(key, false, lowest, 10'000'000);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

void ParsePoolRef(const json& ref, std::vector<std::string>* errors, SweepSpec* spec) {
  FieldReader r(ref, "spec.budget.poolRef", errors);
  if (std::optional<std::string> name = r.String("name", true)) {
    if (!IsDnsLabel(*name, 253)) r.Error("name", "must be a BudgetPool's name");
    spec->pool_name = *name;
  }
  r.Finish();
}

// spec.scheduler.perturbationInterval, for pbt and pb2 only.
void ParsePerturbationInterval(FieldReader& s, const json& scheduler, SweepSpec* spec) {
  std::optional<double> interval = s.Number("perturbationInterval", false);
  if (!interval) return;
  if (!Population(spec->algorithm)) {
    s.Error("perturbationInterval", "only for algorithms pbt and pb2");
  } else if (*interval <= 0 || *interval >= spec->resource_max) {
    s.Error("perturbationInterval", "must be greater than 0 and less than spec.resource.max, got " +
                                        ValueText(scheduler.at("perturbationInterval")));
  } else if (spec->resource_max / *interval > kMaxPopulationIntervals) {
    s.Error("perturbationInterval", "at most " + std::to_string(kMaxPopulationIntervals) +
                                        " intervals may fit in spec.resource.max");
  } else {
    spec->perturbation_interval = *interval;
  }
}

// The values of a choice or grid parameter.
void ParseParamValues(FieldReader& f, const json& body, std::vector<std::string>* errors,
                      ParamSpec* param) {
  const json* values = f.Get("values");
  if (values == nullptr) {
    f.Error("values", "required for type " + body.at("type").get<std::string>());
    return;
  }
  if (!values->is_array() || values->empty()) {
    f.Error("values", "must be a non-empty list");
    return;
  }
  if (!WithinMaxItems(f, "values", *values, kMaxParameterValues)) return;
  for (size_t i = 0; i < values->size(); ++i) {
    const json& v = (*values)[i];
    if (!v.is_number() && !v.is_string() && !v.is_boolean()) {
      errors->push_back(f.PathOf("values") + "[" + std::to_string(i) +
                        "]: must be a number, string or boolean");
    }
    param->values.push_back(v);
  }
}

// Reads a bound, an integer for an int parameter; false when it is missing or of the wrong type
// (already reported).
bool ParseBound(FieldReader& f, const char* key, bool is_int, double* out) {
  if (is_int) {
    std::optional<int64_t> v = f.Integer(key, true);
    if (v) *out = static_cast<double>(*v);
    return v.has_value();
  }
  std::optional<double> v = f.Number(key, true);
  if (v) *out = *v;
  return v.has_value();
}

// The bounds of a uniform, logUniform or int parameter, and an int's log.
void ParseParamBounds(FieldReader& f, const json& body, ParamSpec* param) {
  const bool is_int = param->type == ParamType::kInt;
  const bool has_min = ParseBound(f, "min", is_int, &param->min);
  const bool has_max = ParseBound(f, "max", is_int, &param->max);
  if (is_int) param->log = f.Bool("log").value_or(false);
  if (has_min && has_max && param->min >= param->max) {
    f.Error("max",
            "must be greater than " + f.PathOf("min") + " (" + ValueText(body.at("min")) + ")");
  } else if (has_min && has_max && std::isinf(param->max - param->min)) {
    f.Error("max", "out of range: max - min must be a finite number, got " +
                       ValueText(body.at("max")) + " - " + ValueText(body.at("min")));
  }
  const bool log_scale = param->type == ParamType::kLogUniform || param->log;
  if (has_min && log_scale && param->min <= 0) {
    f.Error("min", "must be greater than 0 on a log scale, got " + ValueText(body.at("min")));
  }
}

// Whether the algorithm lets the parameter change during a trial.
void CheckMutable(FieldReader& f, const ParamSpec& param, Algorithm algorithm) {
  if (!Population(algorithm)) {
    f.Error("mutable",
            "only algorithms pbt and pb2 change a parameter during a trial; the "
            "algorithm is " +
                std::string(AlgorithmName(algorithm)));
  } else if (param.type == ParamType::kGrid) {
    f.Error("mutable", "a grid parameter is enumerated, one value per trial; use choice");
  } else if (param.type == ParamType::kChoice && algorithm == Algorithm::kPb2) {
    f.Error("mutable",
            "pb2 chooses mutable values in numeric bounds: use uniform, logUniform "
            "or int (or algorithm pbt)");
  }
}

void ParseParam(const std::string& name, const json& body, const std::string& path,
                std::vector<std::string>* errors, SweepSpec* spec) {
  static const std::regex kFlagName("[A-Za-z0-9][A-Za-z0-9_.-]*");
  if (!std::regex_match(name, kFlagName)) {
    errors->push_back(path +
                      ": parameter names are trainer flag names: letters, digits, '_', "
                      "'.', '-', starting with a letter or digit");
  }
  if (!body.is_object()) {
    errors->push_back(path + ": must be an object, got " + FieldReader::Describe(body));
    return;
  }
  FieldReader f(body, path, errors);
  ParamSpec param;
  param.name = name;
  std::optional<ParamType> type = ParseEnum<ParamType>(f, "type",
                                                       {{"uniform", ParamType::kUniform},
                                                        {"logUniform", ParamType::kLogUniform},
                                                        {"int", ParamType::kInt},
                                                        {"choice", ParamType::kChoice},
                                                        {"grid", ParamType::kGrid}});
  if (!f.Has("type")) f.Error("type", "required (uniform, logUniform, int, choice or grid)");
  if (!type) {
    f.Finish();
    return;
  }
  param.type = *type;
  if (*type == ParamType::kChoice || *type == ParamType::kGrid) {
    ParseParamValues(f, body, errors, &param);
  } else {
    ParseParamBounds(f, body, &param);
  }
  param.mutable_ = f.Bool("mutable").value_or(false);
  if (param.mutable_) CheckMutable(f, param, spec->algorithm);
  f.Finish();
  spec->search_space.push_back(std::move(param));
}

// pbt and pb2 go on from checkpoints, with a population of spec.maxTrials and at least one
// parameter to change; their rungs are every perturbationInterval units (Rungs).
void CheckPopulation(const SweepSpec& spec, std::vector<std::string>* errors) {
  const std::string algorithm = AlgorithmName(spec.algorithm);
  if (spec.mode != AshaMode::kPause) {
    errors->push_back("spec.scheduler.mode: " + algorithm +
                      " needs mode pause: a trial goes on from its own or another trial's "
                      "checkpoint");
  }
  if (spec.sampler == Sampler::kTpe) {
    errors->push_back("spec.scheduler.sampler: tpe cannot be used with algorithm " + algorithm +
                      ": its trials change their parameters");
  }
  if (!spec.max_trials) {
    errors->push_back("spec.maxTrials: required for algorithm " + algorithm +
                      ": it is the population's size");
  }
  if (std::none_of(spec.search_space.begin(), spec.search_space.end(),
                   [](const ParamSpec& p) { return p.mutable_; })) {
    errors->push_back("spec.searchSpace: " + algorithm +
                      " needs at least one parameter with mutable: true");
  }
  bool interval_set = spec.perturbation_interval > 0;
  if (!interval_set && spec.resource_min > 0 &&
      spec.resource_max / spec.resource_min > kMaxPopulationIntervals) {
    errors->push_back("spec.scheduler.perturbationInterval: " + algorithm +
                      " pauses every resource.min units unless this is set, and at most " +
                      std::to_string(kMaxPopulationIntervals) + " intervals may fit in " +
                      "spec.resource.max");
  }
}

// The rungs at resource.min·η^k below resource.max, then max, number at most kMaxRungs: each is a
// decision point and a line of the sweep's status.
void CheckRungCount(const SweepSpec& spec, std::vector<std::string>* errors) {
  const int rungs = Rungs(spec.resource_min, spec.resource_max, spec.reduction_factor).size();
  if (rungs <= kMaxRungs) return;
  errors->push_back("spec.resource: " + NumberText(spec.resource_min) + " to " +
                    NumberText(spec.resource_max) + " with reductionFactor " +
                    std::to_string(spec.reduction_factor) + " makes " + std::to_string(rungs) +
                    " rungs; at most " + std::to_string(kMaxRungs) +
                    " are allowed (raise min or reductionFactor, or lower max)");
}

// Grid enumerates configurations: it cannot draw from a continuous range.
void CheckGridParams(const SweepSpec& spec, std::vector<std::string>* errors) {
  for (const ParamSpec& p : spec.search_space) {
    if (p.type == ParamType::kUniform || p.type == ParamType::kLogUniform) {
      errors->push_back("spec.searchSpace." + p.name +
                        ".type: the grid algorithm needs discrete parameters (choice, grid or "
                        "int)");
    }
  }
}

// The template's terminationGracePeriodSeconds, when it sets one.
void ParseGracePeriod(const json& pod, const std::string& path, std::vector<std::string>* errors,
                      SweepSpec* spec) {
  if (!pod.contains("terminationGracePeriodSeconds")) return;
  const json& g = pod.at("terminationGracePeriodSeconds");
  if (!g.is_number_integer() || g.get<int64_t>() < 0 || g.get<int64_t>() > kMaxGraceSeconds) {
    errors->push_back(path + ".spec.terminationGracePeriodSeconds: must be an integer from 0 to " +
                      std::to_string(kMaxGraceSeconds) + " (an hour), got " + ValueText(g));
  } else {
    spec->grace_seconds = static_cast<double>(g.get<int64_t>());
  }
}

// The list of strings at `key` of container `c`, when it has one.
void ParseStrings(const json& c, const std::string& c_path, const char* key,
                  std::vector<std::string>* errors, std::vector<std::string>* into) {
  if (!c.contains(key)) return;
  const json& list = c.at(key);
  if (!list.is_array()) {
    errors->push_back(c_path + "." + key + ": must be a list of strings");
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      errors->push_back(c_path + "." + key + "[" + std::to_string(i) + "]: must be a string");
    } else {
      into->push_back(list[i].get<std::string>());
    }
  }
}

// The container's env entries with a literal value; the API server checks the rest.
void ParseEnv(const json& c, TrialContainer* out) {
  if (!c.contains("env")) return;
  const json& env = c.at("env");
  for (size_t i = 0; env.is_array() && i < env.size(); ++i) {
    const json& e = env[i];
    if (e.is_object() && e.contains("name") && e.at("name").is_string() && e.contains("value") &&
        e.at("value").is_string()) {
      out->env.emplace_back(e.at("name").get<std::string>(), e.at("value").get<std::string>());
    }
  }
}

void ParseContainer(const json& tmpl, const std::string& path, std::vector<std::string>* errors,
                    SweepSpec* spec) {
  const json* pod = tmpl.contains("spec") ? &tmpl.at("spec") : nullptr;
  if (pod == nullptr || !pod->is_object()) {
    errors->push_back(path + ".spec: required (a PodSpec with at least one container)");
    return;
  }
  ParseGracePeriod(*pod, path, errors, spec);
  const std::string containers_path = path + ".spec.containers";
  if (!pod->contains("containers") || !pod->at("containers").is_array() ||
      pod->at("containers").empty()) {
    errors->push_back(containers_path + ": must list at least one container");
    return;
  }
  const json& c = pod->at("containers")[0];
  const std::string c_path = containers_path + "[0]";
  if (!c.is_object()) {
    errors->push_back(c_path + ": must be an object");
    return;
  }
  TrialContainer& out = spec->container;
  if (c.contains("name") && c.at("name").is_string()) out.name = c.at("name").get<std::string>();
  if (c.contains("image") && c.at("image").is_string()) {
    out.image = c.at("image").get<std::string>();
  }
  ParseStrings(c, c_path, "command", errors, &out.command);
  ParseStrings(c, c_path, "args", errors, &out.args);
  ParseEnv(c, &out);
}

// spec.metrics.collector.file: a path inside the trial's directory, and its lines' format.
void ParseCollectorFile(const json& file, std::vector<std::string>* errors, CollectorSpec* out) {
  FieldReader f(file, "spec.metrics.collector.file", errors);
  if (std::optional<std::string> path = f.String("path", true)) {
    const bool escapes = path->empty() || path->front() == '/' || *path == ".." ||
                         path->starts_with("../") || path->find("/../") != std::string::npos ||
                         path->ends_with("/..");
    if (escapes) {
      f.Error("path", "must be a relative path inside the trial's directory, without '..', got \"" +
                          *path + "\"");
    }
    out->file_path = *path;
  }
  out->file_format =
      ParseEnum<CollectorFormat>(
          f, "format", {{"TEXT", CollectorFormat::kText}, {"JSON", CollectorFormat::kJson}})
          .value_or(CollectorFormat::kText);
  f.Finish();
}

// A filter must compile and have two groups, the name and the value. Its length is bounded: the
// operator compiles it, and budgetsweep-collect runs it on every line.
void CheckFilter(FieldReader& c, const std::string& filter) {
  if (filter.size() > kMaxFilterBytes) {
    c.Error("filter", "must be at most " + std::to_string(kMaxFilterBytes) + " characters, got " +
                          std::to_string(filter.size()));
    return;
  }
  try {
    if (std::regex(filter, std::regex::ECMAScript).mark_count() < 2) {
      c.Error("filter", "needs two groups, the name and the value, got \"" + filter + "\"");
    }
  } catch (const std::regex_error& e) {
    c.Error("filter",
            "is not a regular expression (" + std::string(e.what()) + "): \"" + filter + "\"");
  }
}

// spec.metrics.collector: Katib's collector kinds, with a line format and how a line's resource
// is found.
void ParseCollector(const json& collector, std::vector<std::string>* errors, CollectorSpec* out) {
  FieldReader c(collector, "spec.metrics.collector", errors);
  out->kind = ParseEnum<CollectorKind>(c, "kind",
                                       {{"Prometheus", CollectorKind::kPrometheus},
                                        {"StdOut", CollectorKind::kStdOut},
                                        {"File", CollectorKind::kFile}})
                  .value_or(CollectorKind::kPrometheus);
  if (std::optional<std::string> filter = c.String("filter", false)) {
    CheckFilter(c, *filter);
    out->filter = *filter;
  }
  out->resource_key = c.String("resourceKey", false).value_or("");
  const json* file = c.Object("file", out->kind == CollectorKind::kFile);
  if (file != nullptr && out->kind != CollectorKind::kFile) c.Error("file", "only with kind File");
  if (file != nullptr) ParseCollectorFile(*file, errors, out);
  if (out->kind == CollectorKind::kPrometheus) {
    for (const char* key : {"filter", "resourceKey"}) {
      if (collector.contains(key)) c.Error(key, "only with kind StdOut or File");
    }
  }
  c.Finish();
}

const char* CollectorKindName(CollectorKind kind) {
  switch (kind) {
    case CollectorKind::kStdOut:
      return "StdOut";
    case CollectorKind::kFile:
      return "File";
    case CollectorKind::kPrometheus:
      break;
  }
  return "Prometheus";
}

// Every `${trialParameters.NAME}` in `text` must name a parameter of the search space.
void CheckPlaceholdersIn(const json& text, const std::string& path, const SweepSpec& spec,
                         std::vector<std::string>* errors) {
  if (!text.is_string()) return;
  bool malformed = false;
  for (const std::string& name : PlaceholderNames(text.get<std::string>(), &malformed)) {
    const bool known = std::any_of(spec.search_space.begin(), spec.search_space.end(),
                                   [&](const ParamSpec& p) { return p.name == name; });
    if (!known) {
      errors->push_back(path + ": ${trialParameters." + name +
                        "} names no parameter of spec.searchSpace");
    }
  }
  if (malformed) {
    errors->push_back(path + ": a placeholder must read ${trialParameters.NAME}, got \"" +
                      text.get<std::string>() + "\"");
  }
}

// The template's first container, or nullptr where ParseContainer found none.
const json* FirstContainer(const json& tmpl) {
  if (!tmpl.is_object() || !tmpl.contains("spec") || !tmpl.at("spec").is_object()) return nullptr;
  const json& pod = tmpl.at("spec");
  if (!pod.contains("containers") || !pod.at("containers").is_array()) return nullptr;
  const json& containers = pod.at("containers");
  return !containers.empty() && containers[0].is_object() ? &containers[0] : nullptr;
}

// The items of the list at `key` of `object`, or none where it is no list.
const json& ListAt(const json& object, const char* key) {
  static const json kNone = json::array();
  return object.contains(key) && object.at(key).is_array() ? object.at(key) : kNone;
}

// The placeholders of the template's first container: in command, args and env values.
void CheckPlaceholders(const SweepSpec& spec, std::vector<std::string>* errors) {
  const json* c = FirstContainer(spec.trial_template);
  if (c == nullptr) return;
  const std::string c_path = "spec.trial.template.spec.containers[0]";
  for (const char* key : {"command", "args"}) {
    const json& list = ListAt(*c, key);
    for (size_t i = 0; i < list.size(); ++i) {
      CheckPlaceholdersIn(list[i], c_path + "." + key + "[" + std::to_string(i) + "]", spec,
                          errors);
    }
  }
  const json& env = ListAt(*c, "env");
  for (size_t i = 0; i < env.size(); ++i) {
    if (!env[i].is_object() || !env[i].contains("value")) continue;
    CheckPlaceholdersIn(env[i].at("value"), c_path + ".env[" + std::to_string(i) + "].value", spec,
                        errors);
  }
}

// Reads a non-empty list of distinct integers in [lowest, highest] at `key`.
std::optional<std::vector<int>> IntegerList(FieldReader& f, const char* key, int lowest,
                                            int highest) {
  const json* list = f.Get(key);
  if (list == nullptr) return std::nullopt;
  if (!list->is_array() || list->empty()) {
    f.Error(key, "must be a non-empty list of integers");
    return std::nullopt;
  }
  if (!WithinMaxItems(f, key, *list, kMaxCandidateListItems)) return std::nullopt;
  std::vector<int> out;
  for (size_t i = 0; i < list->size(); ++i) {
    const json& v = (*list)[i];
    if (!v.is_number_integer() || v.get<int64_t>() < lowest || v.get<int64_t>() > highest) {
      f.ItemError(key, i,
                  "must be an integer between " + std::to_string(lowest) + " and " +
                      std::to_string(highest) + ", got " + ValueText(v));
    } else if (std::find(out.begin(), out.end(), v.get<int>()) != out.end()) {
      f.ItemError(key, i, "repeats " + v.dump());
    } else {
      out.push_back(v.get<int>());
    }
  }
  return out;
}

void ParsePrecisions(FieldReader& c, ThroughputSpec* out) {
  const json* precision = c.Get(kPrecisionFlag);
  if (precision == nullptr) return;
  static const std::set<std::string> kPrecisions = {"auto", "bf16", "fp16", "fp32"};
  if (!precision->is_array() || precision->empty()) {
    c.Error(kPrecisionFlag, "must be a non-empty list of auto, bf16, fp16, fp32");
    return;
  }
  for (size_t i = 0; i < precision->size(); ++i) {
    const json& v = (*precision)[i];
    if (!v.is_string() || !kPrecisions.contains(v.get<std::string>())) {
      c.ItemError(kPrecisionFlag, i, "must be one of auto, bf16, fp16, fp32, got " + v.dump());
    } else if (std::find(out->precision.begin(), out->precision.end(), v.get<std::string>()) !=
               out->precision.end()) {
      c.ItemError(kPrecisionFlag, i, "repeats " + v.dump());
    } else {
      out->precision.push_back(v.get<std::string>());
    }
  }
}

void ParseMicroBatches(FieldReader& c, std::vector<std::string>* errors, ThroughputSpec* out) {
  const json* splits = c.Get("microBatches");
  if (splits == nullptr) return;
  if (!splits->is_array() || splits->empty()) {
    c.Error("microBatches", "must be a non-empty list of {batchSize, accumulationSteps}");
    return;
  }
  if (!WithinMaxItems(c, "microBatches", *splits, kMaxCandidateListItems)) return;
  for (size_t i = 0; i < splits->size(); ++i) {
    const std::string path = c.PathOf("microBatches") + "[" + std::to_string(i) + "]";
    if (!(*splits)[i].is_object()) {
      c.ItemError("microBatches", i,
                  "must be an object, got " + FieldReader::Describe((*splits)[i]));
      continue;
    }
    FieldReader m((*splits)[i], path, errors);
    const std::optional<int64_t> batch = m.Integer("batchSize", true, 1, 1'000'000);
    const std::optional<int64_t> steps = m.Integer("accumulationSteps", false, 1, 4096);
    m.Finish();
    if (batch) out->micro_batches.push_back({*batch, static_cast<int>(steps.value_or(1))});
  }
}

void ParseCandidates(const json& body, std::vector<std::string>* errors, ThroughputSpec* out) {
  FieldReader c(body, "spec.throughput.candidates", errors);
  if (auto workers = IntegerList(c, kWorkersFlag, 0, 256)) out->workers = *workers;
  if (auto prefetch = IntegerList(c, kPrefetchFlag, 1, 1024)) out->prefetch = *prefetch;
  ParsePrecisions(c, out);
  ParseMicroBatches(c, errors, out);
  c.Finish();
}

// spec.throughput's own fields, and its candidates.
void ParseProbeSettings(const json& body, std::vector<std::string>* errors, ThroughputSpec* t) {
  FieldReader f(body, "spec.throughput", errors);
  t->enabled = f.Bool("enabled").value_or(false);
  if (std::optional<double> target = f.Number("targetUtilization", false)) {
    if (*target <= 0 || *target > 1) {
      f.Error("targetUtilization",
              "must be in (0, 1], got " + ValueText(body.at("targetUtilization")));
    }
    t->target_utilization = *target;
  }
  if (std::optional<int64_t> steps = f.Integer("probeSteps", false, 1, 100'000)) {
    t->probe_steps = static_cast<int>(*steps);
  }
  if (std::optional<double> fraction = f.Number("maxBudgetFraction", false)) {
    if (*fraction <= 0 || *fraction >= 1) {
      f.Error("maxBudgetFraction",
              "must be in (0, 1), got " + ValueText(body.at("maxBudgetFraction")));
    }
    t->max_budget_fraction = *fraction;
  }
  t->stop_below_target =
      ParseEnum<bool>(f, "onBelowTarget", {{"continue", false}, {"stop", true}}).value_or(false);
  if (const json* candidates = f.Object("candidates", false)) {
    ParseCandidates(*candidates, errors, t);
  }
  f.Finish();
}

void CheckCandidateCount(const ThroughputSpec& t, std::vector<std::string>* errors) {
  size_t count = std::max<size_t>(1, t.workers.size()) * std::max<size_t>(1, t.prefetch.size()) *
                 std::max<size_t>(1, t.precision.size()) *
                 std::max<size_t>(1, t.micro_batches.size());
  if (count > kMaxProbeCandidates) {
    errors->push_back("spec.throughput.candidates: " + std::to_string(count) +
                      " combinations; at most " + std::to_string(kMaxProbeCandidates) +
                      " can be probed");
  }
}

// A flag is either probed once for the whole sweep or searched per trial, never both.
void CheckProbedOrSearched(const SweepSpec& spec, std::vector<std::string>* errors) {
  const ThroughputSpec& t = spec.throughput;
  std::vector<std::pair<std::string, bool>> probed = {
      {kWorkersFlag, !t.workers.empty()},
      {kPrefetchFlag, !t.prefetch.empty()},
      {kPrecisionFlag, !t.precision.empty()},
      {kBatchSizeFlag, !t.micro_batches.empty()},
      {kAccumulationFlag, !t.micro_batches.empty()}};
  for (const auto& [flag, used] : probed) {
    bool searched = std::any_of(spec.search_space.begin(), spec.search_space.end(),
                                [&](const ParamSpec& p) { return p.name == flag; });
    if (used && searched && t.enabled) {
      bool split = flag == kBatchSizeFlag || flag == kAccumulationFlag;
      errors->push_back("spec.throughput.candidates." + std::string(split ? "microBatches" : flag) +
                        ": spec.searchSpace." + flag + " also sets --" + flag +
                        "; probe it or search it, not both");
    }
  }
}

}  // namespace

void ParseBudget(const json& budget, std::vector<std::string>* errors, SweepSpec* spec) {
  FieldReader b(budget, "spec.budget", errors);
  // Without its own gpuHours a pooled sweep is capped by the pool's (BindPool).
  bool pooled = budget.contains("poolRef");
  if (std::optional<double> h =
          b.Positive("gpuHours", false, kMaxGpuHours, "the largest budget a sweep may have")) {
    spec->budget_gpu_hours = *h;
  } else if (!pooled && !b.Has("gpuHours")) {
    b.Error("gpuHours", "required unless poolRef names a BudgetPool");
  }
  if (const json* ref = b.Object("poolRef", false)) ParsePoolRef(*ref, errors, spec);
  b.Finish();
}

void ParseObjective(const json& objective, std::vector<std::string>* errors, SweepSpec* spec) {
  FieldReader o(objective, "spec.objective", errors);
  if (std::optional<std::string> m = o.String("metric", true)) {
    if (m->empty()) o.Error("metric", "must not be empty");
    spec->objective_metric = *m;
  }
  spec->goal =
      ParseEnum<Goal>(o, "goal", {{"maximize", Goal::kMaximize}, {"minimize", Goal::kMinimize}})
          .value_or(Goal::kMaximize);
  o.Finish();
}

bool ParseResource(const json& resource, std::vector<std::string>* errors, SweepSpec* spec) {
  FieldReader r(resource, "spec.resource", errors);
  spec->resource_unit = r.String("unit", false).value_or("epochs");
  const std::string largest = "the largest resource a trial may train for";
  // Without min (random and grid only, CheckResourceMin), the one rung is max.
  std::optional<double> max = r.Positive("max", true, kMaxResource, largest);
  std::optional<double> min = r.Has("min") ? r.Positive("min", true, kMaxResource, largest) : max;
  if (r.Has("min") && min && max && *max <= *min) {
    r.Error("max",
            "must be greater than spec.resource.min (" + ValueText(resource.at("min")) + ")");
  }
  spec->resource_min = min.value_or(1);
  spec->resource_max = max.value_or(1);
  std::optional<int64_t> eta = r.Integer("reductionFactor", false, 2, kMaxReductionFactor);
  if (eta) spec->reduction_factor = static_cast<int>(*eta);
  const bool rungs_known = min && max && *min > 0 && (*max > *min || !r.Has("min")) &&
                           *max <= kMaxResource && (eta || !r.Has("reductionFactor"));
  r.Finish();
  return rungs_known;
}

void ParseScheduler(const json& scheduler, std::vector<std::string>* errors, SweepSpec* spec) {
  FieldReader s(scheduler, "spec.scheduler", errors);
  spec->algorithm = ParseEnum<Algorithm>(s, "algorithm",
                                         {{"asha", Algorithm::kAsha},
                                          {"hyperband", Algorithm::kHyperband},
                                          {"random", Algorithm::kRandom},
                                          {"grid", Algorithm::kGrid},
                                          {"pbt", Algorithm::kPbt},
                                          {"pb2", Algorithm::kPb2}})
                        .value_or(Algorithm::kAsha);
  spec->mode =
      ParseEnum<AshaMode>(s, "mode", {{"stop", AshaMode::kStop}, {"pause", AshaMode::kPause}})
          .value_or(AshaMode::kStop);
  spec->sampler =
      ParseEnum<Sampler>(s, "sampler", {{"random", Sampler::kRandom}, {"tpe", Sampler::kTpe}})
          .value_or(Sampler::kRandom);
  // Grid enumerates every configuration: there is nothing left for a sampler to choose.
  if (spec->sampler == Sampler::kTpe && spec->algorithm == Algorithm::kGrid) {
    s.Error("sampler", "tpe cannot be used with algorithm grid");
  }
  ParsePerturbationInterval(s, scheduler, spec);
  if (std::optional<int64_t> seed = s.Integer("seed", false, 0, kMaxExactInteger)) {
    spec->seed = static_cast<uint64_t>(*seed);
  }
  s.Finish();
}

void ParseTrialCounts(FieldReader& spec_fields, SweepSpec* spec) {
  spec->parallelism = CountField(spec_fields, "parallelism", 1).value_or(1);
  spec->max_trials = CountField(spec_fields, "maxTrials", 1);
  spec->max_failed_trials = CountField(spec_fields, "maxFailedTrials", 1).value_or(3);
}

void ParseSearchSpace(const json& space, std::vector<std::string>* errors, SweepSpec* spec) {
  if (space.empty()) {
    errors->push_back("spec.searchSpace: must define at least one parameter");
  }
  if (space.size() > kMaxSearchSpaceParameters) {
    errors->push_back("spec.searchSpace: must define at most " +
                      std::to_string(kMaxSearchSpaceParameters) + " parameters, got " +
                      std::to_string(space.size()));
  }
  for (const auto& [name, param] : space.items()) {
    ParseParam(name, param, "spec.searchSpace." + name, errors, spec);
  }
}

void CheckAlgorithm(bool rungs_known, std::vector<std::string>* errors, SweepSpec* spec) {
  if (spec->algorithm == Algorithm::kGrid) CheckGridParams(*spec, errors);
  if (Population(spec->algorithm)) {
    CheckPopulation(*spec, errors);
    if (spec->perturbation_interval == 0) spec->perturbation_interval = spec->resource_min;
  } else if (rungs_known) {
    CheckRungCount(*spec, errors);
  }
}

void ParseTrial(const json& trial, std::vector<std::string>* errors, SweepSpec* spec) {
  FieldReader t(trial, "spec.trial", errors);
  if (std::optional<bool> checkpointing = t.Bool("checkpointing")) {
    spec->checkpointing = *checkpointing;
  }
  if (std::optional<int> gpus = CountField(t, "gpus", 0)) spec->trial_gpus = *gpus;
  if (std::optional<int> retries = CountField(t, "maxRetries", 0)) spec->max_retries = *retries;
  if (const json* tmpl = t.Object("template", true)) {
    spec->trial_template = *tmpl;
    ParseContainer(*tmpl, "spec.trial.template", errors, spec);
    CheckTemplatePolicy(*tmpl, "spec.trial.template", errors);
  }
  t.Finish();
}

void ParseMetrics(const json& metrics, std::vector<std::string>* errors, SweepSpec* spec) {
  FieldReader m(metrics, "spec.metrics", errors);
  if (const json* collector = m.Object("collector", false)) {
    ParseCollector(*collector, errors, &spec->collector);
  }
  if (const json* prom = m.Object("prometheus", false)) {
    FieldReader p(*prom, "spec.metrics.prometheus", errors);
    spec->prometheus_url = p.String("url", true).value_or("");
    p.Finish();
  }
  if (std::optional<double> t =
          m.Positive("missingTimeoutSeconds", false, kMaxMissingTimeoutSeconds, "a week")) {
    spec->metrics_missing_timeout_seconds = *t;
  }
  m.Finish();
}

void ParseThroughput(const json& throughput, std::vector<std::string>* errors, SweepSpec* spec) {
  ParseProbeSettings(throughput, errors, &spec->throughput);
  CheckCandidateCount(spec->throughput, errors);
  CheckProbedOrSearched(*spec, errors);
}

void CheckTrainerNeeds(const json& trial, std::vector<std::string>* errors, SweepSpec* spec) {
  const bool wrapped = spec->collector.kind != CollectorKind::kPrometheus;
  const std::string kind = CollectorKindName(spec->collector.kind);
  if (!trial.contains("checkpointing")) spec->checkpointing = !wrapped;
  if (!spec->checkpointing) {
    const std::string why =
        " needs a trainer that checkpoints, and spec.trial.checkpointing is false" +
        std::string(trial.contains("checkpointing") ? ""
                                                    : " (the default for collector " + kind + ")");
    if (Population(spec->algorithm)) {
      errors->push_back("spec.scheduler.algorithm: " + std::string(AlgorithmName(spec->algorithm)) +
                        why);
    } else if (EarlyStopping(spec->algorithm) && spec->mode == AshaMode::kPause) {
      errors->push_back("spec.scheduler.mode: pause" + why);
    }
  }
  if (wrapped && spec->throughput.enabled) {
    errors->push_back(
        "spec.throughput.enabled: the probe needs samples/s and the data-wait ratio, which only "
        "a trainer serving the Prometheus contract reports, and spec.metrics.collector.kind is " +
        kind);
  }
  if (wrapped && spec->container.command.empty()) {
    errors->push_back(
        "spec.trial.template.spec.containers[0].command: required with "
        "spec.metrics.collector.kind " +
        kind +
        ": budgetsweep-collect runs it, and the image's ENTRYPOINT is unknown to "
        "the operator");
  }
  CheckPlaceholders(*spec, errors);
  std::vector<std::string> texts = spec->container.command;
  texts.insert(texts.end(), spec->container.args.begin(), spec->container.args.end());
  for (const auto& [name, value] : spec->container.env) texts.push_back(value);
  if (spec->throughput.enabled && !PlacedNames(texts).empty()) {
    errors->push_back(
        "spec.throughput.enabled: probe runs get no trial parameters, and the template places "
        "some itself (${trialParameters.NAME}); pass them as flags instead");
  }
}

void CheckResourceMin(const json& resource, std::vector<std::string>* errors,
                      const SweepSpec& spec) {
  const bool full_runs = spec.algorithm == Algorithm::kRandom || spec.algorithm == Algorithm::kGrid;
  if (!full_runs && !resource.contains("min")) {
    errors->push_back("spec.resource.min: required with algorithm " +
                      std::string(AlgorithmName(spec.algorithm)) +
                      " (only random and grid, which run every trial to max, may leave it out)");
  }
}

}  // namespace bsw
