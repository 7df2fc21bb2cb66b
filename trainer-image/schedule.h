#ifndef BSW_TRAINER_SCHEDULE_H_
#define BSW_TRAINER_SCHEDULE_H_

#include <cstdint>

namespace bsw::trainer {

// Linear warmup to the peak, then cosine decay to floor_ratio x peak, over total_steps optimizer
// steps. Step s (0-based) uses LearningRate(s):
//   s <  W: peak * (s + 1) / W                         (W = round(warmup_fraction * total_steps))
//   s >= W: floor + (peak - floor) * (1 + cos(pi * p)) / 2,  p = (s - W) / (total_steps - W - 1)
// so the last warmup step and the first decay step use the peak, and the last step the floor.
class WarmupCosineSchedule {
 public:
  // REQUIRES: peak > 0, 0 <= warmup_fraction < 1, 0 <= floor_ratio <= 1, total_steps >= 1.
  WarmupCosineSchedule(double peak, double warmup_fraction, double floor_ratio,
                       int64_t total_steps);

  double LearningRate(int64_t step) const;
  int64_t warmup_steps() const { return warmup_steps_; }
  int64_t total_steps() const { return total_steps_; }

 private:
  double peak_;
  double floor_;
  int64_t warmup_steps_;
  int64_t total_steps_;
};

// The peak learning rate after --lr-scaling: `lr` itself, or, when linear, lr scaled by the
// effective batch (micro_batch x accumulation_steps) over reference_batch.
double ScaledLearningRate(double lr, bool linear, int64_t micro_batch, int accumulation_steps,
                          int64_t reference_batch);

// Optimizer steps in one epoch of `micro_batches`: one every `accumulation_steps` micro-batches,
// plus one for a remainder at the end of the epoch.
int64_t StepsPerEpoch(int64_t micro_batches, int accumulation_steps);

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_SCHEDULE_H_
