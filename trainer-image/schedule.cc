#include "trainer-image/schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace bsw::trainer {

WarmupCosineSchedule::WarmupCosineSchedule(double peak, double warmup_fraction, double floor_ratio,
                                           int64_t total_steps)
    : peak_(peak),
      floor_(peak * floor_ratio),
      warmup_steps_(std::llround(warmup_fraction * static_cast<double>(total_steps))),
      total_steps_(total_steps) {}

double WarmupCosineSchedule::LearningRate(int64_t step) const {
  if (step < warmup_steps_) {
    return peak_ * static_cast<double>(step + 1) / static_cast<double>(warmup_steps_);
  }
  const int64_t decay_steps = total_steps_ - warmup_steps_ - 1;
  if (decay_steps <= 0) return peak_;
  const double progress =
      std::min(1.0, static_cast<double>(step - warmup_steps_) / static_cast<double>(decay_steps));
  return floor_ + (peak_ - floor_) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

double ScaledLearningRate(double lr, bool linear, int64_t micro_batch, int accumulation_steps,
                          int64_t reference_batch) {
  if (!linear) return lr;
  return lr * static_cast<double>(micro_batch * accumulation_steps) /
         static_cast<double>(reference_batch);
}

int64_t StepsPerEpoch(int64_t micro_batches, int accumulation_steps) {
  return (micro_batches + accumulation_steps - 1) / accumulation_steps;
}

}  // namespace bsw::trainer
