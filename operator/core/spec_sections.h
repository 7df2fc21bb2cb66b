#ifndef BSW_CORE_SPEC_SECTIONS_H_
#define BSW_CORE_SPEC_SECTIONS_H_

// One reader per section of a BudgetSweep's spec, in the order ParseSweep reads them (api.h).
// Each takes its section as a JSON object, reads it into `spec` and appends every problem to
// `errors` as "spec.<section>.<field>: message"; unknown fields are problems. A section that
// depends on another says so: the other must be read first.

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "operator/core/api.h"
#include "operator/core/field_reader.h"

namespace bsw {

// spec.budget: budget_gpu_hours and pool_name.
void ParseBudget(const nlohmann::json& budget, std::vector<std::string>* errors, SweepSpec* spec);

// spec.objective: objective_metric and goal.
void ParseObjective(const nlohmann::json& objective, std::vector<std::string>* errors,
                    SweepSpec* spec);

// spec.resource: resource_unit, resource_min, resource_max and reduction_factor. Returns whether
// min, max and reductionFactor are all valid, so that the rungs can be counted (CheckAlgorithm).
bool ParseResource(const nlohmann::json& resource, std::vector<std::string>* errors,
                   SweepSpec* spec);

// spec.scheduler: algorithm, mode, sampler, perturbation_interval and seed.
// REQUIRES: spec.resource read (perturbationInterval lies below resource.max).
void ParseScheduler(const nlohmann::json& scheduler, std::vector<std::string>* errors,
                    SweepSpec* spec);

// spec.resource.min may be left out only by random and grid, which run every trial to max.
// REQUIRES: spec.scheduler read.
void CheckResourceMin(const nlohmann::json& resource, std::vector<std::string>* errors,
                      const SweepSpec& spec);

// spec.parallelism, spec.maxTrials and spec.maxFailedTrials, read from the spec's own fields.
void ParseTrialCounts(FieldReader& spec_fields, SweepSpec* spec);

// spec.searchSpace: search_space, sorted by name.
// REQUIRES: spec.scheduler read (which parameters may be mutable depends on the algorithm).
void ParseSearchSpace(const nlohmann::json& space, std::vector<std::string>* errors,
                      SweepSpec* spec);

// The rules between sections, once resource, scheduler, the counts and searchSpace are read:
// grid needs discrete parameters; pbt and pb2 need a population (perturbation_interval becomes
// resource_min unless set); the others at most kMaxRungs rungs, counted when `rungs_known`.
void CheckAlgorithm(bool rungs_known, std::vector<std::string>* errors, SweepSpec* spec);

// spec.trial: trial_gpus, max_retries, checkpointing, trial_template, and from the template
// container and grace_seconds.
void ParseTrial(const nlohmann::json& trial, std::vector<std::string>* errors, SweepSpec* spec);

// spec.metrics: collector, prometheus_url and metrics_missing_timeout_seconds.
void ParseMetrics(const nlohmann::json& metrics, std::vector<std::string>* errors, SweepSpec* spec);

// spec.throughput: the probe phase.
// REQUIRES: spec.searchSpace read (a flag is probed or searched, not both).
void ParseThroughput(const nlohmann::json& throughput, std::vector<std::string>* errors,
                     SweepSpec* spec);

// The rules between the trainer and the rest, once trial, metrics and throughput are read:
// spec.trial.checkpointing defaults to whether the collector is Prometheus; pause mode, pbt and
// pb2 need a trainer that checkpoints, the probe one serving the contract, a wrapped trainer a
// command; every ${trialParameters.NAME} names a parameter.
void CheckTrainerNeeds(const nlohmann::json& trial, std::vector<std::string>* errors,
                       SweepSpec* spec);

}  // namespace bsw

#endif  // BSW_CORE_SPEC_SECTIONS_H_
