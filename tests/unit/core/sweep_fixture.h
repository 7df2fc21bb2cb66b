#ifndef BSW_TESTS_UNIT_CORE_SWEEP_FIXTURE_H_
#define BSW_TESTS_UNIT_CORE_SWEEP_FIXTURE_H_

#include "nlohmann/json.hpp"
#include "operator/core/api.h"

namespace bsw::testing {

// A valid BudgetSweep object that sets most fields. Tests break one field at a time.
inline nlohmann::json ValidSweepJson() {
  return nlohmann::json::parse(R"({
    "apiVersion": "budgetsweep.dev/v1alpha1",
    "kind": "BudgetSweep",
    "metadata": {"name": "fmnist-cnn"},
    "spec": {
      "budget": {"gpuHours": 4},
      "objective": {"metric": "validation_accuracy", "goal": "maximize"},
      "resource": {"unit": "epochs", "min": 1, "max": 27, "reductionFactor": 3},
      "scheduler": {"algorithm": "asha", "mode": "stop", "seed": 7},
      "parallelism": 4,
      "maxTrials": 200,
      "searchSpace": {
        "lr": {"type": "logUniform", "min": 1.0e-4, "max": 1.0e-1},
        "weight-decay": {"type": "logUniform", "min": 1.0e-5, "max": 1.0e-1},
        "warmup-fraction": {"type": "uniform", "min": 0.0, "max": 0.1},
        "batch-size": {"type": "choice", "values": [64, 128, 256]}
      },
      "trial": {
        "gpus": 1,
        "maxRetries": 1,
        "template": {"spec": {"containers": [
          {"name": "trainer", "image": "budgetsweep/trainer:dev",
           "command": ["budgetsweep-trainer"], "args": ["--dataset=fashion-mnist"]}]}}
      }
    }
  })");
}

// The parsed form of ValidSweepJson() after `edit` was applied to the JSON.
// REQUIRES: the edited object is valid.
template <typename Edit>
SweepSpec SpecWith(Edit edit) {
  nlohmann::json j = ValidSweepJson();
  edit(j);
  return ParseSweep(j).value();
}

}  // namespace bsw::testing

#endif  // BSW_TESTS_UNIT_CORE_SWEEP_FIXTURE_H_
