#include "operator/adapters/prometheus/api_source.h"

#include <httplib.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>
#include <utility>

#include "contract/trainer_contract.h"
#include "operator/adapters/prometheus/scrape_source.h"
#include "operator/adapters/prometheus/text_format.h"

namespace bsw::prom {
namespace {

using Labels = std::map<std::string, std::string>;
using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The progress series, read one by one: timestamp() drops the metric name, so a selector over
// several names would give timestamps that cannot be told apart (or a duplicate-labelset error).
constexpr const char* kProgressSeries[] = {
    kMetricResourceCompleted,
    kMetricLoss,
    kMetricSamplesPerSecond,
    kMetricDataWaitRatio,
    kMetricAcceleratorUtilizationRatio,
    kMetricProbeMeasuredSteps,
};

struct VectorSample {
  Labels labels;  // with __name__ when the query kept it
  double value = 0;
};

// Prometheus' float strings: Go's strconv formatting, with "NaN", "+Inf" and "-Inf".
std::optional<double> ParsePromValue(const std::string& text) {
  if (text == "NaN") return kNaN;
  if (text == "+Inf" || text == "Inf") return std::numeric_limits<double>::infinity();
  if (text == "-Inf") return -std::numeric_limits<double>::infinity();
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (begin != end && *begin == '+') ++begin;
  double value = 0;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || begin == end) return std::nullopt;
  return value;
}

std::string FormatTime(double unix_seconds) {
  char buffer[64];
  auto [ptr, ec] =
      std::to_chars(buffer, buffer + sizeof(buffer), unix_seconds, std::chars_format::fixed, 3);
  if (ec != std::errc()) return "0";
  return std::string(buffer, ptr);
}

// label="value", the value escaped for PromQL.
std::string LabelMatcher(const char* label, const std::string& value) {
  return std::string(label) + "=\"" + EscapePromQLString(value) + "\"";
}

Labels WithoutName(Labels labels) {
  labels.erase("__name__");
  return labels;
}

// A Prometheus URL split into what httplib connects to and the path its API is under.
struct BaseUrl {
  std::string origin;       // scheme://host[:port]
  std::string path_prefix;  // "" or "/prefix", without a trailing slash
};

StatusOr<BaseUrl> SplitBaseUrl(const std::string& base_url) {
  size_t scheme_end = base_url.find("://");
  if (scheme_end == std::string::npos) {
    return InvalidArgumentError("Prometheus URL '" + base_url + "' has no scheme");
  }
  size_t path_start = base_url.find('/', scheme_end + 3);
  BaseUrl url{base_url.substr(0, path_start), ""};
  if (path_start != std::string::npos) url.path_prefix = base_url.substr(path_start);
  while (!url.path_prefix.empty() && url.path_prefix.back() == '/') url.path_prefix.pop_back();
  return url;
}

// The selectors a trial is read by: its objective (the series of `objective_metric`), then each
// progress series.
std::vector<std::string> SelectorsOf(const std::string& sweep, const std::string& trial,
                                     const std::string& objective_metric) {
  const std::string trial_labels =
      LabelMatcher(kLabelSweep, sweep) + "," + LabelMatcher(kLabelTrial, trial);
  std::vector<std::string> selectors;
  selectors.push_back(std::string(kMetricObjective) + "{" + trial_labels + "," +
                      LabelMatcher(kLabelMetric, objective_metric) + "}");
  for (const char* name : kProgressSeries) {
    selectors.push_back(std::string(name) + "{" + trial_labels + "}");
  }
  return selectors;
}

// Adds to `fresh` the samples of `selector` in `values` whose series' timestamp in `stamps` is
// at most staleness_limit_seconds old at `now`; a series without a timestamp (its age unknown)
// or an older one reads as Unknown. Returns the age of the oldest sample added, NaN for none.
double TakeFresh(const std::string& selector, std::vector<VectorSample> values,
                 std::vector<VectorSample> stamps, double now, double staleness_limit_seconds,
                 std::vector<Sample>& fresh) {
  std::map<Labels, double> stamp_by_labels;
  for (VectorSample& stamp : stamps) {
    stamp_by_labels[WithoutName(std::move(stamp.labels))] = stamp.value;
  }
  double oldest_used = kNaN;
  for (VectorSample& value : values) {
    auto stamp = stamp_by_labels.find(WithoutName(value.labels));
    if (stamp == stamp_by_labels.end()) continue;
    double age = now - stamp->second;
    if (!(age <= staleness_limit_seconds)) continue;
    if (std::isnan(oldest_used) || age > oldest_used) oldest_used = age;
    Sample sample;
    auto name = value.labels.find("__name__");
    sample.name =
        name != value.labels.end() ? name->second : selector.substr(0, selector.find('{'));
    sample.labels = WithoutName(std::move(value.labels));
    sample.value = value.value;
    fresh.push_back(std::move(sample));
  }
  return oldest_used;
}

class QueryClient {
 public:
  QueryClient(const std::string& origin, std::string path_prefix, double timeout_seconds,
              std::vector<std::string>& warnings)
      : client_(origin), path_(std::move(path_prefix) + "/api/v1/query"), warnings_(warnings) {
    auto timeout = std::chrono::duration<double>(timeout_seconds);
    client_.set_connection_timeout(timeout);
    client_.set_read_timeout(timeout);
    client_.set_write_timeout(timeout);
    client_.set_keep_alive(true);
    client_.set_tcp_nodelay(true);  // many small requests: no delayed-ACK stalls
  }

