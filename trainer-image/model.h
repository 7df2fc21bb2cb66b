#ifndef BSW_TRAINER_MODEL_H_
#define BSW_TRAINER_MODEL_H_

#include <torch/nn/module.h>

#include <memory>
#include <string>

#include "base/status.h"
#include "trainer-image/dataset.h"

namespace bsw::trainer {

// A classifier: (N, C, S, S) float images to (N, classes) logits.
class Net : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(const torch::Tensor& images) = 0;
  // The layout inputs and 4-D parameters should have: ChannelsLast for convolutional nets, whose
  // oneDNN kernels (and pooling) run several times faster in it on CPU.
  virtual at::MemoryFormat memory_format() const { return at::MemoryFormat::ChannelsLast; }
};

// Restrides every 4-D parameter and buffer of `model` to model.memory_format() in place, so
// optimizers that hold them keep working.
void ApplyMemoryFormat(Net& model);

// `images` restrided to model.memory_format().
torch::Tensor ToModelLayout(const Net& model, const torch::Tensor& images);

// "mlp": 2 hidden layers (512, 256). "cnn2": conv3x3(C->32)+BN+ReLU+maxpool2,
// conv3x3(32->64)+BN+ReLU+maxpool2, FC(64*(S/4)^2->128)+ReLU, FC(128->classes), i.e. FC(3136->128)
// on 28x28 Fashion-MNIST. "resnet": a 3-stage (32/64/128 channels, 2 basic blocks each) ResNet.
// `width` multiplies every one of those layer widths (rounded, at least 1): 1 is the model above,
// 2 doubles its channels and hidden units. Parameters are initialized from the global torch seed.
StatusOr<std::shared_ptr<Net>> MakeModel(const std::string& name, SampleShape shape,
                                         int num_classes, double width = 1.0);

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_MODEL_H_
