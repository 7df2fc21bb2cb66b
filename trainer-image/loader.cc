#include "trainer-image/loader.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

namespace bsw::trainer {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct Built {
  Status status;
  HostBuffer buffer;
  int64_t count = 0;
};

}  // namespace

struct Loader::Shared {
  std::shared_ptr<const Dataset> dataset;
  LoaderConfig config;
  int64_t sample_floats = 0;

  std::mutex mu;
  std::condition_variable work_cv;   // workers wait for claimable batches
  std::condition_variable ready_cv;  // the consumer waits for its batch; StartPass for idleness
  bool stopping = false;
  uint64_t generation = 0;
  std::vector<int64_t> order;
  bool augment = false;
  uint64_t augment_seed = 0;
  int64_t total_batches = 0;
  int64_t next_claim = 0;
  int64_t next_consume = 0;
  int in_flight = 0;
  std::map<int64_t, Built> ready;
  std::vector<HostBuffer> free_buffers;

  HostBuffer TakeBuffer() {
    if (free_buffers.empty()) {
      return config.allocator(config.batch_size * sample_floats, config.batch_size);
    }
    HostBuffer buffer = std::move(free_buffers.back());
    free_buffers.pop_back();
    return buffer;
  }

  // Fills `buffer` with batch `b` of the pass described by the arguments.
  Built Build(int64_t b, const std::vector<int64_t>& pass_order, bool pass_augment,
              uint64_t pass_seed, HostBuffer buffer) const {
    Built built;
    const int64_t begin = b * config.batch_size;
    const int64_t end =
        std::min<int64_t>(begin + config.batch_size, static_cast<int64_t>(pass_order.size()));
    built.count = end - begin;
    for (int64_t k = begin; k < end && built.status.ok(); ++k) {
      StatusOr<int64_t> label =
          dataset->Load(pass_order[static_cast<size_t>(k)], pass_augment, SampleSeed(pass_seed, k),
                        buffer.images + (k - begin) * sample_floats);
      if (label.ok()) {
        buffer.labels[k - begin] = *label;
      } else {
        built.status = label.status();
      }
    }
    built.buffer = std::move(buffer);
    return built;
  }

  int64_t Window() const { return std::max(1, config.prefetch); }

  void WorkerLoop() {
    std::unique_lock<std::mutex> lock(mu);
    while (true) {
      work_cv.wait(lock, [&] {
        return stopping || (next_claim < total_batches && next_claim < next_consume + Window());
      });
      if (stopping) return;
      const int64_t b = next_claim++;
      const uint64_t my_generation = generation;
      ++in_flight;
      HostBuffer buffer = TakeBuffer();
      // The pass's order is replaced only while no batch is in flight, so reading it unlocked
      // below is safe.
      const std::vector<int64_t>& pass_order = order;
      const bool pass_augment = augment;
      const uint64_t pass_seed = augment_seed;
      lock.unlock();
      Built built = Build(b, pass_order, pass_augment, pass_seed, std::move(buffer));
      lock.lock();
      --in_flight;
      if (my_generation == generation) {
        ready.emplace(b, std::move(built));
      } else {
        free_buffers.push_back(std::move(built.buffer));
      }
      ready_cv.notify_all();
    }
  }

  // Hands out `built` as a Batch whose lease returns the buffer to this pool.
  Batch Lease(int64_t index, Built built, const std::shared_ptr<Shared>& self) {
    Batch batch;
    batch.index = index;
    batch.count = built.count;
    batch.images = built.buffer.images;
    batch.labels = built.buffer.labels;
    auto holder = std::make_shared<HostBuffer>(std::move(built.buffer));
    std::weak_ptr<Shared> weak = self;
    batch.lease = std::shared_ptr<void>(holder.get(), [holder, weak](void*) {
      if (auto pool = weak.lock()) {
        std::lock_guard<std::mutex> guard(pool->mu);
        pool->free_buffers.push_back(std::move(*holder));
      }
    });
    return batch;
  }

  std::vector<std::thread> threads;
};