  bool valid() const { return client_.is_valid(); }

  // Runs one instant query at `time`; the result must be a vector.
  StatusOr<std::vector<VectorSample>> Query(const std::string& query, const std::string& time) {
    const std::string what = "Prometheus query '" + query + "' at time=" + time;
    httplib::Params params{{"query", query}, {"time", time}};
    httplib::Result result = client_.Get(path_, params, httplib::Headers{});
    if (!result) return UnavailableError(what + ": " + httplib::to_string(result.error()));
    json body = json::parse(result->body, nullptr, /*allow_exceptions=*/false);
    TakeWarnings(body);
    if (Status answered = CheckAnswer(what, result->status, body); !answered.ok()) {
      return answered;
    }
    StatusOr<const json*> items = ResultVector(what, body);
    if (!items.ok()) return items.status();
    std::vector<VectorSample> samples;
    for (const json& item : **items) {
      StatusOr<VectorSample> sample = SampleOf(what, item);
      if (!sample.ok()) return sample.status();
      samples.push_back(std::move(*sample));
    }
    return samples;
  }

 private:
  static std::string StringField(const json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
  }

  // Keeps the warnings of an answer (a JSON object, or anything else when it was not one).
  void TakeWarnings(const json& body) {
    if (!body.is_object()) return;
    if (auto w = body.find("warnings"); w != body.end() && w->is_array()) {
      for (const json& warning : *w) {
        if (warning.is_string()) warnings_.push_back(warning.get<std::string>());
      }
    }
  }

  // ": errorType: error" of an answer that has either, else "".
  static std::string ErrorDetail(const json& body) {
    if (!body.is_object()) return std::string();
    std::string error_type = StringField(body, "errorType");
    std::string error = StringField(body, "error");
    if (error_type.empty() && error.empty()) return std::string();
    return ": " + error_type + ": " + error;
  }

  // OK for a 2xx answer whose body is a JSON object with status "success". A query Prometheus
  // calls bad (400, 422, errorType bad_data) is InvalidArgument; any other failure Unavailable.
  static Status CheckAnswer(const std::string& what, int http_status, const json& body) {
    const std::string error_detail = ErrorDetail(body);
    if (http_status == 400 || http_status == 422) {
      return InvalidArgumentError(what + ": HTTP " + std::to_string(http_status) + error_detail);
    }
    if (http_status < 200 || http_status >= 300) {
      return UnavailableError(what + ": HTTP " + std::to_string(http_status) + error_detail);
    }
    if (!body.is_object()) {
      return UnavailableError(what + ": HTTP " + std::to_string(http_status) +
                              " with a body that is not a JSON object");
    }
    std::string status = StringField(body, "status");
    if (status == "error") {
      if (StringField(body, "errorType") == "bad_data") {
        return InvalidArgumentError(what + ": status error" + error_detail);
      }
      return UnavailableError(what + ": status error" + error_detail);
    }
    if (status != "success") {
      return UnavailableError(what + ": unexpected status '" + status + "'");
    }
    return OkStatus();
  }

  // The result array of a successful answer whose data is a vector.
  static StatusOr<const json*> ResultVector(const std::string& what, const json& body) {
    auto data = body.find("data");
    if (data == body.end() || !data->is_object()) {
      return InvalidArgumentError(what + ": response has no data object");
    }
    std::string result_type = StringField(*data, "resultType");
    if (result_type != "vector") {
      return InvalidArgumentError(what + ": resultType '" + result_type + "', not vector");
    }
    auto items = data->find("result");
    if (items == data->end() || !items->is_array()) {
      return InvalidArgumentError(what + ": response has no result array");
    }
    return &*items;
  }

