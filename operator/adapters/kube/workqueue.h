#ifndef BSW_ADAPTERS_KUBE_WORKQUEUE_H_
#define BSW_ADAPTERS_KUBE_WORKQUEUE_H_

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "operator/adapters/kube/rate_limit.h"
#include "operator/ports/clock.h"

namespace bsw::kube {

struct WorkQueueOptions {
  // Per-item backoff for AddRateLimited: base, doubling per requeue, up to max.
  double item_base_seconds = 0.005;
  double item_max_seconds = 1000;
  // The overall bucket AddRateLimited also waits on.
  double qps = 10;
  int burst = 100;
  // Times the delays and the bucket; must outlive the queue. Default: SystemClock::Get().
  const Clock* clock = nullptr;
};

// A queue of keys for controllers, as client-go's rate-limited work queue:
// - a key queued twice before it is taken is processed once (dedup);
// - a key is never handed to two workers at once: re-added while processing, it is queued again
//   only when Done is called;
// - AddRateLimited delays a key by the larger of its own exponential backoff and the overall
//   token bucket's wait; Forget resets the former.
// Thread-safe.
class WorkQueue {
 public:
  explicit WorkQueue(WorkQueueOptions options = {});
  ~WorkQueue();  // Shuts down.

  void Add(const std::string& key);
  void AddAfter(const std::string& key, double delay_seconds);
  void AddRateLimited(const std::string& key);
  // Clears `key`'s failure count after it was processed successfully.
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key) const;

  // Blocks until a key is ready, and returns it; nullopt once ShutDown was called and the ready
  // keys are drained. REQUIRES: Done(key) once the key has been processed.
  std::optional<std::string> Get();
  void Done(const std::string& key);
  void ShutDown();

  // Keys ready to be taken (not counting delayed or in-process ones).
  size_t Len() const;

 private:
  void AddLocked(const std::string& key);
  void PromoteDueLocked(double now_monotonic_seconds);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::set<std::string> dirty_;                 // queued, or to be queued again when Done
  std::set<std::string> processing_;            // taken by Get and not yet Done
  std::multimap<double, std::string> delayed_;  // by when ready, in monotonic seconds
  bool shutting_down_ = false;

  const Clock& clock_;
  ItemBackoff item_backoff_;
  TokenBucket bucket_;
};

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_WORKQUEUE_H_
