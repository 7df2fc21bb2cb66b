#ifndef BSW_TRAINER_IMAGE_H_
#define BSW_TRAINER_IMAGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace bsw::trainer {

// An 8-bit image, interleaved (HWC), 1 (gray) or 3 (RGB) channels.
struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;
  std::vector<uint8_t> pixels;
};

// Decodes JPEG (libjpeg-turbo) or PNG (libpng), chosen by the leading bytes, into `channels`
// (1 or 3) channels. `name` only labels errors. Thread-safe.
StatusOr<Image> DecodeImage(const std::vector<uint8_t>& bytes, int channels,
                            const std::string& name);

// Encodes to JPEG at `quality` (1-100), or to PNG.
StatusOr<std::vector<uint8_t>> EncodeJpeg(const Image& image, int quality);
StatusOr<std::vector<uint8_t>> EncodePng(const Image& image);

// A square crop window in source pixels.
struct Crop {
  int x = 0;
  int y = 0;
  int side = 0;
};

// Resamples `crop` of `src` bilinearly to side x side, optionally mirrored left-right, and
// writes (value/255 - mean) / stddev as planar floats (CHW) to `out`.
// REQUIRES: the crop lies inside src; out holds side*side*src.channels floats.
void CropResizeNormalize(const Image& src, Crop crop, int side, bool mirror, float mean,
                         float stddev, float* out);

// Resamples a whole image to side x side (used by the export command).
Image Resize(const Image& src, int side);

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_IMAGE_H_
