#ifndef BSW_TRAINER_DATASET_H_
#define BSW_TRAINER_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "trainer-image/options.h"

namespace bsw::trainer {

struct SampleShape {
  int channels = 1;
  int side = 28;
  int64_t floats() const { return int64_t{channels} * side * side; }
};

// A random-access set of labeled samples. Implementations are immutable after construction, so
// Load may be called from many loader threads at once.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual SampleShape shape() const = 0;
  // Writes sample `index` as normalized planar floats (shape().floats() of them) to `out` and
  // returns its label. `augment_seed` selects the random crop and flip; augmentation applies only
  // when `augment` is true and the dataset augments at all.
  // REQUIRES: 0 <= index < size().
  virtual StatusOr<int64_t> Load(int64_t index, bool augment, uint64_t augment_seed,
                                 float* out) const = 0;
};

struct Splits {
  std::shared_ptr<const Dataset> train;
  std::shared_ptr<const Dataset> validation;
  std::shared_ptr<const Dataset> test;
  int num_classes = 10;
};

// Opens the dataset named by options.dataset. Validation is the last options.validation_size
// samples of the training split; training is the first options.train_limit of the rest;
// validation and test are cut to options.eval_limit. Errors name the flag or file.
StatusOr<Splits> OpenSplits(const TrainOptions& options);

// Fashion-MNIST's pixel mean and standard deviation (on [0, 1]); every dataset uses them.
inline constexpr float kPixelMean = 0.2860f;
inline constexpr float kPixelStd = 0.3530f;

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_DATASET_H_
