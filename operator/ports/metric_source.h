#ifndef BSW_PORTS_METRIC_SOURCE_H_
#define BSW_PORTS_METRIC_SOURCE_H_

#include <string>

#include "base/status.h"
#include "operator/core/trial_metrics.h"
#include "operator/ports/trial_backend.h"

namespace bsw {

// Reads trial metrics: by scraping a trial directly, or from the Prometheus HTTP API.
class MetricSource {
 public:
  virtual ~MetricSource() = default;
  // Reads `objective_metric` and the progress series of one segment.
  // An unreachable or empty source is not an error of the trial: the caller treats it as Unknown.
  // Thread-safe: the controller reads several segments at once (MetricReader).
  virtual StatusOr<TrialMetrics> Read(const std::string& sweep, const SegmentStatus& segment,
                                      const std::string& objective_metric) = 0;
};

}  // namespace bsw

#endif  // BSW_PORTS_METRIC_SOURCE_H_
