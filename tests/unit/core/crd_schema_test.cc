// One schema: the CRD's OpenAPI schema (crds/budgetsweeps.budgetsweep.dev.yaml) and the validator
// (ParseSweep, operator/core/api.cc) must agree. The test walks the CRD's schema and, for every
// field of a sweep that sets every field, builds sweeps just inside and just outside each bound,
// with a wrong type, without each required field, with an unknown field, with each enum value and
// with one that is not, and without each defaulted field. The validator must reject exactly the
// sweeps the schema rejects, naming the field, and apply the schema's defaults. It also checks the
// field table in docs/sweep-file.md against the schema. Rules between fields are CEL in the CRD
// (x-kubernetes-validations); the API server evaluates them, so tests/cluster/crd_test.sh checks
// those on a real one.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "operator/adapters/yaml/sweep_file.h"
#include "operator/core/api.h"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw {
namespace {

using nlohmann::json;

// A sweep that sets every field the validator reads, each inside its bounds: the fixture's, with
// a parameter of every type and every optional field added.
json FullSweep() {
  json sweep = testing::ValidSweepJson();
  json& spec = sweep["spec"];
  spec["scheduler"]["sampler"] = "random";
  spec["maxFailedTrials"] = 3;
  spec["budget"]["poolRef"] = {{"name", "team-a"}};
  // The probe phase sets --batch-size: a probed flag is not searched too.
  spec["searchSpace"].erase("batch-size");
  spec["searchSpace"]["optimizer"] = {{"type", "choice"}, {"values", {"adamw", "sgd"}}};
  spec["searchSpace"]["layers"] = {{"type", "int"}, {"min", 1}, {"max", 8}, {"log", false}};
  spec["searchSpace"]["width"] = {{"type", "grid"}, {"values", {1, "two", true}}};
  spec["trial"]["template"]["spec"]["terminationGracePeriodSeconds"] = 30;
  spec["metrics"] = json::parse(
      R"({"prometheus": {"url": "http://prometheus:9090"}, "missingTimeoutSeconds": 300})");
  spec["throughput"] = json::parse(R"({
    "enabled": true, "targetUtilization": 0.85, "probeSteps": 30, "maxBudgetFraction": 0.05,
    "onBelowTarget": "continue",
    "candidates": {"workers": [0, 1], "prefetch": [2], "precision": ["bf16"],
                   "microBatches": [{"batchSize": 64, "accumulationSteps": 1}]}})");
  return sweep;
}

// The value the validator applies when a field is left out, by the field's path.
using DefaultOf = std::function<json(const SweepSpec&)>;
const std::map<std::string, DefaultOf>& ValidatorDefaults() {
  static const auto* defaults = new std::map<std::string, DefaultOf>{
      {"spec.objective.goal", [](const SweepSpec& s) { return json(GoalName(s.goal)); }},
      {"spec.resource.unit", [](const SweepSpec& s) { return json(s.resource_unit); }},
      {"spec.resource.reductionFactor",
       [](const SweepSpec& s) { return json(s.reduction_factor); }},
      {"spec.scheduler.algorithm",
       [](const SweepSpec& s) { return json(AlgorithmName(s.algorithm)); }},
      {"spec.scheduler.mode", [](const SweepSpec& s) { return json(AshaModeName(s.mode)); }},
      {"spec.scheduler.sampler",
       [](const SweepSpec& s) { return json(s.sampler == Sampler::kTpe ? "tpe" : "random"); }},
      {"spec.scheduler.seed", [](const SweepSpec& s) { return json(s.seed); }},
      {"spec.parallelism", [](const SweepSpec& s) { return json(s.parallelism); }},
      {"spec.maxFailedTrials", [](const SweepSpec& s) { return json(s.max_failed_trials); }},
      {"spec.trial.gpus", [](const SweepSpec& s) { return json(s.trial_gpus); }},
      {"spec.trial.maxRetries", [](const SweepSpec& s) { return json(s.max_retries); }},
      {"spec.metrics.missingTimeoutSeconds",
       [](const SweepSpec& s) { return json(s.metrics_missing_timeout_seconds); }},
      {"spec.trial.template.spec.terminationGracePeriodSeconds",
       [](const SweepSpec& s) { return json(s.grace_seconds); }},
      {"spec.throughput.enabled", [](const SweepSpec& s) { return json(s.throughput.enabled); }},
      {"spec.throughput.targetUtilization",
       [](const SweepSpec& s) { return json(s.throughput.target_utilization); }},
      {"spec.throughput.probeSteps",
       [](const SweepSpec& s) { return json(s.throughput.probe_steps); }},
      {"spec.throughput.maxBudgetFraction",
       [](const SweepSpec& s) { return json(s.throughput.max_budget_fraction); }},
      {"spec.throughput.onBelowTarget",
       [](const SweepSpec& s) {
         return json(s.throughput.stop_below_target ? "stop" : "continue");
       }},
      {"spec.throughput.candidates.workers",
       [](const SweepSpec& s) { return json(s.throughput.workers); }},
      {"spec.throughput.candidates.microBatches[0].accumulationSteps",
       [](const SweepSpec& s) {
         return json(s.throughput.micro_batches.at(0).accumulation_steps);
       }},
  };
  return *defaults;
}

// Validator defaults the CRD leaves to Kubernetes: the pod's own field, defaulted (to the same
// 30 s) by the API server when the trial pod is created.
const std::set<std::string> kDefaultedOutsideTheSchema = {
    "spec.trial.template.spec.terminationGracePeriodSeconds"};

// A field's place in the sweep: object keys and list indexes.
using Step = std::variant<std::string, size_t>;
using Path = std::vector<Step>;

Path Child(Path path, Step step) {
  path.push_back(std::move(step));
  return path;
}

// "spec.trial.template.spec.containers[0].command", as the validator names fields.
std::string Dotted(const Path& path) {
  std::string out;
  for (const Step& step : path) {
    if (const auto* key = std::get_if<std::string>(&step)) {
      out += (out.empty() ? "" : ".") + *key;
    } else {
      out += "[" + std::to_string(std::get<size_t>(step)) + "]";
    }
  }
  return out;
}

json::json_pointer Pointer(const Path& path) {
  json::json_pointer pointer;
  for (const Step& step : path) {
    if (const auto* key = std::get_if<std::string>(&step)) {
      pointer /= *key;
    } else {
      pointer /= std::get<size_t>(step);
    }
  }
  return pointer;
}

std::vector<std::string> ErrorsOf(const json& sweep) {
  StatusOr<SweepSpec> spec = ParseSweep(sweep);
  std::vector<std::string> errors;
  if (spec.ok()) return errors;
  std::istringstream lines(spec.status().message());
  for (std::string line; std::getline(lines, line);) errors.push_back(line);
  return errors;
}

// Whether one of `errors` is about `field` or something inside it.
bool NamesField(const std::vector<std::string>& errors, const std::string& field) {
  return std::any_of(errors.begin(), errors.end(), [&](const std::string& e) {
    return e.rfind(field + ":", 0) == 0 || e.rfind(field + ".", 0) == 0 ||
           e.rfind(field + "[", 0) == 0;
  });
}

std::string Joined(const std::vector<std::string>& errors) {
  std::string out;
  for (const std::string& e : errors) out += "\n  " + e;
  return out.empty() ? " (none)" : out;
}

// One sweep the schema accepts or rejects because of one field.
struct Case {
  std::string what;
  std::string field;  // as the validator names it
  json sweep;
  bool schema_rejects;
};

// Builds the cases of every field of the full sweep, walking the schema alongside it.
class CaseBuilder {
 public:
  explicit CaseBuilder(json base) : base_(std::move(base)) {}

