"""Computes the ROI figures from the raw runs and writes RESULTS.{md,json,png}.

    python report.py --raw DIR --out bench/results/roi --command "..."

DIR holds one folder per contender and seed: <contender>/s<seed>/run.json (measure.py) and
segments/*.json (one per trainer process). Every figure below is computed from those files.

Definitions (the same for every contender):
- A trainer process runs from the moment its launcher forks it to the moment it reaps it.
  device-seconds = the sum of those durations (one CPU trial = one device).
- A configuration is "found" when a trainer process reaches the full resource; it counts from
  that process's end. The incumbent is the found configuration with the best validation accuracy
  at the full resource (ties: the earlier), and its test accuracy is the contender's answer.
- device-hours to target: the device-hours spent by all processes (counting the running ones up
  to that moment) when the incumbent's test accuracy first comes within TARGET_POINTS percentage
  points of the grid's answer (the grid's incumbent at its end).
- idle slot-seconds: parallelism x wall - device-seconds, the device time the contender held but
  did not spend inside a trainer (wall = the contender's command, start to exit).
- tool CPU seconds: CPU time of the contender's whole process tree (measure.py) minus the CPU
  time its trainers report (their summary lines).
"""

import argparse
import bisect
import glob
import json
import os
import platform
import statistics

import config
import reach
import verdicts

LABELS = {
    "grid": "budgetsweep grid (reference)",
    "random": "budgetsweep random",
    "asha-stop": "budgetsweep ASHA stop",
    "asha-pause": "budgetsweep ASHA pause",
    "asha-tpe": "budgetsweep ASHA + TPE",
    "hyperband": "budgetsweep Hyperband",
    "pbt": "budgetsweep PBT",
    "pb2": "budgetsweep PB2",
    "optuna": "Optuna + SuccessiveHalvingPruner",
    "ray": "Ray Tune + ASHAScheduler",
    "ray-pb2": "Ray Tune + PB2",
}


def contenders_of_task():
    """[(key, label)]: the grid, then the task's contenders in run.sh's order."""
    return [(key, LABELS[key]) for key in ["grid"] + config.task()["contenders"]]


def load_segments(run_dir):
    segments = {}
    seg_dir = os.path.join(run_dir, "segments")
    for path in glob.glob(os.path.join(seg_dir, "*.start.json")):
        # A start without an end record: its driver died first (Ray ended the actor); the
        # trainer's last log write marks its exit.
        with open(path) as f:
            start = json.load(f)
        log = os.path.join(seg_dir, start["segment"] + ".log")
        summary = {}
        with open(log, errors="replace") as f:
            for line in f:
                if line.startswith("{"):
                    summary = json.loads(line)
        segments[start["segment"]] = dict(start, end=os.path.getmtime(log), summary=summary,
                                          end_from_log=True)
    for path in glob.glob(os.path.join(seg_dir, "*.json")):
        if not path.endswith(".start.json"):
            with open(path) as f:
                record = json.load(f)
            segments[record["segment"]] = dict(record, end_from_log=False)
    return sorted(segments.values(), key=lambda s: s["start"])


def device_seconds(run_dir):
    """The device-seconds of every trainer process of a run."""
    return sum(s["end"] - s["start"] for s in load_segments(run_dir))


def device_seconds_until(segments, t):
    return sum(max(0.0, min(s["end"], t) - s["start"]) for s in segments)


def trajectory(segments, epochs):
    """[(device-seconds spent, incumbent test accuracy, incumbent validation accuracy)]."""
    points, best = [], None
    for s in sorted(segments, key=lambda s: s["end"]):
        summ = s["summary"]
        if summ.get("epochs") == epochs and summ.get("test_accuracy") is not None:
            val = summ["validation_accuracy"][epochs - 1]
            if best is None or val > best[1]:
                best = (summ["test_accuracy"], val, s["params"])
                points.append((device_seconds_until(segments, s["end"]), best[0], best[1]))
    return points, best


