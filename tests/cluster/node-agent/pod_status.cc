#include "tests/cluster/node-agent/pod_status.h"

#include <chrono>
#include <cmath>

#include "operator/adapters/kube/timestamps.h"

namespace bsw::node_agent {
namespace {

using Json = nlohmann::json;

std::string Time(double unix_seconds) {
  return kube::FormatTime(std::chrono::system_clock::time_point(
      std::chrono::seconds(static_cast<int64_t>(std::floor(unix_seconds)))));
}

// Sets condition `type` in `conditions`, keeping lastTransitionTime when its status is unchanged.
void SetCondition(Json& conditions, const std::string& type, bool status, double since,
                  const std::string& reason = "", const std::string& message = "") {
  Json condition = {{"type", type},
                    {"status", status ? "True" : "False"},
                    {"lastProbeTime", nullptr},
                    {"lastTransitionTime", Time(since)}};
  if (!reason.empty()) condition["reason"] = reason;
  if (!message.empty()) condition["message"] = message;
  for (Json& existing : conditions) {
    if (existing.value("type", "") != type) continue;
    if (existing.value("status", "") == condition["status"] &&
        existing.contains("lastTransitionTime")) {
      condition["lastTransitionTime"] = existing["lastTransitionTime"];
    }
    existing = condition;
    return;
  }
  conditions.push_back(condition);
}

}  // namespace

std::string TerminatedReason(int exit_code) { return exit_code == 0 ? "Completed" : "Error"; }

Json BuildPodStatus(const Json& pod, const ContainerRun& run) {
  Json status = pod.value("status", Json::object());
  const bool waiting = run.started_at == 0;
  const bool terminated = !waiting && run.finished_at.has_value();
  const bool running = !waiting && !terminated;

  if (waiting) {
    status["phase"] = "Pending";
  } else if (running) {
    status["phase"] = "Running";
  } else {
    status["phase"] = run.exit_code == 0 && run.pod_reason.empty() ? "Succeeded" : "Failed";
  }
  if (!run.pod_reason.empty()) {
    status["reason"] = run.pod_reason;
    status["message"] = run.pod_message;
  }
  status["hostIP"] = run.host_ip;
  status["hostIPs"] = Json::array({{{"ip", run.host_ip}}});
  if (!run.pod_ip.empty()) {
    status["podIP"] = run.pod_ip;
    status["podIPs"] = Json::array({{{"ip", run.pod_ip}}});
  }
  status["startTime"] = Time(run.pod_start_time);

  Json conditions = status.value("conditions", Json::array());
  SetCondition(conditions, "PodReadyToStartContainers", !terminated,
               terminated ? *run.finished_at : run.pod_start_time);
  SetCondition(conditions, "Initialized", true, run.pod_start_time);
  const std::string unready = "containers with unready status: [" + run.container_name + "]";
  for (const char* type : {"ContainersReady", "Ready"}) {
    if (running) {
      SetCondition(conditions, type, true, run.started_at);
    } else if (terminated) {
      SetCondition(conditions, type, false, *run.finished_at, "PodCompleted");
    } else {
      SetCondition(conditions, type, false, run.pod_start_time, "ContainersNotReady", unready);
    }
  }
  status["conditions"] = conditions;

  const Json& containers = pod["spec"].value("containers", Json::array());
  Json container = {{"name", run.container_name},
                    {"image", containers.empty() ? "" : containers[0].value("image", "")},
                    {"imageID", ""},
                    {"ready", running},
                    {"started", running},
                    {"restartCount", 0}};
  if (!run.container_id.empty()) container["containerID"] = run.container_id;
  if (waiting) {
    Json state = {{"reason", run.waiting_reason}};
    if (!run.waiting_message.empty()) state["message"] = run.waiting_message;
    container["state"] = {{"waiting", state}};
  } else if (running) {
    container["state"] = {{"running", {{"startedAt", Time(run.started_at)}}}};
  } else {
    Json state = {{"exitCode", run.exit_code},
                  {"reason", run.terminated_reason.empty() ? TerminatedReason(run.exit_code)
                                                           : run.terminated_reason},
                  {"startedAt", Time(run.started_at)},
                  {"finishedAt", Time(*run.finished_at)}};
    if (!run.terminated_message.empty()) state["message"] = run.terminated_message;
    if (!run.container_id.empty()) state["containerID"] = run.container_id;
    container["state"] = {{"terminated", state}};
  }
  status["containerStatuses"] = Json::array({container});
  return status;
}

}  // namespace bsw::node_agent
