"""Optuna with SuccessiveHalvingPruner driving budgetsweep-trainer, config.PARALLELISM at a time.

    python optuna_peer.py --trainer PATH --seed N --out DIR

Optuna's default sampler (TPE, seeded) suggests each configuration from config.space(); every
epoch's validation accuracy, read from the trainer's metrics endpoint, is reported, and a pruned
trial's trainer is stopped with SIGTERM. As in budgetsweep's ASHA, the full resource is not a rung: a
trial that reached it completes. The study samples until the device-hour budget is spent (see
trainer_process.DeviceBudget). Segment records go to DIR/segments/.
"""


import optuna

import config
from trainer_process import TrainerProcess, peer_setup


def suggest(trial):
    params = {}
    for name, p in config.space().items():
        if p["type"] == "choice":
            params[name] = trial.suggest_categorical(name, p["values"])
        else:
            params[name] = trial.suggest_float(name, p["min"], p["max"],
                                               log=p["type"] == "logUniform")
    return params


def main():
    args, trainer, budget = peer_setup()

    def objective(trial):
        if budget.exhausted():
            trial.study.stop()
            raise optuna.TrialPruned()
        run = TrainerProcess(trainer, suggest(trial), budget, f"t{trial.number:04d}")
        try:
            for epoch, accuracy in run.epochs():
                trial.report(accuracy, epoch)
                # The full resource is the end of a trial, not a rung to be pruned at.
                if epoch < config.size()["epochs"] and trial.should_prune():
                    run.stop()
                    raise optuna.TrialPruned()
        finally:
            run.stop()
            summary = run.finish()
        if summary.get("objective") is None:
            raise RuntimeError(f"trial {trial.number} reported no accuracy")
        return summary["objective"]

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        direction="maximize",
        sampler=optuna.samplers.TPESampler(seed=args.seed),
        pruner=optuna.pruners.SuccessiveHalvingPruner(
            min_resource=1, reduction_factor=config.size()["reduction_factor"]))
    study.optimize(objective, n_jobs=config.PARALLELISM, catch=(RuntimeError,))


if __name__ == "__main__":
    main()
