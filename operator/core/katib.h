#ifndef BSW_CORE_KATIB_H_
#define BSW_CORE_KATIB_H_

// `budgetsweep convert katib`: a Katib v1beta1 Experiment (kubeflow.org/v1beta1, kind Experiment)
// as the equivalent BudgetSweep, with every part that does not carry over listed by its field.
//
// What maps, and how (katib.cc says why at each step):
//   metadata.name, namespace             -> metadata.name, namespace
//   objective.type, objectiveMetricName  -> spec.objective.goal, metric
//   algorithm random, grid               -> spec.scheduler.algorithm random, grid
//   algorithm tpe, multivariate-tpe      -> algorithm random with sampler tpe (no early stopping)
//   algorithm hyperband                  -> hyperband: eta -> resource.reductionFactor, r_l ->
//                                           resource.max, resource_name -> the collector's
//                                           resourceKey (that parameter is not searched)
//   algorithmSettings random_state       -> spec.scheduler.seed
//   parallelTrialCount (default 3), maxTrialCount, maxFailedTrialCount
//                                        -> spec.parallelism, maxTrials, maxFailedTrials
//   parameters                           -> spec.searchSpace (a step enumerates the values)
//   trialTemplate.trialSpec (Job or Pod) -> spec.trial.template, placeholders renamed to the
//                                           searchSpace keys, the primary container first
//   metricsCollectorSpec (StdOut absent) -> spec.metrics.collector
//   (no Katib field)                     -> spec.budget.gpuHours from KatibOptions::gpu_hours
// Katib trials have no resource: outside hyperband a trial's resource is the count of objective
// values it reported, and the full resource is KatibOptions::max_resource (default 1: one value
// at the end).

#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace bsw {

struct KatibOptions {
  std::optional<double> gpu_hours;     // spec.budget.gpuHours: Katib has no budget
  std::optional<double> max_resource;  // spec.resource.max; default: hyperband's r_l, else 1
};

// One part of the Experiment that the sweep does not carry as it was.
struct KatibProblem {
  std::string path;  // the Experiment's field; spec.budget.gpuHours for the missing budget
  std::string message;
  // The converted sweep would not run, or not as the Experiment meant, until it is edited.
  bool blocks_running = false;
};

struct KatibConversion {
  nlohmann::json sweep;       // the BudgetSweep object
  std::string resource_note;  // how the sweep counts a trial's resource, for the reader
  std::vector<KatibProblem> problems;

  // Whether no problem blocks running.
  bool Runnable() const;
};

// Converts `experiment`; never throws. A malformed field is a problem that blocks running, and
// the sweep is still made from the rest.
KatibConversion ConvertKatib(const nlohmann::json& experiment, const KatibOptions& options);

// The `#` comment lines that precede the converted sweep: what it was converted from (`source`,
// the file's name), how it counts the resource, and each problem.
std::string ConversionComment(const KatibConversion& conversion, const std::string& source);

// The order in which a BudgetSweep's keys read best, at any depth: apiVersion, kind, metadata,
// spec; then spec's sections as docs/sweep-file.md lists them. Keys not named come after these.
const std::vector<std::string>& SweepKeyOrder();

}  // namespace bsw

#endif  // BSW_CORE_KATIB_H_
