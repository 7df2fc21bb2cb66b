"""Ray Tune with ASHAScheduler driving budgetsweep-trainer, config.PARALLELISM at a time.

    python ray_peer.py --trainer PATH --seed N --out DIR

Ray Tune's default search (random sampling, seeded) draws each configuration from config.space();
each trial's function runs the trainer and reports every epoch's validation accuracy, read from
the trainer's metrics endpoint; the last epoch is reported once the trainer has exited, because
Ray ends a trial as soon as it reports max_t, and the trainer evaluates the test split after it.
When ASHA stops a trial, Ray ends its actor and the trainer gets SIGTERM through its parent-death
signal; Ray's own SIGKILL of a dead worker's children is switched off so that the trainer can
exit as it does under budgetsweep (and print its summary line). Tune samples until the device-hour
budget is spent (trainer_process.DeviceBudget; a Stopper ends the experiment then). Segment records
go to DIR/segments/.

    python ray_peer.py --scheduler pb2 ...

runs Ray Tune's PB2 instead: a population of config.population() trials whose
config.task()["mutable"] parameters its GP bandit explores every perturbation_interval epochs. As
budgetsweep's pause mode does, each trial trains in segments of perturbation_interval epochs, one
trainer process each (--until, --checkpoint-dir), and reports a Ray checkpoint (the trainer's
checkpoint file) at a segment's end; an exploited trial restarts from its donor's checkpoint with
the new values (the trainer's --exploit-dir/--exploit-at/--mutable, as budgetsweep's exploits
use them). PB2 sees a log-uniform parameter as its base-10 logarithm, so that its bounds span the
decades the search space does. Trials the trainer refused are listed in DIR/notes.md.
"""

import json
import math
import os
import shutil
import tempfile

import ray
from ray import tune
from ray.tune.schedulers import ASHAScheduler
from ray.tune.schedulers.pb2 import PB2
from ray.tune.search.basic_variant import BasicVariantGenerator
from ray.tune.stopper import Stopper

import config
from trainer_process import TrainerProcess, peer_setup


LOG10 = "log10-"  # prefix of a parameter PB2 explores as the logarithm of a log-uniform one


def pb2_explored(name, p):
    """The name and [low, high] bounds under which PB2 explores a mutable parameter."""
    if p["type"] == "logUniform":
        return LOG10 + name, [math.log10(p["min"]), math.log10(p["max"])]
    return name, [p["min"], p["max"]]


def param_space(mutable=()):
    space = {}
    for name, p in config.space().items():
        if name in mutable:
            explored, bounds = pb2_explored(name, p)
            space[explored] = tune.uniform(*bounds)
        elif p["type"] == "choice":
            space[name] = tune.choice(p["values"])
        elif p["type"] == "logUniform":
            space[name] = tune.loguniform(p["min"], p["max"])
        else:
            space[name] = tune.uniform(p["min"], p["max"])
    return space


def trainer_params(ray_config):
    """The trainer's --name=value parameters from a Ray trial's config."""
    return {name[len(LOG10):] if name.startswith(LOG10) else name:
            10 ** value if name.startswith(LOG10) else value
            for name, value in ray_config.items()}


class BudgetStopper(Stopper):
    """Ends the experiment once the device-hour budget is spent."""

    def __init__(self, budget):
        self.budget = budget

    def __call__(self, trial_id, result):
        return False

    def stop_all(self):
        return self.budget.exhausted()


def whole_trainable(trainer, budget):
    """A trial as one trainer process to the full resource (for ASHAScheduler)."""
    epochs = config.size()["epochs"]

    def trainable(params):
        if budget.exhausted():
            return
        run = TrainerProcess(trainer, params, budget, tune.get_context().get_trial_id())
        try:
            for epoch, accuracy in run.epochs():
                if epoch == epochs:
                    run.finish()
                tune.report({"validation_accuracy": accuracy, "epoch": epoch})
        finally:
            run.stop()
            run.finish()

    return trainable


