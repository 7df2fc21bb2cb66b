#include "trainer-image/dataset.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "trainer-image/idx.h"
#include "trainer-image/image.h"

namespace bsw::trainer {
namespace {

// A contiguous range [offset, offset + count) of shared in-memory idx images. No augmentation.
class IdxDataset final : public Dataset {
 public:
  IdxDataset(std::shared_ptr<const LabeledImages> images, int64_t offset, int64_t count, int side)
      : images_(std::move(images)), offset_(offset), count_(count), side_(side) {}

  int64_t size() const override { return count_; }
  SampleShape shape() const override { return SampleShape{1, side_}; }

  StatusOr<int64_t> Load(int64_t index, bool, uint64_t, float* out) const override {
    const int64_t i = offset_ + index;
    const int64_t plane = int64_t{images_->rows} * images_->cols;
    const uint8_t* src = images_->pixels.data() + i * plane;
    if (side_ == images_->rows && side_ == images_->cols) {
      for (int64_t p = 0; p < plane; ++p) out[p] = src[p] * kScale + kShift;
    } else {
      Image image{images_->cols, images_->rows, 1, std::vector<uint8_t>(src, src + plane)};
      CropResizeNormalize(image, Crop{0, 0, std::min(image.width, image.height)}, side_, false,
                          kPixelMean, kPixelStd, out);
    }
    return int64_t{images_->labels[static_cast<size_t>(i)]};
  }

 private:
  static constexpr float kScale = 1.0f / (255.0f * kPixelStd);
  static constexpr float kShift = -kPixelMean / kPixelStd;
  std::shared_ptr<const LabeledImages> images_;
  int64_t offset_;
  int64_t count_;
  int side_;
};

struct FileSample {
  std::string path;
  int64_t label = 0;
};

// Files decoded on every Load: a random square crop of 7/8 of the short side, mirrored with
// probability 1/2, when augmenting; the centered crop otherwise. Both are resized to `side`.
class ImageFolderDataset final : public Dataset {
 public:
  ImageFolderDataset(std::shared_ptr<const std::vector<FileSample>> files, int64_t offset,
                     int64_t count, int channels, int side)
      : files_(std::move(files)),
        offset_(offset),
        count_(count),
        channels_(channels),
        side_(side) {}

  int64_t size() const override { return count_; }
  SampleShape shape() const override { return SampleShape{channels_, side_}; }

  StatusOr<int64_t> Load(int64_t index, bool augment, uint64_t augment_seed,
                         float* out) const override {
    const FileSample& sample = (*files_)[static_cast<size_t>(offset_ + index)];
    std::ifstream file(sample.path, std::ios::binary);
    if (!file) return NotFoundError(sample.path + ": cannot open");
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                               std::istreambuf_iterator<char>());
    StatusOr<Image> image = DecodeImage(bytes, channels_, sample.path);
    if (!image.ok()) return image.status();
    const int short_side = std::min(image->width, image->height);
    const int crop_side = std::max(1, short_side * 7 / 8);
    Crop crop{(image->width - crop_side) / 2, (image->height - crop_side) / 2, crop_side};
    bool mirror = false;
    if (augment) {
      std::mt19937_64 rng(augment_seed);
      crop.x = static_cast<int>(rng() % static_cast<uint64_t>(image->width - crop_side + 1));
      crop.y = static_cast<int>(rng() % static_cast<uint64_t>(image->height - crop_side + 1));
      mirror = (rng() & 1) != 0;
    }
    CropResizeNormalize(*image, crop, side_, mirror, kPixelMean, kPixelStd, out);
    return sample.label;
  }

