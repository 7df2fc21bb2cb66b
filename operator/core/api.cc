#include "operator/core/api.h"

#include <algorithm>

#include "operator/core/field_reader.h"
#include "operator/core/spec_sections.h"

namespace bsw {
namespace {

using nlohmann::json;

// The sections in order: a section may depend on those before it (spec_sections.h).
void ParseSpec(const json& body, std::vector<std::string>* errors, SweepSpec* spec) {
  FieldReader f(body, "spec", errors);
  if (const json* budget = f.Object("budget", true)) ParseBudget(*budget, errors, spec);
  if (const json* objective = f.Object("objective", true)) {
    ParseObjective(*objective, errors, spec);
  }
  bool rungs_known = false;  // resource.min, max and reductionFactor are valid
  const json* resource = f.Object("resource", true);
  if (resource != nullptr) rungs_known = ParseResource(*resource, errors, spec);
  if (const json* scheduler = f.Object("scheduler", false)) {
    ParseScheduler(*scheduler, errors, spec);
  }
  if (resource != nullptr) CheckResourceMin(*resource, errors, *spec);
  ParseTrialCounts(f, spec);
  if (const json* space = f.Object("searchSpace", true)) ParseSearchSpace(*space, errors, spec);
  CheckAlgorithm(rungs_known, errors, spec);
  const json* trial = f.Object("trial", true);
  if (trial != nullptr) ParseTrial(*trial, errors, spec);
  if (const json* metrics = f.Object("metrics", false)) ParseMetrics(*metrics, errors, spec);
  if (const json* throughput = f.Object("throughput", false)) {
    ParseThroughput(*throughput, errors, spec);
  }
  if (trial != nullptr) CheckTrainerNeeds(*trial, errors, spec);
  f.Finish();
}

void ParseSweepMetadata(const json& metadata, std::vector<std::string>* errors, SweepSpec* spec) {
  FieldReader m(metadata, "metadata", errors);
  if (std::optional<std::string> name = m.String("name", true)) {
    // Trial names append "-t" and a six-digit index; they must stay within 63 characters.
    if (!IsDnsLabel(*name, 54)) {
      m.Error("name",
              "must be a DNS label of at most 54 characters (lower case letters, "
              "digits and '-'), got \"" +
                  *name + "\"");
    }
    spec->name = *name;
  }
  spec->namespace_name = m.String("namespace", false).value_or("");
  if (std::optional<int64_t> g = m.Integer("generation", false)) spec->generation = *g;
  AcceptServerMetadata(m);
  m.Finish();
}

}  // namespace

StatusOr<SweepSpec> ParseSweep(const nlohmann::json& object) {
  std::vector<std::string> errors;
  SweepSpec spec;
  if (!object.is_object()) {
    return InvalidArgumentError("(document): must be a BudgetSweep object, got " +
                                FieldReader::Describe(object));
  }
  FieldReader top(object, "", &errors);
  CheckTypeMeta(top, kKind);
  if (const json* metadata = top.Object("metadata", true)) {
    ParseSweepMetadata(*metadata, &errors, &spec);
  }
  if (const json* body = top.Object("spec", true)) ParseSpec(*body, &errors, &spec);
  top.Has("status");
  top.Finish();

  if (Status s = ErrorsStatus(errors); !s.ok()) return s;
  return spec;
}

void BindPool(const PoolSpec& pool, SweepSpec* spec) {
  if (spec->budget_gpu_hours <= 0) spec->budget_gpu_hours = pool.gpu_hours;
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
