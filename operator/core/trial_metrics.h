#ifndef BSW_CORE_TRIAL_METRICS_H_
#define BSW_CORE_TRIAL_METRICS_H_

#include <map>
#include <optional>

namespace bsw {

// What a trial reported, as read at one moment. Anything absent is Unknown, never zero.
struct TrialMetrics {
  // The objective at each evaluated resource (budgetsweep_trainer_objective{resource=...}).
  std::map<double, double> objective_by_resource;
  std::optional<double> resource_completed;
  std::optional<double> loss;
  std::optional<double> samples_per_second;
  std::optional<double> data_wait_ratio;
  std::optional<double> accelerator_utilization_ratio;
  // A probe run (--probe-steps): the steps it measured, once its figures above are final.
  std::optional<double> probe_measured_steps;
};

}  // namespace bsw

#endif  // BSW_CORE_TRIAL_METRICS_H_