  const std::vector<Case>& cases() const { return cases_; }

  void Walk(const json& schema, const Path& path) {
    const json& value = base_.at(Pointer(path));
    const std::string field = Dotted(path);
    const std::string type = schema.value("type", "");
    if (!type.empty()) WrongTypes(type, path);
    if (schema.contains("enum")) Enum(schema, path);
    if (type == "integer" || type == "number") Bounds(schema, type == "integer", path);
    if (schema.contains("minLength")) {
      const size_t length = schema["minLength"].get<size_t>();
      Add("at minLength", path, json(std::string(length, 'x')), false);
      if (length > 0) Add("below minLength", path, json(std::string(length - 1, 'x')), true);
    }
    if (type == "array") Array(schema, path);
    if (type == "object") Object(schema, value, path);
  }

 private:
  void Add(const std::string& what, const Path& path, json value, bool schema_rejects) {
    json sweep = base_;
    sweep[Pointer(path)] = std::move(value);
    cases_.push_back({what + " " + sweep[Pointer(path)].dump().substr(0, 60), Dotted(path),
                      std::move(sweep), schema_rejects});
  }
  void AddWithout(const std::string& what, const Path& path, bool schema_rejects) {
    json sweep = base_;
    sweep.at(Pointer(path).parent_pointer()).erase(std::get<std::string>(path.back()));
    cases_.push_back({what, Dotted(path), std::move(sweep), schema_rejects});
  }

