"""The ROI benchmark's single definition of the task, the search space and its sizes.

Every contender (budgetsweep's sweep files and the Optuna and Ray Tune drivers) takes the trainer
command, the search space and the resource ladder from here, so they cannot drift apart.
"""

import os

# The size is chosen with ROI_SIZE: "full" for the published run, "tiny" to try the pipeline.
SIZES = {
    "full": {
        "train_limit": 2000,  # first N Fashion-MNIST training images
        "eval_limit": 2000,  # validation (from the end of the training split) and test cap
        "epochs": 9,  # the full resource; ASHA rungs at 1, 3, 9 epochs
        "reduction_factor": 3,
        "seeds": [1, 2, 3],
        "budget_fraction": 0.25,  # the target's share: each contender's budget
        # A contender's run (the grid's takes about 140 s, Ray Tune's about 60) that has not ended
        # by then is stopped and run once more: a hung driver must not hold up the benchmark.
        "timeout_seconds": 600,
        "grid": {  # 24 points, inside SPACE
            "lr": [2.5e-4, 1.7e-3, 1.2e-2],
            "weight-decay": [5.6e-4, 1.8e-2],
            "warmup-fraction": [0.05, 0.15],
            "batch-size": [64, 256],
        },
    },
    "tiny": {
        "train_limit": 1000,
        "eval_limit": 500,
        "epochs": 3,
        "reduction_factor": 3,
        "seeds": [1, 2],
        # The tiny grid costs seconds, less than a trial's grace period at 25%: a pipeline check.
        "budget_fraction": 4.0,
        "timeout_seconds": 300,
        "grid": {
            "lr": [1.0e-3, 1.0e-2],
            "weight-decay": [1.0e-2],
            "warmup-fraction": [0.05],
            "batch-size": [128, 256],
        },
    },
}

# The search space every stochastic contender samples; the grid's points lie inside it.
SPACE = {
    "lr": {"type": "logUniform", "min": 1.0e-4, "max": 3.0e-2},
    "weight-decay": {"type": "logUniform", "min": 1.0e-4, "max": 1.0e-1},
    "warmup-fraction": {"type": "uniform", "min": 0.0, "max": 0.2},
    "batch-size": {"type": "choice", "values": [64, 128, 256]},
}

PARALLELISM = 2  # concurrent trials, for every contender
# budgetsweep's trials' terminationGracePeriodSeconds. Every reservation includes it (the supervisor
# sends SIGTERM that long before the deadline), so it is set near what the trainer needs to exit
# after SIGTERM; the report prints that latency as measured on the peers' stopped trainers.
GRACE_SECONDS = 2
POLL_SECONDS = 0.25  # budgetsweep run's default reconcile interval; the peers poll as often
TARGET_POINTS = 0.5  # "within 0.5 percentage points of the grid's best test accuracy"
# "with at most 25% of the grid's device-hours". Every contender but the grid gets the size's
# budget_fraction of the grid's measured device-hours as a hard budget, and samples
# configurations until it is spent.
TARGET_FRACTION = 0.25


def size_name():
    return os.environ.get("ROI_SIZE", "full")


def size():
    return SIZES[size_name()]


def trainer_args(trainer):
    """The trainer command every contender runs; each appends --name=value per parameter.

    Budgetsweep passes the epoch count, metrics port and checkpoint directory through its
    environment (BUDGETSWEEP_MAX_RESOURCE, ...); the peers pass the same as flags.
    """
    s = size()
    return [
        trainer,
        "--dataset=fashion-mnist",
        "--model=cnn2",
        f"--train-limit={s['train_limit']}",
        f"--eval-limit={s['eval_limit']}",
        "--threads=1",
        "--workers=1",
        "--seed=0",
        "--summary-json",
    ]


def rungs():
    s = size()
    r, out = 1, []
    while r < s["epochs"]:
        out.append(r)
        r *= s["reduction_factor"]
    return out + [s["epochs"]]
