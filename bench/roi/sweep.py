"""Writes the BudgetSweep file of one budgetsweep contender (JSON, which `budgetsweep run` reads).

    python3 sweep.py {grid|random|asha-stop|asha-pause} SEED TRAINER BUDGET_HOURS > sweep.json

The grid runs every configuration: its budget is set far above what it spends. Random search and
ASHA have no maxTrials: they sample configurations until BUDGET_HOURS (the size's budget_fraction
of the grid's measured device-hours) is spent, and the sweep ends BudgetExhausted.
"""

import json
import sys

import config


def sweep(contender, seed, trainer, budget_hours):
    s = config.size()
    if contender == "grid":
        space = {name: {"type": "grid", "values": values} for name, values in s["grid"].items()}
        scheduler = {"algorithm": "grid"}
        budget_hours = 100
    else:
        space = config.SPACE
        algorithm, _, mode = contender.partition("-")
        scheduler = {"algorithm": algorithm, "seed": seed}
        if mode:
            scheduler["mode"] = mode
    spec = {
        "budget": {"gpuHours": budget_hours},
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
                "terminationGracePeriodSeconds": config.GRACE_SECONDS,
                "containers": [{"name": "trainer", "image": "budgetsweep-trainer",
                                "command": [trainer],
                                "args": config.trainer_args(trainer)[1:]}],
            }},
        },
    }
    return {"apiVersion": "budgetsweep.dev/v1alpha1", "kind": "BudgetSweep",
            "metadata": {"name": f"roi-{contender}-s{seed}"}, "spec": spec}


if __name__ == "__main__":
    print(json.dumps(sweep(sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])),
                     indent=1))
