#include "operator/adapters/prometheus/scrape_source.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include "contract/trainer_contract.h"
#include "operator/adapters/prometheus/http_fetch.h"

namespace bsw::prom {
namespace {

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

// The objective's series for `metric`, as an error names it: name{metric="<metric>"}.
std::string ObjectiveSeries(const std::string& metric) {
  return std::string(kMetricObjective) + "{" + kLabelMetric + "=\"" + metric + "\"}";
}

}  // namespace

TrialMetricsBuilder::TrialMetricsBuilder(std::string sweep, std::string trial,
                                         std::string objective_metric)
    : sweep_(std::move(sweep)),
      trial_(std::move(trial)),
      objective_metric_(std::move(objective_metric)) {}

void TrialMetricsBuilder::Add(const Sample& sample) {
  if (status_.ok()) status_ = Fold(sample);
}

StatusOr<TrialMetrics> TrialMetricsBuilder::Finish() && {
  if (!status_.ok()) return status_;
  return std::move(metrics_);
}

Status TrialMetricsBuilder::Fold(const Sample& sample) {
  std::string_view name = sample.name;
  if (!name.starts_with(kMetricPrefix)) return OkStatus();
  if (NamesOther(sample, kLabelSweep, sweep_) || NamesOther(sample, kLabelTrial, trial_)) {
    return OkStatus();
  }
  if (name == kMetricObjective) {
    auto metric = sample.labels.find(kLabelMetric);
    if (metric == sample.labels.end() || metric->second != objective_metric_) return OkStatus();
    auto resource_label = sample.labels.find(kLabelResource);
    if (resource_label == sample.labels.end()) {
      return InvalidArgumentError(ObjectiveSeries(objective_metric_) + " has no " + kLabelResource +
                                  " label");
    }
    std::optional<double> resource = ParseResource(resource_label->second);
    if (!resource) {
      return InvalidArgumentError(ObjectiveSeries(objective_metric_) + " has " + kLabelResource +
                                  "=\"" + Excerpt(resource_label->second) +
                                  "\", not a finite number");
    }
    metrics_.objective_by_resource[*resource] = sample.value;
  } else if (name == kMetricResourceCompleted) {
    metrics_.resource_completed = sample.value;
  } else if (name == kMetricLoss) {
    metrics_.loss = sample.value;
  } else if (name == kMetricSamplesPerSecond) {
    metrics_.samples_per_second = sample.value;
  } else if (name == kMetricDataWaitRatio) {
    metrics_.data_wait_ratio = sample.value;
  } else if (name == kMetricAcceleratorUtilizationRatio) {
    metrics_.accelerator_utilization_ratio = sample.value;
  } else if (name == kMetricProbeMeasuredSteps) {
    metrics_.probe_measured_steps = sample.value;
  }
  return OkStatus();
}

StatusOr<TrialMetrics> TrialMetricsFromSamples(const std::vector<Sample>& samples,
                                               const std::string& sweep, const std::string& trial,
                                               const std::string& objective_metric) {
  TrialMetricsBuilder metrics(sweep, trial, objective_metric);
  for (const Sample& sample : samples) metrics.Add(sample);
  return std::move(metrics).Finish();
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
  TrialMetricsBuilder metrics(sweep, segment.trial, objective_metric);
  TextFormatParser parser([&metrics](const Sample& sample) { metrics.Add(sample); });
  Status fetched = FetchMetricsBody(
      url, timeout_seconds_, [&parser](std::string_view piece) { return parser.Feed(piece); });
  if (!fetched.ok()) return scraping(fetched);
  if (Status parsed = parser.Finish(); !parsed.ok()) return scraping(parsed);
  return std::move(metrics).Finish();
}

}  // namespace bsw::prom
