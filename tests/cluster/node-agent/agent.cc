#include "tests/cluster/node-agent/agent.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <system_error>
#include <utility>

#include "operator/adapters/kube/errors.h"
#include "operator/adapters/kube/json_log.h"
#include "operator/adapters/kube/timestamps.h"
#include "operator/adapters/local/atomic_file.h"
#include "operator/adapters/local/process.h"
#include "tests/cluster/node-agent/pod_spec.h"
#include "tests/cluster/node-agent/shim.h"

namespace bsw::node_agent {

using kube::LogEvent;
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

const kube::Resource kNodes{"", "v1", "nodes", false};
const kube::Resource kPods{"", "v1", "pods", true};
const kube::Resource kNamespaces{"", "v1", "namespaces", false};
const kube::Resource kLeases{"coordination.k8s.io", "v1", "leases", true};
constexpr char kLeaseNamespace[] = "kube-node-lease";
constexpr char kNotReadyTaint[] = "node.kubernetes.io/not-ready";
constexpr char kHostIp[] = "127.0.0.1";
constexpr double kSyncPeriodSeconds = 0.1;
constexpr double kResyncSeconds = 5;
// A shim gets this long to write its pid file before its pod may be declared lost.
constexpr double kShimStartSeconds = 2;
constexpr double kRegisterTimeoutSeconds = 60;

std::string Now(bool microseconds = false) {
  return kube::FormatTime(std::chrono::system_clock::now(), microseconds);
}

// "2024-05-01T12:00:00Z" (fractions ignored) as Unix seconds; 0 when unparsable.
double ParseTime(const std::string& text) {
  tm parsed{};
  if (strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &parsed) == nullptr) return 0;
  return static_cast<double>(timegm(&parsed));
}

std::string Str(const Json& object, const Json::json_pointer& pointer) {
  return object.contains(pointer) && object.at(pointer).is_string()
             ? object.at(pointer).get<std::string>()
             : "";
}

std::optional<int64_t> Int(const Json& object, const Json::json_pointer& pointer) {
  if (!object.contains(pointer) || !object.at(pointer).is_number_integer()) return std::nullopt;
  return object.at(pointer).get<int64_t>();
}

bool Terminal(const Json& pod) {
  std::string phase = Str(pod, "/status/phase"_json_pointer);
  return phase == "Succeeded" || phase == "Failed";
}

bool HasNotReadyTaint(const Json& node) {
  const Json taints = node.contains("/spec/taints"_json_pointer)
                          ? node.at("/spec/taints"_json_pointer)
                          : Json::array();
  for (const Json& taint : taints) {
    if (taint.value("key", "") == kNotReadyTaint) return true;
  }
  return false;
}

}  // namespace

NodeAgent::NodeAgent(kube::Client& client, AgentOptions options, AddressPool pool)
    : client_(client), options_(std::move(options)), pool_(std::move(pool)) {
  for (int i = 0; i < options_.nodes; ++i) {
    node_names_.insert(options_.node_prefix + "-" + std::to_string(i));
  }
}

NodeAgent::~NodeAgent() { Stop(); }

// ---- nodes and leases --------------------------------------------------------------------------

