#include "trainer-image/idx.h"

#include <zlib.h>

#include <filesystem>

namespace bsw::trainer {
namespace {

// gzopen reads plain files transparently, so one reader serves both forms.
StatusOr<std::vector<uint8_t>> ReadMaybeGzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return NotFoundError(path + ": cannot open");
  std::vector<uint8_t> data;
  uint8_t buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof(buffer))) > 0)
    data.insert(data.end(), buffer, buffer + n);
  int error = Z_OK;
  const char* message = gzerror(file, &error);
  const bool failed = n < 0 || (error != Z_OK && error != Z_STREAM_END);
  const std::string reason = failed ? std::string(message) : std::string();
  gzclose(file);
  if (failed) return InvalidArgumentError(path + ": corrupt gzip data (" + reason + ")");
  return data;
}

uint32_t BigEndian32(const std::vector<uint8_t>& data, size_t offset) {
  return (uint32_t{data[offset]} << 24) | (uint32_t{data[offset + 1]} << 16) |
         (uint32_t{data[offset + 2]} << 8) | uint32_t{data[offset + 3]};
}

// Checks the idx header (unsigned-byte data, `dims` dimensions) and returns the dimensions.
StatusOr<std::vector<uint32_t>> IdxDims(const std::vector<uint8_t>& data, int dims,
                                        const std::string& path) {
  const size_t header = 4 + 4 * static_cast<size_t>(dims);
  if (data.size() < header || data[0] != 0 || data[1] != 0 || data[2] != 0x08 || data[3] != dims) {
    return InvalidArgumentError(path + ": not an idx" + std::to_string(dims) +
                                " unsigned-byte file");
  }
  std::vector<uint32_t> sizes;
  uint64_t elements = 1;
  for (int d = 0; d < dims; ++d) {
    sizes.push_back(BigEndian32(data, 4 + 4 * static_cast<size_t>(d)));
    elements *= sizes.back();
  }
  if (data.size() - header != elements) {
    return InvalidArgumentError(path + ": truncated or oversized (" +
                                std::to_string(data.size() - header) + " data bytes, header says " +
                                std::to_string(elements) + ")");
  }
  return sizes;
}

std::string FirstExisting(const std::string& dir, const std::string& stem) {
  for (const std::string& name : {stem + ".gz", stem}) {
    std::filesystem::path path = std::filesystem::path(dir) / name;
    if (std::filesystem::exists(path)) return path.string();
  }
  return (std::filesystem::path(dir) / (stem + ".gz")).string();
}

}  // namespace

StatusOr<LabeledImages> ReadIdxPair(const std::string& images_path,
                                    const std::string& labels_path) {
  StatusOr<std::vector<uint8_t>> images = ReadMaybeGzip(images_path);
  if (!images.ok()) return images.status();
  StatusOr<std::vector<uint8_t>> labels = ReadMaybeGzip(labels_path);
  if (!labels.ok()) return labels.status();
  StatusOr<std::vector<uint32_t>> image_dims = IdxDims(*images, 3, images_path);
  if (!image_dims.ok()) return image_dims.status();
  StatusOr<std::vector<uint32_t>> label_dims = IdxDims(*labels, 1, labels_path);
  if (!label_dims.ok()) return label_dims.status();
  if ((*image_dims)[0] != (*label_dims)[0]) {
    return InvalidArgumentError(labels_path + ": holds " + std::to_string((*label_dims)[0]) +
                                " labels for " + std::to_string((*image_dims)[0]) + " images");
  }
  LabeledImages out;
  out.count = (*image_dims)[0];
  out.rows = static_cast<int>((*image_dims)[1]);
  out.cols = static_cast<int>((*image_dims)[2]);
  out.pixels.assign(images->begin() + 16, images->end());
  out.labels.assign(labels->begin() + 8, labels->end());
  for (uint8_t label : out.labels) {
    if (label >= 10) return InvalidArgumentError(labels_path + ": label out of range 0-9");
  }
  return out;
}

StatusOr<FashionMnist> ReadFashionMnist(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) {
    return NotFoundError(dir +
                         ": no such dataset directory (install dataset-fashion-mnist or "
                         "pass --data-dir)");
  }
  FashionMnist out;
  StatusOr<LabeledImages> train = ReadIdxPair(FirstExisting(dir, "train-images-idx3-ubyte"),
                                              FirstExisting(dir, "train-labels-idx1-ubyte"));
  if (!train.ok()) return train.status();
  StatusOr<LabeledImages> test = ReadIdxPair(FirstExisting(dir, "t10k-images-idx3-ubyte"),
                                             FirstExisting(dir, "t10k-labels-idx1-ubyte"));
  if (!test.ok()) return test.status();
  out.train = std::move(*train);
  out.test = std::move(*test);
  return out;
}

}  // namespace bsw::trainer
