"""The ROI benchmark's single definition of its tasks, their search spaces and their sizes.

Every contender (budgetsweep's sweep files and the Optuna and Ray Tune drivers) takes the trainer
command, the search space and the resource ladder from here, so they cannot drift apart.
"""

import os


def tiny_size(train_limit, budget_fraction, grid):
    """A size that tries the whole pipeline in minutes: 3 epochs (rungs 1, 3), 2 seeds, a grid of a
    few points. Its grid costs seconds, less than a trial's grace period at 25%, so the budget
    fraction is far above the full size's."""
    return {"train_limit": train_limit, "eval_limit": 500, "epochs": 3, "reduction_factor": 3,
            "seeds": [1, 2], "budget_fraction": budget_fraction, "timeout_seconds": 300,
            "grid": grid}

# The task is chosen with ROI_TASK: "easy" (the first ROI run's task, unchanged) or "hard" (a wider
# space, where random search cannot reach the grid's answer cheaply). The size is chosen with
# ROI_SIZE: "full" for the published run, "tiny" to try the pipeline.
TASKS = {
    "easy": {
        # The search space every stochastic contender samples; the grid's points lie inside it.
        "space": {
            "lr": {"type": "logUniform", "min": 1.0e-4, "max": 3.0e-2},
            "weight-decay": {"type": "logUniform", "min": 1.0e-4, "max": 1.0e-1},
            "warmup-fraction": {"type": "uniform", "min": 0.0, "max": 0.2},
            "batch-size": {"type": "choice", "values": [64, 128, 256]},
        },
        # The contenders run.sh runs, in this order after the grid (report.CONTENDERS names them).
        "contenders": ["random", "asha-stop", "asha-pause", "asha-tpe", "optuna", "ray"],
        "sizes": {
            "full": {
                "train_limit": 2000,  # first N Fashion-MNIST training images
                "eval_limit": 2000,  # validation (from the end of the training split) and test cap
                "epochs": 9,  # the full resource; ASHA rungs at 1, 3, 9 epochs
                "reduction_factor": 3,
                "seeds": [1, 2, 3, 4, 5],  # a verdict must hold in 4 of them
                "budget_fraction": 0.25,  # the target's share: each contender's budget
                # A contender's run (the grid's takes about 140 s, Ray Tune's about 60) that has
                # not ended by then is stopped and run once more: a hung driver must not hold up
                # the benchmark.
                "timeout_seconds": 600,
                "grid": {  # 24 points, inside the space
                    "lr": [2.5e-4, 1.7e-3, 1.2e-2],
                    "weight-decay": [5.6e-4, 1.8e-2],
                    "warmup-fraction": [0.05, 0.15],
                    "batch-size": [64, 256],
                },
            },
            "tiny": tiny_size(1000, 4.0, {
                "lr": [1.0e-3, 1.0e-2],
                "weight-decay": [1.0e-2],
                "warmup-fraction": [0.05],
                "batch-size": [128, 256],
            }),
        },
    },
    "hard": {
        # Seven decades of learning rate, most of which does not train (AdamW with batch norm keeps
        # the loss finite up to lr 10, at chance accuracy; a loss that does become non-finite makes
        # the trainer exit 3, "diverged", and the sweep counts the trial failed); gradient
        # accumulation (the trainer's --accumulation-steps: an effective batch of up to 32 x 256
        # samples, more than the 2,000-image subset, so that most of the space takes too few
        # optimizer steps); the model's width (the trainer's --width: 0.5, 1 or 2 times cnn2's
        # channels and hidden units, so a trial's cost varies about fourfold), weight decay, warmup
        # and batch size. Few random configurations reach the grid's answer (bench/roi/README.md,
        # the hard task; random search reached it in 2 of 5 seeds of the published run).
        "space": {
            "lr": {"type": "logUniform", "min": 1.0e-6, "max": 10.0},
            "weight-decay": {"type": "logUniform", "min": 1.0e-5, "max": 0.3},
            "warmup-fraction": {"type": "uniform", "min": 0.0, "max": 0.3},
            "batch-size": {"type": "choice", "values": [64, 128, 256]},
            "accumulation-steps": {"type": "choice", "values": [1, 2, 4, 8, 16, 32]},
            "width": {"type": "choice", "values": [0.5, 1, 2]},
        },
        "contenders": ["random", "asha-stop", "asha-tpe", "hyperband", "pbt", "pb2", "optuna",
                       "ray", "ray-pb2"],
        # Mutable under PBT and PB2: changed at an exploit, the rest is inherited.
        "mutable": ["lr", "weight-decay"],
        "sizes": {
            # Sized so that the grid and 9 contenders x 5 seeds run in about 65 minutes on two
            # idle cores; the published runs took 87 and 101 (README, "Sizing").
            "full": {
                "train_limit": 2000,
                "eval_limit": 1000,
                "epochs": 27,  # rungs 1, 3, 9, 27
                "reduction_factor": 3,
                "seeds": [1, 2, 3, 4, 5],
                "budget_fraction": 0.25,
                # The grid's run takes about 5 minutes on idle cores, a contender's about 1.
                "timeout_seconds": 900,
                "grid": {  # 32 points, inside the space
                    "lr": [1.0e-4, 1.0e-3, 1.0e-2, 1.0e-1],
                    "weight-decay": [1.0e-4, 1.0e-2],
                    "warmup-fraction": [0.1],
                    "batch-size": [64, 256],
                    "accumulation-steps": [1],
                    "width": [0.5, 1],
                },
            },
            "tiny": tiny_size(500, 2.0, {
                "lr": [1.0e-3, 1.0e-1],
                "weight-decay": [1.0e-3],
                "warmup-fraction": [0.1],
                "batch-size": [128],
                "accumulation-steps": [1],
                "width": [0.5, 1],
            }),
        },
    },
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


def task_name():
    return os.environ.get("ROI_TASK", "easy")


def size_name():
    return os.environ.get("ROI_SIZE", "full")


def task():
    if task_name() not in TASKS:
        raise SystemExit(f"ROI_TASK: expected one of {', '.join(TASKS)}, got {task_name()!r}")
    return TASKS[task_name()]


def space():
    """The search space every stochastic contender samples."""
    return task()["space"]


def size():
    sizes = task()["sizes"]
    if size_name() not in sizes:
        raise SystemExit(f"ROI_SIZE: expected one of {', '.join(sizes)}, got {size_name()!r}")
    return sizes[size_name()]


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


def perturbation_interval():
    """Epochs between PBT's and PB2's exploit steps (budgetsweep's and Ray Tune's alike): a ninth of
    the full resource, so that a trial that lives to the end is perturbed up to 8 times."""
    return max(1, size()["epochs"] // 9)


def population():
    """Trials in a PBT or PB2 population: half as many as the full-resource trials the budget pays
    for (the size's budget_fraction of the grid's points), at least PARALLELISM. Half, because a
    population trains in segments, each a trainer process that pays the start-up again (about
    1.3 s, as much as a tiny size's epoch and a third of a full size's interval), so that the
    population can reach the full resource within the budget."""
    points = 1
    for values in size()["grid"].values():
        points *= len(values)
    return max(PARALLELISM, round(size()["budget_fraction"] * points / 2))
