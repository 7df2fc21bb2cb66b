"""The ROI targets as verdicts computed from the analysed runs (report.py), never typed in.

A verdict compares contenders seed by seed: seed s of one contender against seed s of the other.
Each tool seeds its own sampler with s, so across tools the pairing is a convention; budgetsweep's
own algorithms draw the same configurations as its random search for the same seed (reach.py). It
holds only when its condition holds in at least SEED_SHARE of the seeds both contenders ran
(4 of 5, 3 of 3); a contender that did not run leaves the verdict "not evaluated" (holds None).
"""

import math

import config

SEED_SHARE = 0.8  # "a verdict counts only if it holds in at least 4 of 5 seeds"
PEERS = ("optuna", "ray", "ray-pb2")
INF = float("inf")


def budgetsweep_contenders():
    """The task's budgetsweep contenders other than the grid."""
    return [c for c in config.task()["contenders"] if c not in PEERS]


def seeds_needed(n):
    return math.ceil(SEED_SHARE * n - 1e-9)


def by_seed(contenders, key, value):
    """seed -> value(run) for a contender's runs ({} if it did not run)."""
    return {run["seed"]: value(run) for run in contenders.get(key, {}).get("runs", [])}


def paired(contenders, a, b, value, holds):
    """The verdict `holds(value(run of a), value(run of b))` over the seeds a and b share."""
    va, vb = by_seed(contenders, a, value), by_seed(contenders, b, value)
    seeds = sorted(set(va) & set(vb))
    good = [s for s in seeds if holds(va[s], vb[s])]
    return {"contender": a, "against": b, "seeds": len(seeds), "seeds_holding": len(good),
            "required": seeds_needed(len(seeds)),
            "holds": None if not seeds else len(good) >= seeds_needed(len(seeds))}


def hours_to_target(run):
    return INF if run["device_hours_to_target"] is None else run["device_hours_to_target"]


def final_accuracy(run):
    return -INF if run["best"] is None else run["best"]["test_accuracy"]


def idle_outside_wind_down(run):
    if run["tail_idle_slot_seconds"] is None:
        return run["idle_slot_seconds"]
    return run["idle_slot_seconds"] - run["tail_idle_slot_seconds"]


def launch_latency(run):
    return INF if run["launch_latency_seconds"] is None else run["launch_latency_seconds"]


def within_share_of_grid(contenders, key, share, grid_hours):
    """Seed by seed: the contender reached the target with at most `share` of the grid's
    device-hours."""
    hours = by_seed(contenders, key, hours_to_target)
    good = [s for s, h in hours.items() if h <= share * grid_hours]
    return {"contender": key, "seeds": len(hours), "seeds_holding": len(good),
            "required": seeds_needed(len(hours)),
            "holds": None if not hours else len(good) >= seeds_needed(len(hours))}


def fastest_to_target(contenders):
    """Seed by seed, for each budgetsweep algorithm but random: it reached the grid's answer with
    at most half of budgetsweep random's device-hours and no more than Optuna's (a seed that never
    reached it counts as infinitely late). The best algorithm is the one holding in most seeds."""
    rows = []
    for key in budgetsweep_contenders():
        if key == "random":
            continue
        mine = by_seed(contenders, key, hours_to_target)
        rand = by_seed(contenders, "random", hours_to_target)
        optuna = by_seed(contenders, "optuna", hours_to_target)
        seeds = sorted(set(mine) & set(rand) & set(optuna))
        good = [s for s in seeds if mine[s] < INF and mine[s] <= 0.5 * rand[s]
                and mine[s] <= optuna[s]]
        rows.append({"contender": key, "seeds": len(seeds), "seeds_holding": len(good),
                     "required": seeds_needed(len(seeds)),
                     "holds": None if not seeds else len(good) >= seeds_needed(len(seeds))})
    evaluated = [r for r in rows if r["holds"] is not None]
    best = max(evaluated, key=lambda r: r["seeds_holding"]) if evaluated else None
    return {"best": best, "by_algorithm": rows}


