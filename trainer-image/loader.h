#ifndef BSW_TRAINER_LOADER_H_
#define BSW_TRAINER_LOADER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "base/status.h"
#include "trainer-image/dataset.h"

namespace bsw::trainer {

// Host memory for one batch. `owner` keeps the memory alive (for example a pinned tensor).
struct HostBuffer {
  float* images = nullptr;
  int64_t* labels = nullptr;
  std::shared_ptr<void> owner;
};
using HostAllocator = std::function<HostBuffer(int64_t image_floats, int64_t labels)>;

// Plain heap memory.
HostBuffer AllocateHeapBuffer(int64_t image_floats, int64_t labels);

// One batch of a pass. The buffer goes back to the loader's pool when the last copy of `lease`
// is dropped, so a consumer that copies asynchronously keeps it until the copy is done.
struct Batch {
  int64_t index = 0;  // position of the batch in its pass
  int64_t count = 0;  // samples in it (the last batch of a pass may be short)
  float* images = nullptr;
  int64_t* labels = nullptr;
  std::shared_ptr<void> lease;
};

struct LoaderConfig {
  int workers = 0;   // 0: batches are built on the calling thread inside Next()
  int prefetch = 1;  // batches built ahead of the consumer; at least 1 when workers > 0
  int64_t batch_size = 1;
  HostAllocator allocator = AllocateHeapBuffer;
};

// A pool of worker threads that persists across passes and builds batches ahead of the consumer
// into a bounded window. Batches come out in pass order, and their contents depend only on the
// pass (order, augmentation seed), never on the worker count or on timing.
// Not thread-safe: one consumer thread calls StartPass and Next.
class Loader {
 public:
  Loader(std::shared_ptr<const Dataset> dataset, LoaderConfig config);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Starts a pass over the samples `order` in batches of batch_size, beginning at batch
  // `first_batch`, and abandons any pass in progress. Sample k of the pass is augmented (when
  // `augment`) with SampleSeed(augment_seed, k).
  void StartPass(std::vector<int64_t> order, int64_t first_batch, bool augment,
                 uint64_t augment_seed);

  // The next batch of the pass, std::nullopt after the last, or the first error a sample gave.
  StatusOr<std::optional<Batch>> Next();

  int64_t batches_in_pass() const;

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
};

// The training order of `epoch`: a permutation of [0, size) that depends only on seed and epoch.
std::vector<int64_t> EpochOrder(int64_t size, uint64_t seed, int64_t epoch);

// 0, 1, ..., size-1: the evaluation order.
std::vector<int64_t> SequentialOrder(int64_t size);

// The augmentation seed of sample `position` of a pass seeded with `pass_seed`.
uint64_t SampleSeed(uint64_t pass_seed, int64_t position);

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_LOADER_H_
