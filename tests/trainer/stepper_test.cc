#include "trainer-image/stepper.h"

#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <limits>

#include "trainer-image/model.h"

namespace bsw::trainer {
namespace {

std::shared_ptr<Net> Mlp() {
  torch::manual_seed(42);
  StatusOr<std::shared_ptr<Net>> model = MakeModel("mlp", SampleShape{1, 8}, 10);
  EXPECT_TRUE(model.ok());
  return *model;
}

struct Data {
  torch::Tensor images;
  torch::Tensor labels;
};

Data Batch32() {
  torch::manual_seed(7);
  return Data{torch::randn({32, 1, 8, 8}), torch::randint(0, 10, {32}, torch::kLong)};
}

void ExpectSameParameters(Net& a, Net& b, double tolerance) {
  auto pa = a.parameters();
  auto pb = b.parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_TRUE(torch::allclose(pa[i], pb[i], 0, tolerance)) << "parameter " << i;
  }
}

TEST(Stepper, FourAccumulatedMicroBatchesMatchOneBatchOfFourTimesTheSize) {
  const Data data = Batch32();
  std::shared_ptr<Net> accumulated = Mlp();
  std::shared_ptr<Net> whole = Mlp();
  torch::optim::SGD opt_a(accumulated->parameters(), torch::optim::SGDOptions(0.5));
  torch::optim::SGD opt_w(whole->parameters(), torch::optim::SGDOptions(0.5));
  Stepper stepper_a(accumulated, opt_a, StepperConfig{});
  Stepper stepper_w(whole, opt_w, StepperConfig{});
  for (int round = 0; round < 3; ++round) {
    for (int k = 0; k < 4; ++k) {
      stepper_a.Accumulate(data.images.slice(0, k * 8, k * 8 + 8),
                           data.labels.slice(0, k * 8, k * 8 + 8), 4);
    }
    ASSERT_TRUE(stepper_a.Step());
    stepper_w.Accumulate(data.images, data.labels, 1);
    ASSERT_TRUE(stepper_w.Step());
  }
  ExpectSameParameters(*accumulated, *whole, 1e-5);
  // And the update was real, not two untouched models.
  std::shared_ptr<Net> untouched = Mlp();
  EXPECT_FALSE(torch::allclose(accumulated->parameters()[0], untouched->parameters()[0]));
}

TEST(Stepper, LossScalingSkipsAStepWithNonFiniteGradientsAndLowersTheScale) {
  const Data data = Batch32();
  std::shared_ptr<Net> model = Mlp();
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.5));
  Stepper stepper(model, optimizer, StepperConfig{torch::kCPU, std::nullopt, true});
  const double initial_scale = stepper.loss_scale().scale();
  std::vector<torch::Tensor> before;
  for (const auto& p : model->parameters()) before.push_back(p.detach().clone());

  stepper.Accumulate(data.images, data.labels, 1);
  model->parameters()[2].mutable_grad().view(-1)[5].fill_(std::numeric_limits<float>::infinity());
  model->parameters()[0].mutable_grad().view(-1)[0].fill_(std::numeric_limits<float>::quiet_NaN());
  EXPECT_FALSE(stepper.Step());
  EXPECT_DOUBLE_EQ(stepper.loss_scale().scale(), initial_scale / 2);
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_TRUE(torch::equal(model->parameters()[i], before[i])) << "parameter " << i;
  }

  stepper.Accumulate(data.images, data.labels, 1);
  EXPECT_TRUE(stepper.Step());
  EXPECT_FALSE(torch::equal(model->parameters()[0], before[0]));
}

TEST(Stepper, ScaledGradientsAreUnscaledBeforeTheStep) {
  const Data data = Batch32();
  std::shared_ptr<Net> scaled = Mlp();
  std::shared_ptr<Net> plain = Mlp();
  torch::optim::SGD opt_s(scaled->parameters(), torch::optim::SGDOptions(0.5));
  torch::optim::SGD opt_p(plain->parameters(), torch::optim::SGDOptions(0.5));
  Stepper stepper_s(scaled, opt_s, StepperConfig{torch::kCPU, std::nullopt, true});
  Stepper stepper_p(plain, opt_p, StepperConfig{});
  stepper_s.Accumulate(data.images, data.labels, 2);
  stepper_s.Accumulate(data.images, data.labels, 2);
  ASSERT_TRUE(stepper_s.Step());
  stepper_p.Accumulate(data.images, data.labels, 1);
  ASSERT_TRUE(stepper_p.Step());
  ExpectSameParameters(*scaled, *plain, 1e-5);
}

TEST(Stepper, Bf16AutocastOnCpuTrainsToAFiniteLoss) {
  const Data data = Batch32();
  torch::manual_seed(1);
  StatusOr<std::shared_ptr<Net>> model = MakeModel("cnn2", SampleShape{1, 8}, 10);
  ASSERT_TRUE(model.ok());
  ApplyMemoryFormat(**model);
  torch::optim::SGD optimizer((*model)->parameters(), torch::optim::SGDOptions(0.1));
  Stepper stepper(*model, optimizer, StepperConfig{torch::kCPU, torch::kBFloat16, false});
  const double first =
      stepper.Accumulate(ToModelLayout(**model, data.images), data.labels, 1).item<double>();
  ASSERT_TRUE(stepper.Step());
  for (int i = 0; i < 5; ++i) {
    stepper.Accumulate(ToModelLayout(**model, data.images), data.labels, 1);
    ASSERT_TRUE(stepper.Step());
  }
  const double later =
      stepper.Accumulate(ToModelLayout(**model, data.images), data.labels, 1).item<double>();
  EXPECT_TRUE(std::isfinite(later));
  EXPECT_LT(later, first);
}

}  // namespace
}  // namespace bsw::trainer
