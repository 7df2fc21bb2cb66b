#ifndef BSW_ADAPTERS_PROMETHEUS_API_SOURCE_H_
#define BSW_ADAPTERS_PROMETHEUS_API_SOURCE_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "operator/core/api.h"
#include "operator/ports/clock.h"
#include "operator/ports/metric_source.h"

namespace bsw::prom {

// One instant query behind the last Read, so that the controller can log why it decided.
struct QueryRecord {
  std::string query;        // the PromQL of the value query (its age came from timestamp(query))
  double evaluated_at = 0;  // the explicit `time` sent, seconds since the Unix epoch
  // The age, at `evaluated_at`, of the oldest sample used from this query; NaN when the query
  // gave no fresh sample (empty or all stale: Unknown).
  double sample_age_seconds = 0;
};

// Escapes a PromQL label value for use between double quotes.
[[nodiscard]] std::string EscapePromQLString(const std::string& value);

// Reads a segment's metrics from the Prometheus HTTP API (`/api/v1/query`), by instant queries at
// an explicit evaluation time taken from `clock`. The series and their mapping onto TrialMetrics
// are those of ScrapeMetricSource (see TrialMetricsFromSamples), selected by the labels `sweep`
// and `trial`. Each series is read twice at the same time: its value, and `timestamp(...)` of it
// for the sample's age; a sample older than `staleness_limit_seconds` is dropped. An empty or
// stale series is Unknown (absent), never zero.
class PrometheusApiSource final : public MetricSource {
 public:
  // `base_url`: http://host:port with an optional path prefix (http://host:port/prometheus).
  // `timeout_seconds` bounds the connect, the write and the read of each query.
  // `clock` must outlive this source.
  PrometheusApiSource(std::string base_url, double timeout_seconds, const Clock& clock,
                      double staleness_limit_seconds = 300);

  // Unavailable: unreachable, timed out, HTTP 503 or other non-2xx status, a body that is not
  // JSON, or `status: "error"` of another type than bad_data.
  // InvalidArgument: a malformed base URL, HTTP 400/422 or `errorType: "bad_data"`, a result that
  // is not a vector, an unparsable value, or an objective sample without a numeric resource.
  // Prometheus' errorType and error are in the message. `warnings` are accepted (LastWarnings).
  StatusOr<TrialMetrics> Read(const std::string& sweep, const SegmentStatus& segment,
                              const std::string& objective_metric) override;

  // The value queries of the last Read to end, in the order they were sent (on failure they stop
  // at the failing query, whose age is NaN).
  [[nodiscard]] std::vector<QueryRecord> LastQueries() const;
  // The `warnings` Prometheus returned during the last Read to end.
  [[nodiscard]] std::vector<std::string> LastWarnings() const;

 private:
  std::string base_url_;
  double timeout_seconds_;
  const Clock& clock_;
  double staleness_limit_seconds_;
  // Reads may run side by side (MetricReader): each keeps its records, the last to end publishes.
  mutable std::mutex records_mu_;
  std::vector<QueryRecord> last_queries_;
  std::vector<std::string> last_warnings_;
};

// The source a sweep decides from: Prometheus when spec.metrics.prometheus.url is set (the server
// must scrape the trials), otherwise each trial's own endpoint, scraped directly.
// REQUIRES: `clock` outlives the source.
std::unique_ptr<MetricSource> MetricSourceFor(const SweepSpec& spec, const Clock& clock);

}  // namespace bsw::prom

#endif  // BSW_ADAPTERS_PROMETHEUS_API_SOURCE_H_
