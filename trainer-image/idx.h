#ifndef BSW_TRAINER_IDX_H_
#define BSW_TRAINER_IDX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace bsw::trainer {

// Grayscale images with labels, row-major: image i occupies pixels[i*rows*cols, (i+1)*rows*cols).
struct LabeledImages {
  int64_t count = 0;
  int rows = 0;
  int cols = 0;
  std::vector<uint8_t> pixels;
  std::vector<uint8_t> labels;
};

// Reads an idx3 image file and its idx1 label file, each plain or gzip-compressed.
// Errors name the file: NotFound when it is missing or unreadable, InvalidArgument when it is
// corrupt (bad magic, truncated, counts that disagree, labels >= 10).
StatusOr<LabeledImages> ReadIdxPair(const std::string& images_path, const std::string& labels_path);

// Reads Fashion-MNIST from `dir` (train-* and t10k-* idx files, with or without .gz).
struct FashionMnist {
  LabeledImages train;
  LabeledImages test;
};
StatusOr<FashionMnist> ReadFashionMnist(const std::string& dir);

// Where Debian's dataset-fashion-mnist package installs the files.
inline constexpr const char* kDefaultFashionMnistDir = "/usr/share/datasets/fashion-mnist";

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_IDX_H_