Json NodeAgent::NodeStatus(const Json& current, bool ready) const {
  Json resources = {{"cpu", options_.cpu},
                    {"memory", options_.memory},
                    {"pods", std::to_string(options_.max_pods)},
                    {"nvidia.com/gpu", std::to_string(options_.gpus_per_node)}};
  Json status = current.is_object() ? current : Json::object();
  status["capacity"] = resources;
  status["allocatable"] = resources;
  status["addresses"] = Json::array({{{"type", "InternalIP"}, {"address", kHostIp}},
                                     {{"type", "Hostname"}, {"address", "localhost"}}});
  status["nodeInfo"] = {{"machineID", ""},
                        {"systemUUID", ""},
                        {"bootID", ""},
                        {"kernelVersion", ""},
                        {"osImage", "bsw-node-agent"},
                        {"containerRuntimeVersion", "bsw-shim://1"},
                        {"kubeletVersion", "bsw-node-agent"},
                        {"kubeProxyVersion", ""},
                        {"operatingSystem", "linux"},
                        {"architecture", "amd64"}};
  std::string heartbeat = Now();
  Json wanted = Json::array();
  for (const char* pressure : {"MemoryPressure", "DiskPressure", "PIDPressure"}) {
    wanted.push_back({{"type", pressure},
                      {"status", "False"},
                      {"reason", std::string("KubeletHasNo") + pressure},
                      {"message", "bsw-node-agent does not measure pressure"}});
  }
  wanted.push_back(
      {{"type", "Ready"},
       {"status", ready ? "True" : "False"},
       {"reason", ready ? "KubeletReady" : "NodeAgentStopped"},
       {"message", ready ? "bsw-node-agent is posting ready status" : "bsw-node-agent stopped"}});
  Json previous = status.value("conditions", Json::array());
  for (Json& condition : wanted) {
    condition["lastHeartbeatTime"] = heartbeat;
    condition["lastTransitionTime"] = heartbeat;
    for (const Json& old : previous) {
      if (old.value("type", "") == condition["type"] &&
          old.value("status", "") == condition["status"] && old.contains("lastTransitionTime")) {
        condition["lastTransitionTime"] = old["lastTransitionTime"];
      }
    }
  }
  status["conditions"] = wanted;
  status["daemonEndpoints"] = {{"kubeletEndpoint", {{"Port", 0}}}};
  return status;
}

Status NodeAgent::RegisterNode(const std::string& name) {
  Json labels = {{"kubernetes.io/hostname", name},
                 {"kubernetes.io/os", "linux"},
                 {"kubernetes.io/arch", "amd64"},
                 {"budgetsweep.dev/node-agent", "true"}};
  for (const auto& [key, value] : options_.node_labels) labels[key] = value;
  Json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", name}, {"labels", labels}}},
               {"spec", Json::object()},
               {"status", NodeStatus(Json::object(), true)}};
  StatusOr<Json> created = client_.Create(kNodes, "", node);
  if (created.ok() && !HasNotReadyTaint(*created)) {
    LogEvent("info", "node_registered", {{"node", name}});
    return OkStatus();
  }
  if (!created.ok() && !kube::IsAlreadyExists(created.status())) return created.status();

  // Re-registration, or a taint added on creation (the TaintNodesByCondition admission plugin):
  // our labels, no not-ready taint, and a fresh status.
  Status updated = kube::RetryOnConflict([&]() -> Status {
    StatusOr<Json> current = client_.Get(kNodes, "", name);
    if (!current.ok()) return current.status();
    Json object = *current;
    for (const auto& [key, value] : labels.items()) object["metadata"]["labels"][key] = value;
    Json taints = Json::array();
    for (const Json& taint : object["spec"].value("taints", Json::array())) {
      if (taint.value("key", "") != kNotReadyTaint) taints.push_back(taint);
    }
    object["spec"]["taints"] = taints;
    if (taints.empty()) object["spec"].erase("taints");
    StatusOr<Json> written = client_.Update(kNodes, "", object);
    if (!written.ok()) return written.status();
    Json with_status = *written;
    with_status["status"] = NodeStatus(written->value("status", Json::object()), true);
    return client_.UpdateStatus(kNodes, "", with_status).status();
  });
  if (updated.ok()) LogEvent("info", "node_reregistered", {{"node", name}});
  return updated;
}

Status NodeAgent::RenewLease(const std::string& name) {
  return kube::RetryOnConflict([&]() -> Status {
    StatusOr<Json> current = client_.Get(kLeases, kLeaseNamespace, name);
    if (!current.ok() && !kube::IsNotFound(current.status())) return current.status();
    Json lease = current.ok()
                     ? *current
                     : Json{{"apiVersion", "coordination.k8s.io/v1"},
                            {"kind", "Lease"},
                            {"metadata", {{"name", name}, {"namespace", kLeaseNamespace}}}};
    lease["spec"]["holderIdentity"] = name;
    lease["spec"]["leaseDurationSeconds"] = options_.lease_duration_seconds;
    lease["spec"]["renewTime"] = Now(true);
    if (current.ok()) return client_.Update(kLeases, kLeaseNamespace, lease).status();
    StatusOr<Json> node = client_.Get(kNodes, "", name);
    if (node.ok()) {
      lease["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", "v1"},
                                                           {"kind", "Node"},
                                                           {"name", name},
                                                           {"uid", (*node)["metadata"]["uid"]}}});
    }
    return client_.Create(kLeases, kLeaseNamespace, lease).status();
  });
}

