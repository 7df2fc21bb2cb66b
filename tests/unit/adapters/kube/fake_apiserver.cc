#include "tests/unit/adapters/kube/fake_apiserver.h"

#include <chrono>
#include <regex>

namespace bsw::kube::testing {
namespace {

// (collection prefix incl. namespace)(/name)(/status)
const std::regex kPathPattern(
    R"(^((?:/api/v1|/apis/[^/]+/[^/]+)(?:/namespaces/[^/]+)?/[^/]+?)(?:/([^/]+))?(/status)?$)");

bool MatchesSelector(const Json& object, const std::string& selector) {
  if (selector.empty()) return true;
  size_t start = 0;
  while (start <= selector.size()) {
    size_t end = selector.find(',', start);
    if (end == std::string::npos) end = selector.size();
    std::string term = selector.substr(start, end - start);
    size_t eq = term.find('=');
    std::string key = term.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : term.substr(eq + 1);
    const Json& labels = object["metadata"].value("labels", Json::object());
    if (!labels.contains(key)) return false;
    if (eq != std::string::npos && labels[key] != value) return false;  // else: `key` exists
    start = end + 1;
  }
  return true;
}

}  // namespace

std::string Param(const RecordedRequest& request, const std::string& key) {
  auto it = request.params.find(key);
  return it == request.params.end() ? "<absent>" : it->second;
}

std::string ApiStatusBody(int code, const std::string& reason, const std::string& message) {
  return Json{{"kind", "Status"},   {"apiVersion", "v1"}, {"status", "Failure"},
              {"message", message}, {"reason", reason},   {"code", code}}
      .dump();
}

FakeApiServer::FakeApiServer() {
  auto handler = [this](const httplib::Request& request, httplib::Response& response) {
    Handle(request, response);
  };
  server_.Get(".*", handler);
  server_.Post(".*", handler);
  server_.Put(".*", handler);
  server_.Patch(".*", handler);
  server_.Delete(".*", handler);
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeApiServer::~FakeApiServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  server_.stop();
  thread_.join();
}

std::string FakeApiServer::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

KubeConfig FakeApiServer::Config() const {
  KubeConfig config;
  config.server = url();
  config.token = "test-token";
  return config;
}

void FakeApiServer::SetHook(Hook hook) {
  std::lock_guard<std::mutex> lock(mu_);
  hook_ = std::move(hook);
}

std::vector<RecordedRequest> FakeApiServer::Requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

Json FakeApiServer::Object(const std::string& path) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = objects_.find(path);
  return it == objects_.end() ? Json() : it->second;
}

void FakeApiServer::ForgetObject(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  objects_.erase(path);
}

std::string FakeApiServer::CurrentResourceVersion() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::to_string(resource_version_);
}

void FakeApiServer::Record(const std::string& type, const std::string& collection,
                           const Json& object) {
  changes_.push_back(Change{resource_version_, collection, type, object});
  changed_.notify_all();
}

