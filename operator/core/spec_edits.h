#ifndef BSW_CORE_SPEC_EDITS_H_
#define BSW_CORE_SPEC_EDITS_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "operator/core/api.h"

namespace bsw {

// What may change on a sweep that has started. The editable fields bound what the sweep may still
// do (spec.budget.gpuHours, up or down; spec.parallelism; spec.maxTrials; spec.maxFailedTrials)
// or where it reads metrics (spec.metrics). Every other field decides how the recorded history
// is read (the rungs, the search space, the scheduler, the trial a parameter set ran as), so
// changing it would re-decide that history: it is immutable. The CRD enforces the same split at
// admission with CEL transition rules (crds/budgetsweeps.budgetsweep.dev.yaml).
inline constexpr const char* kEditableFields =
    "spec.budget.gpuHours, spec.parallelism, spec.maxTrials, spec.maxFailedTrials and "
    "spec.metrics";

// The immutable fields that `edited` changes from `started`, in spec order, as paths a user can
// find in the file: "spec.resource.max", "spec.searchSpace.lr" (a parameter added, removed or
// changed), "spec.trial.template.spec.containers[0].image". Empty when only editable fields (or
// metadata) differ.
std::vector<std::string> ChangedImmutableFields(const SweepSpec& started, const SweepSpec& edited);

// The spec a started sweep runs under after an edit: `started` with the editable fields and the
// generation of `edited`. InvalidArgument when `edited` changes an immutable field, one line per
// field: "spec.searchSpace.lr: changed on a sweep that has started (immutable)".
StatusOr<SweepSpec> ApplySpecEdit(const SweepSpec& started, const SweepSpec& edited);

}  // namespace bsw

#endif  // BSW_CORE_SPEC_EDITS_H_