Status NodeAgent::Heartbeat(const std::string& name, bool ready) {
  Status status = kube::RetryOnConflict([&]() -> Status {
    StatusOr<Json> current = client_.Get(kNodes, "", name);
    if (!current.ok()) return current.status();
    Json object = *current;
    if (!ready) {
      // Nothing else lifts a node's taints here: the agent taints its own nodes when it stops so
      // that the scheduler stops binding pods to them.
      if (!HasNotReadyTaint(object)) {
        Json taints = object["spec"].value("taints", Json::array());
        taints.push_back({{"key", kNotReadyTaint}, {"effect", "NoSchedule"}});
        object["spec"]["taints"] = taints;
        StatusOr<Json> written = client_.Update(kNodes, "", object);
        if (!written.ok()) return written.status();
        object = *written;
      }
    }
    object["status"] = NodeStatus(object.value("status", Json::object()), ready);
    return client_.UpdateStatus(kNodes, "", object).status();
  });
  if (kube::IsNotFound(status) && ready) return RegisterNode(name);
  return status;
}

void NodeAgent::HeartbeatLoop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, std::chrono::duration<double>(options_.heartbeat_seconds),
                 [&] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    for (const std::string& name : node_names_) {
      Status lease = RenewLease(name);
      if (!lease.ok()) {
        LogEvent("warn", "lease_renew_failed", {{"node", name}, {"error", lease.message()}});
      }
      Status node = Heartbeat(name, true);
      if (!node.ok()) {
        LogEvent("warn", "node_heartbeat_failed", {{"node", name}, {"error", node.message()}});
      }
    }
    lock.lock();
  }
}

// ---- start and stop ----------------------------------------------------------------------------

Status NodeAgent::Start() {
  std::error_code error;
  fs::create_directories(options_.work_dir / "pods", error);
  fs::create_directories(options_.work_dir / "logs", error);
  if (error) {
    return InvalidArgumentError("work dir " + options_.work_dir.string() + ": " + error.message());
  }
  // The apiserver may still be starting: retry for a while, as a kubelet would.
  double backoff_seconds = 0.5;
  const double give_up = local::NowUnixSeconds() + kRegisterTimeoutSeconds;
  auto retry = [&](const std::string& what, const std::function<Status()>& attempt) -> Status {
    while (true) {
      Status status = attempt();
      if (status.ok() || local::NowUnixSeconds() + backoff_seconds > give_up) return status;
      LogEvent("warn", "register_failed",
               {{"what", what}, {"error", status.message()}, {"retry_in", backoff_seconds}});
      std::this_thread::sleep_for(std::chrono::duration<double>(backoff_seconds));
      backoff_seconds = std::min(backoff_seconds * 2, 5.0);
    }
  };
  Status registered = retry(kLeaseNamespace, [&]() -> Status {
    Status created =
        client_.Create(kNamespaces, "", Json{{"metadata", {{"name", kLeaseNamespace}}}}).status();
    return kube::IsAlreadyExists(created) ? OkStatus() : created;
  });
  for (const std::string& name : node_names_) {
    if (!registered.ok()) break;
    registered = retry(name, [&]() -> Status {
      Status node = RegisterNode(name);
      return node.ok() ? RenewLease(name) : node;
    });
  }
  if (!registered.ok()) return registered;
  LoadRecords();

  kube::InformerHandlers handlers;
  auto mark = [this](const Json& pod) {
    if (!IsOurNode(Str(pod, "/spec/nodeName"_json_pointer))) return;
    std::lock_guard lock(mu_);
    dirty_.insert(kube::ObjectKey(pod));
    cv_.notify_all();
  };
  handlers.on_add = mark;
  handlers.on_update = [mark](const Json&, const Json& pod) { mark(pod); };
  handlers.on_delete = mark;
  pods_ = std::make_unique<kube::Informer>(client_, kPods, kube::InformerOptions{},
                                           std::move(handlers));
  pods_->Start();
  if (!pods_->WaitForSync(60)) {
    pods_->Stop();
    return UnavailableError("the pod informer did not sync within 60 s");
  }
  LogEvent("info", "agent_started",
           {{"nodes", node_names_},
            {"gpus_per_node", options_.gpus_per_node},
            {"work_dir", options_.work_dir.string()},
            {"recovered_pods", runs_.size()}});
  sync_thread_ = std::thread([this] { SyncLoop(); });
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
  return OkStatus();
}