HostBuffer AllocateHeapBuffer(int64_t image_floats, int64_t labels) {
  auto images = std::shared_ptr<float[]>(new float[static_cast<size_t>(image_floats)]);
  auto label_memory = std::shared_ptr<int64_t[]>(new int64_t[static_cast<size_t>(labels)]);
  HostBuffer buffer;
  buffer.images = images.get();
  buffer.labels = label_memory.get();
  buffer.owner = std::make_shared<std::pair<std::shared_ptr<float[]>, std::shared_ptr<int64_t[]>>>(
      std::move(images), std::move(label_memory));
  return buffer;
}

Loader::Loader(std::shared_ptr<const Dataset> dataset, LoaderConfig config)
    : shared_(std::make_shared<Shared>()) {
  shared_->sample_floats = dataset->shape().floats();
  shared_->dataset = std::move(dataset);
  shared_->config = std::move(config);
  for (int i = 0; i < shared_->config.workers; ++i) {
    shared_->threads.emplace_back([shared = shared_.get()] { shared->WorkerLoop(); });
  }
}

Loader::~Loader() {
  {
    std::lock_guard<std::mutex> guard(shared_->mu);
    shared_->stopping = true;
  }
  shared_->work_cv.notify_all();
  for (std::thread& thread : shared_->threads) thread.join();
}

void Loader::StartPass(std::vector<int64_t> order, int64_t first_batch, bool augment,
                       uint64_t augment_seed) {
  std::unique_lock<std::mutex> lock(shared_->mu);
  ++shared_->generation;
  shared_->ready_cv.wait(lock, [&] { return shared_->in_flight == 0; });
  for (auto& [index, built] : shared_->ready) {
    shared_->free_buffers.push_back(std::move(built.buffer));
  }
  shared_->ready.clear();
  const auto samples = static_cast<int64_t>(order.size());
  shared_->order = std::move(order);
  shared_->augment = augment;
  shared_->augment_seed = augment_seed;
  shared_->total_batches = (samples + shared_->config.batch_size - 1) / shared_->config.batch_size;
  shared_->next_claim = std::min(first_batch, shared_->total_batches);
  shared_->next_consume = shared_->next_claim;
  lock.unlock();
  shared_->work_cv.notify_all();
}

StatusOr<std::optional<Batch>> Loader::Next() {
  Shared& s = *shared_;
  std::unique_lock<std::mutex> lock(s.mu);
  if (s.next_consume >= s.total_batches) return std::optional<Batch>();
  const int64_t b = s.next_consume;
  Built built;
  if (s.threads.empty()) {
    HostBuffer buffer = s.TakeBuffer();
    lock.unlock();
    built = s.Build(b, s.order, s.augment, s.augment_seed, std::move(buffer));
    lock.lock();
    s.next_claim = b + 1;
  } else {
    s.ready_cv.wait(lock, [&] { return s.ready.count(b) > 0; });
    auto node = s.ready.extract(b);
    built = std::move(node.mapped());
  }
  ++s.next_consume;
  lock.unlock();
  s.work_cv.notify_all();
  if (!built.status.ok()) return built.status;
  return std::optional<Batch>(s.Lease(b, std::move(built), shared_));
}

int64_t Loader::batches_in_pass() const {
  std::lock_guard<std::mutex> guard(shared_->mu);
  return shared_->total_batches;
}

std::vector<int64_t> EpochOrder(int64_t size, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order = SequentialOrder(size);
  std::mt19937_64 rng(SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(epoch))));
  for (int64_t i = size - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(rng() % static_cast<uint64_t>(i + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

std::vector<int64_t> SequentialOrder(int64_t size) {
  std::vector<int64_t> order(static_cast<size_t>(size));
  std::iota(order.begin(), order.end(), int64_t{0});
  return order;
}

uint64_t SampleSeed(uint64_t pass_seed, int64_t position) {
  return SplitMix64(pass_seed ^
                    SplitMix64(static_cast<uint64_t>(position) + 0x5851F42D4C957F2Dull));
}

}  // namespace bsw::trainer
