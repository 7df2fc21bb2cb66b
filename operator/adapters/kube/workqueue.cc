#include "operator/adapters/kube/workqueue.h"

#include <algorithm>

#include "operator/adapters/system_clock.h"

namespace bsw::kube {

WorkQueue::WorkQueue(WorkQueueOptions options)
    : clock_(options.clock != nullptr ? *options.clock : SystemClock::Get()),
      item_backoff_(options.item_base_seconds, options.item_max_seconds),
      bucket_(options.qps, options.burst) {}

WorkQueue::~WorkQueue() { ShutDown(); }

void WorkQueue::AddLocked(const std::string& key) {
  if (shutting_down_ || dirty_.contains(key)) return;
  dirty_.insert(key);
  if (processing_.contains(key)) return;
  queue_.push_back(key);
  cv_.notify_one();
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  AddLocked(key);
}

void WorkQueue::AddAfter(const std::string& key, double delay_seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shutting_down_) return;
  if (delay_seconds <= 0) {
    AddLocked(key);
    return;
  }
  double ready = clock_.MonotonicSeconds() + delay_seconds;
  // One pending delay per key: the earlier one wins.
  for (auto it = delayed_.begin(); it != delayed_.end(); ++it) {
    if (it->second != key) continue;
    if (it->first <= ready) return;
    delayed_.erase(it);
    break;
  }
  delayed_.emplace(ready, key);
  cv_.notify_all();
}

void WorkQueue::AddRateLimited(const std::string& key) {
  double item_delay = item_backoff_.Next(key);
  double bucket_delay = bucket_.Reserve(clock_.MonotonicSeconds());
  AddAfter(key, std::max(item_delay, bucket_delay));
}

void WorkQueue::Forget(const std::string& key) { item_backoff_.Forget(key); }

int WorkQueue::NumRequeues(const std::string& key) const { return item_backoff_.NumRequeues(key); }

void WorkQueue::PromoteDueLocked(double now_monotonic_seconds) {
  while (!delayed_.empty() && delayed_.begin()->first <= now_monotonic_seconds) {
    std::string key = delayed_.begin()->second;
    delayed_.erase(delayed_.begin());
    AddLocked(key);
  }
}

std::optional<std::string> WorkQueue::Get() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    PromoteDueLocked(clock_.MonotonicSeconds());
    if (!queue_.empty()) break;
    if (shutting_down_) return std::nullopt;
    clock_.WaitUntil(cv_, lock, delayed_.empty() ? Clock::kNever : delayed_.begin()->first);
  }
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(key);
  dirty_.erase(key);
  return key;
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  processing_.erase(key);
  if (dirty_.contains(key)) {
    queue_.push_back(key);
    cv_.notify_one();
  }
}

void WorkQueue::ShutDown() {
  std::lock_guard<std::mutex> lock(mu_);
  shutting_down_ = true;
  delayed_.clear();
  cv_.notify_all();
}

size_t WorkQueue::Len() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

}  // namespace bsw::kube
