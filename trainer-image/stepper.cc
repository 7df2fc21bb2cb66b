#include "trainer-image/stepper.h"

#include <torch/nn/functional/loss.h>

#include "trainer-image/compat.h"

namespace bsw::trainer {

Stepper::Stepper(std::shared_ptr<Net> model, torch::optim::Optimizer& optimizer,
                 StepperConfig config)
    : model_(std::move(model)), optimizer_(optimizer), config_(config) {}

torch::Tensor Stepper::Accumulate(const torch::Tensor& images, const torch::Tensor& labels,
                                  double divisor) {
  torch::Tensor loss;
  {
    std::optional<compat::AutocastScope> autocast;
    if (config_.autocast) autocast.emplace(config_.device.type(), *config_.autocast);
    torch::Tensor logits = model_->forward(images);
    loss = torch::cross_entropy_loss(logits.to(torch::kFloat), labels);
  }
  const double weight = (config_.loss_scaling ? loss_scale_.scale() : 1.0) / divisor;
  (loss * weight).backward();
  return loss.detach();
}

bool Stepper::Step() {
  bool apply = true;
  if (config_.loss_scaling) {
    const double inverse = 1.0 / loss_scale_.scale();
    std::vector<torch::Tensor> grads;
    for (const auto& group : optimizer_.param_groups()) {
      for (const auto& param : group.params()) {
        if (param.grad().defined()) grads.push_back(param.grad());
      }
    }
    bool finite = true;
    if (!grads.empty()) {
      torch::NoGradGuard no_grad;
      torch::Tensor all_finite =
          torch::ones({}, torch::TensorOptions().dtype(torch::kBool).device(config_.device));
      for (torch::Tensor& grad : grads) {
        grad.mul_(inverse);
        all_finite = all_finite.logical_and(torch::isfinite(grad).all());
      }
      finite = all_finite.item<bool>();
    }
    apply = loss_scale_.Update(finite);
  }
  if (apply) optimizer_.step();
  optimizer_.zero_grad();
  return apply;
}

}  // namespace bsw::trainer
