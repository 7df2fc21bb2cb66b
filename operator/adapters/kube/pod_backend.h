#ifndef BSW_ADAPTERS_KUBE_POD_BACKEND_H_
#define BSW_ADAPTERS_KUBE_POD_BACKEND_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "operator/adapters/kube/client.h"
#include "operator/core/output_tail.h"
#include "operator/ports/clock.h"
#include "operator/ports/trial_backend.h"

namespace bsw::kube {

// Labels, annotations and the finalizer a trial pod carries.
inline constexpr char kSweepLabel[] = "budgetsweep.dev/sweep";
inline constexpr char kTrialLabel[] = "budgetsweep.dev/trial";
inline constexpr char kSegmentLabel[] = "budgetsweep.dev/segment";
// The admitted hard deadline, unix seconds ("1767000000.000").
inline constexpr char kDeadlineAnnotation[] = "budgetsweep.dev/deadline";
inline constexpr char kMetricsPortAnnotation[] = "budgetsweep.dev/metrics-port";
// Set to "true" by Stop before the DELETE: the segment ends with reason Stopped.
inline constexpr char kStoppedAnnotation[] = "budgetsweep.dev/stopped";
inline constexpr char kAccountingFinalizer[] = "budgetsweep.dev/accounting";
inline constexpr char kGpuResource[] = "nvidia.com/gpu";

// The sweep that owns the trial pods (same namespace). The reference is written with
// controller: true and blockOwnerDeletion: false (the latter needs delete permission on the owner).
struct SweepOwner {
  std::string api_version = "budgetsweep.dev/v1alpha1";
  std::string kind = "BudgetSweep";
  std::string name;
  std::string uid;
};

struct PodBackendOptions {
  Client* client = nullptr;  // not owned; must outlive the backend
  std::string ns;            // the sweep's namespace
  SweepOwner owner;          // owner.name is also the sweep label's value
  // SweepSpec::trial_template verbatim: a PodTemplateSpec ({metadata?, spec}). Its first container
  // runs the trainer: its command and image are kept; the segment's extra_args, then its
  // parameters, are appended to its args.
  Json trial_template;
  int metrics_port = 9400;
  // BUDGETSWEEP_CHECKPOINT_DIR is <checkpoint_dir>/<trial>, shared by the segments of a trial.
  // Only the environment variable for now: mounting a volume there is the template's business.
  std::string checkpoint_dir = "/checkpoints";
  // The image budgetsweep-collect is copied from (the operator's own), for a segment whose
  // metrics come from what its trainer prints or writes (SegmentSpec::collector_args): an init
  // container copies the program into an emptyDir, and the trainer's container runs its command
  // under it. Empty: such a segment is refused.
  std::string collect_image;
  // Gives the creation time deadlines are counted from; must outlive the backend.
  // Default: SystemClock::Get().
  const Clock* clock = nullptr;
  // The sweep's pods. Default: a LIST from the API server (label budgetsweep.dev/sweep=<name>).
  // The operator reads its pod informer's cache instead.
  std::function<StatusOr<std::vector<Json>>()> list_pods;
};

// Runs each trial segment as a pod `<trial>-s<segment>` in the sweep's namespace.
//
// The budget is enforced by the cluster: every pod gets activeDeadlineSeconds = floor(deadline -
// now) (at least 1) at creation. The kubelet counts it from status.startTime, which is never
// before the creation, and a pending pod costs nothing, so the pod's charged running time never
// exceeds what was admitted; the wall-clock stop may come later than the deadline by the time the
// pod was pending. The kubelet sends SIGTERM at the deadline and SIGKILL after the pod's
// terminationGracePeriodSeconds (spec.grace_seconds).
//
// Kubernetes only lets activeDeadlineSeconds decrease: SetDeadline can move a deadline earlier,
// never later. The operator therefore reserves a segment's whole rung up front on Kubernetes.
//
// Every pod carries the accounting finalizer: a finished or deleted pod stays until
// ReleaseCharge, which the controller calls once the segment's end and charge are recorded (the
// trial's BudgetSweepTrial object). ReleaseCharge then deletes a finished pod: the record, not
// the pod, is what keeps a recorded segment from being started again.
//
// Thread-compatible; all state is in the API server, so instances may come and go.
class PodBackend final : public TrialBackend {
 public:
  // InvalidArgument: no client, namespace, owner name/uid, or a template without containers.
  [[nodiscard]] static StatusOr<std::unique_ptr<PodBackend>> Create(PodBackendOptions options);