  void WrongTypes(const std::string& type, const Path& path) {
    if (type == "string") Add("a number for a string", path, json(12345), true);
    if (type == "number" || type == "integer") Add("a string for a number", path, json("7"), true);
    if (type == "integer") Add("a fraction for an integer", path, json(2.5), true);
    if (type == "boolean") Add("a string for a boolean", path, json("true"), true);
    if (type == "object") Add("a string for an object", path, json("x"), true);
    if (type == "array") Add("a string for a list", path, json("x"), true);
  }

  void Enum(const json& schema, const Path& path) {
    for (const json& allowed : schema["enum"]) Add("enum value", path, allowed, false);
    Add("a value outside the enum", path, json("not-in-the-enum"), true);
  }

  void Bounds(const json& schema, bool integer, const Path& path) {
    auto step = [&](double bound) { return integer ? 1.0 : 1e-6 * std::max(1.0, std::abs(bound)); };
    auto number = [&](double v) { return integer ? json(static_cast<int64_t>(v)) : json(v); };
    if (schema.contains("minimum")) {
      const double min = schema["minimum"].get<double>();
      if (schema.value("exclusiveMinimum", false)) {
        Add("at the exclusive minimum", path, number(min), true);
        Add("just above the exclusive minimum", path, number(min + step(min)), false);
      } else {
        Add("at the minimum", path, number(min), false);
        Add("just below the minimum", path, number(min - step(min)), true);
      }
    }
    if (schema.contains("maximum")) {
      const double max = schema["maximum"].get<double>();
      if (schema.value("exclusiveMaximum", false)) {
        Add("at the exclusive maximum", path, number(max), true);
        Add("just below the exclusive maximum", path, number(max - step(max)), false);
      } else {
        Add("at the maximum", path, number(max), false);
        Add("just above the maximum", path, number(max + step(max)), true);
      }
    }
  }

  // `count` distinct items the item schema accepts, made from `example` (an item of the base).
  static json Items(const json& items, const json& example, size_t count) {
    json out = json::array();
    for (size_t i = 0; i < count; ++i) {
      if (items.contains("enum")) {
        out.push_back(items["enum"].at(i));
      } else if (items.value("type", "") == "integer") {
        out.push_back(items.value("minimum", int64_t{0}) + static_cast<int64_t>(i));
      } else if (example.is_number()) {
        out.push_back(static_cast<int64_t>(i));
      } else {
        out.push_back(example);
      }
    }
    return out;
  }

  void Array(const json& schema, const Path& path) {
    const json& value = base_.at(Pointer(path));
    const json items = schema.value("items", json::object());
    if (schema.contains("minItems")) {
      const size_t min = schema["minItems"].get<size_t>();
      if (min > 0) Add("below minItems", path, Items(items, value.at(0), min - 1), true);
    }
    if (schema.contains("maxItems")) {
      const size_t max = schema["maxItems"].get<size_t>();
      Add("at maxItems", path, Items(items, value.at(0), max), false);
      if (!items.contains("enum")) {
        Add("above maxItems", path, Items(items, value.at(0), max + 1), true);
      }
    }
    if (schema.value("x-kubernetes-list-type", "") == "set") {
      Add("a repeated item of a set", path, json::array({value.at(0), value.at(0)}), true);
    }
    if (!value.empty()) Walk(items, Child(path, size_t{0}));
  }

