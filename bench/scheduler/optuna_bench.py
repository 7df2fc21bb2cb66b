"""Optuna's SuccessiveHalvingPruner fed the same report stream as scheduler_bench.

Each stream line is "trial rung value continue". A report at rung r is trial.report(value,
step=3**r) followed by trial.should_prune(): one decision. Only report + should_prune are timed
(trial creation through study.ask() is not). A size whose decisions take longer than --time-cap
seconds in all is cut there; its rate is the rate of the decisions that finished, which come from
the early part of the stream, when fewer trials compete (so it overstates Optuna's rate).
Prints one JSON object.
"""

import argparse
import json
import time

import optuna

SIZES = (1000, 10000, 100000)


def run(path, time_cap):
    with open(path) as f:
        stream = [line.split() for line in f]
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    pruner = optuna.pruners.SuccessiveHalvingPruner(
        min_resource=1, reduction_factor=3, min_early_stopping_rate=0)
    study = optuna.create_study(direction="maximize", pruner=pruner,
                                storage=optuna.storages.InMemoryStorage())
    trials = {}
    agree = 0
    done = 0
    timed = 0.0
    for trial_id, rung, value, keep in stream:
        trial = trials.get(trial_id)
        if trial is None:
            trial = trials[trial_id] = study.ask()
        start = time.perf_counter()
        trial.report(float(value), step=3 ** int(rung))
        pruned = trial.should_prune()
        timed += time.perf_counter() - start
        done += 1
        agree += pruned != (keep == "1")
        if timed > time_cap:
            break
    return {
        "decisions_in_stream": len(stream),
        "decisions": done,
        "trials_created": len(trials),
        "seconds": timed,
        "decisions_per_second": done / timed,
        "ns_per_decision": timed / done * 1e9,
        "capped": done < len(stream),
        "agreement": agree / done,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", required=True)
    parser.add_argument("--time-cap", type=float, default=120)
    args = parser.parse_args()
    results = {str(n): run(f"{args.streams}/stream-{n}.txt", args.time_cap) for n in SIZES}
    print(json.dumps({"optuna_version": optuna.__version__, "time_cap_seconds": args.time_cap,
                      "sizes": results}, indent=2))


if __name__ == "__main__":
    main()
