"""Turns one bench/operator/run.sh run into bench/results/operator.{md,json}."""

import argparse
import collections
import datetime
import glob
import json
import os
import re
import statistics

VISIBLE = re.compile(r"^epoch (\d+)/\d+ .* visible_at=([0-9.]+)")


def parse_ts(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def visible_times(epoch_logs, namespace):
    """(namespace/trial, epoch) -> when the fixture exposed that epoch's value (--epoch-log files,
    one per trial, named <trial>.log)."""
    times = {}
    for path in glob.glob(os.path.join(epoch_logs, "*.log")):
        trial = os.path.basename(path)[: -len(".log")]
        with open(path, errors="replace") as lines:
            for line in lines:
                m = VISIBLE.match(line)
                if m:
                    times[(f"{namespace}/{trial}", int(m.group(1)))] = float(m.group(2))
    return times


def kill_latencies(operator_log, visible):
    """Seconds from the deciding rung value being visible to the stop being issued."""
    names, last_rung, out = {}, {}, []
    with open(operator_log) as lines:
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("event") != "decision":
                continue
            sweep, record = entry["sweep"], entry["record"]
            ns = sweep.split("/")[0]
            key = (sweep, record.get("trial"))
            if record["event"] == "TrialCreated":
                names[key] = "%s/%s-t%04d" % (ns, sweep.split("/")[1], record["trial"])
            elif record["event"] == "ValueRecorded":
                last_rung[key] = int(round(record["resource"]))
            elif record["event"] == "TrialStopped" and record.get("reason") == "RungCutoff":
                seen = visible.get((names.get(key), last_rung.get(key)))
                if seen is not None:
                    out.append(parse_ts(entry["ts"]) - seen)
    return out


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else None


def reconcile_latency(text):
    """Count, mean and the p50/p99 bucket bounds of budgetsweep_reconcile_duration_seconds."""
    buckets, total, count = [], 0.0, 0
    for line in text.splitlines():
        if line.startswith("budgetsweep_reconcile_duration_seconds_bucket"):
            le = line.split('le="', 1)[1].split('"', 1)[0]
            buckets.append((float(le), float(line.rsplit(" ", 1)[1])))
        elif line.startswith("budgetsweep_reconcile_duration_seconds_sum"):
            total = float(line.rsplit(" ", 1)[1])
        elif line.startswith("budgetsweep_reconcile_duration_seconds_count"):
            count = int(float(line.rsplit(" ", 1)[1]))
    def bound(q):
        return next((le for le, n in sorted(buckets) if n >= q * count), None) if count else None
    return {"count": count, "mean": round(total / count, 4) if count else None,
            "p50_le": bound(0.50), "p99_le": bound(0.99)}


def rss_growth(samples):
    """Least-squares slope of RSS (KB) on trials created, over the samples with trials."""
    points = [(int(s[2]), int(s[1])) for s in samples if int(s[1]) > 0 and int(s[2]) > 0]
    if len(points) < 2:
        return None
    mx = statistics.mean(x for x, _ in points)
    my = statistics.mean(y for _, y in points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return round(sum((x - mx) * (y - my) for x, y in points) / sxx, 2) if sxx else None


def main():
    p = argparse.ArgumentParser()
    for flag in ("operator-log", "epoch-logs", "namespace", "rss", "metrics", "command", "out"):
        p.add_argument("--" + flag, required=True)
    for flag in ("hwm-kb", "elapsed", "sweeps", "trials", "parallelism", "duration"):
        p.add_argument("--" + flag, type=int, required=True)
    p.add_argument("--hostile-sweeps", type=int, default=0)
    p.add_argument("--hostile-failures", type=int, default=0)
    a = p.parse_args()

    samples = [line.split("\t") for line in open(a.rss).read().splitlines() if line]
    rss_mb = [int(s[1]) / 1024 for s in samples if int(s[1]) > 0]
    created = int(samples[-1][2]) if samples else 0
    ended = int(samples[-1][3]) if samples else 0
    latencies = kill_latencies(a.operator_log, visible_times(a.epoch_logs, a.namespace))
    reconcile = reconcile_latency(open(a.metrics).read())
    growth = rss_growth(samples)
    decisions = collections.Counter()
    for line in open(a.operator_log):
        if '"event":"decision"' in line:
            decisions[json.loads(line)["record"]["event"]] += 1

    result = {
        "command": a.command,
        "sweeps": a.sweeps,
        "max_trials_per_sweep": a.trials,
        "parallelism_per_sweep": a.parallelism,
        "hostile_sweeps": a.hostile_sweeps,
        "hostile_trials_failed": a.hostile_failures,
        "duration_cap_seconds": a.duration,
        "elapsed_seconds": a.elapsed,
        "sweeps_ended": ended,
        "trials_created": created,
        "decisions": dict(decisions),
        "rss_mb": {
            "peak_hwm": round(a.hwm_kb / 1024, 1),
            "median": round(statistics.median(rss_mb), 1) if rss_mb else None,
            "last": round(rss_mb[-1], 1) if rss_mb else None,
            "growth_kb_per_trial": growth,
            "samples": [[int(s[0]), int(s[1]), int(s[2])] for s in samples],
        },
        "reconcile_latency_seconds": reconcile,
        "kill_latency_seconds": {
            "n": len(latencies),
            "p50": round(percentile(latencies, 0.50), 3) if latencies else None,
            "p99": round(percentile(latencies, 0.99), 3) if latencies else None,
            "max": round(max(latencies), 3) if latencies else None,
            "values": [round(v, 4) for v in latencies],
        },
        "targets": {"rss_mb_under": 30, "kill_p99_seconds_under": 1.0},
    }
    with open(a.out + ".json", "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    lat, rss = result["kill_latency_seconds"], result["rss_mb"]
    md = f"""# Operator under load (bench/operator)

Command: `{a.command}` (on the test cluster of tests/cluster and its real node: trials as
containers of the curve-trainer image under the kubelet, one GPU a trial, 0.1 s an epoch, rungs
1/3/9; the operator on the host, scraping the pods at their pod IPs; 2-core machine).

| | measured | target |
|---|---:|---:|
| sweeps (ended / applied) | {ended} / {a.sweeps} | |
| hostile sweeps beside them (their trials failed) | {a.hostile_sweeps} ({a.hostile_failures}) | |
| trials created (all sweeps) | {created} of {a.sweeps * a.trials} | |
| elapsed (cap {a.duration} s) | {a.elapsed} s | |
| operator RSS, peak (VmHWM) | {rss['peak_hwm']} MB | < 30 MB |
| operator RSS, median of 2 s samples | {rss['median']} MB | |
| operator RSS growth per trial created (least squares) | {rss['growth_kb_per_trial']} KB | |
| reconcile passes | {reconcile['count']} | |
| reconcile latency mean | {reconcile['mean']} s | |
| reconcile latency p50 / p99 (histogram bucket bounds) | <= {reconcile['p50_le']} s / <= {reconcile['p99_le']} s | |
| kill latency p50 (n = {lat['n']}) | {lat['p50']} s | |
| kill latency p99 | {lat['p99']} s | < 1 s |
| kill latency max | {lat['max']} s | |

Kill latency: from the moment the fixture exposed the rung value that decided a RungCutoff stop
(`visible_at` in its output) to the operator's log line for that decision, written just before
the pod's DELETE. Decisions: {dict(decisions)}.
"""
    with open(a.out + ".md", "w") as f:
        f.write(md)
    print(md)


if __name__ == "__main__":
    main()
