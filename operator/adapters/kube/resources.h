#ifndef BSW_ADAPTERS_KUBE_RESOURCES_H_
#define BSW_ADAPTERS_KUBE_RESOURCES_H_

#include "operator/adapters/kube/client.h"

namespace bsw::kube {

inline const Resource kPods{"", "v1", "pods", true};
inline const Resource kBudgetSweeps{"budgetsweep.dev", "v1alpha1", "budgetsweeps", true};
inline const Resource kBudgetSweepTrials{"budgetsweep.dev", "v1alpha1", "budgetsweeptrials", true};
inline const Resource kBudgetPools{"budgetsweep.dev", "v1alpha1", "budgetpools", true};

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_RESOURCES_H_
