#ifndef BSW_ADAPTERS_PROMETHEUS_SCRAPE_SOURCE_H_
#define BSW_ADAPTERS_PROMETHEUS_SCRAPE_SOURCE_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "operator/adapters/prometheus/text_format.h"
#include "operator/ports/metric_source.h"

namespace bsw::prom {

// Maps the trainer's series (docs/design.md, "Trainer contract") onto TrialMetrics:
//   budgetsweep_trainer_objective{metric=<objective_metric>,resource=<r>} ->
//   objective_by_resource[r] budgetsweep_trainer_resource_completed, _loss, _samples_per_second,
//   _data_wait_ratio, _accelerator_utilization_ratio -> the fields of the same name
//   (a divergence is read from the trainer's exit code, not from budgetsweep_trainer_diverged)
// Samples whose `sweep` or `trial` label names another sweep or trial are ignored, so that a
// port reused by another trial is never read as this one. NaN objective values are kept.
// Fails with InvalidArgument when a matching objective sample has no resource label, or one that
// is not a finite number (NaN, Inf, 1e400, text).
[[nodiscard]] StatusOr<TrialMetrics> TrialMetricsFromSamples(const std::vector<Sample>& samples,
                                                             const std::string& sweep,
                                                             const std::string& trial,
                                                             const std::string& objective_metric);

// Reads a segment's metrics by scraping its own endpoint (segment.metrics_url) over HTTP: the
// embedded default, when no Prometheus server is configured. The answer is read within the caps
// of FetchMetricsBody (http_fetch.h) and parsed within those of ParseTextFormat.
class ScrapeMetricSource final : public MetricSource {
 public:
  // `timeout_seconds` bounds the connect and each wait for the trainer to send more.
  explicit ScrapeMetricSource(double timeout_seconds = 2.0);

  // Unavailable: no metrics_url yet, endpoint unreachable, too slow or not answering 200.
  // InvalidArgument: a malformed metrics_url, response or exposition (the message names the line),
  // or an encoding other than gzip.
  // ResourceExhausted: the response or the exposition is over a cap (the message names it).
  StatusOr<TrialMetrics> Read(const std::string& sweep, const SegmentStatus& segment,
                              const std::string& objective_metric) override;

 private:
  double timeout_seconds_;
};

}  // namespace bsw::prom

#endif  // BSW_ADAPTERS_PROMETHEUS_SCRAPE_SOURCE_H_