void NodeAgent::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
    cv_.notify_all();
  }
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  if (sync_thread_.joinable()) sync_thread_.join();  // it kills the pods on its way out
  if (pods_) pods_->Stop();
  for (const std::string& name : node_names_) {
    Status status = Heartbeat(name, false);
    if (!status.ok()) {
      LogEvent("warn", "node_not_ready_failed", {{"node", name}, {"error", status.message()}});
    }
  }
  LogEvent("info", "agent_stopped");
}

// ---- records -----------------------------------------------------------------------------------

Status NodeAgent::SaveRecord(const Run& run) const {
  const ContainerRun& c = run.container;
  Json record = {{"key", run.key},
                 {"uid", run.uid},
                 {"node", run.node},
                 {"logFile", run.log_file},
                 {"containerName", c.container_name},
                 {"podIP", c.pod_ip},
                 {"podStartTime", c.pod_start_time},
                 {"startedAt", c.started_at},
                 {"waitingReason", c.waiting_reason},
                 {"waitingMessage", c.waiting_message},
                 {"containerID", c.container_id},
                 {"shimPid", run.shim_pid},
                 {"shimStartTicks", run.shim_start_ticks},
                 {"deadlineExceeded", run.deadline_exceeded},
                 {"killMessage", run.kill_message}};
  return local::WriteFileAtomically(run.dir / "record.json", record.dump() + "\n");
}

void NodeAgent::LoadRecords() {
  std::error_code error;
  for (const fs::directory_entry& entry :
       fs::directory_iterator(options_.work_dir / "pods", error)) {
    StatusOr<std::string> text = local::ReadFile(entry.path() / "record.json");
    Json record = text.ok() ? Json::parse(*text, nullptr, false) : Json();
    if (!record.is_object() || !IsOurNode(record.value("node", ""))) continue;
    Run run;
    run.key = record.value("key", "");
    run.uid = record.value("uid", "");
    run.node = record.value("node", "");
    run.dir = entry.path();
    run.log_file = record.value("logFile", "");
    run.container.container_name = record.value("containerName", "");
    run.container.pod_ip = record.value("podIP", "");
    run.container.host_ip = kHostIp;
    run.container.pod_start_time = record.value("podStartTime", 0.0);
    run.container.started_at = record.value("startedAt", 0.0);
    run.container.waiting_reason = record.value("waitingReason", "");
    run.container.waiting_message = record.value("waitingMessage", "");
    run.container.container_id = record.value("containerID", "");
    run.shim_pid = record.value("shimPid", 0);
    run.shim_start_ticks = record.value("shimStartTicks", std::uint64_t{0});
    run.deadline_exceeded = record.value("deadlineExceeded", false);
    run.kill_message = record.value("killMessage", "");
    if (run.deadline_exceeded) {
      run.container.pod_reason = "DeadlineExceeded";
      run.container.pod_message = "Pod was active on the node longer than the specified deadline";
    }
    Observe(run, local::NowUnixSeconds());
    if (!run.container.finished_at && !run.container.pod_ip.empty()) {
      run.address_held = pool_.Reserve(run.container.pod_ip);
    }
    LogEvent(
        "info", "pod_recovered",
        {{"pod", run.key}, {"uid", run.uid}, {"running", !run.container.finished_at.has_value()}});
    runs_.emplace(run.uid, std::move(run));
  }
}

// ---- pods --------------------------------------------------------------------------------------