def launch_latencies(segments):
    """For each trainer start after the first PARALLELISM: seconds since the last trainer exit.

    The tool's reaction time: the exit that freed a slot (or budget) to the start it made room for.
    """
    exits = sorted(s["end"] for s in segments)
    out = []
    for s in sorted(segments, key=lambda s: s["start"])[config.PARALLELISM:]:
        before = bisect.bisect_right(exits, s["start"])
        if before:
            out.append(s["start"] - exits[before - 1])
    return out


def tail_idle_slot_seconds(segments, run):
    """The idle slot-seconds from the last moment every slot ran a trainer to the command's exit:
    the sweep's wind-down, when the contender no longer fills every slot."""
    changes = sorted([(s["start"], 1) for s in segments] + [(s["end"], -1) for s in segments])
    busy, full_until = 0, run["start"]
    for t, step in changes:
        if busy >= config.PARALLELISM:
            full_until = t
        busy += step
    held = sum(max(0.0, s["end"] - max(s["start"], full_until)) for s in segments)
    return config.PARALLELISM * (run["end"] - full_until) - held


def analyse_run(run_dir, epochs):
    with open(os.path.join(run_dir, "run.json")) as f:
        run = json.load(f)
    segments = load_segments(run_dir)
    device = sum(s["end"] - s["start"] for s in segments)
    cpu = [s["summary"].get("cpu_seconds") for s in segments]
    trainer_cpu = sum(c for c in cpu if c is not None)
    points, best = trajectory(segments, epochs)
    latencies = launch_latencies(segments)
    starts = sorted(s["start"] for s in segments)
    ends = sorted(s["end"] for s in segments)
    return {
        "seed": run["seed"],
        "exit_code": run["exit_code"],
        "wall_seconds": run["wall_seconds"],
        "trainer_processes": len(segments),
        "configurations": len({json.dumps(s["params"], sort_keys=True) for s in segments}),
        "full_resource_configurations": sum(
            1 for s in segments if s["summary"].get("epochs") == epochs),
        "processes_without_summary": sum(1 for c in cpu if c is None),
        "processes_ended_by_log_time": sum(1 for s in segments if s["end_from_log"]),
        # From the driver's SIGTERM to the trainer's reaping, for the trainers a driver stopped.
        "sigterm_to_exit_seconds": [s["end"] - s["stop_sent"] for s in segments
                                    if s.get("stop_sent") is not None and not s["end_from_log"]],
        "device_seconds": device,
        "idle_slot_seconds": config.PARALLELISM * run["wall_seconds"] - device,
        "tail_idle_slot_seconds": tail_idle_slot_seconds(segments, run) if segments else None,
        "startup_seconds": starts[0] - run["start"] if starts else None,
        "launch_latency_seconds": statistics.median(latencies) if latencies else None,
        "shutdown_seconds": run["end"] - ends[-1] if ends else None,
        "tree_cpu_seconds": run["tree_cpu_seconds"],
        "cpu_source": run.get("cpu_source", "RUSAGE_CHILDREN"),
        "trainer_cpu_seconds": trainer_cpu,
        "tool_cpu_seconds": run["tree_cpu_seconds"] - trainer_cpu,
        "trajectory": points,
        # Every trainer process, for auditing: times relative to the command's start.
        "processes": [{
            "id": s["segment"], "params": s["params"],
            "start_seconds": s["start"] - run["start"], "seconds": s["end"] - s["start"],
            "epochs": s["summary"].get("epochs"), "stopped": s.get("stopped"),
            "validation_accuracy": s["summary"].get("validation_accuracy"),
            "test_accuracy": s["summary"].get("test_accuracy"),
            "cpu_seconds": s["summary"].get("cpu_seconds"),
        } for s in segments],
        "best": {"test_accuracy": best[0], "validation_accuracy": best[1], "params": best[2]}
        if best else None,
    }


def time_to_target(run, target):
    for device_s, test_acc, _ in run["trajectory"]:
        if test_acc >= target - 1e-12:
            return device_s / 3600
    return None