  void Object(const json& schema, const json& value, const Path& path) {
    const bool open = schema.value("x-kubernetes-preserve-unknown-fields", false);
    const json properties = schema.value("properties", json::object());
    if (!properties.empty() || schema.contains("additionalProperties")) {
      // An unknown field is an error (strict field validation) unless the object keeps them.
      if (!schema.contains("additionalProperties")) {
        Add("an unknown field", Child(path, "unknownField"), json(1), !open);
      }
    }
    std::set<std::string> required;
    for (const json& key : schema.value("required", json::array())) required.insert(key);
    // A rule may require a field below the object it sits on (".resource.min" on spec).
    for (const std::string& key : RequiredInSomeCases(schema)) {
      required_by_rule_.insert(Dotted(path) + "." + key);
    }
    for (const auto& [key, field_schema] : properties.items()) {
      if (!value.contains(key)) continue;
      const Path child = Child(path, key);
      if (required.contains(key)) {
        AddWithout("without a required field", child, true);
      } else if (!required_by_rule_.contains(Dotted(child))) {
        AddWithout("without an optional field", child, false);
      }
      Walk(field_schema, child);
    }
    if (schema.contains("additionalProperties")) {
      const json& entry = schema["additionalProperties"];
      for (const auto& [key, unused] : value.items()) Walk(entry, Child(path, key));
      if (schema.contains("minProperties")) {
        const size_t min = schema["minProperties"].get<size_t>();
        if (min > 0) Add("below minProperties", path, Entries(value, min - 1), true);
      }
      if (schema.contains("maxProperties")) {
        const size_t max = schema["maxProperties"].get<size_t>();
        Add("at maxProperties", path, Entries(value, max), false);
        Add("above maxProperties", path, Entries(value, max + 1), true);
      }
    }
  }

  // Fields required only in some cases, so neither always required nor optional: those a CEL rule
  // requires (reason FieldValueRequired) and those a branch of an anyOf requires.
  static std::set<std::string> RequiredInSomeCases(const json& schema) {
    std::set<std::string> keys;
    for (const json& rule : schema.value("x-kubernetes-validations", json::array())) {
      if (rule.value("reason", "") == "FieldValueRequired") {
        keys.insert(rule.value("fieldPath", ".").substr(1));
      }
    }
    std::vector<json> alternatives = {schema};
    for (const json& part : schema.value("allOf", json::array())) alternatives.push_back(part);
    for (const json& alternative : alternatives) {
      for (const json& branch : alternative.value("anyOf", json::array())) {
        for (const json& key : branch.value("required", json::array())) keys.insert(key);
      }
    }
    return keys;
  }

  // `count` entries, each a copy of the first of `value`.
  static json Entries(const json& value, size_t count) {
    json out = json::object();
    for (size_t i = 0; i < count; ++i) out["p" + std::to_string(i)] = value.begin().value();
    return out;
  }

  json base_;
  std::vector<Case> cases_;
  // The dotted paths of fields a CEL rule requires only in some cases.
  std::set<std::string> required_by_rule_;
};

json LoadCrd(const std::string& path) {
  StatusOr<json> crd = ReadSweepFile(path);
  EXPECT_TRUE(crd.ok()) << crd.status().message();
  return crd.ok() ? *crd : json::object();
}

const json& SweepSchema() {
  static const json* schema =
      new json(LoadCrd("crds/budgetsweeps.budgetsweep.dev.yaml")
                   .at("/spec/versions/0/schema/openAPIV3Schema"_json_pointer));
  return *schema;
}

// The schema of `spec` and of metadata.name: the parts of the object the validator reads.
std::vector<Case> SchemaCases() {
  CaseBuilder builder(FullSweep());
  builder.Walk(SweepSchema()["properties"]["spec"], {std::string("spec")});
  builder.Walk(SweepSchema()["properties"]["metadata"]["properties"]["name"],
               {std::string("metadata"), std::string("name")});
  return builder.cases();
}

// Every null in `node` (a schema keyword that holds nothing), as JSON pointers.
void CollectNulls(const json& node, const std::string& at, std::vector<std::string>* nulls) {
  if (node.is_null()) nulls->push_back(at);
  size_t index = 0;
  for (auto it = node.begin(); node.is_structured() && it != node.end(); ++it, ++index) {
    CollectNulls(*it, at + "/" + (node.is_object() ? it.key() : std::to_string(index)), nulls);
  }
}

// A comma in an unquoted description of a YAML flow mapping ({type: string, description: a, b})
// splits it, and the API server refuses the CRD as a whole ("unknown field"): no schema holds a
// key without a value.
TEST(CrdSchema, NoSchemaKeywordIsEmpty) {
  for (const char* path :
       {"crds/budgetsweeps.budgetsweep.dev.yaml", "crds/budgetpools.budgetsweep.dev.yaml",
        "crds/budgetsweeptrials.budgetsweep.dev.yaml"}) {
    std::vector<std::string> nulls;
    CollectNulls(LoadCrd(path), "", &nulls);
    EXPECT_EQ(nulls, std::vector<std::string>{}) << path;
  }
}

TEST(CrdSchema, TheFullSweepIsValid) {
  EXPECT_EQ(ErrorsOf(FullSweep()), std::vector<std::string>{});
}

TEST(CrdSchema, ValidatorRejectsExactlyWhatTheSchemaRejectsNamingTheField) {
  const std::vector<Case> cases = SchemaCases();
  EXPECT_GT(cases.size(), 250u) << "the walk missed most of the schema";
  for (const Case& c : cases) {
    const std::vector<std::string> errors = ErrorsOf(c.sweep);
    EXPECT_EQ(NamesField(errors, c.field), c.schema_rejects)
        << c.field << ", " << c.what << ": the schema "
        << (c.schema_rejects ? "rejects" : "accepts")
        << " it; the validator's errors:" << Joined(errors);
  }
}

// Every field of the full sweep is in the schema (the walk above covers only fields the schema
// has; this finds fields only the validator reads).
void ExpectInSchema(const json& schema, const json& value, const Path& path) {
  if (!value.is_object() && !value.is_array()) return;
  if (schema.value("x-kubernetes-preserve-unknown-fields", false) && !schema.contains("properties"))
    return;
  if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      ExpectInSchema(schema.value("items", json::object()), value[i], Child(path, i));
    }
    return;
  }
  for (const auto& [key, child] : value.items()) {
    const json properties = schema.value("properties", json::object());
    if (properties.contains(key)) {
      ExpectInSchema(properties[key], child, Child(path, key));
    } else if (schema.contains("additionalProperties")) {
      ExpectInSchema(schema["additionalProperties"], child, Child(path, key));
    } else if (!schema.value("x-kubernetes-preserve-unknown-fields", false)) {
      ADD_FAILURE() << Dotted(Child(path, key)) << ": read by the validator, not in the CRD";
    }
  }
}