  // Creates the pod from the template (BuildPod, pod_builder.h). AlreadyExists from the server
  // means it was started before: OK, and nothing changes. InvalidArgument for an unusable spec
  // (trial name not a DNS label, a pod name over 63 characters, no deadline), for a pod the API
  // server finds invalid (422), and for one Pod Security admission refuses (403, "violates
  // PodSecurity"), with the server's words: the segment can never start. Other errors (RBAC, quota)
  // may pass.
  Status Start(const SegmentSpec& spec) override;

  // Annotates the pod as stopped by us, then DELETEs it with its grace period (the kubelet sends
  // SIGTERM, SIGKILL after the grace period). It ends Failed with reason Stopped and stays, with
  // its finalizer, until ReleaseCharge. OK for a pod that is gone or already finished (no-op).
  Status Stop(const std::string& trial, int segment) override;

  // Lowers activeDeadlineSeconds to floor(deadline - status.startTime) (creation time while the
  // pod has not started; at least 1) and rewrites the deadline annotation. FailedPrecondition when
  // that would raise activeDeadlineSeconds, which Kubernetes refuses. NotFound for an unknown
  // segment; InvalidArgument for a deadline <= 0; OK (no-op) for a finished pod.
  Status SetDeadline(const std::string& trial, int segment, double deadline_unix_seconds) override;

  // The sweep's pods (label budgetsweep.dev/sweep=<name>), sorted by trial and segment, each read
  // by SegmentStatusOfPod (pod_status.h).
  // Pending until the container runs; Running from containerStatuses[0].state.running.startedAt;
  // Succeeded/Failed from the phase with the terminated state's times and exit code. Reasons:
  // DeadlineExceeded (status.reason), Stopped (deletionTimestamp or our stop annotation), Error.
  // A pod deleted before its container ever ran ends Failed/Stopped with no times (no charge)
  // once the kubelet has let go of it (deletionGracePeriodSeconds 0).
  StatusOr<std::vector<SegmentStatus>> List() override;

  // Removes the accounting finalizer (merge patch with the resourceVersion read, retried on
  // Conflict), then deletes the pod if it has finished. A pod being deleted is then gone. OK when
  // the pod is already gone.
  Status ReleaseCharge(const std::string& trial, int segment) override;

  static std::string PodName(const std::string& trial, int segment);

 private:
  explicit PodBackend(PodBackendOptions options);
  double Now() const;
  StatusOr<std::vector<Json>> ListPods() const;
  void AddExitTail(const Json& pod, const std::string& name, SegmentStatus& segment);

  // How much of an exited trainer's log is read for its output tail.
  static constexpr int kExitTailLines = 2 * kOutputTailMaxLines;
  static constexpr int64_t kExitTailBytes = 16 * 1024;

  PodBackendOptions options_;
  std::map<std::string, std::string> exit_tails_;  // pod name -> output tail, while it is held

  // Pods Start created that list_pods (an informer's cache) has not shown yet: the cache lags a
  // create by a watch event, or by a re-list that began before it, and a pass in between would
  // see the segment unstarted and start it again. List shows them pending until the cache has
  // them, for at most kExpectationSeconds (the expectations of Kubernetes' own controllers).
  struct Expected {
    SegmentStatus status;
    double created_at = 0;
  };
  static constexpr double kExpectationSeconds = 60;
  std::map<std::string, Expected> expected_;  // by pod name
};

// ReleaseCharge by pod name: deletes the pod if it has finished, then removes the accounting
// finalizer. OK when the pod is gone.
[[nodiscard]] Status ReleasePod(Client& client, const std::string& ns, const std::string& name);

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_POD_BACKEND_H_