void NodeAgent::SyncLoop() {
  double last_resync = 0;
  while (true) {
    std::set<std::string> keys;
    bool stopping = false;
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::duration<double>(kSyncPeriodSeconds),
                   [&] { return stopping_ || !dirty_.empty(); });
      keys.swap(dirty_);
      stopping = stopping_;
    }
    if (stopping) break;
    while (waitpid(-1, nullptr, WNOHANG) > 0) {  // reap the shims this process started
    }
    double now = local::NowUnixSeconds();
    if (now - last_resync >= kResyncSeconds) {
      last_resync = now;
      for (const Json& pod : pods_->List()) {
        if (IsOurNode(Str(pod, "/spec/nodeName"_json_pointer))) keys.insert(kube::ObjectKey(pod));
      }
      for (const auto& [uid, run] : runs_) keys.insert(run.key);
    }
    for (const auto& [uid, run] : runs_) {
      if (!Settled(run)) keys.insert(run.key);
    }
    for (const std::string& key : keys) SyncKey(key);
  }
  ShutdownPods();
}

bool NodeAgent::Settled(const Run& run) const {
  return run.container.finished_at.has_value() && !run.last_written.is_null() && !run.address_held;
}

void NodeAgent::SyncKey(const std::string& key) {
  std::optional<Json> pod = pods_->Get(key);
  std::string uid = pod ? Str(*pod, "/metadata/uid"_json_pointer) : "";
  if (pod && IsOurNode(Str(*pod, "/spec/nodeName"_json_pointer))) SyncPod(*pod);
  // Runs under this key whose pod is gone from the API (or replaced by a pod with a new uid).
  for (auto it = runs_.begin(); it != runs_.end();) {
    if (it->second.key != key || it->first == uid) {
      ++it;
      continue;
    }
    Run& run = it->second;
    double now = local::NowUnixSeconds();
    Observe(run, now);
    if (!run.container.finished_at) {
      // Force-deleted while running: the process goes at once, as with the kubelet.
      BeginKill(run, 0, "the pod was deleted from the API", now);
      DriveKill(run, now);
      ++it;
      continue;
    }
    ForgetRun(run);
    it = runs_.erase(it);
  }
}

void NodeAgent::ForgetRun(Run& run) {
  if (run.address_held) pool_.Release(run.container.pod_ip);
  run.address_held = false;
  std::error_code error;
  fs::remove_all(run.dir, error);  // the log stays in <work-dir>/logs
  LogEvent("info", "pod_forgotten",
           {{"pod", run.key},
            {"uid", run.uid},
            {"startedAt", run.container.started_at},
            {"finishedAt", run.container.finished_at.value_or(0.0)}});
}

