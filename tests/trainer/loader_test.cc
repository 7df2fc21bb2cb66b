#include "trainer-image/loader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>

namespace bsw::trainer {
namespace {

// Sample i is the pair (i, augmentation seed) and has label i % 10; index 13 fails to load when
// `broken` is set. Loads sleep a little at random so that workers finish out of order.
class FakeDataset final : public Dataset {
 public:
  explicit FakeDataset(int64_t size, bool broken = false) : size_(size), broken_(broken) {}
  int64_t size() const override { return size_; }
  SampleShape shape() const override { return SampleShape{1, 2}; }  // 4 floats
  StatusOr<int64_t> Load(int64_t index, bool augment, uint64_t seed, float* out) const override {
    if (broken_ && index == 13) return InvalidArgumentError("sample13.jpg: corrupt JPEG");
    std::this_thread::sleep_for(std::chrono::microseconds((seed + index * 7) % 200));
    out[0] = static_cast<float>(index);
    out[1] = augment ? static_cast<float>(seed % 1000003) : -1.0f;
    out[2] = 0;
    out[3] = 0;
    return index % 10;
  }

 private:
  int64_t size_;
  bool broken_;
};

struct Seen {
  std::vector<float> values;
  std::vector<int64_t> labels;
  std::vector<int64_t> counts;
  bool operator==(const Seen&) const = default;
};

Seen Drain(int workers, int prefetch, int64_t first_batch, int64_t epoch) {
  auto dataset = std::make_shared<FakeDataset>(103);
  Loader loader(dataset, LoaderConfig{workers, prefetch, 8, AllocateHeapBuffer});
  Seen seen;
  // Two passes through the same loader: workers persist across epochs.
  for (int64_t e = epoch - 1; e <= epoch; ++e) {
    seen = Seen();
    loader.StartPass(EpochOrder(103, 7, e), first_batch, true, 99 + static_cast<uint64_t>(e));
    while (true) {
      StatusOr<std::optional<Batch>> next = loader.Next();
      EXPECT_TRUE(next.ok());
      if (!next.ok() || !next->has_value()) break;
      const Batch& b = **next;
      seen.counts.push_back(b.count);
      for (int64_t i = 0; i < b.count; ++i) {
        seen.values.push_back(b.images[i * 4]);
        seen.values.push_back(b.images[i * 4 + 1]);
        seen.labels.push_back(b.labels[i]);
      }
    }
  }
  return seen;
}

TEST(Loader, OrderIsIdenticalForZeroOneAndFourWorkers) {
  const Seen zero = Drain(0, 0, 0, 2);
  EXPECT_EQ(zero.counts.size(), 13u);
  EXPECT_EQ(zero.counts.back(), 103 - 12 * 8);
  EXPECT_EQ(Drain(1, 1, 0, 2), zero);
  EXPECT_EQ(Drain(4, 2, 0, 2), zero);
  EXPECT_EQ(Drain(4, 16, 0, 2), zero);
}

TEST(Loader, ResumingAtABatchYieldsTheRestOfThePass) {
  const Seen whole = Drain(2, 4, 0, 1);
  const Seen tail = Drain(2, 4, 5, 1);
  ASSERT_EQ(tail.labels.size(), whole.labels.size() - 5 * 8);
  EXPECT_TRUE(std::equal(tail.values.begin(), tail.values.end(), whole.values.begin() + 5 * 16));
}

TEST(Loader, EpochOrdersArePermutationsThatDifferByEpoch) {
  const std::vector<int64_t> a = EpochOrder(1000, 3, 0);
  const std::vector<int64_t> b = EpochOrder(1000, 3, 1);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, EpochOrder(1000, 3, 0));
  std::set<int64_t> unique(a.begin(), a.end());
  EXPECT_EQ(unique.size(), 1000u);
  EXPECT_EQ(*unique.begin(), 0);
  EXPECT_EQ(*unique.rbegin(), 999);
}

TEST(Loader, ASampleThatFailsToLoadEndsThePassWithItsError) {
  for (int workers : {0, 3}) {
    Loader loader(std::make_shared<FakeDataset>(40, true),
                  LoaderConfig{workers, 2, 8, AllocateHeapBuffer});
    loader.StartPass(SequentialOrder(40), 0, false, 0);
    StatusOr<std::optional<Batch>> first = loader.Next();
    ASSERT_TRUE(first.ok());
    StatusOr<std::optional<Batch>> second = loader.Next();
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.status().message().find("sample13.jpg"), std::string::npos);
  }
}

TEST(Loader, AbandoningAPassMidwayStartsTheNextCleanly) {
  Loader loader(std::make_shared<FakeDataset>(64), LoaderConfig{3, 4, 8, AllocateHeapBuffer});
  loader.StartPass(SequentialOrder(64), 0, false, 0);
  ASSERT_TRUE(loader.Next().ok());
  loader.StartPass(SequentialOrder(64), 0, false, 0);
  int64_t first_index = -1;
  int batches = 0;
  while (true) {
    StatusOr<std::optional<Batch>> next = loader.Next();
    ASSERT_TRUE(next.ok());
    if (!next->has_value()) break;
    if (batches++ == 0) first_index = static_cast<int64_t>((*next)->images[0]);
  }
  EXPECT_EQ(first_index, 0);
  EXPECT_EQ(batches, 8);
}

}  // namespace
}  // namespace bsw::trainer
