#ifndef BSW_CONTROLLER_KUBE_TRIAL_POD_H_
#define BSW_CONTROLLER_KUBE_TRIAL_POD_H_

#include <string>

#include "nlohmann/json.hpp"

namespace bsw {

// A trial pod as the reconciler reads it: whose it is and whether it still runs. (What a pod says
// about its segment is PodBackend's: kube/pod_status.h.)
struct TrialPod {
  std::string ns;
  std::string name;
  std::string sweep;      // label budgetsweep.dev/sweep; empty: not a trial pod
  bool ended = false;     // status.phase is Succeeded or Failed
  bool deleting = false;  // metadata.deletionTimestamp is set
};

// Never fails: the API server wrote the pod, and a field that is missing or of another type reads
// as empty (a pod without a sweep is no trial's).
TrialPod ReadTrialPod(const nlohmann::json& pod);

}  // namespace bsw

#endif  // BSW_CONTROLLER_KUBE_TRIAL_POD_H_
