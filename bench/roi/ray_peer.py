"""Ray Tune with ASHAScheduler driving budgetsweep-trainer, config.PARALLELISM at a time.

    python ray_peer.py --trainer PATH --seed N --out DIR

Ray Tune's default search (random sampling, seeded) draws each configuration from config.SPACE;
each trial's function runs the trainer and reports every epoch's validation accuracy, read from
the trainer's metrics endpoint; the last epoch is reported once the trainer has exited, because
Ray ends a trial as soon as it reports max_t, and the trainer evaluates the test split after it.
When ASHA stops a trial, Ray ends its actor and the trainer gets SIGTERM through its parent-death
signal; Ray's own SIGKILL of a dead worker's children is switched off so that the trainer can
exit as it does under budgetsweep (and print its summary line). Tune samples until the device-hour
budget is spent (trainer_process.DeviceBudget; a Stopper ends the experiment then). Segment records
go to DIR/segments/.
"""

import os

import ray
from ray import tune
from ray.tune.schedulers import ASHAScheduler
from ray.tune.search.basic_variant import BasicVariantGenerator
from ray.tune.stopper import Stopper

import config
from trainer_process import TrainerProcess, peer_setup


def param_space():
    space = {}
    for name, p in config.SPACE.items():
        if p["type"] == "choice":
            space[name] = tune.choice(p["values"])
        elif p["type"] == "logUniform":
            space[name] = tune.loguniform(p["min"], p["max"])
        else:
            space[name] = tune.uniform(p["min"], p["max"])
    return space


class BudgetStopper(Stopper):
    """Ends the experiment once the device-hour budget is spent."""

    def __init__(self, budget):
        self.budget = budget

    def __call__(self, trial_id, result):
        return False

    def stop_all(self):
        return self.budget.exhausted()


def main():
    args, trainer, budget = peer_setup()
    s = config.size()

    def trainable(params):
        if budget.exhausted():
            return
        run = TrainerProcess(trainer, params, budget, tune.get_context().get_trial_id())
        try:
            for epoch, accuracy in run.epochs():
                if epoch == s["epochs"]:
                    run.finish()
                tune.report({"validation_accuracy": accuracy, "epoch": epoch})
        finally:
            run.stop()
            run.finish()

    os.environ["RAY_kill_child_processes_on_worker_exit"] = "false"
    # A trial that the budget ends before its first epoch reports nothing; Ray's strict check would
    # fail the whole experiment on that result, as the check's own message says to switch it off.
    os.environ["TUNE_DISABLE_STRICT_METRIC_CHECKING"] = "1"
    ray.init(num_cpus=config.PARALLELISM, include_dashboard=False, log_to_driver=False)
    tuner = tune.Tuner(
        tune.with_resources(trainable, {"cpu": 1}),
        param_space=param_space(),
        tune_config=tune.TuneConfig(
            metric="validation_accuracy",
            mode="max",
            num_samples=-1,
            search_alg=BasicVariantGenerator(random_state=args.seed,
                                             max_concurrent=config.PARALLELISM),
            scheduler=ASHAScheduler(time_attr="epoch", max_t=s["epochs"], grace_period=1,
                                    reduction_factor=s["reduction_factor"]),
        ),
        run_config=tune.RunConfig(storage_path=os.path.abspath(os.path.join(args.out, "ray")),
                                  name="roi", verbose=0, stop=BudgetStopper(budget)),
    )
    tuner.fit()
    ray.shutdown()


if __name__ == "__main__":
    main()
