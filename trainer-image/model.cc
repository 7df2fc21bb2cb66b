#include "trainer-image/model.h"

#include <torch/nn.h>

#include <algorithm>
#include <cmath>

namespace bsw::trainer {
namespace {

namespace nn = torch::nn;

// `units` scaled by the width multiplier, at least 1.
int64_t Scaled(int64_t units, double width) {
  return std::max<int64_t>(1, std::llround(static_cast<double>(units) * width));
}

class Mlp final : public Net {
 public:
  Mlp(int64_t inputs, int num_classes, double width)
      : layers_(register_module(
            "layers", nn::Sequential(nn::Flatten(), nn::Linear(inputs, Scaled(512, width)),
                                     nn::ReLU(), nn::Linear(Scaled(512, width), Scaled(256, width)),
                                     nn::ReLU(), nn::Linear(Scaled(256, width), num_classes)))) {}
  torch::Tensor forward(const torch::Tensor& images) override { return layers_->forward(images); }
  at::MemoryFormat memory_format() const override { return at::MemoryFormat::Contiguous; }

 private:
  nn::Sequential layers_;
};

// Appends conv3x3(in->out)+BN+ReLU+maxpool2 to `layers`.
void AddConvBnReluPool(nn::Sequential& layers, int64_t in, int64_t out) {
  layers->push_back(nn::Conv2d(nn::Conv2dOptions(in, out, 3).padding(1)));
  layers->push_back(nn::BatchNorm2d(out));
  layers->push_back(nn::ReLU());
  layers->push_back(nn::MaxPool2d(2));
}

nn::Sequential Cnn2Features(int64_t channels, double width) {
  nn::Sequential layers;
  AddConvBnReluPool(layers, channels, Scaled(32, width));
  AddConvBnReluPool(layers, Scaled(32, width), Scaled(64, width));
  layers->push_back(nn::Flatten());
  return layers;
}

class Cnn2 final : public Net {
 public:
  Cnn2(SampleShape shape, int num_classes, double width)
      : features_(register_module("features", Cnn2Features(shape.channels, width))),
        classifier_(register_module(
            "classifier",
            nn::Sequential(nn::Linear(Scaled(64, width) * (shape.side / 4) * (shape.side / 4),
                                      Scaled(128, width)),
                           nn::ReLU(), nn::Linear(Scaled(128, width), num_classes)))) {}
  torch::Tensor forward(const torch::Tensor& images) override {
    return classifier_->forward(features_->forward(images));
  }

 private:
  nn::Sequential features_;
  nn::Sequential classifier_;
};

class BasicBlock final : public nn::Module {
 public:
  BasicBlock(int64_t in, int64_t out, int64_t stride)
      : conv1_(register_module(
            "conv1",
            nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false)))),
        bn1_(register_module("bn1", nn::BatchNorm2d(out))),
        conv2_(register_module("conv2",
                               nn::Conv2d(nn::Conv2dOptions(out, out, 3).padding(1).bias(false)))),
        bn2_(register_module("bn2", nn::BatchNorm2d(out))) {
    if (stride != 1 || in != out) {
      shortcut_ = register_module(
          "shortcut",
          nn::Sequential(nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)),
                         nn::BatchNorm2d(out)));
    }
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = torch::relu(bn1_->forward(conv1_->forward(x)));
    y = bn2_->forward(conv2_->forward(y));
    return torch::relu(y + (shortcut_ ? shortcut_->forward(x) : x));
  }

 private:
  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  nn::Conv2d conv2_;
  nn::BatchNorm2d bn2_;
  nn::Sequential shortcut_{nullptr};
};

class ResNet final : public Net {
 public:
  ResNet(SampleShape shape, int num_classes, double width)
      : stem_(register_module(
            "stem",
            nn::Sequential(
                nn::Conv2d(
                    nn::Conv2dOptions(shape.channels, Scaled(32, width), 3).padding(1).bias(false)),
                nn::BatchNorm2d(Scaled(32, width)), nn::ReLU()))),
        head_(register_module("head", nn::Linear(Scaled(128, width), num_classes))) {
    int64_t in = Scaled(32, width);
    int index = 0;
    for (int64_t stage : {32, 64, 128}) {
      const int64_t out = Scaled(stage, width);
      for (int b = 0; b < 2; ++b) {
        const int64_t stride = (b == 0 && stage != 32) ? 2 : 1;
        blocks_.push_back(register_module("block" + std::to_string(index++),
                                          std::make_shared<BasicBlock>(in, out, stride)));
        in = out;
      }
    }
  }
  torch::Tensor forward(const torch::Tensor& images) override {
    torch::Tensor x = stem_->forward(images);
    for (auto& block : blocks_) x = block->forward(x);
    return head_->forward(torch::flatten(torch::adaptive_avg_pool2d(x, {1, 1}), 1));
  }

 private:
  nn::Sequential stem_;
  std::vector<std::shared_ptr<BasicBlock>> blocks_;
  nn::Linear head_;
};

}  // namespace

void ApplyMemoryFormat(Net& model) {
  torch::NoGradGuard no_grad;
  auto restride = [&](torch::Tensor& t) {
    if (t.dim() == 4) {
      t.set_data(t.to(t.options(), /*non_blocking=*/false, /*copy=*/true, model.memory_format()));
    }
  };
  for (torch::Tensor& parameter : model.parameters()) restride(parameter);
  for (torch::Tensor& buffer : model.buffers()) restride(buffer);
}

torch::Tensor ToModelLayout(const Net& model, const torch::Tensor& images) {
  if (model.memory_format() == at::MemoryFormat::Contiguous) return images;
  // A copy: for one channel, NCHW strides already count as channels-last-contiguous, and only
  // fresh strides make oneDNN pick its channels-last kernels.
  return images.to(images.options(), /*non_blocking=*/false, /*copy=*/true, model.memory_format());
}

StatusOr<std::shared_ptr<Net>> MakeModel(const std::string& name, SampleShape shape,
                                         int num_classes, double width) {
  if (name == "mlp")
    return std::shared_ptr<Net>(std::make_shared<Mlp>(shape.floats(), num_classes, width));
  if (name == "cnn2")
    return std::shared_ptr<Net>(std::make_shared<Cnn2>(shape, num_classes, width));
  if (name == "resnet")
    return std::shared_ptr<Net>(std::make_shared<ResNet>(shape, num_classes, width));
  return InvalidArgumentError("--model: unknown model '" + name + "'");
}

}  // namespace bsw::trainer
