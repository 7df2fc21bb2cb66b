#ifndef BSW_PORTS_METRIC_SOURCE_H_
#define BSW_PORTS_METRIC_SOURCE_H_

#include <map>
#include <optional>
#include <string>

#include "operator/core/status.h"
#include "operator/ports/trial_backend.h"

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
  bool diverged = false;
};

// Reads trial metrics: by scraping a trial directly, or from the Prometheus HTTP API.
class MetricSource {
 public:
  virtual ~MetricSource() = default;
  // Reads `objective_metric` and the progress series of one segment.
  // An unreachable or empty source is not an error of the trial: the caller treats it as Unknown.
  virtual StatusOr<TrialMetrics> Read(const std::string& sweep, const SegmentStatus& segment,
                                      const std::string& objective_metric) = 0;
};

}  // namespace bsw

#endif  // BSW_PORTS_METRIC_SOURCE_H_
