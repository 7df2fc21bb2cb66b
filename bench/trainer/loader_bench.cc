// Decode cost per sample and loader throughput by worker count, without a model:
//   build/bench/trainer/trainer_loader_bench

#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "trainer-image/dataset.h"
#include "trainer-image/image.h"
#include "trainer-image/loader.h"

namespace bsw::trainer {
namespace {

std::vector<uint8_t> Jpeg96() {
  Image image{96, 96, 1, std::vector<uint8_t>(96 * 96)};
  for (size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = static_cast<uint8_t>(i * 13);
  return *EncodeJpeg(image, 90);
}

// Every sample is the same 96x96 JPEG, decoded and augmented on each Load like an image folder.
class JpegDataset final : public Dataset {
 public:
  explicit JpegDataset(int64_t size) : size_(size), bytes_(Jpeg96()) {}
  int64_t size() const override { return size_; }
  SampleShape shape() const override { return SampleShape{1, 28}; }
  StatusOr<int64_t> Load(int64_t, bool augment, uint64_t seed, float* out) const override {
    StatusOr<Image> image = DecodeImage(bytes_, 1, "bench.jpg");
    if (!image.ok()) return image.status();
    const int offset = augment ? static_cast<int>(seed % 13) : 6;
    CropResizeNormalize(*image, Crop{offset, offset, 84}, 28, augment && (seed & 64), kPixelMean,
                        kPixelStd, out);
    return 0;
  }

 private:
  int64_t size_;
  std::vector<uint8_t> bytes_;
};

void BM_DecodeAndAugmentOneSample(benchmark::State& state) {
  JpegDataset dataset(1);
  std::vector<float> out(28 * 28);
  uint64_t seed = 0;
  for (auto _ : state) benchmark::DoNotOptimize(dataset.Load(0, true, seed++, out.data()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeAndAugmentOneSample);

void BM_LoaderEpoch(benchmark::State& state) {
  const int64_t samples = 4096;
  Loader loader(std::make_shared<JpegDataset>(samples),
                LoaderConfig{static_cast<int>(state.range(0)), 8, 128, AllocateHeapBuffer});
  int64_t epoch = 0;
  for (auto _ : state) {
    loader.StartPass(EpochOrder(samples, 1, epoch), 0, true, static_cast<uint64_t>(epoch));
    ++epoch;
    while (true) {
      StatusOr<std::optional<Batch>> next = loader.Next();
      if (!next.ok() || !next->has_value()) break;
    }
  }
  state.SetItemsProcessed(state.iterations() * samples);
}
BENCHMARK(BM_LoaderEpoch)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace bsw::trainer

BENCHMARK_MAIN();
