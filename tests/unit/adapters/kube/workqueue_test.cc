#include "operator/adapters/kube/workqueue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "tests/mocks/fake_clock.h"

namespace bsw::kube {
namespace {

using GetResult = std::future<std::optional<std::string>>;

WorkQueueOptions On(const FakeClock& clock) {
  WorkQueueOptions options;
  options.clock = &clock;
  return options;
}

// Calls Get on another thread and returns once it waits on the clock: no key was ready.
GetResult BlockedGet(WorkQueue& queue, const FakeClock& clock) {
  GetResult result = std::async(std::launch::async, [&queue] { return queue.Get(); });
  EXPECT_TRUE(clock.AwaitWaiters(1)) << "Get returned at once";
  return result;
}

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

TEST(WorkQueue, ASecondWorkerWaitsForAKeyTheFirstHoldsButTakesOtherKeys) {
  FakeClock clock;
  WorkQueue queue(On(clock));
  queue.Add("a");
  ASSERT_EQ(queue.Get(), "a");  // the first worker holds a
  GetResult second = BlockedGet(queue, clock);
  queue.Add("a");
  queue.Add("b");
  EXPECT_EQ(second.get(), "b");  // sweeps reconcile side by side
  second = BlockedGet(queue, clock);
  queue.Done("a");
  EXPECT_EQ(second.get(), "a");  // a again, only once the first worker is done with it
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
        std::this_thread::yield();
        active.fetch_sub(1);
        ++processed;
        queue.Done(*key);
      }
    });
  }
  // Re-added until the workers took it many times, however late they are scheduled.
  while (processed < 100) {
    queue.Add("same");
    std::this_thread::yield();
  }
  queue.ShutDown();
  for (std::thread& worker : workers) worker.join();
  EXPECT_EQ(overlaps, 0);
}

TEST(WorkQueue, GetBlocksUntilShutDownThenReturnsNothing) {
  FakeClock clock;
  WorkQueue queue(On(clock));
  GetResult blocked = BlockedGet(queue, clock);
  queue.ShutDown();
  EXPECT_EQ(blocked.get(), std::nullopt);
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
  FakeClock clock;
  WorkQueue queue(On(clock));
  queue.AddAfter("late", 0.08);
  queue.AddAfter("early", 0.02);
  EXPECT_EQ(queue.Len(), 0u);
  GetResult got = BlockedGet(queue, clock);
  clock.Advance(0.019);
  EXPECT_TRUE(clock.AwaitWaiters(1)) << "handed out before its delay";
  clock.Advance(0.002);
  EXPECT_EQ(got.get(), "early");
  got = BlockedGet(queue, clock);
  clock.Advance(0.058);
  EXPECT_TRUE(clock.AwaitWaiters(1)) << "handed out before its delay";
  clock.Advance(0.002);
  EXPECT_EQ(got.get(), "late");
}

TEST(WorkQueue, AddRateLimitedBacksOffPerKeyUntilForgotten) {
  FakeClock clock;
  WorkQueueOptions options = On(clock);
  options.item_base_seconds = 0.05;
  WorkQueue queue(options);
  // Takes k, which must come out `delay_seconds` after now (to the millisecond).
  auto get_after = [&](double delay_seconds) {
    GetResult got = BlockedGet(queue, clock);
    clock.Advance(delay_seconds - 0.001);
    EXPECT_TRUE(clock.AwaitWaiters(1)) << "handed out before " << delay_seconds << " s";
    clock.Advance(0.002);
    EXPECT_EQ(got.get(), "k");
    queue.Done("k");
  };
  queue.AddRateLimited("k");
  get_after(0.05);
  queue.AddRateLimited("k");
  get_after(0.1);
  EXPECT_EQ(queue.NumRequeues("k"), 2);
  queue.Forget("k");
  EXPECT_EQ(queue.NumRequeues("k"), 0);
  queue.AddRateLimited("k");
  get_after(0.05);  // the base again
}

TEST(WorkQueue, AddRateLimitedAlsoWaitsForTheOverallBucket) {
  FakeClock clock;
  WorkQueueOptions options = On(clock);
  options.item_base_seconds = 0.001;
  options.qps = 20;
  options.burst = 1;
  WorkQueue queue(options);
  queue.AddRateLimited("a");  // the burst token: the item backoff alone
  queue.AddRateLimited("b");  // 1/20 s later
  clock.Advance(0.001);
  EXPECT_EQ(queue.Get(), "a");
  GetResult got = BlockedGet(queue, clock);
  clock.Advance(0.048);
  EXPECT_TRUE(clock.AwaitWaiters(1)) << "b handed out before the bucket's token";
  clock.Advance(0.002);
  EXPECT_EQ(got.get(), "b");
}

}  // namespace
}  // namespace bsw::kube
