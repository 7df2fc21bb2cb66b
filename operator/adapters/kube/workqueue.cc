#include "operator/adapters/kube/workqueue.h"

#include <algorithm>

namespace bsw::kube {
namespace {

double SteadySeconds(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace

WorkQueue::WorkQueue(WorkQueueOptions options)
    : item_backoff_(options.item_base_seconds, options.item_max_seconds),
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
  auto ready = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(delay_seconds));
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
  double bucket_delay = bucket_.Reserve(SteadySeconds(std::chrono::steady_clock::now()));
  AddAfter(key, std::max(item_delay, bucket_delay));
}

void WorkQueue::Forget(const std::string& key) { item_backoff_.Forget(key); }

int WorkQueue::NumRequeues(const std::string& key) const { return item_backoff_.NumRequeues(key); }

void WorkQueue::PromoteDueLocked(TimePoint now) {
  while (!delayed_.empty() && delayed_.begin()->first <= now) {
    std::string key = delayed_.begin()->second;
    delayed_.erase(delayed_.begin());
    AddLocked(key);
  }
}

std::optional<std::string> WorkQueue::Get() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    PromoteDueLocked(std::chrono::steady_clock::now());
    if (!queue_.empty()) break;
    if (shutting_down_) return std::nullopt;
    if (delayed_.empty()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, delayed_.begin()->first);
    }
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
