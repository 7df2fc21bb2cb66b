#include "operator/core/api.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <regex>
#include <set>
#include <sstream>

#include "operator/core/asha.h"
#include "operator/core/rfc3339.h"
#include "operator/core/template_policy.h"

namespace bsw {
namespace {

using nlohmann::json;

// A number as messages write it: an integer below ten million in full, any other number in the
// shortest form that reads back the same (0.25, 1e+15, 1.7e+308).
std::string NumberText(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e7) return std::to_string(static_cast<int64_t>(v));
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, v);
  return ec == std::errc() ? std::string(text, end) : std::to_string(v);
}

// A value as messages write it: numbers as NumberText does, anything else as JSON.
std::string ValueText(const json& v) {
  if (v.is_number_float()) return NumberText(v.get<double>());
  return v.dump();
}

// Walks one JSON object, collecting every problem with its field path instead of stopping at the
// first. Each accessor marks its key as known; Finish() reports the keys nobody asked for.
class Fields {
 public:
  Fields(const json& object, std::string path, std::vector<std::string>* errors)
      : object_(object), path_(std::move(path)), errors_(errors) {}

  std::string PathOf(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }
  void Error(const std::string& key, const std::string& message) const {
    errors_->push_back(PathOf(key) + ": " + message);
  }
  // An error about item `index` of the list at `key`.
  void ItemError(const std::string& key, size_t index, const std::string& message) const {
    errors_->push_back(PathOf(key) + "[" + std::to_string(index) + "]: " + message);
  }
  bool Has(const std::string& key) {
    known_.insert(key);
    return object_.contains(key) && !object_.at(key).is_null();
  }
  const json* Get(const std::string& key) { return Has(key) ? &object_.at(key) : nullptr; }

  std::optional<std::string> String(const std::string& key, bool required) {
    const json* v = Get(key);
    if (v == nullptr) {
      if (required) Error(key, "required");
      return std::nullopt;
    }
    if (!v->is_string()) {
      Error(key, "must be a string, got " + Describe(*v));
      return std::nullopt;
    }
    return v->get<std::string>();
  }

  std::optional<double> Number(const std::string& key, bool required) {
    const json* v = Get(key);
    if (v == nullptr) {
      if (required) Error(key, "required");
      return std::nullopt;
    }
    if (!v->is_number()) {
      Error(key, "must be a number, got " + Describe(*v));
      return std::nullopt;
    }
    const double d = v->get<double>();
    if (std::isnan(d)) {
      Error(key, "must be a number, got .nan");
      return std::nullopt;
    }
    if (std::isinf(d)) {
      Error(key, "out of range: must be a finite number, got " + std::string(d < 0 ? "-" : "") +
                     "infinity (.inf, or a number beyond 1.8e+308)");
      return std::nullopt;
    }
    return d;
  }

  // A number in (0, highest]; `limit` says what the highest value is the limit of.
  std::optional<double> Positive(const std::string& key, bool required, double highest,
                                 const std::string& limit) {
    std::optional<double> d = Number(key, required);
    if (!d) return std::nullopt;
    if (*d <= 0) Error(key, "must be greater than 0, got " + ValueText(object_.at(key)));
    if (*d > highest) {
      Error(key, "out of range: must be at most " + NumberText(highest) + " (" + limit + "), got " +
                     ValueText(object_.at(key)));
    }
    return d;
  }

  // An integer in [lowest, highest].
  std::optional<int64_t> Integer(const std::string& key, bool required,
                                 int64_t lowest = -kMaxExactInteger,
                                 int64_t highest = kMaxExactInteger) {
    std::optional<double> d = Number(key, required);
    if (!d) return std::nullopt;
    const std::string got = ValueText(object_.at(key));
    if (std::floor(*d) != *d) {
      Error(key, "must be an integer, got " + got);
      return std::nullopt;
    }
    if (*d < static_cast<double>(lowest) || *d > static_cast<double>(highest)) {
      std::string range = "between " + std::to_string(lowest) + " and " + std::to_string(highest);
      if (highest == kMaxExactInteger && lowest != -kMaxExactInteger) {
        range = "at least " + std::to_string(lowest);
      }
      Error(key, (std::fabs(*d) > kMaxExactInteger ? "out of range: must be " : "must be ") +
                     range + ", got " + got);
      return std::nullopt;
    }
    return static_cast<int64_t>(*d);
  }

