#ifndef BSW_PORTS_TRIAL_CONTRACT_H_
#define BSW_PORTS_TRIAL_CONTRACT_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "operator/ports/trial_backend.h"

namespace bsw {

// The BUDGETSWEEP_* environment every backend gives a trial (contract/trainer_contract.h):
// SWEEP, TRIAL, PARAMS (a JSON object; values that read as numbers are numbers), MILESTONES,
// UNTIL, MAX_RESOURCE, CHECKPOINT_DIR and METRICS_PORT; for pbt and pb2 also SNAPSHOTS, MUTABLE,
// and after an exploit EXPLOIT_DIR (the donor's checkpoint directory) and EXPLOIT_AT.
// `checkpoint_dir_of` gives a trial's checkpoint directory by the trial's name. METRICS_HOST is
// the backend's own: where the trial's address comes from differs between a local process and a
// pod.
std::vector<std::pair<std::string, std::string>> TrialContractEnv(
    const SegmentSpec& spec,
    const std::function<std::string(const std::string&)>& checkpoint_dir_of, int metrics_port);

}  // namespace bsw

#endif  // BSW_PORTS_TRIAL_CONTRACT_H_
