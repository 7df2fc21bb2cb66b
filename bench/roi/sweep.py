"""Writes the BudgetSweep file of one budgetsweep contender (JSON, which `budgetsweep run` reads).

    python3 sweep.py CONTENDER SEED TRAINER BUDGET_HOURS > sweep.json

CONTENDER is grid or a key of schedulers(). The grid runs every configuration: its budget is set far
above what it spends. The others but pbt and pb2 have no maxTrials: they sample configurations
until BUDGET_HOURS (the size's budget_fraction of the grid's measured device-hours) is spent, and
the sweep ends BudgetExhausted. pbt and pb2 train a population of config.population() trials (their
maxTrials) until the budget is spent or every trial reached the full resource.
"""

import copy
import json
import sys

import config


def schedulers():
    """Each budgetsweep contender's spec.scheduler, without its seed.

    A sweep file `budgetsweep validate` refuses leaves that contender out, which run.sh records
    in the results' notes.
    """
    return {
        "random": {"algorithm": "random"},
        "asha-stop": {"algorithm": "asha", "mode": "stop"},
        "asha-pause": {"algorithm": "asha", "mode": "pause"},
        "asha-tpe": {"algorithm": "asha", "mode": "stop", "sampler": "tpe"},
        # issue #20 point 2
        "hyperband": {"algorithm": "hyperband", "mode": "stop"},
        # perturbationInterval in resource units, as Ray Tune's PB2 gets it
        "pbt": {"algorithm": "pbt", "mode": "pause",
                "perturbationInterval": config.perturbation_interval()},
        "pb2": {"algorithm": "pb2", "mode": "pause",
                "perturbationInterval": config.perturbation_interval()},
    }


# How a search-space parameter is marked mutable (config.task()["mutable"]) for pbt and pb2.
MUTABLE_FIELD = "mutable"
MUTATING = ("pbt", "pb2")


def search_space(contender):
    s = config.size()
    if contender == "grid":
        return {name: {"type": "grid", "values": values} for name, values in s["grid"].items()}
    space = copy.deepcopy(config.space())
    if contender in MUTATING:
        for name in config.task()["mutable"]:
            space[name][MUTABLE_FIELD] = True
    return space


def sweep(contender, seed, trainer, budget_hours):
    s = config.size()
    if contender == "grid":
        scheduler = {"algorithm": "grid"}
        budget_hours = 100
    elif contender in schedulers():
        scheduler = dict(schedulers()[contender], seed=seed)
    else:
        raise SystemExit(f"sweep.py: unknown contender {contender!r}; expected grid or one of "
                         + ", ".join(schedulers()))
    spec = {
        "budget": {"gpuHours": budget_hours},
        "objective": {"metric": "validation_accuracy", "goal": "maximize"},
        "resource": {"unit": "epochs", "min": 1, "max": s["epochs"],
                     "reductionFactor": s["reduction_factor"]},
        "scheduler": scheduler,
        "parallelism": config.PARALLELISM,
        "maxFailedTrials": 1000,
        "searchSpace": search_space(contender),
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
    if contender in MUTATING:
        spec["maxTrials"] = config.population()
    return {"apiVersion": "budgetsweep.dev/v1alpha1", "kind": "BudgetSweep",
            "metadata": {"name": f"roi-{contender}-s{seed}"}, "spec": spec}


if __name__ == "__main__":
    print(json.dumps(sweep(sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])),
                     indent=1))