void NodeAgent::SyncPod(const Json& pod) {
  const std::string uid = Str(pod, "/metadata/uid"_json_pointer);
  const bool deleting = pod["metadata"].contains("deletionTimestamp");
  auto it = runs_.find(uid);
  if (it == runs_.end()) {
    if (Terminal(pod)) return;
    const Json statuses = pod.contains("/status/containerStatuses"_json_pointer)
                              ? pod.at("/status/containerStatuses"_json_pointer)
                              : Json::array();
    bool started = false;
    for (const Json& status : statuses) {
      const Json state = status.value("state", Json::object());
      started |= state.contains("running") || state.contains("terminated");
    }
    if (started) {
      AdoptLostPod(pod);
    } else if (deleting) {
      // Deleted before it ever ran: nothing to stop, so finish the deletion now.
      kube::DeleteOptions options{0, uid, ""};
      Status deleted = client_.Delete(kPods, pod["metadata"].value("namespace", ""),
                                      pod["metadata"].value("name", ""), options);
      if (!deleted.ok() && !kube::IsNotFound(deleted) && !kube::IsConflict(deleted)) {
        LogEvent("warn", "pod_delete_failed",
                 {{"pod", kube::ObjectKey(pod)}, {"error", deleted.message()}});
      }
      return;
    } else {
      StartPod(pod);
    }
    it = runs_.find(uid);
    if (it == runs_.end()) return;
  }
  Run& run = it->second;
  double now = local::NowUnixSeconds();
  Observe(run, now);
  if (run.container.started_at > 0 && !run.container.finished_at) {
    std::optional<int64_t> deadline = Int(pod, "/spec/activeDeadlineSeconds"_json_pointer);
    if (deadline && now >= run.container.pod_start_time + static_cast<double>(*deadline)) {
      if (!run.deadline_exceeded) {
        run.deadline_exceeded = true;
        run.container.pod_reason = "DeadlineExceeded";
        run.container.pod_message = "Pod was active on the node longer than the specified deadline";
        LogEvent("info", "pod_deadline_exceeded",
                 {{"pod", run.key}, {"active_deadline_seconds", *deadline}});
        Status saved = SaveRecord(run);
        if (!saved.ok()) LogEvent("error", "record_write_failed", {{"error", saved.message()}});
      }
      BeginKill(run,
                static_cast<double>(
                    Int(pod, "/spec/terminationGracePeriodSeconds"_json_pointer).value_or(30)),
                "the pod exceeded its activeDeadlineSeconds", now);
    }
    if (deleting) {
      BeginKill(run,
                static_cast<double>(
                    Int(pod, "/metadata/deletionGracePeriodSeconds"_json_pointer).value_or(30)),
                "the pod was deleted", now);
    }
    DriveKill(run, now);
  }
  if (run.container.finished_at && run.address_held) {
    pool_.Release(run.container.pod_ip);
    run.address_held = false;
  }
  if (!WriteStatus(run, pod)) return;
  const bool nothing_runs = run.container.finished_at || run.container.started_at == 0;
  if (deleting && nothing_runs && !run.delete_sent) {
    // As the kubelet does: once the process is gone and its status written, finish the graceful
    // deletion with grace 0. With finalizers left the apiserver keeps the object (now with grace
    // 0) and removes it when the last finalizer goes; a graceful deletion whose grace stayed
    // above 0 would instead never complete on its own.
    kube::DeleteOptions options{0, uid, ""};
    Status deleted = client_.Delete(kPods, pod["metadata"].value("namespace", ""),
                                    pod["metadata"].value("name", ""), options);
    if (deleted.ok() || kube::IsNotFound(deleted) || kube::IsConflict(deleted)) {
      run.delete_sent = true;
      LogEvent(
          "info", "pod_deletion_finished",
          {{"pod", run.key}, {"finalizers", pod["metadata"].value("finalizers", Json::array())}});
    } else {
      LogEvent("warn", "pod_delete_failed", {{"pod", run.key}, {"error", deleted.message()}});
    }
  }
}

void NodeAgent::StartPod(const Json& pod) {
  Run run;
  run.key = kube::ObjectKey(pod);
  run.uid = Str(pod, "/metadata/uid"_json_pointer);
  run.node = Str(pod, "/spec/nodeName"_json_pointer);
  run.dir = options_.work_dir / "pods" / run.uid;
  run.log_file = (options_.work_dir / "logs" /
                  (pod["metadata"].value("namespace", "") + "_" +
                   pod["metadata"].value("name", "") + "_" + run.uid + ".log"))
                     .string();
  run.container.host_ip = kHostIp;
  run.container.pod_start_time = std::floor(local::NowUnixSeconds());
  run.container.container_id = "bsw://" + run.uid;
  std::error_code error;
  fs::create_directories(run.dir, error);
  if (error) {
    LogEvent("error", "pod_start_failed", {{"pod", run.key}, {"error", error.message()}});
    return;
  }
  StatusOr<std::string> address = pool_.Allocate();
  if (!address.ok()) {
    LogEvent("error", "pod_start_failed",
             {{"pod", run.key}, {"error", address.status().message()}});
    return;
  }
  run.container.pod_ip = *address;
  run.address_held = true;

  std::map<std::string, std::string> base_env = options_.base_env;
  StatusOr<LaunchSpec> spec = BuildLaunchSpec(pod, run.container.pod_ip, kHostIp, base_env);
  const Json containers = pod["spec"].value("containers", Json::array());
  run.container.container_name = containers.empty() ? "" : containers[0].value("name", "");
  if (!spec.ok()) {
    run.container.waiting_reason = "CreateContainerConfigError";
    run.container.waiting_message = spec.status().message();
    LogEvent("warn", "pod_config_error", {{"pod", run.key}, {"error", spec.status().message()}});
    Status saved = SaveRecord(run);
    if (!saved.ok()) LogEvent("error", "record_write_failed", {{"error", saved.message()}});
    runs_.emplace(run.uid, std::move(run));
    return;
  }
  // The record goes to disk before the process starts: a crash in between leaves a pod that is
  // declared lost, never one that runs twice.
  run.container.started_at = local::NowUnixSeconds();
  Status saved = SaveRecord(run);
  if (!saved.ok()) {
    LogEvent("error", "record_write_failed", {{"pod", run.key}, {"error", saved.message()}});
    pool_.Release(run.container.pod_ip);
    return;
  }
  std::string working_dir = spec->working_dir.empty() ? run.dir.string() : spec->working_dir;
  StatusOr<pid_t> shim = SpawnShim(options_.self_exe, run.dir, run.log_file, working_dir, *spec);
  if (shim.ok()) {
    run.shim_pid = *shim;
    run.shim_start_ticks = local::RunningProcessStartTicks(*shim).value_or(0);
    saved = SaveRecord(run);
    if (!saved.ok()) LogEvent("error", "record_write_failed", {{"error", saved.message()}});
  } else {
    run.container.finished_at = local::NowUnixSeconds();
    run.container.exit_code = 128;
    run.container.terminated_reason = "StartError";
    run.container.terminated_message = shim.status().message();
  }
  LogEvent("info", "pod_started",
           {{"pod", run.key},
            {"uid", run.uid},
            {"node", run.node},
            {"pod_ip", run.container.pod_ip},
            {"argv", spec->argv},
            {"shim_pid", run.shim_pid},
            {"log", run.log_file}});
  runs_.emplace(run.uid, std::move(run));
}

