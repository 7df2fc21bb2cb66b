#include "trainer-image/image.h"

#include <png.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace bsw::trainer {
namespace {

struct TjDeleter {
  void operator()(void* handle) const { tjDestroy(handle); }
};
using TjHandle = std::unique_ptr<void, TjDeleter>;

bool IsJpeg(const std::vector<uint8_t>& b) {
  return b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF;
}

bool IsPng(const std::vector<uint8_t>& b) {
  static constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  return b.size() >= 8 && std::equal(kSignature, kSignature + 8, b.begin());
}

StatusOr<Image> DecodeJpeg(const std::vector<uint8_t>& bytes, int channels,
                           const std::string& name) {
  thread_local TjHandle handle(tjInitDecompress());
  if (!handle) return InternalError("libjpeg-turbo: cannot create a decompressor");
  int width = 0;
  int height = 0;
  int subsampling = 0;
  int colorspace = 0;
  if (tjDecompressHeader3(handle.get(), bytes.data(), bytes.size(), &width, &height, &subsampling,
                          &colorspace) != 0) {
    return InvalidArgumentError(name + ": corrupt JPEG (" + tjGetErrorStr2(handle.get()) + ")");
  }
  Image image{width, height, channels,
              std::vector<uint8_t>(static_cast<size_t>(width) * height * channels)};
  if (tjDecompress2(handle.get(), bytes.data(), bytes.size(), image.pixels.data(), width, 0, height,
                    channels == 1 ? TJPF_GRAY : TJPF_RGB, TJFLAG_FASTDCT) != 0) {
    return InvalidArgumentError(name + ": corrupt JPEG (" + tjGetErrorStr2(handle.get()) + ")");
  }
  return image;
}

StatusOr<Image> DecodePng(const std::vector<uint8_t>& bytes, int channels,
                          const std::string& name) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_memory(&png, bytes.data(), bytes.size()) == 0) {
    return InvalidArgumentError(name + ": corrupt PNG (" + png.message + ")");
  }
  png.format = channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  Image image{static_cast<int>(png.width), static_cast<int>(png.height), channels,
              std::vector<uint8_t>(PNG_IMAGE_SIZE(png))};
  if (png_image_finish_read(&png, nullptr, image.pixels.data(), 0, nullptr) == 0) {
    std::string message = png.message;
    png_image_free(&png);
    return InvalidArgumentError(name + ": corrupt PNG (" + message + ")");
  }
  return image;
}

}  // namespace

StatusOr<Image> DecodeImage(const std::vector<uint8_t>& bytes, int channels,
                            const std::string& name) {
  if (IsJpeg(bytes)) return DecodeJpeg(bytes, channels, name);
  if (IsPng(bytes)) return DecodePng(bytes, channels, name);
  return InvalidArgumentError(name + ": neither JPEG nor PNG");
}

StatusOr<std::vector<uint8_t>> EncodeJpeg(const Image& image, int quality) {
  TjHandle handle(tjInitCompress());
  if (!handle) return InternalError("libjpeg-turbo: cannot create a compressor");
  unsigned char* out = nullptr;
  unsigned long size = 0;  // NOLINT(runtime/int): the TurboJPEG API type
  const bool gray = image.channels == 1;
  if (tjCompress2(handle.get(), image.pixels.data(), image.width, 0, image.height,
                  gray ? TJPF_GRAY : TJPF_RGB, &out, &size, gray ? TJSAMP_GRAY : TJSAMP_420,
                  quality, TJFLAG_FASTDCT) != 0) {
    std::string message = tjGetErrorStr2(handle.get());
    tjFree(out);
    return InternalError("JPEG encoding failed: " + message);
  }
  std::vector<uint8_t> bytes(out, out + size);
  tjFree(out);
  return bytes;
}

StatusOr<std::vector<uint8_t>> EncodePng(const Image& image) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = image.channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  if (png_image_write_to_memory(&png, nullptr, &size, 0, image.pixels.data(), 0, nullptr) == 0) {
    return InternalError(std::string("PNG encoding failed: ") + png.message);
  }
  std::vector<uint8_t> bytes(size);
  if (png_image_write_to_memory(&png, bytes.data(), &size, 0, image.pixels.data(), 0, nullptr) ==
      0) {
    return InternalError(std::string("PNG encoding failed: ") + png.message);
  }
  bytes.resize(size);
  return bytes;
}

void CropResizeNormalize(const Image& src, Crop crop, int side, bool mirror, float mean,
                         float stddev, float* out) {
  const float scale = static_cast<float>(crop.side) / static_cast<float>(side);
  const float inv_std = 1.0f / stddev;
  const int plane = side * side;
  for (int oy = 0; oy < side; ++oy) {
    const float sy = std::clamp((oy + 0.5f) * scale - 0.5f, 0.0f, crop.side - 1.0f) + crop.y;
    const int y0 = static_cast<int>(sy);
    const int y1 = std::min(y0 + 1, crop.y + crop.side - 1);
    const float wy = sy - y0;
    for (int ox = 0; ox < side; ++ox) {
      const int tx = mirror ? side - 1 - ox : ox;
      const float sx = std::clamp((tx + 0.5f) * scale - 0.5f, 0.0f, crop.side - 1.0f) + crop.x;
      const int x0 = static_cast<int>(sx);
      const int x1 = std::min(x0 + 1, crop.x + crop.side - 1);
      const float wx = sx - x0;
      for (int c = 0; c < src.channels; ++c) {
        auto at = [&](int x, int y) {
          return static_cast<float>(
              src.pixels[(static_cast<size_t>(y) * src.width + x) * src.channels + c]);
        };
        const float top = at(x0, y0) + (at(x1, y0) - at(x0, y0)) * wx;
        const float bottom = at(x0, y1) + (at(x1, y1) - at(x0, y1)) * wx;
        const float value = top + (bottom - top) * wy;
        out[c * plane + oy * side + ox] = (value / 255.0f - mean) * inv_std;
      }
    }
  }
}

Image Resize(const Image& src, int side) {
  const int crop_side = std::min(src.width, src.height);
  std::vector<float> planar(static_cast<size_t>(side) * side * src.channels);
  CropResizeNormalize(src,
                      Crop{(src.width - crop_side) / 2, (src.height - crop_side) / 2, crop_side},
                      side, false, 0.0f, 1.0f / 255.0f, planar.data());
  Image out{side, side, src.channels, std::vector<uint8_t>(planar.size())};
  const int plane = side * side;
  for (int i = 0; i < plane; ++i) {
    for (int c = 0; c < src.channels; ++c) {
      out.pixels[static_cast<size_t>(i) * src.channels + c] =
          static_cast<uint8_t>(std::clamp(std::lround(planar[c * plane + i]), 0L, 255L));
    }
  }
  return out;
}

}  // namespace bsw::trainer
