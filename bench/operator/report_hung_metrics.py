#!/usr/bin/env python3
"""Writes the markdown report of hung_metrics_bench's JSON result."""
import argparse
import json
import os
import platform


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg()[0]
    return f"{cpu}, {os.cpu_count()} cores, load average {load:.1f} at the end of the run"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--result", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    with open(args.result) as f:
        result = json.load(f)
    o = result["options"]
    clean = result["clean"]["kill_latency_seconds"]
    hung = result["hung"]["kill_latency_seconds"]
    ratio = hung["p99"] / clean["p99"]
    ms = lambda seconds: f"{seconds * 1000:.0f} ms"
    lines = [
        "# Kill latency with hung metric endpoints (bench/operator)",
        "",
        f"Command: `{args.command}`",
        "",
        f"Machine: {machine()}.",
        "",
        f"A stop-mode ASHA sweep of {o['trials']} trials (parallelism {o['parallelism']}, rungs "
        f"1/3/9/27 epochs, {o['epoch_seconds']} s an epoch after up to 0.5 s of loading) driven "
        f"through SweepController, a pass every {o['poll_seconds']} s, against an in-process "
        "backend whose trials expose their metrics over real HTTP on 127.0.0.1, read by the "
        "production ScrapeMetricSource (2 s timeout) through MetricReader's defaults (8 reads at "
        "once; a 0.25 s deadline for an endpoint that answered in time before, 0.02 s for a "
        "segment's first read, none for an endpoint that was slow). In the hung run every "
        f"{100 // o['hung_percent']}th trial's endpoint accepts the connection and never answers. "
        f"Each run is repeated {o['repeats']} times; the figures pool the repeats.",
        "",
        "Kill latency: from the moment a trial's value at a rung was exposed to the controller "
        "asking the backend to stop it (a RungCutoff, decided when that value arrives).",
        "",
        "| | clean | 10% hung | target |",
        "|---|---:|---:|---:|",
        f"| kills measured | {clean['n']} | {hung['n']} | |",
        f"| kill latency p50 | {ms(clean['p50'])} | {ms(hung['p50'])} | |",
        f"| kill latency p99 | {ms(clean['p99'])} | {ms(hung['p99'])} | |",
        f"| kill latency max | {ms(clean['max'])} | {ms(hung['max'])} | |",
        f"| p99 hung / p99 clean | | {ratio:.2f} | <= 1.2 |",
        f"| passes | {result['clean']['pass_seconds']['n']} | {result['hung']['pass_seconds']['n']} | |",
        f"| pass duration p50 | {ms(result['clean']['pass_seconds']['p50'])} | "
        f"{ms(result['hung']['pass_seconds']['p50'])} | |",
        f"| pass duration p99 | {ms(result['clean']['pass_seconds']['p99'])} | "
        f"{ms(result['hung']['pass_seconds']['p99'])} | |",
        f"| pass duration max | {ms(result['clean']['pass_seconds']['max'])} | "
        f"{ms(result['hung']['pass_seconds']['max'])} | |",
        "",
        "Hung trials are never killed (their values never arrive), so the hung run measures fewer "
        "kills. The machine is shared: the load average says how busy it was, and p99 moves by "
        "some milliseconds from run to run.",
        "",
    ]
    with open(args.out, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
