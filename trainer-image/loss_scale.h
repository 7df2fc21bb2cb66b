#ifndef BSW_TRAINER_LOSS_SCALE_H_
#define BSW_TRAINER_LOSS_SCALE_H_

#include <cstdint>

namespace bsw::trainer {

// Dynamic loss scaling for fp16: the loss is multiplied by scale() before backward. A step whose
// gradients hold inf/NaN is skipped and halves the scale; every `growth_interval` consecutive
// finite steps double it.
class DynamicLossScale {
 public:
  explicit DynamicLossScale(double initial_scale = 65536.0, int64_t growth_interval = 2000)
      : scale_(initial_scale), growth_interval_(growth_interval) {}

  double scale() const { return scale_; }
  int64_t finite_streak() const { return finite_streak_; }

  // Records whether this step's gradients were all finite; returns whether to apply the step.
  bool Update(bool gradients_finite) {
    if (!gradients_finite) {
      scale_ = scale_ * 0.5 < kMinScale ? kMinScale : scale_ * 0.5;
      finite_streak_ = 0;
      return false;
    }
    if (++finite_streak_ >= growth_interval_) {
      scale_ *= 2.0;
      finite_streak_ = 0;
    }
    return true;
  }

  // Restores the state saved in a checkpoint.
  void Restore(double scale, int64_t finite_streak) {
    scale_ = scale;
    finite_streak_ = finite_streak;
  }

 private:
  static constexpr double kMinScale = 1.0;
  double scale_;
  int64_t growth_interval_;
  int64_t finite_streak_ = 0;
};

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_LOSS_SCALE_H_
