#include "tests/cluster/node-agent/pod_spec.h"

#include <utility>

namespace bsw::node_agent {
namespace {

using Json = nlohmann::json;

std::string StringAt(const Json& object, const Json::json_pointer& pointer) {
  if (!object.contains(pointer)) return "";
  const Json& value = object.at(pointer);
  return value.is_string() ? value.get<std::string>() : "";
}

// metadata.labels['key'] -> ("labels", "key").
bool ParseMapField(const std::string& path, const std::string& prefix, std::string& key) {
  if (path.rfind(prefix + "['", 0) != 0 || path.size() < prefix.size() + 4 ||
      path.compare(path.size() - 2, 2, "']") != 0) {
    return false;
  }
  key = path.substr(prefix.size() + 2, path.size() - prefix.size() - 4);
  return true;
}

StatusOr<std::string> ResolveFieldRef(const Json& pod, const std::string& path,
                                      const std::string& pod_ip, const std::string& host_ip) {
  if (path == "metadata.name") return StringAt(pod, "/metadata/name"_json_pointer);
  if (path == "metadata.namespace") return StringAt(pod, "/metadata/namespace"_json_pointer);
  if (path == "metadata.uid") return StringAt(pod, "/metadata/uid"_json_pointer);
  if (path == "spec.nodeName") return StringAt(pod, "/spec/nodeName"_json_pointer);
  if (path == "spec.serviceAccountName") {
    return StringAt(pod, "/spec/serviceAccountName"_json_pointer);
  }
  if (path == "status.podIP" || path == "status.podIPs") return pod_ip;
  if (path == "status.hostIP" || path == "status.hostIPs") return host_ip;
  std::string key;
  for (const char* map : {"labels", "annotations"}) {
    if (ParseMapField(path, std::string("metadata.") + map, key)) {
      const Json& values = pod["metadata"].value(map, Json::object());
      auto it = values.find(key);
      return it != values.end() && it->is_string() ? it->get<std::string>() : "";
    }
  }
  return InvalidArgumentError("unsupported fieldRef " + path);
}

}  // namespace

std::string ExpandVariables(const std::string& text,
                            const std::map<std::string, std::string>& vars) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out.push_back(text[i]);
      continue;
    }
    if (text[i + 1] == '$') {
      out.push_back('$');
      ++i;
      continue;
    }
    size_t close = text[i + 1] == '(' ? text.find(')', i + 2) : std::string::npos;
    if (close == std::string::npos) {
      out.push_back('$');
      continue;
    }
    auto it = vars.find(text.substr(i + 2, close - i - 2));
    out += it != vars.end() ? it->second : text.substr(i, close - i + 1);
    i = close;
  }
  return out;
}

StatusOr<LaunchSpec> BuildLaunchSpec(const Json& pod, const std::string& pod_ip,
                                     const std::string& host_ip,
                                     const std::map<std::string, std::string>& base_env) {
  const Json containers = pod.contains("/spec/containers"_json_pointer)
                              ? pod.at("/spec/containers"_json_pointer)
                              : Json::array();
  if (!containers.is_array() || containers.empty()) {
    return InvalidArgumentError("the pod has no container");
  }
  const Json& container = containers[0];
  LaunchSpec spec;
  spec.container_name = container.value("name", "");
  spec.working_dir = container.value("workingDir", "");

  // The full environment, and apart from it what the container itself defines: only the latter
  // is visible to $(VAR) expansion, as in the kubelet.
  std::map<std::string, std::string> env = base_env;
  std::map<std::string, std::string> container_vars;
  std::vector<std::string> order;
  auto define = [&](const std::string& name, const std::string& value, bool from_container) {
    if (!env.contains(name)) order.push_back(name);
    env[name] = value;
    if (from_container) container_vars[name] = value;
  };
  for (const auto& [name, value] : base_env) order.push_back(name);
  define("HOSTNAME", StringAt(pod, "/metadata/name"_json_pointer), false);
  define("POD_IP", pod_ip, false);
  for (const Json& var : container.value("env", Json::array())) {
    std::string name = var.value("name", "");
    if (name.empty()) continue;
    if (var.contains("valueFrom")) {
      const Json& from = var["valueFrom"];
      if (!from.contains("fieldRef")) {
        return InvalidArgumentError("env " + name + ": only valueFrom.fieldRef is supported, got " +
                                    from.dump());
      }
      StatusOr<std::string> value =
          ResolveFieldRef(pod, from["fieldRef"].value("fieldPath", ""), pod_ip, host_ip);
      if (!value.ok()) return InvalidArgumentError("env " + name + ": " + value.status().message());
      define(name, *value, true);
    } else {
      define(name, ExpandVariables(var.value("value", ""), container_vars), true);
    }
  }
  if (!container_vars.contains("BUDGETSWEEP_METRICS_HOST")) {
    define("BUDGETSWEEP_METRICS_HOST", pod_ip, false);
  }
  for (const std::string& name : order) spec.env.push_back(name + "=" + env[name]);

  for (const char* field : {"command", "args"}) {
    for (const Json& word : container.value(field, Json::array())) {
      if (word.is_string())
        spec.argv.push_back(ExpandVariables(word.get<std::string>(), container_vars));
    }
  }
  if (spec.argv.empty()) {
    return InvalidArgumentError("container " + spec.container_name +
                                " has neither command nor args (there is no image to take an "
                                "entrypoint from)");
  }
  return spec;
}

}  // namespace bsw::node_agent
