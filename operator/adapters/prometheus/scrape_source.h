#ifndef BSW_ADAPTERS_PROMETHEUS_SCRAPE_SOURCE_H_
#define BSW_ADAPTERS_PROMETHEUS_SCRAPE_SOURCE_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "operator/adapters/prometheus/text_format.h"
#include "operator/ports/metric_source.h"

namespace bsw::prom {

// Folds an exposition's samples, one at a time, into the metrics of trial `trial` of sweep
// `sweep`, keeping no sample. Maps the trainer's series (docs/design.md, "Trainer contract"):
//   budgetsweep_trainer_objective{metric=<objective_metric>,resource=<r>} ->
//   objective_by_resource[r] budgetsweep_trainer_resource_completed, _loss, _samples_per_second,
//   _data_wait_ratio, _accelerator_utilization_ratio -> the fields of the same name
//   (a divergence is read from the trainer's exit code, not from budgetsweep_trainer_diverged)
// Samples whose `sweep` or `trial` label names another sweep or trial are ignored, so that a
// port reused by another trial is never read as this one. NaN objective values are kept; a later
// sample of a series replaces an earlier one.
class TrialMetricsBuilder {
 public:
  TrialMetricsBuilder(std::string sweep, std::string trial, std::string objective_metric);

  // Takes the next sample of the exposition.
  void Add(const Sample& sample);

  // The trial's metrics. InvalidArgument (the first such) when a matching objective sample has no
  // resource label, or one that is not a finite number (NaN, Inf, 1e400, text).
  [[nodiscard]] StatusOr<TrialMetrics> Finish() &&;

 private:
  Status Fold(const Sample& sample);

  std::string sweep_;
  std::string trial_;
  std::string objective_metric_;
  TrialMetrics metrics_;
  Status status_;
};

// The metrics of trial `trial` of sweep `sweep` in `samples`, as TrialMetricsBuilder folds them.
[[nodiscard]] StatusOr<TrialMetrics> TrialMetricsFromSamples(const std::vector<Sample>& samples,
                                                             const std::string& sweep,
                                                             const std::string& trial,
                                                             const std::string& objective_metric);

// Reads a segment's metrics by scraping its own endpoint (segment.metrics_url) over HTTP: the
// embedded default, when no Prometheus server is configured. The answer is parsed as it arrives,
// within the caps of FetchMetricsBody (http_fetch.h) and TextFormatParser (text_format.h): a read
// holds at most one line of it and the trial's TrialMetrics.
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
