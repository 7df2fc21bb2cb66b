#!/usr/bin/env python3
"""Writes the markdown report of run_hostile_metrics.sh: hung_metrics_bench's JSON results, one
process per run, clean and hostile taking turns."""
import argparse
import json
import math

from report_hung_metrics import machine


def quantile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--command", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("results", nargs="+")
    args = parser.parse_args()
    kills = {"clean": [], "hung": []}
    rss = {"clean": [], "hung": []}
    options = None
    for path in args.results:
        with open(path) as f:
            result = json.load(f)
        options = result["options"]
        for mode in kills:
            if mode in result:
                kills[mode] += result[mode]["kills"]
                rss[mode].append(result["max_rss_kib"] / 1024)
    p99 = {mode: quantile(kills[mode], 0.99) for mode in kills}
    peak = {mode: max(rss[mode]) for mode in rss}
    ms = lambda seconds: f"{seconds * 1000:.0f} ms"
    rss_ratio, p99_ratio = peak["hung"] / peak["clean"], p99["hung"] / p99["clean"]
    verdict = lambda ok: "met" if ok else "**not met**"
    lines = [
        "# Hostile metric endpoints (bench/operator)",
        "",
        f"Command: `{args.command}`",
        "",
        f"Machine: {machine()}.",
        "",
        f"A stop-mode ASHA sweep of {options['trials']} trials (parallelism "
        f"{options['parallelism']}, rungs 1/3/9/27 epochs, {options['epoch_seconds']} s an "
        "epoch) driven through SweepController against an in-process backend whose trials "
        "serve their metrics over real HTTP on 127.0.0.1, read by the production "
        "ScrapeMetricSource through MetricReader's defaults (8 reads at once): the path the "
        "operator scrapes trial pods on when `spec.metrics.prometheus` is unset. In the hostile "
        f"runs every {100 // options['hung_percent']}th trial's endpoint serves, request by "
        "request in turn, a gzip bomb (1 MiB inflating to 1 GiB), a 200 MiB body and 20,000 "
        "label sets of one metric. Each run is a process of its own (its peak RSS, "
        "`getrusage`), clean and hostile taking turns; kill latencies pool the runs.",
        "",
        "Kill latency: from the moment a healthy trial's value at a rung was exposed to the "
        "controller asking the backend to stop it (a RungCutoff). Hostile trials never report "
        "and are not counted.",
        "",
        "| | clean | hostile | hostile / clean | target |",
        "|---|---:|---:|---:|---|",
        f"| runs | {len(rss['clean'])} | {len(rss['hung'])} | | |",
        f"| peak RSS, highest run | {peak['clean']:.1f} MiB | {peak['hung']:.1f} MiB | "
        f"{rss_ratio:.2f} | <= 1.5: {verdict(rss_ratio <= 1.5)} |",
        f"| kills measured | {len(kills['clean'])} | {len(kills['hung'])} | | >= 200: "
        f"{verdict(len(kills['hung']) >= 200)} |",
        f"| kill latency p50 | {ms(quantile(kills['clean'], 0.5))} | "
        f"{ms(quantile(kills['hung'], 0.5))} | | |",
        f"| kill latency p99 | {ms(p99['clean'])} | {ms(p99['hung'])} | {p99_ratio:.2f} | "
        f"<= 1.2: {verdict(p99_ratio <= 1.2)} |",
        "",
        "The benchmark's process holds the endpoints' own data too (the 1 MiB bomb, the 1.8 MiB "
        "flood), and the machine is shared: the load average says how busy it was.",
        "",
    ]
    with open(args.out, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