void NodeAgent::AdoptLostPod(const Json& pod) {
  Run run;
  run.key = kube::ObjectKey(pod);
  run.uid = Str(pod, "/metadata/uid"_json_pointer);
  run.node = Str(pod, "/spec/nodeName"_json_pointer);
  run.dir = options_.work_dir / "pods" / run.uid;
  const Json status = pod.value("status", Json::object());
  const Json container = status.value("containerStatuses", Json::array()).at(0);
  const Json state = container.value("state", Json::object());
  run.container.container_name = container.value("name", "");
  run.container.container_id = container.value("containerID", "");
  run.container.host_ip = kHostIp;
  run.container.pod_ip = status.value("podIP", "");
  run.container.pod_start_time = ParseTime(status.value("startTime", ""));
  double now = local::NowUnixSeconds();
  if (state.contains("terminated")) {
    const Json& terminated = state["terminated"];
    run.container.started_at = ParseTime(terminated.value("startedAt", ""));
    run.container.finished_at = ParseTime(terminated.value("finishedAt", ""));
    run.container.exit_code = terminated.value("exitCode", 0);
    run.container.terminated_reason = terminated.value("reason", "");
    run.container.terminated_message = terminated.value("message", "");
  } else {
    run.container.started_at = ParseTime(state["running"].value("startedAt", ""));
    run.container.finished_at = now;
    run.container.exit_code = 137;
    run.container.terminated_reason = "Error";
    run.container.terminated_message =
        "agent lost the process: the pod ran, but the node agent has no record of it";
  }
  if (run.container.started_at == 0) run.container.started_at = now;
  if (run.container.pod_start_time == 0) run.container.pod_start_time = run.container.started_at;
  run.container.pod_reason = status.value("reason", "");
  run.container.pod_message = status.value("message", "");
  LogEvent("warn", "pod_lost", {{"pod", run.key}, {"uid", run.uid}});
  runs_.emplace(run.uid, std::move(run));
}