 private:
  std::shared_ptr<const std::vector<FileSample>> files_;
  int64_t offset_;
  int64_t count_;
  int channels_;
  int side_;
};

StatusOr<std::vector<FileSample>> ReadLabelFile(const std::filesystem::path& dir,
                                                const std::string& name, int num_classes) {
  const std::filesystem::path path = dir / name;
  std::ifstream file(path);
  if (!file) return NotFoundError(path.string() + ": cannot open");
  std::vector<FileSample> samples;
  std::string line;
  int line_number = 0;
  while (std::getline(file, line)) {
    ++line_number;
    if (line.empty()) continue;
    const size_t comma = line.rfind(',');
    char* end = nullptr;
    const long label =
        comma == std::string::npos ? -1 : std::strtol(line.c_str() + comma + 1, &end, 10);
    if (comma == std::string::npos || comma == 0 || *end != '\0' || label < 0 ||
        label >= num_classes) {
      return InvalidArgumentError(path.string() + ":" + std::to_string(line_number) +
                                  ": expected 'relative/path,label' with label in [0, " +
                                  std::to_string(num_classes) + ")");
    }
    samples.push_back(FileSample{(dir / line.substr(0, comma)).string(), label});
  }
  if (samples.empty()) return InvalidArgumentError(path.string() + ": lists no samples");
  return samples;
}

struct FolderMeta {
  int channels = 1;
  int classes = 10;
};

StatusOr<FolderMeta> ReadFolderMeta(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "dataset.json";
  std::ifstream file(path);
  if (!file) return NotFoundError(path.string() + ": cannot open (is --data-dir an image folder?)");
  const nlohmann::json meta = nlohmann::json::parse(file, nullptr, false);
  if (meta.is_discarded() || !meta.is_object() ||
      !meta.value("channels", nlohmann::json()).is_number_integer() ||
      !meta.value("classes", nlohmann::json()).is_number_integer()) {
    return InvalidArgumentError(path.string() +
                                ": expected {\"channels\": 1 or 3, \"classes\": N}");
  }
  FolderMeta out{meta["channels"].get<int>(), meta["classes"].get<int>()};
  if ((out.channels != 1 && out.channels != 3) || out.classes < 2 || out.classes > 100000) {
    return InvalidArgumentError(path.string() + ": channels must be 1 or 3 and classes >= 2");
  }
  return out;
}

// Returns the [offset, count) ranges of train and validation inside a training split of `total`.
StatusOr<std::pair<int64_t, int64_t>> TrainAndValidationCounts(const TrainOptions& o,
                                                               int64_t total) {
  if (o.validation_size >= total) {
    return InvalidArgumentError("--validation-size: " + std::to_string(o.validation_size) +
                                " leaves no training samples of " + std::to_string(total));
  }
  int64_t train = total - o.validation_size;
  if (o.train_limit > 0) train = std::min(train, o.train_limit);
  int64_t validation = o.validation_size;
  if (o.eval_limit > 0) validation = std::min(validation, o.eval_limit);
  return std::make_pair(train, validation);
}

int64_t EvalCount(const TrainOptions& o, int64_t total) {
  return o.eval_limit > 0 ? std::min(o.eval_limit, total) : total;
}

StatusOr<Splits> OpenFashionMnist(const TrainOptions& o) {
  const std::string dir = o.data_dir.empty() ? kDefaultFashionMnistDir : o.data_dir;
  StatusOr<FashionMnist> data = ReadFashionMnist(dir);
  if (!data.ok()) return data.status();
  auto train_images = std::make_shared<const LabeledImages>(std::move(data->train));
  auto test_images = std::make_shared<const LabeledImages>(std::move(data->test));
  StatusOr<std::pair<int64_t, int64_t>> counts = TrainAndValidationCounts(o, train_images->count);
  if (!counts.ok()) return counts.status();
  const int64_t validation_offset = train_images->count - o.validation_size;
  Splits splits;
  splits.train = std::make_shared<IdxDataset>(train_images, 0, counts->first, o.image_size);
  splits.validation =
      std::make_shared<IdxDataset>(train_images, validation_offset, counts->second, o.image_size);
  splits.test =
      std::make_shared<IdxDataset>(test_images, 0, EvalCount(o, test_images->count), o.image_size);
  return splits;
}

StatusOr<Splits> OpenImageFolder(const TrainOptions& o) {
  if (o.data_dir.empty()) return InvalidArgumentError("--data-dir: required for image-folder");
  const std::filesystem::path dir(o.data_dir);
  StatusOr<FolderMeta> meta = ReadFolderMeta(dir);
  if (!meta.ok()) return meta.status();
  StatusOr<std::vector<FileSample>> train = ReadLabelFile(dir, "train.csv", meta->classes);
  if (!train.ok()) return train.status();
  StatusOr<std::vector<FileSample>> test = ReadLabelFile(dir, "test.csv", meta->classes);
  if (!test.ok()) return test.status();
  auto train_files = std::make_shared<const std::vector<FileSample>>(std::move(*train));
  auto test_files = std::make_shared<const std::vector<FileSample>>(std::move(*test));
  const auto total = static_cast<int64_t>(train_files->size());
  StatusOr<std::pair<int64_t, int64_t>> counts = TrainAndValidationCounts(o, total);
  if (!counts.ok()) return counts.status();
  Splits splits;
  splits.num_classes = meta->classes;
  splits.train = std::make_shared<ImageFolderDataset>(train_files, 0, counts->first, meta->channels,
                                                      o.image_size);
  splits.validation = std::make_shared<ImageFolderDataset>(
      train_files, total - o.validation_size, counts->second, meta->channels, o.image_size);
  splits.test = std::make_shared<ImageFolderDataset>(
      test_files, 0, EvalCount(o, static_cast<int64_t>(test_files->size())), meta->channels,
      o.image_size);
  return splits;
}

}  // namespace

StatusOr<Splits> OpenSplits(const TrainOptions& options) {
  return options.dataset == "image-folder" ? OpenImageFolder(options) : OpenFashionMnist(options);
}

}  // namespace bsw::trainer