def segmented_trainable(trainer, budget, out, interval):
    """A trial in segments of `interval` epochs, a Ray checkpoint at each segment's end (for
    PB2)."""
    epochs = config.size()["epochs"]

    def trainable(ray_config):
        if budget.exhausted():
            return
        trial_id = tune.get_context().get_trial_id()
        own = tempfile.mkdtemp(prefix=f"{trial_id}-", dir=os.path.join(out, "checkpoints"))
        os.makedirs(os.path.join(own, "restored"))
        try:
            train_segments(ray_config, trial_id, own)
        finally:
            shutil.rmtree(own, ignore_errors=True)  # Ray keeps its own copies

    def train_segments(ray_config, trial_id, own):
        done = 0
        exploit = []
        restored = tune.get_checkpoint()
        if restored:
            # A restored checkpoint (the trial's own, or its donor's after an exploit) reaches the
            # trainer as a snapshot to go on from, its mutable flags free to take PB2's values.
            with restored.as_directory() as d:
                with open(os.path.join(d, "epoch.json")) as f:
                    done = json.load(f)["epoch"]
                shutil.copy(os.path.join(d, "checkpoint.pt"),
                            os.path.join(own, "restored", f"snapshot-{done}.pt"))
            exploit = [f"--exploit-dir={os.path.join(own, 'restored')}", f"--exploit-at={done}",
                       "--mutable=" + ",".join(config.task()["mutable"])]
        params = trainer_params(ray_config)
        while done < epochs and not budget.exhausted():
            until = min(epochs, (done // interval + 1) * interval)
            run = TrainerProcess(trainer, params, budget,
                                 f"{trial_id}-e{done}-{os.path.basename(own)}",
                                 [f"--until={until}", f"--checkpoint-dir={own}"] + exploit)
            try:
                reported = [(e, a) for e, a in run.epochs() if e > done]
            finally:
                run.stop()
                summary = run.finish()
            if not reported and run.stopped:
                return  # the budget ended it before its first epoch
            if not reported:
                with open(run.log_path, errors="replace") as f:
                    last = ([line.strip() for line in f if line.strip()] or ["no output"])[-1]
                raise RuntimeError(f"trainer exited without an epoch: {last}")
            for epoch, accuracy in reported[:-1]:
                tune.report({"validation_accuracy": accuracy, "epoch": epoch})
            epoch, accuracy = reported[-1]
            done = epoch
            with open(os.path.join(own, "epoch.json"), "w") as f:
                json.dump({"epoch": done}, f)
            tune.report({"validation_accuracy": accuracy, "epoch": epoch},
                        checkpoint=tune.Checkpoint.from_directory(own))
            if summary.get("epochs") != until:
                break  # stopped by the budget, or diverged

    return trainable


def main():
    args, trainer, budget = peer_setup(
        {"--scheduler": {"choices": ["asha", "pb2"], "default": "asha"}})
    s = config.size()

    os.environ["RAY_kill_child_processes_on_worker_exit"] = "false"
    # A trial that the budget ends before its first epoch reports nothing; Ray's strict check would
    # fail the whole experiment on that result, as the check's own message says to switch it off.
    os.environ["TUNE_DISABLE_STRICT_METRIC_CHECKING"] = "1"
    ray.init(num_cpus=config.PARALLELISM, include_dashboard=False, log_to_driver=False)
    if args.scheduler == "pb2":
        mutable = config.task()["mutable"]
        interval = config.perturbation_interval()
        os.makedirs(os.path.join(args.out, "checkpoints"), exist_ok=True)
        trainable = segmented_trainable(trainer, budget, os.path.abspath(args.out), interval)
        # A population, as PB2 is run: new configurations come from exploits, not from sampling.
        samples = config.population()
        scheduler = PB2(time_attr="epoch", perturbation_interval=interval,
                        hyperparam_bounds=dict(pb2_explored(name, config.space()[name])
                                               for name in mutable))
    else:
        mutable = ()
        samples = -1  # until the budget is spent
        trainable = whole_trainable(trainer, budget)
        scheduler = ASHAScheduler(time_attr="epoch", max_t=s["epochs"], grace_period=1,
                                  reduction_factor=s["reduction_factor"])
    tuner = tune.Tuner(
        tune.with_resources(trainable, {"cpu": 1}),
        param_space=param_space(mutable),
        tune_config=tune.TuneConfig(
            metric="validation_accuracy",
            mode="max",
            num_samples=samples,
            search_alg=BasicVariantGenerator(random_state=args.seed,
                                             max_concurrent=config.PARALLELISM),
            scheduler=scheduler,
        ),
        run_config=tune.RunConfig(storage_path=os.path.abspath(os.path.join(args.out, "ray")),
                                  name="roi", verbose=0, stop=BudgetStopper(budget),
                                  checkpoint_config=tune.CheckpointConfig(num_to_keep=4)),
    )
    errors = tuner.fit().errors
    ray.shutdown()
    if errors:
        with open(os.path.join(args.out, "notes.md"), "w") as f:
            f.write(f"- ray-{args.scheduler} seed {args.seed}: {len(errors)} trials failed; the "
                    f"first: {str(errors[0]).strip().splitlines()[-1]}\n")


if __name__ == "__main__":
    main()
