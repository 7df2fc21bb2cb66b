#ifndef BSW_ADAPTERS_KUBE_RATE_LIMIT_H_
#define BSW_ADAPTERS_KUBE_RATE_LIMIT_H_

#include <map>
#include <mutex>
#include <string>

namespace bsw::kube {

// A token bucket: `burst` tokens, refilled at `qps` per second. Time is passed in (seconds on any
// monotonic scale), so that it is exact under test. Thread-safe.
class TokenBucket {
 public:
  TokenBucket(double qps, int burst);

  // Takes a token and returns how many seconds the caller must wait before using it (0 when one
  // is available now). Tokens are reserved in order, so waiting callers are spaced 1/qps apart.
  double Reserve(double now_seconds);

 private:
  std::mutex mu_;
  double qps_;
  double burst_;
  double tokens_;
  double last_seconds_ = -1;
};

// Per-key exponential backoff: base, 2*base, 4*base, ... capped at max. Thread-safe.
class ItemBackoff {
 public:
  ItemBackoff(double base_seconds, double max_seconds);

  // The delay before `key`'s next retry; each call counts one more failure.
  double Next(const std::string& key);
  // Forgets `key`'s failures: its next delay is the base again.
  void Forget(const std::string& key);
  // How many times Next was called for `key` since it was last forgotten.
  int NumRequeues(const std::string& key) const;

 private:
  mutable std::mutex mu_;
  double base_seconds_;
  double max_seconds_;
  std::map<std::string, int> failures_;
};

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_RATE_LIMIT_H_
