#include "trainer-image/export.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "trainer-image/idx.h"
#include "trainer-image/image.h"

namespace bsw::trainer {
namespace {

Status WriteFile(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  if (!file) return UnavailableError(path.string() + ": cannot write");
  return OkStatus();
}

Status ExportSplit(const LabeledImages& images, const std::string& split,
                   const ExportOptions& options) {
  const std::filesystem::path out(options.out_dir);
  std::error_code error;
  std::filesystem::create_directories(out / split, error);
  if (error) return UnavailableError((out / split).string() + ": " + error.message());
  const int64_t count = options.limit > 0 ? std::min(options.limit, images.count) : images.count;
  const char* extension = options.format == "png" ? ".png" : ".jpg";
  std::ofstream labels(out / (split + ".csv"), std::ios::trunc);
  const size_t plane = static_cast<size_t>(images.rows) * images.cols;
  for (int64_t i = 0; i < count; ++i) {
    const auto begin = images.pixels.begin() + static_cast<std::ptrdiff_t>(i * plane);
    Image image =
        Resize(Image{images.cols, images.rows, 1,
                     std::vector<uint8_t>(begin, begin + static_cast<std::ptrdiff_t>(plane))},
               options.size);
    StatusOr<std::vector<uint8_t>> bytes =
        options.format == "png" ? EncodePng(image) : EncodeJpeg(image, options.quality);
    if (!bytes.ok()) return bytes.status();
    char name[32];
    std::snprintf(name, sizeof(name), "%05lld%s", static_cast<long long>(i), extension);
    const std::string relative = split + "/" + name;
    Status status = WriteFile(out / relative, *bytes);
    if (!status.ok()) return status;
    labels << relative << ',' << int{images.labels[static_cast<size_t>(i)]} << '\n';
  }
  if (!labels) return UnavailableError((out / (split + ".csv")).string() + ": cannot write");
  return OkStatus();
}

}  // namespace

Status ExportImageFolder(const ExportOptions& options) {
  const std::string dir = options.data_dir.empty() ? kDefaultFashionMnistDir : options.data_dir;
  StatusOr<FashionMnist> data = ReadFashionMnist(dir);
  if (!data.ok()) return data.status();
  for (const auto& [images, split] :
       {std::pair<const LabeledImages*, std::string>{&data->train, "train"},
        std::pair<const LabeledImages*, std::string>{&data->test, "test"}}) {
    Status status = ExportSplit(*images, split, options);
    if (!status.ok()) return status;
  }
  std::ofstream meta(std::filesystem::path(options.out_dir) / "dataset.json", std::ios::trunc);
  meta << "{\"channels\": 1, \"classes\": 10}\n";
  if (!meta) return UnavailableError(options.out_dir + "/dataset.json: cannot write");
  return OkStatus();
}

}  // namespace bsw::trainer