def spread(values):
    """Median, min and max of the values (None when there are none)."""
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def median_reaching(values):
    """Median with unreached (None) seeds counted as infinitely late; None if the median is."""
    ordered = sorted(float("inf") if v is None else v for v in values)
    if not ordered:
        return None
    median = statistics.median(ordered)
    return None if median == float("inf") else median


def fmt_spread(sp, digits, scale=1.0):
    if sp is None:
        return "n/a"
    f = f"{{:.{digits}f}}"
    if len(set([sp["min"], sp["max"]])) == 1:
        return f.format(sp["median"] * scale)
    return (f.format(sp["median"] * scale) + " [" + f.format(sp["min"] * scale) + "–" +
            f.format(sp["max"] * scale) + "]")


def plot(results, target, grid_hours, path):
    import matplotlib
    import matplotlib.ticker
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(8, 5))
    for key, label in contenders_of_task():
        runs = results["contenders"].get(key, {}).get("runs", [])
        if not runs:
            continue
        # Evaluated where any seed's answer changes, and at the most any seed spent.
        xs = np.array(sorted({p[0] / 3600 for r in runs for p in r["trajectory"]} |
                             {max(r["device_seconds"] for r in runs) / 3600}))
        curves = np.full((len(runs), len(xs)), -np.inf)
        for i, r in enumerate(runs):
            for device_s, acc, _ in r["trajectory"]:
                curves[i, xs >= device_s / 3600 - 1e-12] = acc * 100
        # The median of the seeds' answers, a seed without an answer yet counting as the lowest;
        # the lower median for an even count, so every point is some seed's real answer.
        med = np.sort(curves, axis=0)[(len(runs) - 1) // 2]
        med[np.isinf(med)] = np.nan
        ax.step(xs, med, where="post", marker="o", markersize=3,
                label=f"{label} (n={len(runs)})")
    ax.axhline(target * 100, color="grey", linestyle="--", linewidth=1,
               label=f"target: grid's answer - {config.TARGET_POINTS} pp")
    budget_fraction = config.size()["budget_fraction"]
    ax.axvline(grid_hours * budget_fraction, color="grey", linestyle=":", linewidth=1,
               label=f"each contender's budget: {budget_fraction:.0%} of the grid's device-hours")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(
        lambda v, _: f"{v:g}" if f"{v:e}"[0] in "235" else ""))
    ax.set_xlabel("device-hours spent (sum of trainer process time; log scale)")
    ax.set_ylabel("test accuracy of the best configuration found (%)")
    ax.set_title(f"{config.task_name()} task, cnn2 on Fashion-MNIST: best configuration found vs "
                 "compute, median over seeds", fontsize=11)
    lows = [p[1] * 100 for c in results["contenders"].values() for r in c["runs"]
            for p in r["trajectory"]]
    if lows:
        ax.set_ylim(max(min(lows), target * 100 - 5) - 0.5, max(lows) + 0.5)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def machine():
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {"cpu": cpu, "cores_online": os.cpu_count(), "nproc": len(os.sched_getaffinity(0)),
            "os": platform.platform(), "python": platform.python_version()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--versions", default="{}")
    ap.add_argument("--notes", default="", help="file with notes from run.sh (e.g. failures)")
    ap.add_argument("--state-filesystem", default="unknown",
                    help="file system type of budgetsweep's state directories (stat -f -c %%T)")
    args = ap.parse_args()
    s = config.size()
    epochs = s["epochs"]

    contenders = {}
    for key, label in contenders_of_task():
        runs = [analyse_run(os.path.dirname(p), epochs)
                for p in sorted(glob.glob(os.path.join(args.raw, key, "s*", "run.json")))]
        contenders[key] = {"label": label, "runs": runs}

    grid_runs = contenders["grid"]["runs"]
    if not grid_runs or grid_runs[0]["best"] is None:
        raise SystemExit("report: the grid run found no configuration; nothing to compare with")
    grid = grid_runs[0]
    grid_answer = grid["best"]["test_accuracy"]
    target = grid_answer - config.TARGET_POINTS / 100
    grid_hours = grid["device_seconds"] / 3600

    for c in contenders.values():
        runs = c["runs"]
        hours = [time_to_target(r, target) for r in runs]
        for r, h in zip(runs, hours):
            r["device_hours_to_target"] = h
        reached = [h for h in hours if h is not None]
        median_h = median_reaching(hours)
        c["summary"] = {
            "seeds": [r["seed"] for r in runs],
            "reached_target": f"{len(reached)}/{len(runs)}",
            "device_hours_to_target": spread(reached),
            "device_hours_to_target_median_all_seeds": median_h,
            "fraction_of_grid_device_hours": None if median_h is None else median_h / grid_hours,
            "final_best_test_accuracy": spread(
                [r["best"]["test_accuracy"] for r in runs if r["best"]]),
            "device_hours_total": spread([r["device_seconds"] / 3600 for r in runs]),
            "wall_seconds": spread([r["wall_seconds"] for r in runs]),
            "trainer_processes": spread([r["trainer_processes"] for r in runs]),
            "configurations": spread([r["configurations"] for r in runs]),
            "full_resource_configurations": spread(
                [r["full_resource_configurations"] for r in runs]),
            "idle_slot_seconds": spread([r["idle_slot_seconds"] for r in runs]),
            "tail_idle_slot_seconds": spread([r["tail_idle_slot_seconds"] for r in runs
                                              if r["tail_idle_slot_seconds"] is not None]),
            "startup_seconds": spread([r["startup_seconds"] for r in runs
                                       if r["startup_seconds"] is not None]),
            "launch_latency_seconds": spread([r["launch_latency_seconds"] for r in runs
                                              if r["launch_latency_seconds"] is not None]),
            "shutdown_seconds": spread([r["shutdown_seconds"] for r in runs
                                        if r["shutdown_seconds"] is not None]),
            "tool_cpu_seconds": spread([r["tool_cpu_seconds"] for r in runs]),
        }

    results = {
        "benchmark": "ROI: device-hours to reach the grid's answer, cnn2 on Fashion-MNIST",
        "command": args.command,
        "task_name": config.task_name(),
        "size": config.size_name(),
        "task": {
            "trainer_args": config.trainer_args("budgetsweep-trainer"),
            "train_limit": s["train_limit"], "eval_limit": s["eval_limit"],
            "validation_size": 5000, "epochs": epochs, "rungs": config.rungs(),
            "reduction_factor": s["reduction_factor"],
            "search_space": config.space(), "grid": s["grid"],
            "budget_fraction_of_grid": s["budget_fraction"],
            "budget_device_hours": s["budget_fraction"] * grid_hours,
            "parallelism": config.PARALLELISM, "poll_seconds": config.POLL_SECONDS,
            "grace_seconds": config.GRACE_SECONDS,
        },
        "machine": machine(),
        "versions": json.loads(args.versions),
        "grid_answer": {"test_accuracy": grid_answer,
                        "validation_accuracy": grid["best"]["validation_accuracy"],
                        "params": grid["best"]["params"], "device_hours": grid_hours,
                        "configurations": grid["configurations"]},
        "target_test_accuracy": target,
        "targets": verdicts.compute(contenders, grid_hours, args.state_filesystem),
        "contenders": contenders,
    }
    if "best_algorithm_half_of_random_and_no_more_than_optuna" in results["targets"]:
        results["reach"] = reach.model(contenders, target,
                                       s["budget_fraction"] * grid["device_seconds"], epochs)
    with open(args.out + ".json", "w") as f:
        json.dump(results, f, indent=1)
    plot(results, target, grid_hours, args.out + ".png")
    notes = ""
    if args.notes and os.path.exists(args.notes):
        with open(args.notes) as f:
            notes = f.read().strip()
    with open(args.out + ".md", "w") as f:
        f.write(markdown(results, notes, os.path.basename(args.out) + ".png"))


def grace_line(r):
    """budgetsweep's grace period, next to the SIGTERM-to-exit latency the peers' drivers saw."""
    latencies = [x for key in verdicts.PEERS
                 for run in r["contenders"].get(key, {"runs": []})["runs"]
                 for x in run["sigterm_to_exit_seconds"]]
    line = (f"- budgetsweep's trials get `terminationGracePeriodSeconds: "
            f"{r['task']['grace_seconds']}`; every reservation includes the grace period (the "
            "supervisor sends SIGTERM that long before the deadline).")
    if latencies:
        line += (f" The trainer exits {statistics.median(latencies):.2f} s (median; at most "
                 f"{max(latencies):.2f} s) after SIGTERM, over the {len(latencies)} trainers the "
                 "peers' drivers stopped.")
    return line


def reading(r):
    """Observations computed from the results, to read the table by."""
    t, g, cs = r["task"], r["grid_answer"], r["contenders"]
    grid_run = cs["grid"]["runs"][0]
    out = [
        f"- The grid itself came within the target after {grid_run['device_hours_to_target']:.4f} "
        f"device-hours ({grid_run['device_hours_to_target'] / g['device_hours'] * 100:.0f}% of "
        "its run), because of where that configuration falls in its enumeration order; it cannot "
        "know that before it has run every configuration, so its full cost is the reference.",
        f"- One test image is {100 / t['eval_limit']:.2f} points of test accuracy: the "
        f"{config.TARGET_POINTS}-point target is "
        f"{round(config.TARGET_POINTS * t['eval_limit'] / 100)} images of the capped test set.",
    ]
    others = config.task()["contenders"]
    for key in others:
        misses = [(run["seed"], (r["target_test_accuracy"] - run["best"]["test_accuracy"]) * 100)
                  for run in cs[key]["runs"]
                  if run["device_hours_to_target"] is None and run["best"]]
        if misses:
            out.append(f"- {cs[key]['label']}: seeds that missed ended "
                       + ", ".join(f"{gap:.2f} (seed {seed})" for seed, gap in misses)
                       + " points below the target.")
    same = [run["seed"] for run in cs.get("asha-stop", {"runs": []})["runs"]
            if any(other["seed"] == run["seed"] and
                   {json.dumps(p["params"], sort_keys=True) for p in other["processes"]} ==
                   {json.dumps(p["params"], sort_keys=True) for p in run["processes"]}
                   for other in cs.get("asha-pause", {"runs": []})["runs"])]
    if same:
        out.append("- budgetsweep's ASHA stop and pause runs with the same seed sampled the same "
                   f"configurations (seeds {', '.join(map(str, same))}): they differ only in "
                   "which ones they promoted and how, so their rows are not independent.")
    # One-epoch processes that ran to their end: pause mode's first segments (--until 1).
    one = [p["cpu_seconds"] for run in cs.get("asha-pause", {"runs": []})["runs"]
           for p in run["processes"]
           if p["id"].endswith("-seg0") and p["epochs"] == 1 and not p["stopped"]
           and p["cpu_seconds"] is not None]
    full = [p["cpu_seconds"] for p in grid_run["processes"]
            if p["epochs"] == t["epochs"] and p["cpu_seconds"] is not None]
    if one and full and t["epochs"] > 1:
        per_epoch = (statistics.median(full) - statistics.median(one)) / (t["epochs"] - 1)
        out.append(
            f"- Trainer CPU time per process: median {statistics.median(one):.1f} s for one epoch "
            f"(pause mode's first segments), {statistics.median(full):.1f} s for "
            f"{t['epochs']} (the grid): about {per_epoch:.1f} s per further epoch (a full run's "
            "test evaluation at its end spread over them) and "
            f"{statistics.median(one) - per_epoch:.1f} s fixed per process (start, loading the "
            "data), which weighs on one-epoch ASHA trials and on pause mode's extra processes.")
    budget = t["budget_device_hours"]
    spent = {key: max(run["device_seconds"] / 3600 for run in cs[key]["runs"])
             for key in others if cs[key]["runs"]}
    if spent:
        out.append(f"- Budget {budget:.4f} device-hours; the most any seed spent: "
                   + ", ".join(f"{cs[k]['label']} {h:.4f} ({h / budget * 100:.1f}%)"
                               for k, h in spent.items()) + ".")
        out.append(
            "- Idle slot-seconds count slots a contender left empty because its budget could not "
            "pay for more, as well as its own latency. budgetsweep starts or resumes a trial only "
            "when what is left covers the work to its next rung (with a 25% margin, the grace "
            "period, and a running trial's deadline a lookahead ahead), so near the end a slot "
            "stays empty and part of the budget stays unspent: the wind-down column. The peers' "
            "drivers start trainers until the cap and stop them there, mid-epoch, so their slots "
            "stay busy to the end and they spend up to the whole budget. Launch latency isolates "
            "the tools' own reaction time.")
    out.append(f"- The runs, the grid's included, took {wall_minutes(r, cs):.0f} minutes of wall "
               "time in all.")
    return out


def wall_minutes(r, keys):
    """The wall time of the runs of the contenders `keys`, in minutes."""
    return sum(run["wall_seconds"] for key in keys for run in r["contenders"][key]["runs"]) / 60


def overview(r, png, level):
    """The head of a task's report: the task, the grid's answer, the anytime curve, the table and
    the verdicts, with section headings at `level` ("##" in the task's file, "###" in the index
    of both tasks)."""
    t = r["task"]
    g = r["grid_answer"]
    params = ", ".join(f"{k}={v:g}" for k, v in g["params"].items())

    columns = ["contender", "seeds", "reached target", "device-hours to target", "% of grid",
               "final best test acc (%)", "device-hours total", "configurations",
               "at full resource", "trainer processes", "wall s",
               "idle slot-s", "of which in the wind-down", "startup s",
               "launch latency ms", "tool CPU s"]
    lines = [
        f"Ran on {r['machine']['cpu']}, nproc {r['machine']['nproc']}.",
        "",
        f"cnn2 (budgetsweep-trainer) on Fashion-MNIST: the first {t['train_limit']:,} training "
        f"images, validation and test capped at {t['eval_limit']:,} images each "
        f"(validation = the last 5,000 training images, test = t10k), {t['epochs']} epochs at most "
        f"(ASHA rungs {', '.join(map(str, t['rungs']))}; η = {t['reduction_factor']}), "
        f"{t['parallelism']} trials at a time on 1 intra-op thread each. Search space: "
        + ", ".join(f"`{k}` {v['type']}" + (f" {v['values']}" if "values" in v else
                                            f" [{v['min']:g}, {v['max']:g}]")
                    for k, v in t["search_space"].items())
        + ". The grid: " + " × ".join(f"`{k}` {v}" for k, v in t["grid"].items())
        + f" = {g['configurations']} configurations, each to {t['epochs']} epochs. "
        f"Every other contender gets {t['budget_fraction_of_grid'] * 100:.0f}% of the grid's "
        f"device-hours ({t['budget_device_hours']:.4f}) as a hard budget and samples "
        "configurations until it is spent: budgetsweep through the sweep's `budget.gpuHours`, "
        "the peers through the same cap on their trainers' device time.",
        "",
        f"Grid's answer (best validation accuracy at {t['epochs']} epochs): test accuracy "
        f"**{g['test_accuracy'] * 100:.2f}%** ({params}) "
        f"after {g['device_hours']:.3f} device-hours. Target: test accuracy ≥ "
        f"{r['target_test_accuracy'] * 100:.2f}% (within {config.TARGET_POINTS} pp).",
        "",
        f"![best test accuracy vs device-hours]({png})",
        "",
        "Median [min–max] over seeds. Device-hours to target: the median over all seeds, a seed "
        "that never reached the target counting as never (so it is undefined when most seeds "
        "did not reach it), with the range over the seeds that did; % of grid is that median "
        "over the grid's total device-hours.",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
    ]
    for key, c in r["contenders"].items():
        sm = c["summary"]
        if not c["runs"]:
            lines.append(f"| {c['label']} | 0 | not run |" + " |" * (len(columns) - 3))
            continue
        frac = sm["fraction_of_grid_device_hours"]
        median_all = sm["device_hours_to_target_median_all_seeds"]
        reached = sm["device_hours_to_target"]
        if median_all is None:
            to_target = "not reached by most seeds"
            if reached:
                to_target += f" (reached: {reached['min']:.4f})" if reached["min"] == reached[
                    "max"] else f" (reached: {reached['min']:.4f}–{reached['max']:.4f})"
        else:
            to_target = f"{median_all:.4f}"
            if reached["min"] != reached["max"]:
                to_target += f" [{reached['min']:.4f}–{reached['max']:.4f}]"
        lines.append(
            f"| {c['label']} | {len(c['runs'])} | {sm['reached_target']} | {to_target} | "
            f"{'n/a' if frac is None else f'{frac * 100:.0f}%'} | "
            f"{fmt_spread(sm['final_best_test_accuracy'], 2, 100)} | "
            f"{fmt_spread(sm['device_hours_total'], 4)} | "
            f"{fmt_spread(sm['configurations'], 0)} | "
            f"{fmt_spread(sm['full_resource_configurations'], 0)} | "
            f"{fmt_spread(sm['trainer_processes'], 0)} | "
            f"{fmt_spread(sm['wall_seconds'], 0)} | {fmt_spread(sm['idle_slot_seconds'], 0)} | "
            f"{fmt_spread(sm['tail_idle_slot_seconds'], 0)} | "
            f"{fmt_spread(sm['startup_seconds'], 1)} | "
            f"{fmt_spread(sm['launch_latency_seconds'], 0, 1000)} | "
            f"{fmt_spread(sm['tool_cpu_seconds'], 1)} |")
    return lines + [
        "",
        f"{level} Targets",
        "",
        f"Computed from the runs (bench/roi/verdicts.py): a verdict compares seed s of one "
        f"contender with seed s of the other, and is met only if it holds in at least "
        f"{verdicts.SEED_SHARE:.0%} of the seeds both ran (4 of 5).",
        "",
    ] + verdicts.markdown(r["targets"], LABELS)


def markdown(r, notes, png):
    t = r["task"]
    lines = [
        f"# ROI benchmark, {r['task_name']} task: device-hours to the grid's answer",
        "",
    ] + overview(r, png, "##") + [
        "",
        "## Reading it",
        "",
    ] + reading(r) + ([
        "",
        "## What the best-algorithm target needs",
        "",
    ] + reach.markdown(r["reach"], t["budget_device_hours"], wall_minutes(r, ["grid"]),
                       wall_minutes(r, config.task()["contenders"]))
        if r.get("reach") else []) + [
        "",
        "## Definitions",
        "",
        "- **device-hours**: the sum over trainer processes of the time from the fork to the "
        "reaping of the process, taken by whoever launched it (budgetsweep's segment supervisor, "
        "or the peer driver's `subprocess`); one CPU trial counts as one device.",
        "- **found / incumbent**: a configuration counts once a trainer process reaches the full "
        "resource; the incumbent is the one with the best validation accuracy there, and its test "
        "accuracy is the contender's answer. The same rule for every contender (no tool's own "
        "notion of best is used).",
        "- **device-hours to target**: device time spent by all trainer processes (running ones "
        "up to that moment) when the incumbent first reaches the target.",
        f"- **idle slot-seconds**: {t['parallelism']} × wall − device-seconds: device time the "
        "contender held (its command's whole run) but did not spend inside a trainer: start-up, "
        "decision and launch latency, shut-down, and slots left idle when there was nothing to "
        "run (the tail of a sweep, pause-mode ASHA waiting for a promotable trial).",
        "- **of which in the wind-down**: the idle slot-seconds from the last moment every slot "
        "ran a trainer to the contender's exit, when the budget left paid for fewer trainers "
        "than slots; the rest is idle time while the contender still filled every slot (launch "
        "latency, waits for a decision).",
        "- **configurations / at full resource**: distinct configurations a contender started, "
        "and how many of them a trainer process took to the full resource.",
        "- **the budget**: each contender but the grid may spend "
        f"{t['budget_fraction_of_grid'] * 100:.0f}% of the grid's device-hours. budgetsweep "
        "enforces it as its product does (admission against used + reserved, and each trial's "
        "deadline); the peers' drivers stop their running trainers and start no new trial once "
        "their trainers' device time reaches it.",
        "- **startup s**: from the contender's command start to its first trainer start.",
        f"- **launch latency ms**: for every trainer start after the first {config.PARALLELISM}, "
        "the time since the last trainer exit before it (the exit that made room for it, in "
        "slots or budget); the median per run. The tool's reaction time, without the time a slot "
        "waits because nothing may run (the budget, or a rung not yet decided).",
        "- **tool CPU s**: CPU time (user + system) of every process the contender's command "
        "started (a cgroup-v1 cpuacct group per run, so daemons and processes reaped outside "
        "the tree count too), minus the CPU time the trainers report in their summary lines.",
        "",
        "## Setup",
        "",
        f"- Machine: {r['machine']['cpu']}, {r['machine']['cores_online']} cores online "
        f"(nproc {r['machine']['nproc']}); every process runs under `nice -n 10`. Other work on "
        "the machine moves every contender's figures; run.sh runs the contenders in turn, seed "
        "by seed, so that drift spreads over all of them alike.",
        f"- Versions: " + ", ".join(f"{k} {v}" for k, v in r["versions"].items()) + ".",
        "- Every contender runs the same trainer command (`" + " ".join(t["trainer_args"]) +
        "`) plus one `--name=value` per parameter; the peers add `--epochs`, "
        "`--metrics-host/--metrics-port` as flags where budgetsweep passes them in the "
        "environment. budgetsweep also gives every trial a checkpoint directory (the trainer then "
        "checkpoints after each epoch); the peers do not.",
        f"- The peers read each epoch's validation accuracy from the trainer's Prometheus "
        f"endpoint, polled every {t['poll_seconds']} s (budgetsweep run's default reconcile "
        "interval), and stop a pruned trainer with SIGTERM. Optuna uses its default sampler "
        "(TPE, seeded) with `SuccessiveHalvingPruner(min_resource=1, reduction_factor="
        f"{t['reduction_factor']})` and `n_jobs={t['parallelism']}`; Ray Tune uses its default "
        f"random search (seeded) with `ASHAScheduler(grace_period=1, max_t={t['epochs']}, "
        f"reduction_factor={t['reduction_factor']})`, at most {t['parallelism']} trials at once "
        "(the searcher's `max_concurrent`), 1 CPU per trial. Ray reports a trial's last epoch "
        "once its trainer has exited (Ray ends a trial the moment it reports `max_t`, before the "
        "test evaluation), and Ray's SIGKILL of a finished worker's child processes is off "
        "(`RAY_kill_child_processes_on_worker_exit=false`): a stopped trial's trainer gets SIGTERM "
        "from its parent-death signal instead, as budgetsweep's trainers get SIGTERM.",
        grace_line(r),
    ]
    quality = []
    for key, c in r["contenders"].items():
        for run in c["runs"]:
            if run["processes_without_summary"]:
                quality.append(
                    f"- {c['label']} seed {run['seed']}: {run['processes_without_summary']} "
                    "trainer processes printed no summary line; their CPU time counts as the "
                    "tool's.")
            if run["processes_ended_by_log_time"]:
                quality.append(
                    f"- {c['label']} seed {run['seed']}: {run['processes_ended_by_log_time']} "
                    "trainer processes outlived their driver (Ray ended the trial's actor), so "
                    "they are timed to their log's last write, the trainer's exit message.")
            if run["cpu_source"] != "cgroup cpuacct":
                quality.append(f"- {c['label']} seed {run['seed']}: CPU time from "
                               f"{run['cpu_source']}, which misses processes reaped outside "
                               "the tree.")
    notes = "\n".join(x for x in [notes, "\n".join(quality)] if x)
    if notes:
        lines += ["", "## Notes from the run", "", notes]
    lines += ["", "## Reproduce", "", "```", r["command"], "```", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