void FakeApiServer::Handle(const httplib::Request& request, httplib::Response& response) {
  Hook hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(RecordedRequest{request.method, request.path, request.params, request.body,
                                        request.get_header_value("Content-Type"),
                                        request.get_header_value("Authorization")});
    hook = hook_;
  }
  if (hook && hook(request, response)) return;

  std::smatch match;
  if (!std::regex_match(request.path, match, kPathPattern)) {
    response.status = 404;
    response.set_content(ApiStatusBody(404, "NotFound", "no route"), "application/json");
    return;
  }
  const std::string collection = match[1];
  const std::string name = match[2];
  const bool status_subresource = match[3].matched;
  const std::string item_path = collection + "/" + name;
  if (request.method == "GET" && name.empty() && request.get_param_value("watch") == "true") {
    HandleWatch(collection, request, response);
    return;
  }

  auto reply = [&response](int code, const Json& body) {
    response.status = code;
    response.set_content(body.dump(), "application/json");
  };
  auto fail = [&response](int code, const std::string& reason, const std::string& message) {
    response.status = code;
    response.set_content(ApiStatusBody(code, reason, message), "application/json");
  };

  std::lock_guard<std::mutex> lock(mu_);
  if (request.method == "GET" && name.empty()) {
    std::vector<Json> items;
    for (const auto& [path, object] : objects_) {
      if (path.starts_with(collection + "/") &&
          MatchesSelector(object, request.get_param_value("labelSelector"))) {
        items.push_back(object);
      }
    }
    size_t begin =
        request.has_param("continue") ? std::stoul(request.get_param_value("continue")) : 0;
    size_t limit =
        request.has_param("limit") ? std::stoul(request.get_param_value("limit")) : items.size();
    Json list = {{"kind", "List"},
                 {"metadata", {{"resourceVersion", std::to_string(resource_version_)}}},
                 {"items", Json::array()}};
    for (size_t i = begin; i < items.size() && i < begin + limit; ++i) {
      list["items"].push_back(items[i]);
    }
    if (begin + limit < items.size()) list["metadata"]["continue"] = std::to_string(begin + limit);
    reply(200, list);
    return;
  }

  Json body = Json::parse(request.body, nullptr, false);
  auto existing = objects_.find(item_path);
  if (request.method == "POST") {
    std::string new_name = body["metadata"].value("name", "");
    std::string path = collection + "/" + new_name;
    if (objects_.contains(path)) {
      fail(409, "AlreadyExists", new_name + " already exists");
      return;
    }
    ++resource_version_;
    body["metadata"]["resourceVersion"] = std::to_string(resource_version_);
    body["metadata"]["uid"] = "uid-" + std::to_string(resource_version_);
    objects_[path] = body;
    Record("ADDED", collection, body);
    reply(201, body);
    return;
  }
  if (existing == objects_.end()) {
    fail(404, "NotFound", name + " not found");
    return;
  }
  Json& stored = existing->second;
  const std::string stored_version = stored["metadata"]["resourceVersion"];
  if (request.method == "GET") {
    reply(200, stored);
    return;
  }
  if (request.method == "DELETE") {
    if (body.is_object() && body.contains("preconditions") &&
        body["preconditions"].value("resourceVersion", stored_version) != stored_version) {
      fail(409, "Conflict", "precondition failed");
      return;
    }
    ++resource_version_;
    if (!stored["metadata"].value("finalizers", Json::array()).empty()) {
      // Held by a finalizer: marked for deletion, gone once the last finalizer is removed.
      if (!stored["metadata"].contains("deletionTimestamp")) {
        stored["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
      }
      stored["metadata"]["resourceVersion"] = std::to_string(resource_version_);
      Record("MODIFIED", collection, stored);
      reply(200, stored);
      return;
    }
    Json deleted = stored;
    objects_.erase(existing);
    deleted["metadata"]["resourceVersion"] = std::to_string(resource_version_);
    Record("DELETED", collection, deleted);
    reply(200, deleted);
    return;
  }
  Json updated;
  if (request.method == "PUT") {
    std::string version = body["metadata"].value("resourceVersion", "");
    if (!version.empty() && version != stored_version) {
      fail(409, "Conflict",
           "Operation cannot be fulfilled: the object has been modified; please apply your "
           "changes to the latest version and try again");
      return;
    }
    updated = stored;
    if (status_subresource) {
      updated["status"] = body["status"];
    } else {
      Json status = stored.value("status", Json());
      updated = body;
      updated["metadata"]["uid"] = stored["metadata"]["uid"];
      if (!status.is_null()) updated["status"] = status;
    }
  } else {  // PATCH
    if (request.get_header_value("Content-Type") != "application/merge-patch+json") {
      fail(415, "UnsupportedMediaType", "only merge patches");
      return;
    }
    updated = stored;
    updated.merge_patch(body);
  }
  ++resource_version_;
  updated["metadata"]["resourceVersion"] = std::to_string(resource_version_);
  if (updated["metadata"].contains("deletionTimestamp") &&
      updated["metadata"].value("finalizers", Json::array()).empty()) {
    objects_.erase(existing);
    Record("DELETED", collection, updated);
    reply(200, updated);
    return;
  }
  stored = updated;
  Record("MODIFIED", collection, updated);
  reply(200, updated);
}

void FakeApiServer::HandleWatch(const std::string& collection, const httplib::Request& request,
                                httplib::Response& response) {
  int64_t from = request.has_param("resourceVersion")
                     ? std::stoll(request.get_param_value("resourceVersion"))
                     : 0;
  auto next = std::make_shared<int64_t>(from);
  response.set_chunked_content_provider(
      "application/json", [this, collection, next](size_t, httplib::DataSink& sink) {
        std::unique_lock<std::mutex> lock(mu_);
        changed_.wait_for(lock, std::chrono::milliseconds(50));
        if (stopping_) {
          sink.done();
          return true;
        }
        for (const Change& change : changes_) {
          if (change.resource_version <= *next || change.collection != collection) continue;
          std::string line = Json{{"type", change.type}, {"object", change.object}}.dump() + "\n";
          if (!sink.write(line.data(), line.size())) return false;
          *next = change.resource_version;
        }
        return true;
      });
}

}  // namespace bsw::kube::testing