  // One element of a vector result: {"metric": {labels}, "value": [time, "value"]}.
  static StatusOr<VectorSample> SampleOf(const std::string& what, const json& item) {
    if (!item.is_object()) return InvalidArgumentError(what + ": a result is not an object");
    VectorSample sample;
    if (auto metric = item.find("metric"); metric != item.end() && metric->is_object()) {
      for (const auto& [name, value] : metric->items()) {
        if (value.is_string()) sample.labels[name] = value.get<std::string>();
      }
    }
    auto value = item.find("value");
    if (value == item.end() || !value->is_array() || value->size() != 2 ||
        !(*value)[1].is_string()) {
      return InvalidArgumentError(what + ": a result has no [time, \"value\"] pair");
    }
    std::string text = (*value)[1].get<std::string>();
    std::optional<double> parsed = ParsePromValue(text);
    if (!parsed) return InvalidArgumentError(what + ": unparsable value '" + text + "'");
    sample.value = *parsed;
    return sample;
  }

  httplib::Client client_;
  std::string path_;
  std::vector<std::string>& warnings_;
};

}  // namespace

std::string EscapePromQLString(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out;
}

PrometheusApiSource::PrometheusApiSource(std::string base_url, double timeout_seconds,
                                         const Clock& clock, double staleness_limit_seconds)
    : base_url_(std::move(base_url)),
      timeout_seconds_(timeout_seconds),
      clock_(clock),
      staleness_limit_seconds_(staleness_limit_seconds) {}

StatusOr<TrialMetrics> PrometheusApiSource::Read(const std::string& sweep,
                                                 const SegmentStatus& segment,
                                                 const std::string& objective_metric) {
  std::vector<QueryRecord> queries;
  std::vector<std::string> warnings;
  struct Publish {
    PrometheusApiSource& source;
    std::vector<QueryRecord>& queries;
    std::vector<std::string>& warnings;
    ~Publish() {
      std::lock_guard<std::mutex> lock(source.records_mu_);
      source.last_queries_ = std::move(queries);
      source.last_warnings_ = std::move(warnings);
    }
  } publish{*this, queries, warnings};
  StatusOr<BaseUrl> url = SplitBaseUrl(base_url_);
  if (!url.ok()) return url.status();
  const double now = clock_.NowUnixSeconds();
  const std::string time = FormatTime(now);
  const std::vector<std::string> selectors = SelectorsOf(sweep, segment.trial, objective_metric);

  try {
    QueryClient client(url->origin, url->path_prefix, timeout_seconds_, warnings);
    if (!client.valid()) {
      return InvalidArgumentError("Prometheus URL '" + base_url_ + "' is not valid");
    }
    std::vector<Sample> fresh;
    for (const std::string& selector : selectors) {
      queries.push_back(QueryRecord{selector, now, kNaN});
      StatusOr<std::vector<VectorSample>> values = client.Query(selector, time);
      if (!values.ok()) return values.status();
      if (values->empty()) continue;  // Unknown
      StatusOr<std::vector<VectorSample>> stamps =
          client.Query("timestamp(" + selector + ")", time);
      if (!stamps.ok()) return stamps.status();
      queries.back().sample_age_seconds = TakeFresh(
          selector, std::move(*values), std::move(*stamps), now, staleness_limit_seconds_, fresh);
    }
    return TrialMetricsFromSamples(fresh, sweep, segment.trial, objective_metric);
  } catch (const std::exception& e) {
    return InternalError("querying Prometheus at " + base_url_ + ": " + e.what());
  }
}

std::vector<QueryRecord> PrometheusApiSource::LastQueries() const {
  std::lock_guard<std::mutex> lock(records_mu_);
  return last_queries_;
}

std::vector<std::string> PrometheusApiSource::LastWarnings() const {
  std::lock_guard<std::mutex> lock(records_mu_);
  return last_warnings_;
}

std::unique_ptr<MetricSource> MetricSourceFor(const SweepSpec& spec, const Clock& clock) {
  if (spec.prometheus_url.empty()) return std::make_unique<ScrapeMetricSource>();
  return std::make_unique<PrometheusApiSource>(spec.prometheus_url, 5.0, clock);
}

}  // namespace bsw::prom
