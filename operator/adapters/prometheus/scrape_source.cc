#include "operator/adapters/prometheus/scrape_source.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <system_error>

#include "operator/adapters/prometheus/http_fetch.h"

namespace bsw::prom {
namespace {

constexpr char kPrefix[] = "budgetsweep_trainer_";

// A finite number, or nothing: a resource of NaN or ±Inf would match every rung or none.
std::optional<double> ParseResource(const std::string& text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// True when the sample carries `label` with a value other than `expected`.
bool NamesOther(const Sample& sample, const char* label, const std::string& expected) {
  auto it = sample.labels.find(label);
  return it != sample.labels.end() && it->second != expected;
}

}  // namespace

StatusOr<TrialMetrics> TrialMetricsFromSamples(const std::vector<Sample>& samples,
                                               const std::string& sweep, const std::string& trial,
                                               const std::string& objective_metric) {
  TrialMetrics metrics;
  for (const Sample& sample : samples) {
    std::string_view name = sample.name;
    if (!name.starts_with(kPrefix)) continue;
    if (NamesOther(sample, "sweep", sweep) || NamesOther(sample, "trial", trial)) continue;
    name.remove_prefix(sizeof(kPrefix) - 1);
    if (name == "objective") {
      auto metric = sample.labels.find("metric");
      if (metric == sample.labels.end() || metric->second != objective_metric) continue;
      auto resource_label = sample.labels.find("resource");
      if (resource_label == sample.labels.end()) {
        return InvalidArgumentError("budgetsweep_trainer_objective{metric=\"" + objective_metric +
                                    "\"} has no resource label");
      }
      std::optional<double> resource = ParseResource(resource_label->second);
      if (!resource) {
        return InvalidArgumentError("budgetsweep_trainer_objective{metric=\"" + objective_metric +
                                    "\"} has resource=\"" + Excerpt(resource_label->second) +
                                    "\", not a finite number");
      }
      metrics.objective_by_resource[*resource] = sample.value;
    } else if (name == "resource_completed") {
      metrics.resource_completed = sample.value;
    } else if (name == "loss") {
      metrics.loss = sample.value;
    } else if (name == "samples_per_second") {
      metrics.samples_per_second = sample.value;
    } else if (name == "data_wait_ratio") {
      metrics.data_wait_ratio = sample.value;
    } else if (name == "accelerator_utilization_ratio") {
      metrics.accelerator_utilization_ratio = sample.value;
    } else if (name == "probe_measured_steps") {
      metrics.probe_measured_steps = sample.value;
    }
  }
  return metrics;
}

ScrapeMetricSource::ScrapeMetricSource(double timeout_seconds)
    : timeout_seconds_(timeout_seconds) {}

StatusOr<TrialMetrics> ScrapeMetricSource::Read(const std::string& sweep,
                                                const SegmentStatus& segment,
                                                const std::string& objective_metric) {
  const std::string& url = segment.metrics_url;
  if (url.empty())
    return UnavailableError("trial " + segment.trial + " has no metrics endpoint yet");
  auto scraping = [&url](const Status& status) {
    return Status(status.code(), "scraping " + url + ": " + status.message());
  };
  StatusOr<std::string> body = FetchMetricsBody(url, timeout_seconds_);
  if (!body.ok()) return scraping(body.status());
  StatusOr<std::vector<Sample>> samples = ParseTextFormat(*body);
  if (!samples.ok()) return scraping(samples.status());
  return TrialMetricsFromSamples(*samples, sweep, segment.trial, objective_metric);
}

}  // namespace bsw::prom
