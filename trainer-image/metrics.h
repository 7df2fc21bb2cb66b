#ifndef BSW_TRAINER_METRICS_H_
#define BSW_TRAINER_METRICS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"

namespace bsw::trainer {

struct MetricsInfo {
  std::string sweep;
  std::string trial;
  std::string precision;
  std::string device;
  int workers = 0;
  std::string libtorch_version;
};

// The trainer's Prometheus series (documented in trainer-image/README.md). Every series carries
// the labels sweep and trial. Setters are thread-safe.
class TrainerMetrics {
 public:
  virtual ~TrainerMetrics() = default;

  // The objective family: one series per (metric, epoch), e.g. ("validation_accuracy", 3).
  virtual void SetObjective(const std::string& metric, int epoch, double value) = 0;
  virtual void SetResourceCompleted(int epochs) = 0;
  virtual void SetLoss(double loss) = 0;
  virtual void SetLearningRate(double lr) = 0;
  virtual void SetSamplesPerSecond(double rate) = 0;
  virtual void AddSamples(int64_t samples) = 0;
  virtual void AddOptimizerSteps(int64_t steps, int64_t skipped) = 0;
  virtual void SetDataWaitRatio(double ratio) = 0;
  // Creates the series on first use, so it is absent where no accelerator reports utilization.
  virtual void SetAcceleratorUtilization(double ratio) = 0;
  virtual void SetDeviceMemoryBytes(double bytes) = 0;
  virtual void SetDiverged(bool diverged) = 0;
  // Probe mode: the optimizer steps the final samples/s and data-wait figures cover. Call after
  // setting them: a scrape that shows this series also shows those figures (see metrics.cc).
  virtual void SetProbeMeasuredSteps(int steps) = 0;
};

// Serves the metrics on host:port (port 0: a free port). Fails naming
// --metrics-port, an InvalidArgument, when the address cannot be bound.
class ServedMetrics : public TrainerMetrics {
 public:
  static StatusOr<std::unique_ptr<ServedMetrics>> Start(const std::string& host, int port,
                                                        const MetricsInfo& info);
  // The port actually bound.
  virtual int port() const = 0;
};

// Keeps the values without serving them (--metrics-port -1).
std::unique_ptr<TrainerMetrics> UnservedMetrics(const MetricsInfo& info);

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_METRICS_H_
