#include "trainer-image/metrics.h"

#include <httplib.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <thread>

#include "contract/trainer_contract.h"

namespace bsw::trainer {
namespace {

using prometheus::Counter;
using prometheus::Gauge;
using prometheus::Labels;

prometheus::Family<Gauge>& GaugeFamily(prometheus::Registry& registry, const std::string& name,
                                       const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry);
}

prometheus::Family<Counter>& CounterFamily(prometheus::Registry& registry, const std::string& name,
                                           const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

class RegistryMetrics : public ServedMetrics {
 public:
  explicit RegistryMetrics(const MetricsInfo& info)
      : registry_(std::make_shared<prometheus::Registry>()),
        base_{{kLabelSweep, info.sweep}, {kLabelTrial, info.trial}},
        // Registered before every other gauge, so a scrape collects it first: when it shows a
        // probe's measured steps, the figures set before it are final in that same scrape.
        probe_measured_steps_(GaugeFamily(*registry_, kMetricProbeMeasuredSteps,
                                          "Probe mode: optimizer steps the samples/s and "
                                          "data-wait figures cover, once they are final")),
        objective_(GaugeFamily(*registry_, kMetricObjective,
                               "Objective value after the epoch in label resource")),
        resource_completed_(GaugeFamily(*registry_, kMetricResourceCompleted,
                                        "Epochs completed, including those before a resume")
                                .Add(base_)),
        loss_(GaugeFamily(*registry_, kMetricLoss, "Training loss of the latest optimizer step")
                  .Add(base_)),
        learning_rate_(GaugeFamily(*registry_, kMetricLearningRate,
                                   "Learning rate of the latest optimizer step")
                           .Add(base_)),
        samples_per_second_(GaugeFamily(*registry_, kMetricSamplesPerSecond,
                                        "Training samples per second in the current epoch")
                                .Add(base_)),
        samples_(CounterFamily(*registry_, "budgetsweep_trainer_samples_total",
                               "Training samples processed by this process")
                     .Add(base_)),
        steps_(CounterFamily(*registry_, "budgetsweep_trainer_optimizer_steps_total",
                             "Optimizer steps applied by this process")
                   .Add(base_)),
        skipped_steps_(
            CounterFamily(*registry_, "budgetsweep_trainer_skipped_steps_total",
                          "Optimizer steps skipped for non-finite fp16 gradients by this process")
                .Add(base_)),
        data_wait_ratio_(GaugeFamily(*registry_, kMetricDataWaitRatio,
                                     "Fraction of training step time spent waiting for data "
                                     "in the current epoch")
                             .Add(base_)),
        utilization_family_(GaugeFamily(*registry_, kMetricAcceleratorUtilizationRatio,
                                        "Accelerator busy fraction reported by NVML")),
        device_memory_(GaugeFamily(*registry_, "budgetsweep_trainer_device_memory_bytes",
                                   "Memory held by the training device: allocated CUDA memory, "
                                   "or the resident set size on CPU")
                           .Add(base_)),
        diverged_(GaugeFamily(*registry_, kMetricDiverged,
                              "1 when the training loss became NaN or infinite")
                      .Add(base_)) {
    Labels info_labels = base_;
    info_labels.emplace("precision", info.precision);
    info_labels.emplace("device", info.device);
    info_labels.emplace("workers", std::to_string(info.workers));
    info_labels.emplace("libtorch_version", info.libtorch_version);
    GaugeFamily(*registry_, "budgetsweep_trainer_info", "Trainer configuration; value 1")
        .Add(info_labels)
        .Set(1);
    diverged_.Set(0);
  }

  ~RegistryMetrics() override {
    if (server_) {
      server_->stop();
      serve_thread_.join();
    }
  }

  // prometheus-cpp's Exposer cannot be used here: its civetweb fails to start threads ("Cannot
  // create threads") in a process linked with Debian's LibTorch. The registry and the text
  // format are prometheus-cpp's; only the HTTP server is cpp-httplib.
  Status Serve(const std::string& host, int port) {
    server_ = std::make_unique<httplib::Server>();
    server_->Get("/metrics",
                 [registry = registry_](const httplib::Request&, httplib::Response& response) {
                   response.set_content(prometheus::TextSerializer().Serialize(registry->Collect()),
                                        "text/plain; version=0.0.4");
                 });
    port_ = port == 0 ? server_->bind_to_any_port(host)
                      : (server_->bind_to_port(host, port) ? port : -1);
    if (port_ < 0) {
      server_.reset();
      return InvalidArgumentError("--metrics-port: cannot serve metrics on " + host + ":" +
                                  std::to_string(port));
    }
    serve_thread_ = std::thread([server = server_.get()] { server->listen_after_bind(); });
    return OkStatus();
  }

  int port() const override { return port_; }

  void SetObjective(const std::string& metric, int epoch, double value) override {
    Labels labels = base_;
    labels.emplace(kLabelMetric, metric);
    labels.emplace(kLabelResource, std::to_string(epoch));
    objective_.Add(labels).Set(value);
  }
  void SetResourceCompleted(int epochs) override { resource_completed_.Set(epochs); }
  void SetLoss(double loss) override { loss_.Set(loss); }
  void SetLearningRate(double lr) override { learning_rate_.Set(lr); }
  void SetSamplesPerSecond(double rate) override { samples_per_second_.Set(rate); }
  void AddSamples(int64_t samples) override { samples_.Increment(static_cast<double>(samples)); }
  void AddOptimizerSteps(int64_t steps, int64_t skipped) override {
    steps_.Increment(static_cast<double>(steps));
    skipped_steps_.Increment(static_cast<double>(skipped));
  }
  void SetDataWaitRatio(double ratio) override { data_wait_ratio_.Set(ratio); }
  void SetAcceleratorUtilization(double ratio) override {
    utilization_family_.Add(base_).Set(ratio);
  }
  void SetDeviceMemoryBytes(double bytes) override { device_memory_.Set(bytes); }
  void SetDiverged(bool diverged) override { diverged_.Set(diverged ? 1 : 0); }
  void SetProbeMeasuredSteps(int steps) override { probe_measured_steps_.Add(base_).Set(steps); }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  Labels base_;
  prometheus::Family<Gauge>& probe_measured_steps_;
  prometheus::Family<Gauge>& objective_;
  Gauge& resource_completed_;
  Gauge& loss_;
  Gauge& learning_rate_;
  Gauge& samples_per_second_;
  Counter& samples_;
  Counter& steps_;
  Counter& skipped_steps_;
  Gauge& data_wait_ratio_;
  prometheus::Family<Gauge>& utilization_family_;
  Gauge& device_memory_;
  Gauge& diverged_;
  std::unique_ptr<httplib::Server> server_;
  std::thread serve_thread_;
  int port_ = -1;
};

}  // namespace

StatusOr<std::unique_ptr<ServedMetrics>> ServedMetrics::Start(const std::string& host, int port,
                                                              const MetricsInfo& info) {
  auto metrics = std::make_unique<RegistryMetrics>(info);
  Status status = metrics->Serve(host, port);
  if (!status.ok()) return status;
  return std::unique_ptr<ServedMetrics>(std::move(metrics));
}

std::unique_ptr<TrainerMetrics> UnservedMetrics(const MetricsInfo& info) {
  return std::make_unique<RegistryMetrics>(info);
}

}  // namespace bsw::trainer
