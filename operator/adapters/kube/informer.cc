#include "operator/adapters/kube/informer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>

#include "operator/adapters/system_clock.h"
#include "operator/core/random.h"

namespace bsw::kube {
namespace {

std::string ResourceVersionOf(const Json& object) {
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return std::string();
  auto rv = metadata->find("resourceVersion");
  return rv != metadata->end() && rv->is_string() ? rv->get<std::string>() : std::string();
}

// Moves a list page's items into `listed` by ObjectKey, skipping items without a name.
void TakeItems(Json& page, std::map<std::string, Json>& listed) {
  auto items = page.find("items");
  if (items == page.end() || !items->is_array()) return;
  for (Json& item : *items) {
    std::string key = ObjectKey(item);
    if (!key.empty()) listed[key] = std::move(item);
  }
}

// The token that asks for a list's next page, or "" on the last page.
std::string ContinueTokenOf(const Json& page) {
  auto metadata = page.find("metadata");
  if (metadata == page.end() || !metadata->is_object()) return std::string();
  auto next = metadata->find("continue");
  return next != metadata->end() && next->is_string() ? next->get<std::string>() : std::string();
}

// Tells the handlers how a fresh list differs from the cache it replaced: what went, what came
// and what changed resourceVersion.
void NotifyRelist(const InformerHandlers& handlers, const std::map<std::string, Json>& old_cache,
                  const std::map<std::string, Json>& listed) {
  for (const auto& [key, object] : old_cache) {
    if (!listed.contains(key) && handlers.on_delete) handlers.on_delete(object);
  }
  for (const auto& [key, object] : listed) {
    auto old = old_cache.find(key);
    if (old == old_cache.end()) {
      if (handlers.on_add) handlers.on_add(object);
    } else if (ResourceVersionOf(old->second) != ResourceVersionOf(object)) {
      if (handlers.on_update) handlers.on_update(old->second, object);
    }
  }
}

}  // namespace

Informer::Informer(Client& client, Resource resource, InformerOptions options,
                   InformerHandlers handlers)
    : client_(client),
      resource_(std::move(resource)),
      options_(std::move(options)),
      handlers_(std::move(handlers)),
      clock_(options_.clock != nullptr ? *options_.clock : SystemClock::Get()),
      random_state_(options_.seed != 0 ? options_.seed
                                       : std::bit_cast<uint64_t>(clock_.MonotonicSeconds())) {}

Informer::~Informer() { Stop(); }

void Informer::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Informer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
  cancel_.Cancel();
  if (thread_.joinable()) thread_.join();
}

bool Informer::HasSynced() const {
  std::lock_guard<std::mutex> lock(mu_);
  return synced_;
}

bool Informer::WaitForSync(double timeout_seconds) const {
  std::unique_lock<std::mutex> lock(mu_);
  return clock_.WaitUntil(cv_, lock, clock_.MonotonicSeconds() + timeout_seconds,
                          [this] { return synced_; });
}

std::optional<Json> Informer::Get(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(key);
  if (it == cache_.end()) return std::nullopt;
  return it->second;
}

std::vector<Json> Informer::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Json> objects;
  objects.reserve(cache_.size());
  for (const auto& [key, object] : cache_) objects.push_back(object);
  return objects;
}

std::string Informer::LastResourceVersion() const {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_version_;
}

double Informer::Uniform() {
  std::lock_guard<std::mutex> lock(mu_);
  Random random(random_state_);
  random_state_ = random.Next();
  return random.Uniform();
}

bool Informer::SleepUnlessStopped(double seconds) {
  std::unique_lock<std::mutex> lock(mu_);
  return !clock_.WaitUntil(cv_, lock, clock_.MonotonicSeconds() + seconds,
                           [this] { return stopped_; });
}

