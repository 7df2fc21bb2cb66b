#ifndef BSW_TRAINER_STEPPER_H_
#define BSW_TRAINER_STEPPER_H_

#include <torch/optim/optimizer.h>

#include <memory>
#include <optional>

#include "trainer-image/loss_scale.h"
#include "trainer-image/model.h"

namespace bsw::trainer {

struct StepperConfig {
  torch::Device device = torch::kCPU;
  std::optional<at::ScalarType> autocast;  // bf16 or fp16 autocast on `device`; none: fp32
  bool loss_scaling = false;               // dynamic loss scaling (fp16)
};

// Forward/backward over micro-batches and optimizer steps over their accumulated gradients.
class Stepper {
 public:
  Stepper(std::shared_ptr<Net> model, torch::optim::Optimizer& optimizer, StepperConfig config);

  // Runs forward and backward on one micro-batch; its gradient is weighted by 1/divisor and added
  // to those accumulated since the last Step(). Returns the micro-batch's mean cross-entropy
  // (0-dim float tensor on the device, not divided).
  torch::Tensor Accumulate(const torch::Tensor& images, const torch::Tensor& labels,
                           double divisor);

  // Applies the accumulated gradients and clears them. With loss scaling, a step whose gradients
  // hold inf/NaN is skipped (parameters and optimizer state untouched) and lowers the scale;
  // returns whether the step was applied.
  bool Step();

  DynamicLossScale& loss_scale() { return loss_scale_; }

 private:
  std::shared_ptr<Net> model_;
  torch::optim::Optimizer& optimizer_;
  StepperConfig config_;
  DynamicLossScale loss_scale_;
};

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_STEPPER_H_
