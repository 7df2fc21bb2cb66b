#ifndef BSW_CORE_RECORDED_CHARGES_H_
#define BSW_CORE_RECORDED_CHARGES_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "operator/core/segment.h"
#include "operator/core/sweep_model.h"

namespace bsw {

// The charge of every ended segment and probe run that the journal recorded, as segments the
// backend no longer lists (a deleted pod, a cleaned-up state directory): succeeded, with their
// recorded start, finish and devices. Those in `listed` (trial or probe name, segment) are left
// out, since the backend's own record of them counts. An ended probe run's charge is journaled
// as device-seconds (ProbeEnded): one device over that many seconds from its launch charges the
// same.
std::vector<SegmentStatus> RecordedCharges(const SweepModel& model,
                                           const std::set<std::pair<std::string, int>>& listed);

}  // namespace bsw

#endif  // BSW_CORE_RECORDED_CHARGES_H_