TEST(CrdSchema, EveryFieldTheValidatorReadsIsInTheSchema) {
  ExpectInSchema(SweepSchema()["properties"]["spec"], FullSweep()["spec"], {std::string("spec")});
}

// Every default in the schema, by field path; list items are written [0].
void CollectDefaults(const json& schema, const Path& path, std::map<std::string, json>* out) {
  if (schema.contains("default") && !schema["default"].is_object()) {
    (*out)[Dotted(path)] = schema["default"];
  }
  const json properties = schema.value("properties", json::object());
  for (const auto& [key, child] : properties.items()) {
    CollectDefaults(child, Child(path, key), out);
  }
  if (schema.contains("items")) CollectDefaults(schema["items"], Child(path, size_t{0}), out);
}

TEST(CrdSchema, ValidatorAppliesTheSchemasDefaults) {
  std::map<std::string, json> schema_defaults;
  CollectDefaults(SweepSchema()["properties"]["spec"], {std::string("spec")}, &schema_defaults);
  for (const auto& [field, value] : schema_defaults) {
    EXPECT_TRUE(ValidatorDefaults().contains(field))
        << field << ": the CRD defaults it to " << value.dump() << ", the test knows no default";
  }
  for (const auto& [field, applied] : ValidatorDefaults()) {
    json sweep = FullSweep();
    json::json_pointer pointer = json::json_pointer(
        "/" + std::regex_replace(std::regex_replace(field, std::regex("\\."), "/"),
                                 std::regex("\\[(\\d+)\\]"), "/$1"));
    sweep.at(pointer.parent_pointer()).erase(pointer.back());
    StatusOr<SweepSpec> spec = ParseSweep(sweep);
    ASSERT_TRUE(spec.ok()) << field << ": " << spec.status().message();
    if (kDefaultedOutsideTheSchema.contains(field)) continue;
    ASSERT_TRUE(schema_defaults.contains(field)) << field << ": the validator defaults it to "
                                                 << applied(*spec).dump() << ", the CRD does not";
    EXPECT_EQ(applied(*spec), schema_defaults[field]) << field;
  }
}

// The page that documents every sweep-file field, read from the source tree (the working
// directory).
constexpr char kFieldTablePage[] = "docs/sweep-file.md";