def overhead(contenders, state_filesystem):
    """Seed by seed, each budgetsweep contender against each peer, at equal guarantees: idle
    slot-seconds outside the wind-down (what the budget's admission rule leaves idle at the end is
    the product's promise, so it is left out), and launch latency only where neither side kept
    durable state (budgetsweep's state on a tmpfs; the peers keep none)."""
    durable = state_filesystem != "tmpfs"
    rows = []
    for key in budgetsweep_contenders():
        for peer in PEERS:
            if peer not in config.task()["contenders"]:
                continue
            idle = paired(contenders, key, peer, idle_outside_wind_down, lambda a, b: a <= b)
            latency = paired(contenders, key, peer, launch_latency, lambda a, b: a <= b)
            if durable:
                latency["holds"] = None
            rows.append({"contender": key, "against": peer, "idle_outside_wind_down": idle,
                         "launch_latency": latency})
    return {"state_filesystem": state_filesystem, "budgetsweep_state_durable": durable,
            "rows": rows}


def compute(contenders, grid_hours, state_filesystem):
    """Every verdict of the task (config.ROI_TASK)."""
    out = {}
    if config.task_name() == "easy":
        out["asha_within_25_percent_of_grid_device_hours"] = [
            within_share_of_grid(contenders, key, config.TARGET_FRACTION, grid_hours)
            for key in ("asha-stop", "asha-pause")]
    else:
        out["best_algorithm_half_of_random_and_no_more_than_optuna"] = fastest_to_target(
            contenders)
        out["asha_tpe_final_accuracy_at_least_optuna"] = paired(
            contenders, "asha-tpe", "optuna", final_accuracy, lambda a, b: a >= b)
        out["pb2_final_accuracy_at_least_ray_pb2"] = paired(
            contenders, "pb2", "ray-pb2", final_accuracy, lambda a, b: a >= b)
    out["overhead_at_equal_guarantees"] = overhead(contenders, state_filesystem)
    return out


def word(v):
    if v["holds"] is None:
        return "not evaluated"
    return (f"{'met' if v['holds'] else 'not met'} ({v['seeds_holding']} of {v['seeds']} seeds; "
            f"{v['required']} needed)")


def markdown(v, labels):
    """The verdicts as Markdown bullet lines; labels: contender -> its label."""
    lines = []
    if "asha_within_25_percent_of_grid_device_hours" in v:
        lines.append("- ASHA reaches the grid's answer with at most "
                     f"{config.TARGET_FRACTION:.0%} of the grid's device-hours: " + "; ".join(
                         f"{labels[r['contender']]} {word(r)}"
                         for r in v["asha_within_25_percent_of_grid_device_hours"]) + ".")
    if "best_algorithm_half_of_random_and_no_more_than_optuna" in v:
        f = v["best_algorithm_half_of_random_and_no_more_than_optuna"]
        best = f["best"]
        lines.append(
            "- budgetsweep's best algorithm reaches the grid's answer with at most half of "
            "budgetsweep random's device-hours and no more than Optuna's: "
            + ("not evaluated" if best is None else f"{labels[best['contender']]}, {word(best)}")
            + ". Each algorithm: " + "; ".join(f"{labels[r['contender']]} {word(r)}"
                                                for r in f["by_algorithm"]) + ".")
        for key, text in (("asha_tpe_final_accuracy_at_least_optuna",
                           "ASHA + TPE's final test accuracy at equal budget ≥ Optuna's"),
                          ("pb2_final_accuracy_at_least_ray_pb2",
                           "budgetsweep PB2's final test accuracy at equal budget ≥ Ray Tune "
                           "PB2's")):
            lines.append(f"- {text}: {word(v[key])}.")
    o = v["overhead_at_equal_guarantees"]
    lines.append(
        "- Overhead at equal guarantees, budgetsweep ≤ the peer: idle slot-seconds outside the "
        "wind-down: " + "; ".join(
            f"{labels[r['contender']]} vs {labels[r['against']]} "
            f"{word(r['idle_outside_wind_down'])}" for r in o["rows"]) + ".")
    if o["budgetsweep_state_durable"]:
        lines.append(
            f"- Launch latency: not evaluated: budgetsweep's state was on {o['state_filesystem']}"
            " (durable, fsynced records) and the peers keep none; rerun with ROI_STATE_ROOT on a "
            "tmpfs (README) to compare with durable state on neither side.")
    else:
        lines.append("- Launch latency with durable state on neither side (budgetsweep's state "
                     "on a tmpfs): " + "; ".join(
                         f"{labels[r['contender']]} vs {labels[r['against']]} "
                         f"{word(r['launch_latency'])}" for r in o["rows"]) + ".")
    return lines
