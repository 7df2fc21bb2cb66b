#ifndef BSW_ADAPTERS_KUBE_INFORMER_H_
#define BSW_ADAPTERS_KUBE_INFORMER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "operator/adapters/kube/client.h"
#include "operator/ports/clock.h"

namespace bsw::kube {

// Called on the informer's thread, after the cache reflects the change, without a lock held.
// Any of them may be empty.
struct InformerHandlers {
  std::function<void(const Json& object)> on_add;
  std::function<void(const Json& old_object, const Json& new_object)> on_update;
  std::function<void(const Json& last_known)> on_delete;
};

struct InformerOptions {
  std::string ns;  // empty: all namespaces
  std::string label_selector;
  std::string field_selector;
  int64_t list_page_size = 500;
  // Each watch asks the server to end it after a random time in this range.
  int min_watch_timeout_seconds = 300;
  int max_watch_timeout_seconds = 600;
  // After a failed list or watch, wait this long, doubling with jitter up to the maximum.
  double min_backoff_seconds = 0.8;
  double max_backoff_seconds = 30;
  uint64_t seed = 0;  // 0: seeded from the clock
  // Times the backoff and WaitForSync; must outlive the informer. Default: SystemClock::Get().
  const Clock* clock = nullptr;
};

// Lists and then watches one resource from the list's resourceVersion (with bookmarks), keeping a
// cache keyed by namespace/name. On 410 Gone or an Expired ERROR event it re-lists and replaces
// the cache, reporting objects that disappeared as deletes; after other failures it re-watches
// from the last resourceVersion it saw, backing off with jitter.
class Informer {
 public:
  Informer(Client& client, Resource resource, InformerOptions options, InformerHandlers handlers);
  ~Informer();  // Stops.
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Starts the list/watch thread. REQUIRES: called once.
  void Start();
  // Ends the watch and joins the thread; returns promptly even while a watch is open (a list in
  // flight is allowed to finish).
  void Stop();

  // True once the first list is in the cache and its objects have been passed to on_add.
  bool HasSynced() const;
  // Waits up to `timeout_seconds` for HasSynced(); returns it.
  bool WaitForSync(double timeout_seconds) const;

  // Cache reads. `key` is ObjectKey(): "namespace/name" or "name".
  std::optional<Json> Get(const std::string& key) const;
  std::vector<Json> List() const;
  // The resourceVersion the next watch starts from.
  std::string LastResourceVersion() const;

 private:
  void Run();
  Status ListAll();
  Status WatchOnce();
  void Apply(const WatchEvent& event);
  // Sleeps up to `seconds`; false when stopped meanwhile.
  bool SleepUnlessStopped(double seconds);
  double Uniform();

  Client& client_;
  const Resource resource_;
  const InformerOptions options_;
  const InformerHandlers handlers_;
  const Clock& clock_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;  // synced_ or stopped_ changed
  std::map<std::string, Json> cache_;
  std::string resource_version_;
  bool synced_ = false;
  bool stopped_ = false;
  uint64_t random_state_;
  int events_seen_ = 0;  // only touched on the informer's thread

  WatchCancel cancel_;
  std::thread thread_;
};

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_INFORMER_H_
