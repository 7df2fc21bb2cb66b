"""How often the hard task's best-algorithm target can hold, at the costs the run measured.

The target compares, seed by seed, a budgetsweep algorithm's device-hours to the grid's answer with
half of budgetsweep random's. budgetsweep's samplers draw the same configurations in the same
order for the same seed (random, ASHA, Hyperband, and TPE until it has values), so when random's
first or second draw reaches the target, the algorithm meets that same configuration just as early
and cannot be twice as cheap: it must still train it to the full resource.

This module puts a number on it. It resamples the run's own measurements:
- draws: budgetsweep random's trainer processes that reached the full resource, each with its
  device-seconds and whether its test accuracy reached the target; a draw reaches the target with
  probability `rarity`, the measured share or a rarer one;
- random search: the draws in order on PARALLELISM slots, each started while the costs of all
  started draws fit the budget; its device-seconds to target count every process up to the end of
  the first draw that reaches it, as report.py counts them;
- a screening algorithm that draws as random search does (ASHA and Hyperband do; TPE does until it
  has values) but judges better than any of them: it pays `screen_seconds` for each draw before
  the first that reaches the target and never misjudges one, then trains that one to the full
  resource while its other slots stay busy (PARALLELISM times its cost).
A seed holds when that algorithm reaches the target within the budget with at most half of
random's device-seconds (Optuna, the target's other bound, is left out, which only helps). An
algorithm that leaves random's draws for better ones (TPE once it has values) is not bounded by
it, but it shares random's first draws all the same.
"""

import math
import random
import statistics

import config
import verdicts

RARITY_DIVISORS = (1, 1.5, 2, 4)  # the measured share of draws that reach the target, and rarer
BUDGET_MULTIPLIERS = (1, 2, 3)  # the task's budget and larger ones
TRIALS = 10000  # simulated seeds per cell
RNG_SEED = 1  # every cell draws the same stream, so that cells differ by their settings alone


def random_search(draws, budget):
    """Device-seconds random search spends to its first draw that reaches the target (inf if the
    budget runs out first)."""
    free = [0.0] * config.PARALLELISM
    started, runs = 0.0, []
    for cost, hit in draws:
        if started + cost > budget:
            break
        slot = free.index(min(free))
        runs.append((free[slot], free[slot] + cost, hit))
        free[slot] += cost
        started += cost
    ends = [end for _, end, hit in runs if hit]
    if not ends:
        return math.inf
    first = min(ends)
    return sum(max(0.0, min(end, first) - start) for start, end, _ in runs)


def screening(draws, budget, screen_seconds):
    """Device-seconds the ideal screening algorithm spends to the target (inf past the budget)."""
    spent = 0.0
    for cost, hit in draws:
        spent += config.PARALLELISM * cost if hit else screen_seconds
        if spent > budget:
            return math.inf
        if hit:
            return spent
    return math.inf


def holds_share(hits, misses, rarity, budget, screen_seconds, rng):
    """The share of simulated seeds in which the target holds."""
    # More draws than either side can pay for within the budget.
    count = math.ceil(budget / min([screen_seconds] + [d[0] for d in hits + misses])) + 1
    held = 0
    for _ in range(TRIALS):
        draws = [rng.choice(hits) if rng.random() < rarity else rng.choice(misses)
                 for _ in range(count)]
        mine = screening(draws, budget, screen_seconds)
        held += mine < math.inf and mine <= 0.5 * random_search(draws, budget)
    return held / TRIALS


def at_least(k, n, p):
    """P(at least k of n independent seeds hold), each with probability p."""
    return sum(math.comb(n, i) * p**i * (1 - p)**(n - i) for i in range(k, n + 1))


