#ifndef BSW_TESTS_UNIT_ADAPTERS_KUBE_FAKE_APISERVER_H_
#define BSW_TESTS_UNIT_ADAPTERS_KUBE_FAKE_APISERVER_H_

#include <httplib.h>

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "operator/adapters/kube/config.h"

namespace bsw::kube::testing {

using Json = nlohmann::json;

struct RecordedRequest {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> params;
  std::string body;
  std::string content_type;
  std::string authorization;
};

// The value of query parameter `key`, or "<absent>".
std::string Param(const RecordedRequest& request, const std::string& key);

// An in-memory kube-apiserver over plain HTTP on 127.0.0.1, enough for client tests: objects by
// path with resourceVersions, optimistic concurrency on PUT and delete preconditions, merge
// patches, finalizers (a DELETE only marks an object that has some, and removing the last one
// deletes it), the /status subresource, lists with equality and existence label selectors and
// limit/continue paging, and watches that stream the change log from a resourceVersion. A test
// injects faults through a hook that sees every request first.
class FakeApiServer {
 public:
  // Returns true when it has written the response itself.
  using Hook = std::function<bool(const httplib::Request&, httplib::Response&)>;

  FakeApiServer();
  ~FakeApiServer();

  std::string url() const;
  // A configuration for this server with the bearer token "test-token".
  KubeConfig Config() const;

  void SetHook(Hook hook);
  std::vector<RecordedRequest> Requests() const;
  // The stored object at `path` (e.g. /api/v1/namespaces/ns/configmaps/a), or null.
  Json Object(const std::string& path) const;
  // Removes an object without recording a watch event, as if its DELETED event were compacted.
  void ForgetObject(const std::string& path);
  std::string CurrentResourceVersion() const;

 private:
  void Handle(const httplib::Request& request, httplib::Response& response);
  void HandleWatch(const std::string& collection, const httplib::Request& request,
                   httplib::Response& response);
  void Record(const std::string& type, const std::string& collection, const Json& object);

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  Hook hook_;
  std::vector<RecordedRequest> requests_;
  std::map<std::string, Json> objects_;  // by item path
  int64_t resource_version_ = 100;
  struct Change {
    int64_t resource_version;
    std::string collection;
    std::string type;
    Json object;
  };
  std::vector<Change> changes_;
  bool stopping_ = false;
};

// The body of a k8s Status error.
std::string ApiStatusBody(int code, const std::string& reason, const std::string& message);

}  // namespace bsw::kube::testing

#endif  // BSW_TESTS_UNIT_ADAPTERS_KUBE_FAKE_APISERVER_H_