  std::optional<bool> Bool(const std::string& key) {
    const json* v = Get(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_boolean()) {
      Error(key, "must be true or false, got " + Describe(*v));
      return std::nullopt;
    }
    return v->get<bool>();
  }

  // Returns the nested object at `key`, or nullptr (with an error if it is required or no object).
  const json* Object(const std::string& key, bool required) {
    const json* v = Get(key);
    if (v == nullptr) {
      if (required) Error(key, "required");
      return nullptr;
    }
    if (!v->is_object()) {
      Error(key, "must be an object, got " + Describe(*v));
      return nullptr;
    }
    return v;
  }

  // Reports every key that no accessor asked for.
  void Finish() const {
    for (const auto& [key, value] : object_.items()) {
      if (!known_.contains(key)) Error(key, "unknown field");
    }
  }

  static std::string Describe(const json& v) {
    std::string text = ValueText(v);
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return std::string(v.type_name()) + " " + text;
  }

 private:
  const json& object_;
  std::string path_;
  std::vector<std::string>* errors_;
  std::set<std::string> known_;
};

template <typename Enum>
std::optional<Enum> ParseEnum(Fields& f, const std::string& key,
                              const std::vector<std::pair<std::string, Enum>>& names) {
  std::optional<std::string> s = f.String(key, false);
  if (!s) return std::nullopt;
  std::string allowed;
  for (const auto& [name, value] : names) {
    if (*s == name) return value;
    allowed += (allowed.empty() ? "" : ", ") + name;
  }
  f.Error(key, "must be one of " + allowed + ", got \"" + *s + "\"");
  return std::nullopt;
}

// Limits the CRD sets (maxProperties, maxItems) to keep its CEL rules within the API server's
// cost budget; the validator holds files to the same.
constexpr size_t kMaxSearchSpaceParameters = 64;
constexpr size_t kMaxParameterValues = 1024;
constexpr size_t kMaxCandidateListItems = 64;

// Whether the list at `key` is within `max_items`; reports it when it is not.
bool WithinMaxItems(Fields& f, const std::string& key, const json& list, size_t max_items) {
  if (list.size() <= max_items) return true;
  f.Error(key, "must list at most " + std::to_string(max_items) + " items, got " +
                   std::to_string(list.size()));
  return false;
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
    errors->push_back(path + ": must be an object, got " + Fields::Describe(body));
    return;
  }
  Fields f(body, path, errors);
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
    const json* values = f.Get("values");
    if (values == nullptr) {
      f.Error("values", "required for type " + body.at("type").get<std::string>());
    } else if (!values->is_array() || values->empty()) {
      f.Error("values", "must be a non-empty list");
    } else if (WithinMaxItems(f, "values", *values, kMaxParameterValues)) {
      for (size_t i = 0; i < values->size(); ++i) {
        const json& v = (*values)[i];
        if (!v.is_number() && !v.is_string() && !v.is_boolean()) {
          errors->push_back(f.PathOf("values") + "[" + std::to_string(i) +
                            "]: must be a number, string or boolean");
        }
        param.values.push_back(v);
      }
    }
  } else {
    bool is_int = *type == ParamType::kInt;
    // Reads a bound; returns false when it is missing or of the wrong type (already reported).
    auto bound = [&](const char* key, double* out) {
      if (is_int) {
        std::optional<int64_t> v = f.Integer(key, true);
        if (v) *out = static_cast<double>(*v);
        return v.has_value();
      }
      std::optional<double> v = f.Number(key, true);
      if (v) *out = *v;
      return v.has_value();
    };
    bool has_min = bound("min", &param.min);
    bool has_max = bound("max", &param.max);
    if (is_int) param.log = f.Bool("log").value_or(false);
    if (has_min && has_max && param.min >= param.max) {
      f.Error("max",
              "must be greater than " + f.PathOf("min") + " (" + ValueText(body.at("min")) + ")");
    } else if (has_min && has_max && std::isinf(param.max - param.min)) {
      f.Error("max", "out of range: max - min must be a finite number, got " +
                         ValueText(body.at("max")) + " - " + ValueText(body.at("min")));
    }
    bool log_scale = *type == ParamType::kLogUniform || param.log;
    if (has_min && log_scale && param.min <= 0) {
      f.Error("min", "must be greater than 0 on a log scale, got " + ValueText(body.at("min")));
    }
  }
  param.mutable_ = f.Bool("mutable").value_or(false);
  if (param.mutable_) {
    const std::string algorithm = AlgorithmName(spec->algorithm);
    if (!Population(spec->algorithm)) {
      f.Error("mutable",
              "only algorithms pbt and pb2 change a parameter during a trial; the "
              "algorithm is " +
                  algorithm);
    } else if (*type == ParamType::kGrid) {
      f.Error("mutable", "a grid parameter is enumerated, one value per trial; use choice");
    } else if (*type == ParamType::kChoice && spec->algorithm == Algorithm::kPb2) {
      f.Error("mutable",
              "pb2 chooses mutable values in numeric bounds: use uniform, logUniform "
              "or int (or algorithm pbt)");
    }
  }
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

