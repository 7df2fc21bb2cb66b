#include "operator/core/spec_edits.h"

#include <set>

namespace bsw {
namespace {

using nlohmann::json;

bool SameParam(const ParamSpec& a, const ParamSpec& b) {
  return a.type == b.type && a.min == b.min && a.max == b.max && a.log == b.log &&
         a.values == b.values && a.mutable_ == b.mutable_;
}

bool SameMicroBatches(const std::vector<MicroBatch>& a, const std::vector<MicroBatch>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].batch_size != b[i].batch_size || a[i].accumulation_steps != b[i].accumulation_steps) {
      return false;
    }
  }
  return true;
}

// Collects the paths of the fields that differ.
class Differences {
 public:
  template <typename T>
  void Compare(const std::string& path, const T& a, const T& b) {
    if (!(a == b)) paths_.push_back(path);
  }
  void Mark(const std::string& path, bool same) {
    if (!same) paths_.push_back(path);
  }

  // The deepest paths where two JSON documents differ: into objects key by key and into arrays
  // of the same length item by item; anything else (an array that grew or shrank, a field of
  // another type, one that is only on one side) by its own path.
  void CompareJson(const std::string& path, const json& a, const json& b) {
    if (a == b) return;
    if (a.is_object() && b.is_object()) {
      std::set<std::string> keys;
      for (const auto& [key, value] : a.items()) keys.insert(key);
      for (const auto& [key, value] : b.items()) keys.insert(key);
      for (const std::string& key : keys) {
        CompareJson(path + "." + key, a.contains(key) ? a[key] : json(),
                    b.contains(key) ? b[key] : json());
      }
    } else if (a.is_array() && b.is_array() && a.size() == b.size()) {
      for (size_t i = 0; i < a.size(); ++i) {
        CompareJson(path + "[" + std::to_string(i) + "]", a[i], b[i]);
      }
    } else {
      paths_.push_back(path);
    }
  }

  // Parameters by name (both lists are sorted by name): one added, removed or changed is named.
  void CompareSearchSpace(const std::vector<ParamSpec>& a, const std::vector<ParamSpec>& b) {
    auto ai = a.begin(), bi = b.begin();
    while (ai != a.end() || bi != b.end()) {
      if (bi == b.end() || (ai != a.end() && ai->name < bi->name)) {
        paths_.push_back("spec.searchSpace." + (ai++)->name);
      } else if (ai == a.end() || bi->name < ai->name) {
        paths_.push_back("spec.searchSpace." + (bi++)->name);
      } else {
        Mark("spec.searchSpace." + ai->name, SameParam(*ai, *bi));
        ++ai;
        ++bi;
      }
    }
  }

  std::vector<std::string> Take() { return std::move(paths_); }

 private:
  std::vector<std::string> paths_;
};

}  // namespace

std::vector<std::string> ChangedImmutableFields(const SweepSpec& started, const SweepSpec& edited) {
  const SweepSpec& a = started;
  const SweepSpec& b = edited;
  Differences d;
  d.Compare("spec.budget.poolRef.name", a.pool_name, b.pool_name);
  d.Compare("spec.objective.metric", a.objective_metric, b.objective_metric);
  d.Compare("spec.objective.goal", a.goal, b.goal);
  d.Compare("spec.resource.unit", a.resource_unit, b.resource_unit);
  d.Compare("spec.resource.min", a.resource_min, b.resource_min);
  d.Compare("spec.resource.max", a.resource_max, b.resource_max);
  d.Compare("spec.resource.reductionFactor", a.reduction_factor, b.reduction_factor);
  d.Compare("spec.scheduler.algorithm", a.algorithm, b.algorithm);
  d.Compare("spec.scheduler.mode", a.mode, b.mode);
  d.Compare("spec.scheduler.sampler", a.sampler, b.sampler);
  d.Compare("spec.scheduler.seed", a.seed, b.seed);
  d.Compare("spec.scheduler.perturbationInterval", a.perturbation_interval,
            b.perturbation_interval);
  d.CompareSearchSpace(a.search_space, b.search_space);
  const ThroughputSpec &at = a.throughput, &bt = b.throughput;
  d.Compare("spec.throughput.enabled", at.enabled, bt.enabled);
  d.Compare("spec.throughput.targetUtilization", at.target_utilization, bt.target_utilization);
  d.Compare("spec.throughput.probeSteps", at.probe_steps, bt.probe_steps);
  d.Compare("spec.throughput.maxBudgetFraction", at.max_budget_fraction, bt.max_budget_fraction);
  d.Compare("spec.throughput.onBelowTarget", at.stop_below_target, bt.stop_below_target);
  d.Compare("spec.throughput.candidates.workers", at.workers, bt.workers);
  d.Compare("spec.throughput.candidates.prefetch", at.prefetch, bt.prefetch);
  d.Compare("spec.throughput.candidates.precision", at.precision, bt.precision);
  d.Mark("spec.throughput.candidates.microBatches",
         SameMicroBatches(at.micro_batches, bt.micro_batches));
  d.Compare("spec.trial.gpus", a.trial_gpus, b.trial_gpus);
  d.Compare("spec.trial.maxRetries", a.max_retries, b.max_retries);
  d.Compare("spec.trial.checkpointing", a.checkpointing, b.checkpointing);
  const CollectorSpec &ac = a.collector, &bc = b.collector;
  d.Compare("spec.metrics.collector.kind", ac.kind, bc.kind);
  d.Compare("spec.metrics.collector.filter", ac.filter, bc.filter);
  d.Compare("spec.metrics.collector.resourceKey", ac.resource_key, bc.resource_key);
  d.Compare("spec.metrics.collector.file.path", ac.file_path, bc.file_path);
  d.Compare("spec.metrics.collector.file.format", ac.file_format, bc.file_format);
  // The container and the grace period are read from the template, so the template covers them.
  d.CompareJson("spec.trial.template", a.trial_template, b.trial_template);
  return d.Take();
}

StatusOr<SweepSpec> ApplySpecEdit(const SweepSpec& started, const SweepSpec& edited) {
  std::vector<std::string> changed = ChangedImmutableFields(started, edited);
  if (!changed.empty()) {
    std::string message;
    for (const std::string& path : changed) {
      if (!message.empty()) message += "\n";
      message += path + ": changed on a sweep that has started (immutable)";
    }
    return InvalidArgumentError(message);
  }
  SweepSpec spec = started;
  spec.generation = edited.generation;
  spec.budget_gpu_hours = edited.budget_gpu_hours;
  spec.parallelism = edited.parallelism;
  spec.max_trials = edited.max_trials;
  spec.max_failed_trials = edited.max_failed_trials;
  spec.prometheus_url = edited.prometheus_url;
  spec.metrics_missing_timeout_seconds = edited.metrics_missing_timeout_seconds;
  return spec;
}

}  // namespace bsw
