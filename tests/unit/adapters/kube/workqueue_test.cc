#include "operator/adapters/kube/workqueue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace bsw::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

TEST(WorkQueue, AKeyAddedTwiceBeforeItIsTakenIsProcessedOnce) {
  WorkQueue queue;
  queue.Add("a");
  queue.Add("b");
  queue.Add("a");
  EXPECT_EQ(queue.Len(), 2u);
  EXPECT_EQ(queue.Get(), "a");
  EXPECT_EQ(queue.Get(), "b");
  EXPECT_EQ(queue.Len(), 0u);
}

TEST(WorkQueue, AKeyReAddedWhileProcessingIsHandedOutAgainOnlyAfterDone) {
  WorkQueue queue;
  queue.Add("a");
  ASSERT_EQ(queue.Get(), "a");
  queue.Add("a");
  queue.Add("a");
  EXPECT_EQ(queue.Len(), 0u);  // not handed to a second worker while the first holds it
  queue.Done("a");
  EXPECT_EQ(queue.Len(), 1u);
  EXPECT_EQ(queue.Get(), "a");
  queue.Done("a");
  EXPECT_EQ(queue.Len(), 0u);
}

TEST(WorkQueue, WorkersNeverProcessOneKeyConcurrently) {
  WorkQueue queue;
  std::atomic<int> active{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> processed{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (std::optional<std::string> key = queue.Get()) {
        if (active.fetch_add(1) != 0) ++overlaps;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        active.fetch_sub(1);
        ++processed;
        queue.Done(*key);
      }
    });
  }
  for (int i = 0; i < 200; ++i) {
    queue.Add("same");
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  std::this_thread::sleep_for(milliseconds(20));
  queue.ShutDown();
  for (std::thread& worker : workers) worker.join();
  EXPECT_EQ(overlaps, 0);
  EXPECT_GE(processed, 2);
}

TEST(WorkQueue, GetBlocksUntilShutDownThenReturnsNothing) {
  WorkQueue queue;
  std::thread closer([&] {
    std::this_thread::sleep_for(milliseconds(50));
    queue.ShutDown();
  });
  auto start = steady_clock::now();
  EXPECT_EQ(queue.Get(), std::nullopt);
  EXPECT_GE(steady_clock::now() - start, milliseconds(40));
  closer.join();
  queue.Add("late");
  EXPECT_EQ(queue.Get(), std::nullopt);
}

TEST(WorkQueue, ShutDownDrainsKeysAlreadyQueued) {
  WorkQueue queue;
  queue.Add("a");
  queue.ShutDown();
  EXPECT_EQ(queue.Get(), "a");
  EXPECT_EQ(queue.Get(), std::nullopt);
}

TEST(WorkQueue, AddAfterHandsTheKeyOutOnlyOnceTheDelayPassed) {
  WorkQueue queue;
  auto start = steady_clock::now();
  queue.AddAfter("late", 0.08);
  queue.AddAfter("early", 0.02);
  EXPECT_EQ(queue.Len(), 0u);
  EXPECT_EQ(queue.Get(), "early");
  EXPECT_EQ(queue.Get(), "late");
  EXPECT_GE(steady_clock::now() - start, milliseconds(80));
}

TEST(WorkQueue, AddRateLimitedBacksOffPerKeyUntilForgotten) {
  WorkQueueOptions options;
  options.item_base_seconds = 0.05;
  WorkQueue queue(options);
  auto timed_get = [&] {
    auto start = steady_clock::now();
    std::optional<std::string> key = queue.Get();
    EXPECT_EQ(key, "k");
    queue.Done("k");
    return steady_clock::now() - start;
  };
  queue.AddRateLimited("k");  // 50 ms
  EXPECT_GE(timed_get(), milliseconds(49));
  queue.AddRateLimited("k");  // 100 ms
  EXPECT_GE(timed_get(), milliseconds(99));
  EXPECT_EQ(queue.NumRequeues("k"), 2);
  queue.Forget("k");
  EXPECT_EQ(queue.NumRequeues("k"), 0);
  queue.AddRateLimited("k");  // 50 ms again
  EXPECT_LT(timed_get(), milliseconds(99));
}

TEST(WorkQueue, AddRateLimitedAlsoWaitsForTheOverallBucket) {
  WorkQueueOptions options;
  options.item_base_seconds = 0.001;
  options.qps = 20;
  options.burst = 1;
  WorkQueue queue(options);
  auto start = steady_clock::now();
  queue.AddRateLimited("a");  // the burst token
  queue.AddRateLimited("b");  // 1/20 s later
  EXPECT_EQ(queue.Get(), "a");
  EXPECT_EQ(queue.Get(), "b");
  EXPECT_GE(steady_clock::now() - start, milliseconds(45));
}

}  // namespace
}  // namespace bsw::kube
