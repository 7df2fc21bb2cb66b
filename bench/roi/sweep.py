"""Writes the BudgetSweep file of one budgetsweep contender (JSON, which `budgetsweep run` reads).

    python3 sweep.py {grid|random|asha-stop|asha-pause} SEED TRAINER > sweep.json

The budget is set far above what any contender spends, so it never decides anything here:
the contenders end by maxTrials (random, ASHA) or at the end of the grid.
"""

import json
import sys

import config


def sweep(contender, seed, trainer):
    s = config.size()
    if contender == "grid":
        space = {name: {"type": "grid", "values": values} for name, values in s["grid"].items()}
        scheduler = {"algorithm": "grid"}
        max_trials = None
    else:
        space = config.SPACE
        algorithm, _, mode = contender.partition("-")
        scheduler = {"algorithm": algorithm, "seed": seed}
        if mode:
            scheduler["mode"] = mode
        max_trials = s["random_trials"] if algorithm == "random" else s["asha_trials"]
    spec = {
        "budget": {"gpuHours": 100},
        "objective": {"metric": "validation_accuracy", "goal": "maximize"},
        "resource": {"unit": "epochs", "min": 1, "max": s["epochs"],
                     "reductionFactor": s["reduction_factor"]},
        "scheduler": scheduler,
        "parallelism": config.PARALLELISM,
        "maxFailedTrials": 1000,
        "searchSpace": space,
        "trial": {
            "gpus": 0,
            "maxRetries": 0,
            "template": {"spec": {
                "terminationGracePeriodSeconds": 10,
                "containers": [{"name": "trainer", "image": "budgetsweep-trainer",
                                "command": [trainer],
                                "args": config.trainer_args(trainer)[1:]}],
            }},
        },
    }
    if max_trials is not None:
        spec["maxTrials"] = max_trials
    return {"apiVersion": "budgetsweep.dev/v1alpha1", "kind": "BudgetSweep",
            "metadata": {"name": f"roi-{contender}-s{seed}"}, "spec": spec}


if __name__ == "__main__":
    print(json.dumps(sweep(sys.argv[1], int(sys.argv[2]), sys.argv[3]), indent=1))