void ParseContainer(const json& tmpl, const std::string& path, std::vector<std::string>* errors,
                    SweepSpec* spec) {
  const json* pod = tmpl.contains("spec") ? &tmpl.at("spec") : nullptr;
  if (pod == nullptr || !pod->is_object()) {
    errors->push_back(path + ".spec: required (a PodSpec with at least one container)");
    return;
  }
  if (pod->contains("terminationGracePeriodSeconds")) {
    const json& g = pod->at("terminationGracePeriodSeconds");
    if (!g.is_number_integer() || g.get<int64_t>() < 0 || g.get<int64_t>() > kMaxGraceSeconds) {
      errors->push_back(path +
                        ".spec.terminationGracePeriodSeconds: must be an integer from 0 to " +
                        std::to_string(kMaxGraceSeconds) + " (an hour), got " + ValueText(g));
    } else {
      spec->grace_seconds = static_cast<double>(g.get<int64_t>());
    }
  }
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
  auto strings = [&](const char* key, std::vector<std::string>* into) {
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
  };
  if (c.contains("name") && c.at("name").is_string()) out.name = c.at("name").get<std::string>();
  if (c.contains("image") && c.at("image").is_string()) {
    out.image = c.at("image").get<std::string>();
  }
  strings("command", &out.command);
  strings("args", &out.args);
  if (c.contains("env")) {
    const json& env = c.at("env");
    for (size_t i = 0; env.is_array() && i < env.size(); ++i) {
      const json& e = env[i];
      if (e.is_object() && e.contains("name") && e.at("name").is_string() && e.contains("value") &&
          e.at("value").is_string()) {
        out.env.emplace_back(e.at("name").get<std::string>(), e.at("value").get<std::string>());
      }
    }
  }
}

// The trainer flags the probe phase sets, by candidate list.
constexpr const char* kWorkersFlag = "workers";
constexpr const char* kPrefetchFlag = "prefetch";
constexpr const char* kPrecisionFlag = "precision";
constexpr const char* kBatchSizeFlag = "batch-size";
constexpr const char* kAccumulationFlag = "accumulation-steps";
constexpr size_t kMaxProbeCandidates = 64;