// The table of sweep-file fields under "## Fields" in docs/sweep-file.md, one row per field:
// "| `path` | type, default | meaning |". A row may name siblings ("`spec.resource.min`, `max`"),
// and rows starting with "…" describe the search-space parameter's fields.
struct FieldTable {
  std::map<std::string, std::string> type_column;  // by field path
  std::string parameter_rows;                      // the "…" rows, joined
};

FieldTable ReadFieldTable() {
  std::ifstream in(kFieldTablePage);
  FieldTable table;
  bool in_section = false;
  static const std::regex kName("`([^`]+)`");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Fields";
    if (!in_section || line.rfind("| ", 0) != 0) continue;
    const size_t second = line.find(" | ", 2);
    if (second == std::string::npos) continue;
    const std::string names = line.substr(2, second - 2);
    const std::string type = line.substr(second + 3, line.find(" | ", second + 3) - second - 3);
    if (names.rfind("…", 0) == 0) {
      table.parameter_rows += line + "\n";
      continue;
    }
    std::string first;
    for (std::sregex_iterator it(names.begin(), names.end(), kName), end; it != end; ++it) {
      const std::string name = (*it)[1];
      if (first.empty()) {
        first = name;
        table.type_column[name] = type;
      } else {
        table.type_column[first.substr(0, first.rfind('.') + 1) + name] = type;
      }
    }
  }
  return table;
}

// The fields a sweep file sets directly, with their schemas: everything below spec that is not an
// object of named fields, outside the trial template (a PodTemplateSpec, documented as a whole)
// and list items. A search-space parameter is "spec.searchSpace.<flag>".
void CollectDocumentedFields(const json& schema, const std::string& path,
                             std::map<std::string, json>* out) {
  if (schema.value("x-kubernetes-preserve-unknown-fields", false) ||
      (!schema.contains("properties") && !schema.contains("additionalProperties"))) {
    (*out)[path] = schema;
  }
  if (schema.contains("additionalProperties")) (*out)[path + ".<flag>"] = schema;
  if (schema.value("x-kubernetes-preserve-unknown-fields", false)) return;
  const json properties = schema.value("properties", json::object());
  for (const auto& [key, child] : properties.items()) {
    CollectDocumentedFields(child, path + "." + key, out);
  }
}

TEST(CrdSchema, FieldTableListsEverySpecFieldWithTheSchemasDefault) {
  const FieldTable table = ReadFieldTable();
  ASSERT_FALSE(table.type_column.empty())
      << "no field table under \"## Fields\" in " << kFieldTablePage;
  std::map<std::string, json> fields;
  CollectDocumentedFields(SweepSchema()["properties"]["spec"], "spec", &fields);
  for (const auto& [field, schema] : fields) {
    auto row = table.type_column.find(field);
    if (row == table.type_column.end()) {
      ADD_FAILURE() << field << ": in the CRD, not in " << kFieldTablePage << "'s table";
      continue;
    }
    if (!schema.contains("default")) continue;
    const json& value = schema["default"];
    // "default 3", "default [0, 1, 2, 4]"; a string default is written `maximize` (default).
    std::string text = value.is_string()
                           ? "`" + value.get<std::string>() + "`"
                           : "default " + std::regex_replace(value.dump(), std::regex(","), ", ");
    EXPECT_NE(row->second.find(text), std::string::npos)
        << field << ": " << kFieldTablePage << " says \"" << row->second
        << "\", without the CRD's default, " << text;
  }
  for (const auto& [field, type] : table.type_column) {
    if (field.rfind("spec.", 0) != 0) continue;
    EXPECT_TRUE(fields.contains(field))
        << field << ": in " << kFieldTablePage << "'s table, not in the CRD";
  }
  const json& parameter =
      SweepSchema()["properties"]["spec"]["properties"]["searchSpace"]["additionalProperties"];
  // Each type and each field of a parameter appears in a backquoted span of the "…" rows.
  auto described = [&](const std::string& word) {
    return std::regex_search(table.parameter_rows, std::regex("`[^`]*\\b" + word + "\\b[^`]*`"));
  };
  for (const json& type : parameter["properties"]["type"]["enum"]) {
    EXPECT_TRUE(described(type.get<std::string>()))
        << kFieldTablePage << "'s table does not describe parameter type " << type;
  }
  for (const auto& [key, unused] : parameter["properties"].items()) {
    EXPECT_TRUE(described(key)) << kFieldTablePage << "'s table does not describe a parameter's "
                                << key;
  }
}

}  // namespace
}  // namespace bsw
