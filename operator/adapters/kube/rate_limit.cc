#include "operator/adapters/kube/rate_limit.h"

#include <algorithm>
#include <cmath>

namespace bsw::kube {

TokenBucket::TokenBucket(double qps, int burst)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(burst_) {}

double TokenBucket::Reserve(double now_seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  if (last_seconds_ >= 0 && now_seconds > last_seconds_) {
    tokens_ = std::min(burst_, tokens_ + (now_seconds - last_seconds_) * qps_);
  }
  if (now_seconds > last_seconds_) last_seconds_ = now_seconds;
  tokens_ -= 1;
  return tokens_ >= 0 ? 0.0 : -tokens_ / qps_;
}

ItemBackoff::ItemBackoff(double base_seconds, double max_seconds)
    : base_seconds_(base_seconds), max_seconds_(max_seconds) {}

double ItemBackoff::Next(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  int failures = failures_[key]++;
  // 2^failures overflows a double only past 1023 failures; the cap applies long before.
  double delay = base_seconds_ * std::pow(2.0, std::min(failures, 1000));
  return std::min(delay, max_seconds_);
}

void ItemBackoff::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_.erase(key);
}

int ItemBackoff::NumRequeues(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

}  // namespace bsw::kube