def model(contenders, target, budget_seconds, epochs):
    """The table behind the best-algorithm target (None if the run lacks what it needs)."""
    full = [(p["seconds"], p["test_accuracy"] >= target - 1e-12)
            for run in contenders.get("random", {}).get("runs", []) for p in run["processes"]
            if p["epochs"] == epochs and p["test_accuracy"] is not None]
    hits = [d for d in full if d[1]]
    misses = [d for d in full if not d[1]]
    # The first rung's processes of the ASHA-family runs: a one-epoch judgement of a draw.
    one = [p["seconds"] for key in ("asha-stop", "asha-tpe", "hyperband")
           for run in contenders.get(key, {}).get("runs", []) for p in run["processes"]
           if p["epochs"] == 1]
    asha = [run["device_seconds"] / run["configurations"]
            for run in contenders.get("asha-stop", {}).get("runs", []) if run["configurations"]]
    if not hits or not misses or not one or not asha:
        return None
    seeds = len(config.size()["seeds"])
    needed = verdicts.seeds_needed(seeds)
    screens = [("one epoch per draw", statistics.median(one)),
               ("ASHA stop's cost per configuration", statistics.median(asha))]
    cells = []
    for name, seconds in screens:
        for divisor in RARITY_DIVISORS:
            rarity = len(hits) / len(full) / divisor
            for multiplier in BUDGET_MULTIPLIERS:
                share = holds_share(hits, misses, rarity, multiplier * budget_seconds, seconds,
                                    random.Random(RNG_SEED))
                cells.append({"screen": name, "screen_seconds": seconds, "rarity": rarity,
                              "budget_multiplier": multiplier, "seed_share": share,
                              "probability_met": at_least(needed, seeds, share)})
    return {"draws": len(full), "draws_reaching_target": len(hits),
            "mean_draw_seconds": statistics.mean(d[0] for d in full),
            "seeds": seeds, "seeds_needed": needed, "trials": TRIALS, "cells": cells}


def markdown(m, budget_hours, grid_minutes, contenders_minutes):
    """The section of the hard task's report that reads the model."""
    lines = [
        "budgetsweep's samplers draw the same configurations in the same order for the same seed "
        "(random, ASHA, Hyperband, and TPE until it has values), so when random's first or second "
        "draw reaches the target, an algorithm meets it just as early and still has to train it "
        "to the full resource: it cannot be twice as cheap in that seed. bench/roi/reach.py puts "
        f"a number on it from this run's own processes: budgetsweep random's {m['draws']} trainer "
        f"processes that reached the full resource ({m['draws_reaching_target']} reached the "
        f"target; {m['mean_draw_seconds']:.0f} device-seconds on average), resampled as the draws "
        "of simulated seeds, against an algorithm that draws as random search does (ASHA and "
        "Hyperband do; TPE does until it has values) and screens them better: it judges each "
        "draw for a fixed cost without ever misjudging it, and trains the first that reaches "
        "the target to the full resource while its other slot stays busy. A cell is the share of "
        f"{m['trials']:,} simulated seeds in which that algorithm reaches the target within the "
        "budget with at most half of random's device-hours, then the chance that a run of "
        f"{m['seeds']} seeds meets the target ({m['seeds_needed']} of them).",
        "",
        "| judging a draw costs | draws reaching the target | budget | seeds holding | "
        f"P(at least {m['seeds_needed']} of {m['seeds']}) |",
        "|---|---|---|---|---|",
    ]
    for c in m["cells"]:
        lines.append(
            f"| {c['screen']} ({c['screen_seconds']:.1f} s) | {c['rarity'] * 100:.1f}% | "
            f"{c['budget_multiplier']} × {budget_hours:.4f} device-hours | "
            f"{c['seed_share'] * 100:.0f}% | {c['probability_met'] * 100:.0f}% |")
    best_here = max((c for c in m["cells"] if c["budget_multiplier"] == 1),
                    key=lambda c: c["probability_met"])
    lines += [
        "",
        f"- At this budget, the best cell above meets the target with probability "
        f"{best_here['probability_met'] * 100:.0f}% ({best_here['screen']}, "
        f"{best_here['rarity'] * 100:.1f}% of draws reaching the target).",
        f"- The grid ran {grid_minutes:.0f} minutes here and the contenders "
        f"{contenders_minutes:.0f}; the contenders' runs last as long as their budget pays for, so "
        "they would take about "
        + ", ".join(f"{k * contenders_minutes:.0f} minutes at {k} × the budget"
                    for k in BUDGET_MULTIPLIERS if k > 1) + ".",
    ]
    return lines
