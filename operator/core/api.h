#ifndef BSW_CORE_API_H_
#define BSW_CORE_API_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "nlohmann/json.hpp"
#include "operator/core/pool.h"
// The API's other kind, BudgetPool, is read by pool_spec.h.
#include "operator/core/pool_spec.h"

namespace bsw {

inline constexpr const char* kApiVersion = "budgetsweep.dev/v1alpha1";
inline constexpr const char* kKind = "BudgetSweep";
inline constexpr const char* kPoolKind = "BudgetPool";

enum class Goal { kMaximize, kMinimize };
enum class Algorithm { kAsha, kRandom, kGrid, kHyperband, kPbt, kPb2 };
enum class AshaMode { kStop, kPause };
enum class Sampler { kRandom, kTpe };
enum class ParamType { kUniform, kLogUniform, kInt, kChoice, kGrid };

// spec.metrics.collector.kind: where a trial's values come from. kPrometheus: the trainer serves
// the contract's metrics itself; kStdOut and kFile: a wrapper (budgetsweep-collect) runs the
// trial's command, parses the `name=value` lines it prints or writes, and serves them so.
enum class CollectorKind { kPrometheus, kStdOut, kFile };
enum class CollectorFormat { kText, kJson };

// spec.metrics.collector, Katib's names where they fit.
struct CollectorSpec {
  CollectorKind kind = CollectorKind::kPrometheus;
  // A regular expression whose first two groups are a value's name and the value (Katib's
  // metricsFormat); empty: budgetsweep-collect's default, Katib's.
  std::string filter;
  // The name on the same line whose value is the resource the line's values belong to; empty: the
  // count of objective values the trial reported so far.
  std::string resource_key;
  // kFile: a path relative to the trial's directory, and what its lines hold.
  std::string file_path;
  CollectorFormat file_format = CollectorFormat::kText;
};

// One search-space dimension. The name is the trainer's flag name, passed as `--name=value`.
struct ParamSpec {
  std::string name;
  ParamType type = ParamType::kUniform;
  double min = 0;  // uniform, logUniform, int
  double max = 0;
  bool log = false;                    // int: sample on a log scale
  std::vector<nlohmann::json> values;  // choice, grid: scalars
  // pbt and pb2: the value may change during the trial, when it goes on from another trial's
  // checkpoint (population.h).
  bool mutable_ = false;
};

// The first container of the trial's PodTemplateSpec, as far as budgetsweep reads it.
struct TrialContainer {
  std::string name;
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
};

// One micro-batch split of the effective batch: `batch_size` samples per micro-batch,
// `accumulation_steps` micro-batches per optimizer step.
struct MicroBatch {
  int64_t batch_size = 0;
  int accumulation_steps = 1;
};

// spec.throughput: the probe phase that picks the trainer's loader and precision settings before
// the search starts. Each candidate list is one trainer flag; an empty list leaves that flag as
// the template sets it. Candidates are the product of the lists.
struct ThroughputSpec {
  bool enabled = false;
  double target_utilization = 0.85;
  int probe_steps = 30;  // measured optimizer steps per probe
  double max_budget_fraction = 0.05;
  bool stop_below_target = false;  // onBelowTarget: stop (true) or continue (false)
  std::vector<int> workers = {0, 1, 2, 4};
  std::vector<int> prefetch;
  std::vector<std::string> precision;
  // The first entry is the template's own split: the learning rate refers to its effective batch.
  std::vector<MicroBatch> micro_batches;
};

struct SweepSpec {
  std::string name;
  std::string namespace_name;
  int64_t generation = 0;
  double budget_gpu_hours = 0;
  std::string pool_name;  // spec.budget.poolRef.name; empty: no pool
  std::string objective_metric;
  Goal goal = Goal::kMaximize;
  std::string resource_unit = "epochs";
  double resource_min = 1;
  double resource_max = 1;
  int reduction_factor = 3;
  Algorithm algorithm = Algorithm::kAsha;
  AshaMode mode = AshaMode::kStop;
  Sampler sampler = Sampler::kRandom;  // how new configurations are chosen (tpe.h)
  // pbt and pb2: resource units between pauses (population.h); 0 until parsed, then
  // resource_min unless the spec sets it.
  double perturbation_interval = 0;
  int parallelism = 1;
  std::optional<int> max_trials;
  int max_failed_trials = 3;
  uint64_t seed = 0;
  std::vector<ParamSpec> search_space;  // sorted by name
  int trial_gpus = 1;
  int max_retries = 1;
  double grace_seconds = 30;
  nlohmann::json trial_template;  // the PodTemplateSpec, verbatim
  TrialContainer container;
  // spec.trial.checkpointing: the trainer resumes from BUDGETSWEEP_CHECKPOINT_DIR and exits 0 at
  // BUDGETSWEEP_UNTIL; default true for the Prometheus collector, false for the others.
  bool checkpointing = true;
  std::string prometheus_url;  // empty: scrape trials directly
  CollectorSpec collector;
  double metrics_missing_timeout_seconds = 300;
  ThroughputSpec throughput;
};

// Reads and validates a BudgetSweep object (apiVersion, kind, metadata, spec; status is ignored).
// On failure the InvalidArgument message lists every problem, one per line, as "path: message";
// unknown fields are errors. The spec is read section by section (spec_sections.h).
StatusOr<SweepSpec> ParseSweep(const nlohmann::json& object);

// A pooled sweep without its own spec.budget.gpuHours is capped by the pool's gpuHours.
void BindPool(const PoolSpec& pool, SweepSpec* spec);

// Whether `name` is an RFC 1123 DNS label of at most `max_length` characters: lower-case letters,
// digits and '-', starting and ending with a letter or digit.
bool IsDnsLabel(std::string_view name, size_t max_length = 63);

const char* GoalName(Goal goal);
const char* AlgorithmName(Algorithm algorithm);
// Whether the algorithm judges trials at rungs (asha, hyperband), so that spec.scheduler.mode
// applies; the others run every trial to the full resource.
bool EarlyStopping(Algorithm algorithm);
// Whether the algorithm trains a population (pbt, pb2): every trial pauses every
// spec.scheduler.perturbationInterval units, and a bottom trial goes on from a top trial's
// checkpoint with changed mutable values.
bool Population(Algorithm algorithm);
// pbt and pb2 pause at most this many times in resource.max.
inline constexpr int kMaxPopulationIntervals = 1000;

// Bounds that keep every deadline, reservation and rung count a sweep leads to finite and small
// enough to plan with. The validator refuses what lies outside them and names the limit.
inline constexpr double kMaxGpuHours = 1e6;   // spec.budget.gpuHours; a pool's gpuHours
inline constexpr double kMaxResource = 1e15;  // spec.resource.max
inline constexpr int kMaxReductionFactor = 1000;
inline constexpr int kMaxRungs = 64;  // rungs from spec.resource.min to max, max included
inline constexpr int64_t kMaxGraceSeconds = 3600;  // the template's terminationGracePeriodSeconds
inline constexpr double kMaxMissingTimeoutSeconds = 7 * 86400.0;  // missingTimeoutSeconds
inline constexpr double kMaxPoolPeriodSeconds = 366 * 86400.0;    // a BudgetPool's period
// Integers beyond this are not exact as JSON numbers (doubles).
inline constexpr int64_t kMaxExactInteger = 9'000'000'000'000'000;
const char* AshaModeName(AshaMode mode);

}  // namespace bsw

#endif  // BSW_CORE_API_H_
