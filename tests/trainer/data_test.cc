#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "tests/trainer/scratch_dir.h"
#include "trainer-image/idx.h"
#include "trainer-image/image.h"

namespace bsw::trainer {
namespace {

using testing::ScratchDir;

void WriteGzip(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(file);
}

std::vector<uint8_t> IdxImages(uint8_t count, uint8_t rows, uint8_t cols) {
  std::vector<uint8_t> bytes = {0, 0, 8, 3, 0, 0, 0, count, 0, 0, 0, rows, 0, 0, 0, cols};
  for (int i = 0; i < count * rows * cols; ++i) bytes.push_back(static_cast<uint8_t>(i));
  return bytes;
}

std::vector<uint8_t> IdxLabels(uint8_t count) {
  std::vector<uint8_t> bytes = {0, 0, 8, 1, 0, 0, 0, count};
  for (int i = 0; i < count; ++i) bytes.push_back(static_cast<uint8_t>(i % 10));
  return bytes;
}

TEST(Idx, ReadsGzipImagesAndLabels) {
  const auto dir = ScratchDir("idx_ok");
  WriteGzip(dir / "i.gz", IdxImages(3, 2, 2));
  WriteGzip(dir / "l.gz", IdxLabels(3));
  StatusOr<LabeledImages> data = ReadIdxPair(dir / "i.gz", dir / "l.gz");
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->count, 3);
  EXPECT_EQ(data->rows, 2);
  EXPECT_EQ(data->pixels[11], 11);
  EXPECT_EQ(data->labels[2], 2);
}

TEST(Idx, TruncatedFileIsCorruptAndNamed) {
  const auto dir = ScratchDir("idx_truncated");
  std::vector<uint8_t> images = IdxImages(3, 2, 2);
  images.pop_back();
  WriteGzip(dir / "i.gz", images);
  WriteGzip(dir / "l.gz", IdxLabels(3));
  StatusOr<LabeledImages> data = ReadIdxPair(dir / "i.gz", dir / "l.gz");
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(data.status().message().find("i.gz"), std::string::npos);
}

TEST(Idx, MismatchedCountsAndMissingFilesAreReported) {
  const auto dir = ScratchDir("idx_mismatch");
  WriteGzip(dir / "i.gz", IdxImages(3, 2, 2));
  WriteGzip(dir / "l.gz", IdxLabels(4));
  EXPECT_FALSE(ReadIdxPair(dir / "i.gz", dir / "l.gz").ok());
  StatusOr<LabeledImages> missing = ReadIdxPair(dir / "nope.gz", dir / "l.gz");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(ReadFashionMnist((dir / "no-such-dir").string()).ok());
}

Image Gradient(int side, int channels) {
  Image image{side, side, channels,
              std::vector<uint8_t>(static_cast<size_t>(side * side * channels))};
  for (size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = static_cast<uint8_t>(i * 7);
  return image;
}

TEST(Image, PngRoundTripIsExact) {
  const Image image = Gradient(12, 3);
  StatusOr<std::vector<uint8_t>> png = EncodePng(image);
  ASSERT_TRUE(png.ok());
  StatusOr<Image> decoded = DecodeImage(*png, 3, "x.png");
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->pixels, image.pixels);
}

TEST(Image, JpegRoundTripIsClose) {
  Image image{16, 16, 1, std::vector<uint8_t>(256, 120)};
  StatusOr<std::vector<uint8_t>> jpeg = EncodeJpeg(image, 95);
  ASSERT_TRUE(jpeg.ok());
  StatusOr<Image> decoded = DecodeImage(*jpeg, 1, "x.jpg");
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ASSERT_EQ(decoded->width, 16);
  for (uint8_t p : decoded->pixels) EXPECT_NEAR(p, 120, 2);
}

TEST(Image, GarbageAndTruncatedFilesAreCorruptAndNamed) {
  StatusOr<Image> garbage = DecodeImage({1, 2, 3, 4}, 1, "junk.jpg");
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("junk.jpg"), std::string::npos);
  StatusOr<std::vector<uint8_t>> png = EncodePng(Gradient(8, 1));
  ASSERT_TRUE(png.ok());
  png->resize(png->size() / 2);
  StatusOr<Image> truncated = DecodeImage(*png, 1, "half.png");
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("half.png"), std::string::npos);
}

TEST(Image, CropResizeNormalizeKeepsPixelsAtTheSameSizeAndMirrors) {
  const Image image = Gradient(4, 1);
  std::vector<float> out(16);
  CropResizeNormalize(image, Crop{0, 0, 4}, 4, false, 0.0f, 1.0f / 255.0f, out.data());
  for (int i = 0; i < 16; ++i) EXPECT_NEAR(out[i], image.pixels[i], 1e-3);
  CropResizeNormalize(image, Crop{0, 0, 4}, 4, true, 0.0f, 1.0f / 255.0f, out.data());
  EXPECT_NEAR(out[0], image.pixels[3], 1e-3);
  EXPECT_EQ(Resize(image, 8).width, 8);
}

}  // namespace
}  // namespace bsw::trainer