void NodeAgent::Observe(Run& run, double now) {
  if (run.container.started_at == 0 || run.container.finished_at) return;
  if (std::optional<WorkloadExit> exit = ReadWorkloadExit(run.dir)) {
    run.container.finished_at = exit->finished_at;
    run.container.exit_code = exit->exit_code;
    run.container.terminated_reason = TerminatedReason(exit->exit_code);
    if (exit->exit_code != 0 && !run.kill_message.empty()) {
      run.container.terminated_message = run.kill_message;
    }
    LogEvent("info", "pod_exited",
             {{"pod", run.key}, {"exit_code", exit->exit_code}, {"signal", exit->signal}});
    return;
  }
  if (run.shim_pid > 0 && local::IsSameProcessRunning(run.shim_pid, run.shim_start_ticks)) return;
  std::optional<WorkloadProcess> workload = ReadWorkloadProcess(run.dir);
  if (workload && local::IsSameProcessRunning(workload->pid, workload->start_ticks)) return;
  if (!workload && now - run.container.started_at < kShimStartSeconds) return;
  // The shim is gone without writing the exit file: the exit code is unknowable.
  run.container.finished_at = now;
  run.container.exit_code = 137;
  run.container.terminated_reason = "Error";
  run.container.terminated_message = "agent lost the process: its shim ended without an exit code";
  LogEvent("warn", "pod_lost", {{"pod", run.key}, {"uid", run.uid}});
}

void NodeAgent::BeginKill(Run& run, double grace_seconds, const std::string& message, double now) {
  double deadline = now + std::max(0.0, grace_seconds);
  if (run.killing && deadline >= run.kill_deadline) return;  // a shorter grace period wins
  if (!run.killing) {
    run.kill_message = message;
    Status saved = SaveRecord(run);
    if (!saved.ok()) LogEvent("error", "record_write_failed", {{"error", saved.message()}});
  }
  run.killing = true;
  run.kill_deadline = deadline;
  LogEvent("info", "pod_killing",
           {{"pod", run.key}, {"grace_seconds", grace_seconds}, {"reason", message}});
}

void NodeAgent::DriveKill(Run& run, double now) {
  if (!run.killing || run.container.finished_at) return;
  if (now >= run.kill_deadline) {
    if (!run.kill_sent && SignalWorkload(run.dir, SIGKILL)) run.kill_sent = true;
  } else if (!run.term_sent && SignalWorkload(run.dir, SIGTERM)) {
    run.term_sent = true;
  }
}

bool NodeAgent::WriteStatus(Run& run, const Json& pod) {
  Json desired = BuildPodStatus(pod, run.container);
  if (desired == run.last_written) return true;
  const std::string ns = pod["metadata"].value("namespace", "");
  const std::string name = pod["metadata"].value("name", "");
  Json object = pod;
  Status status = kube::RetryOnConflict([&]() -> Status {
    object["status"] = BuildPodStatus(object, run.container);
    StatusOr<Json> written = client_.UpdateStatus(kPods, ns, object);
    if (written.ok()) {
      run.last_written = object["status"];
      return OkStatus();
    }
    if (!kube::IsConflict(written.status())) return written.status();
    StatusOr<Json> fresh = client_.Get(kPods, ns, name);
    if (!fresh.ok()) return fresh.status();
    if (Str(*fresh, "/metadata/uid"_json_pointer) != run.uid) {
      return NotFoundError("pod " + run.key + " was replaced");
    }
    object = *fresh;
    return written.status();
  });
  if (status.ok()) {
    LogEvent("info", "pod_status",
             {{"pod", run.key},
              {"phase", run.last_written.value("phase", "")},
              {"pod_ip", run.container.pod_ip}});
    return true;
  }
  if (!kube::IsNotFound(status)) {
    LogEvent("warn", "pod_status_failed", {{"pod", run.key}, {"error", status.message()}});
  }
  return false;
}

void NodeAgent::ShutdownPods() {
  double now = local::NowUnixSeconds();
  for (auto& [uid, run] : runs_) {
    Observe(run, now);
    if (run.container.started_at > 0 && !run.container.finished_at) {
      BeginKill(run, options_.shutdown_grace_seconds, "the node agent stopped", now);
    }
  }
  const double give_up = now + options_.shutdown_grace_seconds + 5;
  while (true) {
    now = local::NowUnixSeconds();
    bool running = false;
    for (auto& [uid, run] : runs_) {
      Observe(run, now);
      DriveKill(run, now);
      running |= run.container.started_at > 0 && !run.container.finished_at;
    }
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (!running || now >= give_up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (auto& [uid, run] : runs_) {
    std::optional<Json> pod = pods_->Get(run.key);
    if (pod && Str(*pod, "/metadata/uid"_json_pointer) == uid) WriteStatus(run, *pod);
  }
}

}  // namespace bsw::node_agent