// Reads a non-empty list of distinct integers in [lowest, highest] at `key`.
std::optional<std::vector<int>> IntegerList(Fields& f, const char* key, int lowest, int highest) {
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

void ParseCandidates(const json& body, std::vector<std::string>* errors, ThroughputSpec* out) {
  Fields c(body, "spec.throughput.candidates", errors);
  if (auto workers = IntegerList(c, kWorkersFlag, 0, 256)) out->workers = *workers;
  if (auto prefetch = IntegerList(c, kPrefetchFlag, 1, 1024)) out->prefetch = *prefetch;
  if (const json* precision = c.Get(kPrecisionFlag)) {
    static const std::set<std::string> kPrecisions = {"auto", "bf16", "fp16", "fp32"};
    if (!precision->is_array() || precision->empty()) {
      c.Error(kPrecisionFlag, "must be a non-empty list of auto, bf16, fp16, fp32");
    } else {
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
  }
  if (const json* splits = c.Get("microBatches")) {
    if (!splits->is_array() || splits->empty()) {
      c.Error("microBatches", "must be a non-empty list of {batchSize, accumulationSteps}");
    } else if (WithinMaxItems(c, "microBatches", *splits, kMaxCandidateListItems)) {
      for (size_t i = 0; i < splits->size(); ++i) {
        const std::string path = c.PathOf("microBatches") + "[" + std::to_string(i) + "]";
        if (!(*splits)[i].is_object()) {
          c.ItemError("microBatches", i,
                      "must be an object, got " + Fields::Describe((*splits)[i]));
          continue;
        }
        Fields m((*splits)[i], path, errors);
        const std::optional<int64_t> batch = m.Integer("batchSize", true, 1, 1'000'000);
        const std::optional<int64_t> steps = m.Integer("accumulationSteps", false, 1, 4096);
        m.Finish();
        if (batch) out->micro_batches.push_back({*batch, static_cast<int>(steps.value_or(1))});
      }
    }
  }
  c.Finish();
}

void ParseThroughput(const json& body, std::vector<std::string>* errors, SweepSpec* spec) {
  Fields f(body, "spec.throughput", errors);
  ThroughputSpec& t = spec->throughput;
  t.enabled = f.Bool("enabled").value_or(false);
  if (std::optional<double> target = f.Number("targetUtilization", false)) {
    if (*target <= 0 || *target > 1) {
      f.Error("targetUtilization",
              "must be in (0, 1], got " + ValueText(body.at("targetUtilization")));
    }
    t.target_utilization = *target;
  }
  if (std::optional<int64_t> steps = f.Integer("probeSteps", false, 1, 100'000)) {
    t.probe_steps = static_cast<int>(*steps);
  }
  if (std::optional<double> fraction = f.Number("maxBudgetFraction", false)) {
    if (*fraction <= 0 || *fraction >= 1) {
      f.Error("maxBudgetFraction",
              "must be in (0, 1), got " + ValueText(body.at("maxBudgetFraction")));
    }
    t.max_budget_fraction = *fraction;
  }
  t.stop_below_target =
      ParseEnum<bool>(f, "onBelowTarget", {{"continue", false}, {"stop", true}}).value_or(false);
  if (const json* candidates = f.Object("candidates", false)) {
    ParseCandidates(*candidates, errors, &t);
  }
  f.Finish();

  size_t count = std::max<size_t>(1, t.workers.size()) * std::max<size_t>(1, t.prefetch.size()) *
                 std::max<size_t>(1, t.precision.size()) *
                 std::max<size_t>(1, t.micro_batches.size());
  if (count > kMaxProbeCandidates) {
    errors->push_back("spec.throughput.candidates: " + std::to_string(count) +
                      " combinations; at most " + std::to_string(kMaxProbeCandidates) +
                      " can be probed");
  }
  // A flag is either probed once for the whole sweep or searched per trial, never both.
  std::vector<std::pair<std::string, bool>> probed = {
      {kWorkersFlag, !t.workers.empty()},
      {kPrefetchFlag, !t.prefetch.empty()},
      {kPrecisionFlag, !t.precision.empty()},
      {kBatchSizeFlag, !t.micro_batches.empty()},
      {kAccumulationFlag, !t.micro_batches.empty()}};
  for (const auto& [flag, used] : probed) {
    bool searched = std::any_of(spec->search_space.begin(), spec->search_space.end(),
                                [&](const ParamSpec& p) { return p.name == flag; });
    if (used && searched && t.enabled) {
      bool split = flag == kBatchSizeFlag || flag == kAccumulationFlag;
      errors->push_back("spec.throughput.candidates." + std::string(split ? "microBatches" : flag) +
                        ": spec.searchSpace." + flag + " also sets --" + flag +
                        "; probe it or search it, not both");
    }
  }
}

// Server-populated and descriptive metadata is accepted as it is.
void AcceptServerMetadata(Fields& m) {
  for (const char* key : {"uid", "resourceVersion", "creationTimestamp", "labels", "annotations",
                          "finalizers", "managedFields", "deletionTimestamp",
                          "deletionGracePeriodSeconds", "ownerReferences", "generateName"}) {
    m.Has(key);
  }
}

void ParseSpec(const json& body, std::vector<std::string>* errors, SweepSpec* spec) {
  Fields f(body, "spec", errors);

  if (const json* budget = f.Object("budget", true)) {
    Fields b(*budget, "spec.budget", errors);
    // Without its own gpuHours a pooled sweep is capped by the pool's (BindPool).
    bool pooled = budget->is_object() && budget->contains("poolRef");
    if (std::optional<double> h =
            b.Positive("gpuHours", false, kMaxGpuHours, "the largest budget a sweep may have")) {
      spec->budget_gpu_hours = *h;
    } else if (!pooled && !b.Has("gpuHours")) {
      b.Error("gpuHours", "required unless poolRef names a BudgetPool");
    }
    if (const json* ref = b.Object("poolRef", false)) {
      Fields r(*ref, "spec.budget.poolRef", errors);
      if (std::optional<std::string> name = r.String("name", true)) {
        if (!IsDnsLabel(*name, 253)) r.Error("name", "must be a BudgetPool's name");
        spec->pool_name = *name;
      }
      r.Finish();
    }
    b.Finish();
  }

  if (const json* objective = f.Object("objective", true)) {
    Fields o(*objective, "spec.objective", errors);
    if (std::optional<std::string> m = o.String("metric", true)) {
      if (m->empty()) o.Error("metric", "must not be empty");
      spec->objective_metric = *m;
    }
    spec->goal =
        ParseEnum<Goal>(o, "goal", {{"maximize", Goal::kMaximize}, {"minimize", Goal::kMinimize}})
            .value_or(Goal::kMaximize);
    o.Finish();
  }

  bool rungs_known = false;  // resource.min, max and reductionFactor are valid
  if (const json* resource = f.Object("resource", true)) {
    Fields r(*resource, "spec.resource", errors);
    spec->resource_unit = r.String("unit", false).value_or("epochs");
    const std::string largest = "the largest resource a trial may train for";
    std::optional<double> min = r.Positive("min", true, kMaxResource, largest);
    std::optional<double> max = r.Positive("max", true, kMaxResource, largest);
    if (min && max && *max <= *min) {
      r.Error("max",
              "must be greater than spec.resource.min (" + ValueText(resource->at("min")) + ")");
    }
    spec->resource_min = min.value_or(1);
    spec->resource_max = max.value_or(1);
    std::optional<int64_t> eta = r.Integer("reductionFactor", false, 2, kMaxReductionFactor);
    if (eta) spec->reduction_factor = static_cast<int>(*eta);
    rungs_known = min && max && *min > 0 && *max > *min && *max <= kMaxResource &&
                  (eta || !r.Has("reductionFactor"));
    r.Finish();
  }

  if (const json* scheduler = f.Object("scheduler", false)) {
    Fields s(*scheduler, "spec.scheduler", errors);
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
    if (std::optional<double> interval = s.Number("perturbationInterval", false)) {
      if (!Population(spec->algorithm)) {
        s.Error("perturbationInterval", "only for algorithms pbt and pb2");
      } else if (*interval <= 0 || *interval >= spec->resource_max) {
        s.Error("perturbationInterval",
                "must be greater than 0 and less than spec.resource.max, got " +
                    ValueText(scheduler->at("perturbationInterval")));
      } else if (spec->resource_max / *interval > kMaxPopulationIntervals) {
        s.Error("perturbationInterval", "at most " + std::to_string(kMaxPopulationIntervals) +
                                            " intervals may fit in spec.resource.max");
      } else {
        spec->perturbation_interval = *interval;
      }
    }
    if (std::optional<int64_t> seed = s.Integer("seed", false, 0, kMaxExactInteger)) {
      spec->seed = static_cast<uint64_t>(*seed);
    }
    s.Finish();
  }

  auto positive_int = [&](Fields& fields, const char* key, int64_t lowest) -> std::optional<int> {
    std::optional<int64_t> v = fields.Integer(key, false, lowest, 10'000'000);
    if (!v) return std::nullopt;
    return static_cast<int>(*v);
  };
  spec->parallelism = positive_int(f, "parallelism", 1).value_or(1);
  spec->max_trials = positive_int(f, "maxTrials", 1);
  spec->max_failed_trials = positive_int(f, "maxFailedTrials", 1).value_or(3);

  if (const json* space = f.Object("searchSpace", true)) {
    if (space->empty()) {
      errors->push_back("spec.searchSpace: must define at least one parameter");
    }
    if (space->size() > kMaxSearchSpaceParameters) {
      errors->push_back("spec.searchSpace: must define at most " +
                        std::to_string(kMaxSearchSpaceParameters) + " parameters, got " +
                        std::to_string(space->size()));
    }
    for (const auto& [name, param] : space->items()) {
      ParseParam(name, param, "spec.searchSpace." + name, errors, spec);
    }
  }
  if (spec->algorithm == Algorithm::kGrid) {
    for (const ParamSpec& p : spec->search_space) {
      if (p.type == ParamType::kUniform || p.type == ParamType::kLogUniform) {
        errors->push_back("spec.searchSpace." + p.name +
                          ".type: the grid algorithm needs discrete parameters (choice, grid or "
                          "int)");
      }
    }
  }

  if (Population(spec->algorithm)) {
    CheckPopulation(*spec, errors);
    if (spec->perturbation_interval == 0) spec->perturbation_interval = spec->resource_min;
  } else if (rungs_known) {
    CheckRungCount(*spec, errors);
  }

  if (const json* trial = f.Object("trial", true)) {
    Fields t(*trial, "spec.trial", errors);
    if (std::optional<int> gpus = positive_int(t, "gpus", 0)) spec->trial_gpus = *gpus;
    if (std::optional<int> retries = positive_int(t, "maxRetries", 0)) spec->max_retries = *retries;
    if (const json* tmpl = t.Object("template", true)) {
      spec->trial_template = *tmpl;
      ParseContainer(*tmpl, "spec.trial.template", errors, spec);
      CheckTemplatePolicy(*tmpl, "spec.trial.template", errors);
    }
    t.Finish();
  }

  if (const json* metrics = f.Object("metrics", false)) {
    Fields m(*metrics, "spec.metrics", errors);
    if (const json* prom = m.Object("prometheus", false)) {
      Fields p(*prom, "spec.metrics.prometheus", errors);
      spec->prometheus_url = p.String("url", true).value_or("");
      p.Finish();
    }
    if (std::optional<double> t =
            m.Positive("missingTimeoutSeconds", false, kMaxMissingTimeoutSeconds, "a week")) {
      spec->metrics_missing_timeout_seconds = *t;
    }
    m.Finish();
  }
  // After searchSpace: the probe phase checks its flags against the searched ones.
  if (const json* throughput = f.Object("throughput", false)) {
    ParseThroughput(*throughput, errors, spec);
  }
  f.Finish();
}

// The apiVersion and kind of a top-level object, which must be kApiVersion and `kind`.
void CheckTypeMeta(Fields& top, const char* kind) {
  std::optional<std::string> api_version = top.String("apiVersion", true);
  if (api_version && *api_version != kApiVersion) {
    top.Error("apiVersion",
              std::string("must be ") + kApiVersion + ", got \"" + *api_version + "\"");
  }
  std::optional<std::string> found = top.String("kind", true);
  if (found && *found != kind) top.Error("kind", std::string("must be ") + kind);
}

// OK, or InvalidArgument listing `errors` one per line.
Status ErrorsStatus(const std::vector<std::string>& errors) {
  if (errors.empty()) return OkStatus();
  std::ostringstream out;
  for (size_t i = 0; i < errors.size(); ++i) out << (i ? "\n" : "") << errors[i];
  return InvalidArgumentError(out.str());
}

}  // namespace

StatusOr<SweepSpec> ParseSweep(const nlohmann::json& object) {
  std::vector<std::string> errors;
  SweepSpec spec;
  if (!object.is_object()) {
    return InvalidArgumentError("(document): must be a BudgetSweep object, got " +
                                Fields::Describe(object));
  }
  Fields top(object, "", &errors);
  CheckTypeMeta(top, kKind);
  if (const json* metadata = top.Object("metadata", true)) {
    Fields m(*metadata, "metadata", &errors);
    if (std::optional<std::string> name = m.String("name", true)) {
      // Trial names append "-t" and a six-digit index; they must stay within 63 characters.
      if (!IsDnsLabel(*name, 54)) {
        m.Error("name",
                "must be a DNS label of at most 54 characters (lower case letters, "
                "digits and '-'), got \"" +
                    *name + "\"");
      }
      spec.name = *name;
    }
    spec.namespace_name = m.String("namespace", false).value_or("");
    if (std::optional<int64_t> g = m.Integer("generation", false)) spec.generation = *g;
    AcceptServerMetadata(m);
    m.Finish();
  }
  if (const json* body = top.Object("spec", true)) ParseSpec(*body, &errors, &spec);
  top.Has("status");
  top.Finish();

  if (Status s = ErrorsStatus(errors); !s.ok()) return s;
  return spec;
}

StatusOr<PoolSpec> ParsePool(const nlohmann::json& object) {
  std::vector<std::string> errors;
  PoolSpec pool;
  if (!object.is_object()) {
    return InvalidArgumentError("(document): must be a BudgetPool object, got " +
                                Fields::Describe(object));
  }
  Fields top(object, "", &errors);
  CheckTypeMeta(top, kPoolKind);
  if (const json* metadata = top.Object("metadata", true)) {
    Fields m(*metadata, "metadata", &errors);
    if (std::optional<std::string> name = m.String("name", true)) {
      if (!IsDnsLabel(*name, 253)) m.Error("name", "must be a DNS label, got \"" + *name + "\"");
      pool.name = *name;
    }
    m.Has("namespace");
    m.Has("generation");
    AcceptServerMetadata(m);
    m.Finish();
  }
  if (const json* body = top.Object("spec", true)) {
    Fields f(*body, "spec", &errors);
    const std::string largest = "the largest budget a pool may have";
    if (std::optional<double> h = f.Positive("gpuHours", true, kMaxGpuHours, largest)) {
      pool.gpu_hours = *h;
    }
    if (std::optional<double> h = f.Positive("maxPerSweepGpuHours", false, kMaxGpuHours, largest)) {
      pool.max_per_sweep_gpu_hours = *h;
    }
    if (std::optional<std::string> period = f.String("period", false)) {
      std::optional<double> seconds = PeriodSeconds(*period);
      if (*period != "calendarMonth" && !seconds) {
        f.Error("period",
                "must be calendarMonth or a duration in m, h or d such as 720h or 30d, "
                "got \"" +
                    *period + "\"");
      } else if (seconds && *seconds > kMaxPoolPeriodSeconds) {
        f.Error("period", "out of range: must be at most " +
                              NumberText(kMaxPoolPeriodSeconds / 86400) + "d (a year), got \"" +
                              *period + "\"");
      }
      pool.period = *period;
    }
    f.Finish();
  }
  top.Has("status");
  top.Finish();
  if (Status s = ErrorsStatus(errors); !s.ok()) return s;
  return pool;
}

void BindPool(const PoolSpec& pool, SweepSpec* spec) {
  if (spec->budget_gpu_hours <= 0) spec->budget_gpu_hours = pool.gpu_hours;
}

namespace {

// A time of the pool's state at `key`, as PoolStateJson writes it.
std::optional<double> TimeField(Fields& f, const std::string& key) {
  std::optional<std::string> text = f.String(key, true);
  if (!text) return std::nullopt;
  std::optional<double> t = ParseRfc3339(*text);
  if (!t) f.Error(key, "must be a UTC time such as 2026-12-01T00:00:00Z, got \"" + *text + "\"");
  return t;
}

}  // namespace

StatusOr<PoolState> ParsePoolState(const nlohmann::json& state, const std::string& where) {
  std::vector<std::string> errors;
  PoolState out;
  if (!state.is_object()) {
    return InvalidArgumentError(where + ": must be an object, got " + Fields::Describe(state));
  }
  Fields top(state, where, &errors);
  for (const char* key : {"usedGpuHours", "reservedGpuHours", "remainingGpuHours", "activeSweeps",
                          "conditions", "observedGeneration", "pool"}) {
    top.Has(key);  // derived, or the writer's own: read again from the accounts
  }
  if (const json* sweeps = top.Get("sweeps")) {
    if (!sweeps->is_array())
      top.Error("sweeps", "must be a list, got " + Fields::Describe(*sweeps));
    for (size_t i = 0; sweeps->is_array() && i < sweeps->size(); ++i) {
      Fields a((*sweeps)[i], top.PathOf("sweeps") + "[" + std::to_string(i) + "]", &errors);
      if (!(*sweeps)[i].is_object()) {
        top.ItemError("sweeps", i, "must be an object");
        continue;
      }
      std::optional<std::string> key = a.String("key", true);
      PoolAccount account;
      account.sweep = a.String("sweep", true).value_or("");
      account.used_device_seconds = a.Number("usedDeviceSeconds", true).value_or(0);
      account.reserved_device_seconds = a.Number("reservedDeviceSeconds", true).value_or(0);
      account.carried_device_seconds = a.Number("carriedDeviceSeconds", false).value_or(0);
      account.active = a.Bool("active").value_or(false);
      account.starved = a.Bool("starved").value_or(false);
      a.Finish();
      if (key && !out.accounts.emplace(*key, account).second) {
        top.ItemError("sweeps", i, "a second account of key \"" + *key + "\"");
      }
    }
  }
  if (const json* period = top.Object("period", false)) {
    Fields p(*period, top.PathOf("period"), &errors);
    out.period_start = TimeField(p, "start");
    out.period_end = TimeField(p, "end");
    p.Finish();
  }
  if (const json* past = top.Get("previousPeriods")) {
    if (!past->is_array()) {
      top.Error("previousPeriods", "must be a list, got " + Fields::Describe(*past));
    }
    for (size_t i = 0; past->is_array() && i < past->size(); ++i) {
      if (!(*past)[i].is_object()) {
        top.ItemError("previousPeriods", i, "must be an object");
        continue;
      }
      Fields p((*past)[i], top.PathOf("previousPeriods") + "[" + std::to_string(i) + "]", &errors);
      PastPeriod ended;
      ended.start = TimeField(p, "start").value_or(0);
      ended.end = TimeField(p, "end").value_or(0);
      ended.used_device_seconds = p.Number("usedGpuHours", true).value_or(0) * 3600;
      p.Finish();
      out.past.push_back(ended);
    }
  }
  top.Finish();
  if (Status s = ErrorsStatus(errors); !s.ok()) return s;
  return out;
}

bool IsDnsLabel(std::string_view name, size_t max_length) {
  if (name.empty() || name.size() > max_length) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '-'; });
}

const char* GoalName(Goal goal) { return goal == Goal::kMaximize ? "maximize" : "minimize"; }

const char* AlgorithmName(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kAsha:
      return "asha";
    case Algorithm::kRandom:
      return "random";
    case Algorithm::kGrid:
      return "grid";
    case Algorithm::kHyperband:
      return "hyperband";
    case Algorithm::kPbt:
      return "pbt";
    case Algorithm::kPb2:
      return "pb2";
  }
  return "asha";
}

bool EarlyStopping(Algorithm algorithm) {
  return algorithm == Algorithm::kAsha || algorithm == Algorithm::kHyperband;
}

bool Population(Algorithm algorithm) {
  return algorithm == Algorithm::kPbt || algorithm == Algorithm::kPb2;
}

const char* AshaModeName(AshaMode mode) { return mode == AshaMode::kStop ? "stop" : "pause"; }

}  // namespace bsw