void Informer::Run() {
  double backoff = options_.min_backoff_seconds;
  bool need_list = true;
  while (!cancel_.cancelled()) {
    double started = clock_.MonotonicSeconds();
    int events_before = events_seen_;
    Status status = need_list ? ListAll() : WatchOnce();
    if (cancel_.cancelled()) return;
    if (status.ok() && !need_list && events_seen_ == events_before &&
        clock_.MonotonicSeconds() - started < 1) {
      // A server that ends every watch at once must not be hammered.
      status = UnavailableError("the watch ended at once without events");
    }
    if (status.ok()) {
      // A listed cache, or a watch the server ended on time: carry on from where it left.
      need_list = false;
      backoff = options_.min_backoff_seconds;
      continue;
    }
    if (IsGone(status)) {
      spdlog::info("informer {}: {}; re-listing", resource_.plural, status.message());
      need_list = true;
      continue;
    }
    // Jitter keeps replicas from reconnecting in step.
    double wait = std::min(backoff * (1 + Uniform()), options_.max_backoff_seconds);
    spdlog::warn("informer {}: {}; retrying in {:.2f}s", resource_.plural, status.message(), wait);
    if (!SleepUnlessStopped(wait)) return;
    backoff = std::min(backoff * 2, options_.max_backoff_seconds);
  }
}

Status Informer::ListAll() {
  std::map<std::string, Json> listed;
  std::string resource_version;
  ListOptions list_options;
  list_options.label_selector = options_.label_selector;
  list_options.field_selector = options_.field_selector;
  list_options.limit = options_.list_page_size;
  do {
    StatusOr<Json> page = client_.List(resource_, options_.ns, list_options);
    if (!page.ok()) return page.status();
    TakeItems(*page, listed);
    resource_version = ResourceVersionOf(*page);
    list_options.continue_token = ContinueTokenOf(*page);
  } while (!list_options.continue_token.empty());

  // Replace the cache, then tell the handlers what changed.
  std::map<std::string, Json> old_cache;
  {
    std::lock_guard<std::mutex> lock(mu_);
    old_cache = std::move(cache_);
    cache_ = listed;
    resource_version_ = resource_version;
  }
  NotifyRelist(handlers_, old_cache, listed);
  // Synced only once the handlers have seen the first list.
  {
    std::lock_guard<std::mutex> lock(mu_);
    synced_ = true;
  }
  cv_.notify_all();
  return OkStatus();
}

Status Informer::WatchOnce() {
  WatchOptions watch_options;
  watch_options.label_selector = options_.label_selector;
  watch_options.field_selector = options_.field_selector;
  watch_options.resource_version = LastResourceVersion();
  int span = options_.max_watch_timeout_seconds - options_.min_watch_timeout_seconds;
  watch_options.timeout_seconds =
      options_.min_watch_timeout_seconds + static_cast<int>(Uniform() * (span + 1));
  return client_.Watch(
      resource_, options_.ns, watch_options, [this](const WatchEvent& event) { Apply(event); },
      cancel_);
}

void Informer::Apply(const WatchEvent& event) {
  ++events_seen_;
  std::string resource_version = ResourceVersionOf(event.object);
  if (event.type == "BOOKMARK") {
    std::lock_guard<std::mutex> lock(mu_);
    if (!resource_version.empty()) resource_version_ = resource_version;
    return;
  }
  std::string key = ObjectKey(event.object);
  if (key.empty()) return;
  std::optional<Json> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) old = it->second;
    if (event.type == "DELETED") {
      cache_.erase(key);
    } else {
      cache_[key] = event.object;
    }
    if (!resource_version.empty()) resource_version_ = resource_version;
  }
  if (event.type == "DELETED") {
    if (handlers_.on_delete) handlers_.on_delete(event.object);
  } else if (old) {
    if (handlers_.on_update) handlers_.on_update(*old, event.object);
  } else if (handlers_.on_add) {
    handlers_.on_add(event.object);
  }
}

}  // namespace bsw::kube
